"""``kpca eval``, ``sweep`` and ``compare``: how well a model reconstructs, and what frames differ."""

from __future__ import annotations

import json
import os

import click

import kpcacli.cli.options as options  # not `from . import`: that imports kpcacli.cli, which imports this

from ..workflows import DEFAULT_KS
from .shared import check_outputs, estimator_of, frame_request, note


@click.command(short_help="Held-out error against the kernel width beta and k.")
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "--beta-range",
    default=None,
    metavar="LO:HI:N",
    help="N values of β spaced logarithmically from LO to HI. "
    "Default: 0.001 to 10 times 1 / median squared distance, 17 values.",
)
@click.option(
    "-k",
    "ks",
    type=int,
    multiple=True,
    help=f"Number of components (repeat the option). Default: {', '.join(map(str, DEFAULT_KS))}.",
)
@click.option(
    "--noise",
    type=float,
    default=None,
    help="Add Gaussian noise of this standard deviation to the held-out samples and measure denoising "
    "instead of reconstruction.",
)
@options.holdout_option
@options.center_option(None, "Default: centred for points, uncentred for images (the distance and log solvers).")
@options.solver_option(
    default=None,
    note="Default: fixed-point with --noise; otherwise auto, the solver each (β, k) model measures best.",
)
@options.frames_option
@options.resize_option
@options.json_option
@click.option("--plot", "plot_path", default=None, help="Also plot the error against β to this PNG (needs matplotlib).")
@options.quiet_option
@options.force_option
def sweep(sources, beta_range, ks, noise, holdout, center, solver, selection, resize, as_json, plot_path, quiet, force):
    """Held-out reconstruction or denoising error against the kernel width β and k.

    As Dhir (2023), figure 7: prints one row per β and one column per k, marks the best β.

    \b
    Examples:
      kpca sweep points.csv --noise 0.1 -k 2 -k 4
      kpca sweep sample_data/hand/ -k 3 --beta-range 1e-8:1e-6:9 --json
      kpca sweep points.csv --plot sweep.png
      kpca sweep points.csv --plot notes.png --force   (replace a PNG kpca did not write)
    """
    from ..workflows import betas_from_range, require_matplotlib, sweep_sources

    check_outputs([(plot_path, "frames", "--plot")], sources, force)
    if plot_path is not None:
        require_matplotlib()  # before the sweep: a plot asked for is written, or nothing is run
    result = sweep_sources(
        frame_request(sources, selection, resize),
        betas=betas_from_range(beta_range),
        ks=ks or DEFAULT_KS,
        noise=noise,
        holdout=holdout,
        center=center,
        solver=solver,
        progress=not quiet,
    )
    click.echo(json.dumps(result.as_dict(), indent=2) if as_json else result.format_table())
    if plot_path is not None:
        from ..workflows import plot_sweep

        plot_sweep(result, plot_path)
        click.echo(f"wrote the error against β -> {plot_path}", err=True)


