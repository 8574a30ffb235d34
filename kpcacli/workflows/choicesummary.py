"""A model's solver choice (:class:`kpcacli.model.solverchoice.SolverChoice`) in words, as
``kpca fit``, ``kpca info`` and ``kpca eval`` print it: which solver decodes and denoises by
default, on what scores, and by which rule.
"""

from __future__ import annotations

from ..model.solverchoice import MARGIN_DB, PIXEL_SOLVERS, SolverChoice


def choice_summary(choice: SolverChoice) -> str:
    """``auto: distance, 44.1 dB on 40 held-back training frames; log 43.9, learned 43.6``; a
    solver scored on some of the frames (``PIXEL_SOLVERS``) with what it was compared with
    there, and the rule it was chosen by: ``auto: transport, 45.1 dB on 16 held-back
    training frames, where the blends' choice, distance, scored 39.6 (...); the blends on
    every held-back frame: distance 39.8, learned 39.5``."""
    if choice.named:
        return f"{choice.solver} (named at fit, not measured)"
    if not choice.scores:
        return f"{choice.solver} (the kernel's rule, not measured)"
    frames = int(choice.compared.get("frames", 0))
    against = next((name for name in choice.compared if name not in PIXEL_SOLVERS and name != "frames"), None)
    there = f"{against} {choice.compared[against]:.1f}" if against else ""

    def scored(name: str) -> str:
        if name in PIXEL_SOLVERS and there:
            return f"{name} {choice.scores[name]:.1f} on {frames} of them ({there} on those)"
        return f"{name} {choice.scores[name]:.1f}"

    others = ", ".join(
        scored(name) for name in sorted(choice.scores, key=lambda name: -choice.scores[name]) if name != choice.solver
    )
    blends = {name: score for name, score in choice.scores.items() if name not in PIXEL_SOLVERS}
    best = max(blends, key=lambda name: blends[name])
    if choice.solver in PIXEL_SOLVERS and against:
        why = f" (the kernel's rule: no blend scored {MARGIN_DB} dB above it)" if best != against else ""
        return (
            f"auto: {choice.solver}, {choice.scores[choice.solver]:.1f} dB on {choice.held_back} held-back training "
            f"frames, where the blends' choice, {against}{why}, scored {choice.compared[against]:.1f} (a solver that "
            f"moves pixels is chosen where it scores at least the blends' choice on the frames it decoded)"
            + (f"; the blends on every held-back frame: {others}" if others else "")
        )
    if choice.solver in PIXEL_SOLVERS:
        note = ""
    elif best != choice.solver:
        note = (
            f" ({best} scored {blends[best] - blends[choice.solver]:.1f} dB above it, less than the "
            f"{MARGIN_DB} dB over the rule's {choice.rule} a frame held back calls for)"
        )
    else:
        note = ""
    return (
        f"auto: {choice.solver}, {choice.scores[choice.solver]:.1f} dB on {choice.held_back} held-back training "
        f"frames{note}" + (f"; {others}" if others else "")
    )


def denoising_summary(choice: SolverChoice) -> str | None:
    """``auto: fixed-point, 26.9 dB denoising 20 held-back training frames; distance 24.2``;
    None when denoising was not measured."""
    if choice.denoiser is None:
        return None
    if choice.named:
        return f"{choice.denoiser} (named at fit, not measured; noise σ ≈ {choice.noise:.2g} in the training frames)"
    fewer = choice.denoiser not in PIXEL_SOLVERS  # the pixel solvers denoise fewer frames
    others = ", ".join(
        f"{name} {score:.1f}" + (" (on fewer)" if fewer and name in PIXEL_SOLVERS else "")
        for name, score in sorted(choice.denoising.items(), key=lambda item: -item[1])
        if name != choice.denoiser
    )
    more = "; on more frames: " if not fewer else "; "
    own = ""
    if choice.own_denoiser is not None:
        own = (
            f"; frames the model holds (noise σ ≈ {choice.noise:.2g}, estimated from their pixels): "
            f"{choice.own_denoiser}, {choice.own_denoising[choice.own_denoiser]:.1f} dB against the clean frames, estimated"
        )
    return (
        f"auto: {choice.denoiser}, {choice.denoising[choice.denoiser]:.1f} dB denoising {choice.denoised} held-back "
        "training frames" + (f"{more}{others}" if others else "") + own
    )