@click.command(name="eval", short_help="Measure every pre-image solver on held-out frames.")
@click.argument("sources", nargs=-1, required=True)
@options.holdout_option
@options.solver_option(
    multiple=True,
    note="Solver to compare (repeat the option). Default: all that apply to the kernel and would take "
    "under 10 s on the held-out frames (gradient only below 250,000 pixels a frame).",
)
@options.neighbours_option
@options.model_options
@options.frames_option
@options.json_option
@click.option(
    "--report",
    "report_dir",
    default=None,
    type=click.Path(file_okay=False),
    help="Write pictures (original | reconstruction | error, and the codes) to this folder.",
)
@click.option(
    "--mask-fraction",
    type=float,
    default=None,
    help="Hide this share of each held-out frame (square blocks at random; values for points) and score its "
    "completion (kpca reconstruct) on the hidden pixels, beside the nearest training frame and inpainting.",
)
@options.scheduler_option
@options.quiet_option
@options.force_option
def evaluate_command(
    sources, holdout, solvers, neighbours, as_json, report_dir, mask_fraction, scheduler, quiet, force, **params
):
    """Measure every pre-image solver on held-out frames, side by side.

    Fits on the training frames (default: the even ones), encodes and decodes the held-out
    frames with each solver, and prints mean and worst PSNR, mean SSIM and the solver's
    milliseconds per frame, with linear PCA at the same k and the neighbour oracle (the
    least-squares best combination of the 10 nearest training frames, using the true frame).
    With --mask-fraction F, each held-out frame has F of it hidden instead, and its completion
    (kpca reconstruct) is scored on the hidden pixels beside the nearest training frame and
    OpenCV's and scikit-image's inpainting, with how well the error estimate ranks the frames.

    \b
    Examples:
      kpca eval sample_data/hand/ -k 3
      kpca eval clip.mp4 -k 3 --solver log --solver nearest --json
      kpca eval sample_data/hand/ -k 3 --holdout middle --report report/
      kpca eval sample_data/hand/ -k 3 --report mine/ --force   (write into a folder holding your files)
      kpca eval clip.mp4 -k 20 --holdout third --solver distance --solver log
      kpca eval clip.mp4 -k 8 --solver distance --solver learned
      kpca eval long.mp4 -k 8 --landmarks 300 --solver log
      kpca eval clip.mp4 -k 8 --frames 0:200
      kpca eval sample_data/hand_colour.mp4 -k 8 --colour
      kpca eval clip.mp4 -k 8 --mask-fraction 0.25 --report masked/
    """
    from ..workflows import evaluate_sources, require_matplotlib

    check_outputs([(report_dir, "frames", "--report")], sources, force)
    if report_dir is not None:
        from ..io.outputs import FrameTarget

        FrameTarget.of(os.path.join(report_dir, "")).check(1)  # where its folder goes exists
        require_matplotlib()  # its code plot: before the evaluation, so a report is whole or not run
    request = frame_request(sources, params.pop("selection"), params.pop("resize"), params.pop("colour"))
    result = evaluate_sources(
        request,
        model=estimator_of(params),
        holdout=holdout,
        solvers=solvers,
        neighbours=neighbours,
        landmarks=params.pop("landmarks"),
        landmark_method=params.pop("landmark_method"),
        mask_fraction=mask_fraction,
        scheduler=scheduler,
        progress=not quiet,
    )
    for name, reason in result.left_out.items():
        if mask_fraction is not None:  # a reference that cannot run here
            note(f"{name} is left out: {reason}")
        else:
            note(f"the {name} solver is left out: {reason}; add --solver {name} to run it")
    click.echo(json.dumps(result.as_dict(), indent=2) if as_json else result.format_table())
    timed = {score.method: score.milliseconds for score in result.scores}
    for first, second in getattr(result, "same_frames", list)():
        faster = min((first, second), key=lambda name: timed[name] or 0.0)
        note(
            f"{first} and {second} give the same frames (each within one grey level of the other): they stop at the "
            f"same pre-images by other routes; {faster} takes less time"
        )
    if report_dir is not None:
        from ..workflows import write_report

        written = write_report(result, report_dir)
        click.echo(f"report: {len(written)} pictures in {report_dir}", err=True)


@click.command(short_help="Score every frame of OTHER against ORIGINAL (PSNR, SSIM).")
@click.argument("original")
@click.argument("other")
@options.frames_option
@click.option(
    "-m",
    "--model",
    "model_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="Also summarise the frames this model was fitted on apart from the others (when it records them), and "
    "give the mean PSNR of its mean training frame against the originals, for reference. No score changes.",
)
@options.json_option
@click.option(
    "-o", "--output", default=None, help="Write original | other | amplified difference of the worst frame to this PNG."
)
@options.quiet_option
@options.force_option
def compare(original, other, selection, model_path, as_json, output, quiet, force):
    """PSNR and SSIM of every frame of OTHER against the same frame of ORIGINAL.

    Each is a video, a folder of images, a glob, an image or - (one of them). Colour is
    compared as colour: when both hold colour, every RGB channel counts, as ffmpeg's psnr
    filter reports RGB; else both are scored in grey (ITU-R 601 luma), and a line says which
    one held colour. -m changes none of this. Prints the
    number of frames, the mean and the worst (with its frame number, counted from 0 as
    --frames counts) PSNR and SSIM. Different frame counts are an error. --frames chooses
    the same frames of both, or of ORIGINAL alone when OTHER has exactly as many frames as
    it chooses there (and ORIGINAL more): OTHER decoded from the codes of those frames.
    --json gives
    mean_psnr, min_psnr, worst_frame, mean_ssim, min_ssim and per_frame (one entry per pair;
    a PSNR is null where the frames are identical).

    \b
    Examples:
      kpca compare held_out.png back.png
      kpca compare clip.mp4 back.mp4
      kpca compare clip.mp4 back/ --frames 1::2 --json
      kpca compare clip.mp4 odd_back.mp4 --frames 1::2   # odd_back.mp4: only the odd frames
      kpca compare frames/ back/ -m model.npz -o worst.png
    """
    from ..workflows import compare_sequences

    check_outputs([(output, "frames", "-o")], [original, other], force)
    result = compare_sequences(
        original, other, model_path=model_path, output=output, selection=selection, progress=not quiet
    )
    click.echo(json.dumps(result.as_dict(), indent=2) if as_json else result.format_text())
    if output is not None:
        click.echo(f"worst frame ({result.worst.index}): original | other | difference -> {output}", err=True)
