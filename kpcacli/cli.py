"""The ``kpca`` command line: a thin click layer over :mod:`kpcacli.workflows`.

Each command parses its options, calls one workflow and reports. Domain errors from the library
become one line on standard error: exit status 1 for runtime errors (bad file, bad model), 2
for bad usage (bad option values). Numerical warnings are errors here, so none reaches the
terminal. Options shared by several commands are declared once, in :mod:`kpcacli.clioptions`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import warnings

import click

from . import __version__
from .clioptions import (
    center_option,
    chroma_option,
    crf_option,
    decode_force_option,
    dtype_option,
    extract_colour_option,
    force_option,
    fps_option,
    frames_option,
    holdout_option,
    json_option,
    model_option,
    model_options,
    neighbours_option,
    quiet_option,
    resize_option,
    scheduler_option,
    solver_option,
)
from .errors import KpcaError, KpcaWarning, ParameterError
from .parallel import hold_blas_to_one_thread, single_threaded_blas


class Interrupted(Exception):
    """Ctrl-C or SIGTERM, carried past click, which would print a blank line for it."""


class KpcaGroup(click.Group):
    """A click group whose every error is one line on standard error, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted from None

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if standalone_mode:
            # SIGTERM unwinds like Ctrl-C, so temporary stores and files are removed.
            signal.signal(signal.SIGTERM, _terminate)
            # One BLAS thread for the whole command, every BLAS it loads: kpca parallelises its
            # large passes itself (kpcacli.parallel), and a spinning BLAS pool collapses beside
            # other work.
            hold_blas_to_one_thread()
        try:
            # numpy's BLAS is loaded already (the package imports it): held by threadpoolctl;
            # scipy's is not loaded here, to keep --help quick, and starts with one thread.
            with warnings.catch_warnings(), single_threaded_blas(load_scipy=False):
                warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow, invalid value, ...
                warnings.simplefilter("default", KpcaWarning)  # once each: a cut video, ...
                warnings.showwarning = _show_warning
                result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except (click.exceptions.Abort, Interrupted):
            _fail("interrupted", 130)
        except click.ClickException as error:
            _fail(error.format_message(), error.exit_code)
        except ParameterError as error:
            _fail(error.spelled(_flag), 2)
        except KpcaError as error:
            _fail(error.spelled(_flag), 1)
        except (RuntimeWarning, FloatingPointError) as error:
            _fail(f"numerical failure ({error}); the input or model values may be out of range", 1)
        except MemoryError:
            _fail("out of memory; try fewer or smaller frames (--resize)", 1)
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except BrokenPipeError:
            # The reader of our standard output went away (e.g. `| head`): not our error.
            sys.stderr.close()
            sys.exit(1)
        except OSError as error:
            where = f" '{error.filename}'" if error.filename else ""
            _fail(f"{error.strerror or error}{where}", 1)
        except Exception as error:  # a bug: still one line, with a way to get the traceback
            if os.environ.get("KPCA_DEBUG"):
                raise
            _fail(f"internal error: {type(error).__name__}: {error} (set KPCA_DEBUG=1 for the traceback)", 1)
        if standalone_mode:
            sys.exit(result if isinstance(result, int) else 0)
        return result


def _flag(name: str, value=None) -> str:
    """The command line's spelling of the library's parameter `name` (set to `value`, when
    given): ``--resize``, ``-k``, ``--no-center``; the name itself when no command has it."""
    option = _options().get(name)
    if option is None:
        return name if value is None else f"{name} {value}"
    flag = max(option.opts, key=len)
    if value is None:
        return flag
    if isinstance(value, bool) and option.is_flag:
        return flag if value or not option.secondary_opts else option.secondary_opts[0]
    return f"{flag} {value}"


def _options() -> dict[str, click.Option]:
    """Every command's options by parameter name (commands share them: one declaration each)."""
    options: dict[str, click.Option] = {}
    groups = [main]
    while groups:
        group = groups.pop()
        for command in group.commands.values():
            if isinstance(command, click.Group):
                groups.append(command)
            for param in command.params:
                if isinstance(param, click.Option):
                    options.setdefault(param.name, param)
    return options


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A library warning as one ``Warning:`` line on standard error, without the source line."""
    _warn(str(message))


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt


def _fail(message: str, status: int) -> None:
    click.echo(f"Error: {' '.join(str(message).split())}", err=True)
    sys.exit(status)


def _check_outputs(outputs, inputs, force: bool) -> None:
    """Before any work: no output is an input, and each replaces only what kpca wrote as its
    kind, unless --force (:mod:`kpcacli.io.ownership`). `outputs` holds (target, kind, option);
    a kind of None is a frames output, or rows when the target names a .npy, .txt or .csv."""
    from .io.ownership import check_outputs, output_kind

    check_outputs([(target, kind or output_kind(target), option) for target, kind, option in outputs], inputs, force)


MODEL_PARAMETERS = ("kernel", "n_components", "eps", "beta", "gamma", "degree", "coef0", "center")


def _request(sources, selection=None, resize=None, colour=False):
    """The frames a command reads (:class:`kpcacli.io.request.FrameRequest`), built once here."""
    from .io.request import FrameRequest

    return FrameRequest.of(sources, selection=selection, resize=resize, colour=colour)


def _estimator(options: dict, progress: bool = False):
    """The unfitted estimator the model options describe (taken out of `options`)."""
    from .estimator import FrameModel

    return FrameModel(**{name: options.pop(name) for name in MODEL_PARAMETERS}, progress=progress)


def _note(message: str) -> None:
    click.echo(f"Note: {message}", err=True)


def _warn(message: str) -> None:
    click.echo(f"Warning: {message}", err=True)


@click.group(cls=KpcaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kpca")
def main():
    """Compress and reconstruct image sequences with kernel PCA.

    \b
    Fit a model, encode frames into k numbers, decode k numbers back into frames:
      kpca fit frames/ -m model.npz -k 3
      kpca encode frame.png -m model.npz -o codes.npy
      kpca decode codes.npy -m model.npz -o back.png
      kpca encode frame.png | kpca decode - -o back.png
    """


@main.command(short_help="Fit a kernel-PCA model to frames and save it.")
@click.argument("sources", nargs=-1, required=True)
@model_option
@model_options
@click.option(
    "--codes",
    "codes_path",
    default=None,
    help="Also write the codes of every input frame (.npy, .txt, .csv), as kpca encode would.",
)
@click.option(
    "--store",
    type=click.Choice(["lossless", "compact"]),
    default=None,
    help="How the model keeps 8-bit frames. lossless (the default, unless --store-crf is given) keeps them bit "
    "for bit (lossless H.264): a training frame comes back exactly. compact is lossy H.264 at --store-crf N, "
    "smaller; fit and info print its PSNR against the frames given, and the model is fitted to the frames as stored.",
)
@click.option(
    "--store-crf",
    type=int,
    default=None,
    help="A lossy store at this H.264 rate factor: 0 (lossless) to 51, higher is smaller (as ffmpeg's -crf).",
)
@frames_option
@scheduler_option
@quiet_option
@force_option
def fit(
    sources,
    model_path,
    codes_path,
    store,
    store_crf,
    selection,
    resize,
    colour,
    landmarks,
    landmark_method,
    scheduler,
    quiet,
    force,
    **params,
):
    """Fit a kernel-PCA model to frames and save it.

    SOURCES are folders of images (natural order), image files, glob patterns, videos,
    multi-frame TIFFs, .npy/.csv matrices of row vectors, or - for standard input.

    \b
    Examples:
      kpca fit sample_data/hand/ -m model.npz --eps 0.5
      kpca fit clip.mp4 -m clip.npz -k 3 --beta 1e-7
      kpca fit clip.mp4 -m even.npz -k 8 --frames ::2
      kpca fit clip.mp4 -m exact.npz -k 8 --store lossless
      kpca fit clip.mp4 -m small.npz -k 8 --store-crf 18
      kpca fit points.csv -m toy.npz --kernel rbf --beta 10 -k 2 --center
      kpca fit long.mp4 -m long.npz -k 8 --landmarks 300 --codes long_codes.npy
      kpca fit colour_clip.mp4 -m colour.npz -k 8 --colour
      kpca fit /shared/long.mp4 -m /shared/long.npz --landmarks 500 --scheduler tcp://10.0.0.5:8786
    """
    from .workflows import fit_sources

    _check_outputs([(model_path, "model", "-m"), (codes_path, "rows", "--codes")], sources, force)
    state = fit_sources(
        _request(sources, selection, resize, colour),
        model_path,
        model=_estimator(params, progress=not quiet),
        landmarks=landmarks,
        landmark_method=landmark_method,
        codes_path=codes_path,
        scheduler=scheduler,
        store=store,
        store_crf=store_crf,
    ).state_
    kind = "samples" if state.is_points else "frames"
    click.echo(
        f"fitted {state.n_samples} {kind}, k = {state.n_components} "
        f"({100 * state.explained_variance_ratio:.1f}% of the variance) -> {model_path}",
        err=True,
    )
    from .workflows.summary import fit_report

    for line in fit_report(state, model_path):
        click.echo(f"  {line}", err=True)


@main.command(short_help="Map frames to k codes each, one row per frame.")
@click.argument("sources", nargs=-1, required=True)
@model_option
@click.option(
    "-o", "--output", default=None, help="Codes file: .npy, .txt or .csv; - or absent for text on standard output."
)
@frames_option
@resize_option
@dtype_option
@scheduler_option
@quiet_option
@force_option
def encode(sources, model_path, output, selection, resize, dtype, scheduler, quiet, force):
    """Map frames to k codes each (eqs. 29-30), one row per frame in input order.

    Text codes start with a comment naming the model (its fingerprint), so that decode can
    refuse codes of another model. A warning says when frames lie far from every training
    frame: their codes then say little about them.

    \b
    Examples:
      kpca encode held_out.png -m model.npz -o codes.npy
      kpca encode clip.mp4 -m model.npz -o codes.txt
      kpca encode clip.mp4 --frames 1::2 -m even.npz -o odd_codes.npy
      kpca encode clip.mp4 -m model.npz -o codes.npy --dtype float32
      cat frame.png | kpca encode - -m model.npz
    """
    from .workflows import encode_sources

    _check_outputs([(output, "rows", "-o")], [*sources, model_path], force)
    result = encode_sources(
        _request(sources, selection, resize),
        model_path,
        output=output,
        dtype=dtype,
        scheduler=scheduler,
        progress=not quiet,
    )
    warning = result.novelty.warning()
    if warning is not None:
        _warn(warning)


@main.command(short_help="Map codes back to frames with a pre-image solver.")
@click.argument("codes")
@model_option
@click.option(
    "-o",
    "--output",
    default=None,
    help="out.png for one frame, DIR/ for one PNG per row, a video (.mp4, .gif, ...), or - for one PNG on "
    "standard output (the default). Point models: .npy/.txt/.csv rows, or text on standard output.",
)
@solver_option(
    default=None,
    note="Default: auto, the solver that decoded training frames held back best when the model was fitted "
    "(kpca info names it).",
)
@neighbours_option
@fps_option
@crf_option
@chroma_option
@scheduler_option
@quiet_option
@decode_force_option
def decode(codes, model_path, output, solver, neighbours, fps, crf, chroma, scheduler, quiet, force):
    """Map codes back to frames with a pre-image solver.

    CODES is a .npy or text file (.txt, .csv) with one row of k codes per frame, or - for
    standard input. Text codes written by encode name their model: codes of another model
    are refused (--force decodes them). A warning says when codes lie far from every
    training code: their frames are extrapolations.

    \b
    Examples:
      kpca decode codes.npy -m model.npz -o back.png
      kpca decode codes.txt -m model.npz -o frames/
      kpca encode held_out.png | kpca decode - -o back.png
      kpca decode clip_codes.npy -m model.npz -o back.mp4 --crf 18   (smaller, still good)
      kpca decode colour_codes.npy -m colour.npz -o back.mp4 --chroma 444   (full colour resolution)
    """
    from .workflows import decode_codes

    _check_outputs([(output, None, "-o")], [codes, model_path], force)
    decode_codes(
        codes,
        model_path,
        output=output,
        solver=solver,
        neighbours=neighbours,
        fps=fps,
        crf=crf,
        chroma=chroma,
        force=force,
        warn=_warn,
        scheduler=scheduler,
        progress=not quiet,
    )


@main.command(short_help="Denoise frames or points: encode, then decode from the input.")
@click.argument("sources", nargs=-1, required=True)
@model_option
@click.option(
    "-o",
    "--output",
    default=None,
    help="Where the denoised samples go: rows (.npy/.txt/.csv) for point models, or as for decode "
    "(out.png, DIR/, a video, -).",
)
@solver_option(
    default=None,
    note="Default: auto, the solver the model chose at fit (kpca info names it); fixed-point and gradient "
    "start at the input.",
)
@neighbours_option
@frames_option
@resize_option
@fps_option
@crf_option
@chroma_option
@quiet_option
@force_option
def denoise(sources, model_path, output, solver, neighbours, selection, resize, fps, crf, chroma, quiet, force):
    """Denoise frames or points: encode, then decode starting at the input.

    The first k components of Φ(x) keep the structure of the training data; the pre-image of
    that projection, found by an iterative solver started at x itself (Schölkopf et al. 1998;
    Mika et al. 1999), is the denoised x. Point data keeps its format: .csv in, .csv out
    (standard output when -o is absent).

    \b
    Examples:
      kpca fit train.csv -m toy.npz --kernel rbf --beta 10 -k 2 --center
      kpca denoise noisy.csv -m toy.npz -o clean.csv
      kpca denoise noisy_frames/ -m model.npz -o clean_frames/   (clean_frames/ keeps the names)
      kpca denoise noisy.mp4 -m model.npz -o clean.mp4 --crf 12 --fps 30
      kpca denoise noisy_colour.mp4 -m colour.npz -o clean.mp4 --chroma 444
    """
    from .workflows import denoise_sources

    _check_outputs([(output, None, "-o")], [*sources, model_path], force)
    result = denoise_sources(
        _request(sources, selection, resize),
        model_path,
        output=output,
        solver=solver,
        neighbours=neighbours,
        fps=fps,
        crf=crf,
        chroma=chroma,
        progress=not quiet,
    )
    if result.not_converged:
        _note(f"{result.not_converged} of {result.samples} solves did not converge (their last iterate is written)")


@main.command(short_help="Held-out error against the kernel width beta and k.")
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "--beta-range",
    default=None,
    metavar="LO:HI:N",
    help="N values of β spaced logarithmically from LO to HI. "
    "Default: 0.001 to 10 times 1 / median squared distance, 17 values.",
)
@click.option(
    "-k", "ks", type=int, multiple=True, help="Number of components (repeat the option). Default: 1, 2, 4, 8."
)
@click.option(
    "--noise",
    type=float,
    default=None,
    help="Add Gaussian noise of this standard deviation to the held-out samples and measure denoising "
    "instead of reconstruction.",
)
@holdout_option
@center_option(None, "Default: centred for points, uncentred for images (the distance and log solvers).")
@solver_option(default=None, note="Default: fixed-point with --noise; distance (uncentred) or discrepancy (centred).")
@frames_option
@resize_option
@json_option
@click.option("--plot", "plot_path", default=None, help="Also plot the error against β to this PNG (needs matplotlib).")
@quiet_option
@force_option
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
    from .workflows import sweep_sources
    from .workflows.sweep import betas_from_range

    _check_outputs([(plot_path, "frames", "--plot")], sources, force)
    result = sweep_sources(
        _request(sources, selection, resize),
        betas=betas_from_range(beta_range),
        ks=ks or (1, 2, 4, 8),
        noise=noise,
        holdout=holdout,
        center=center,
        solver=solver,
        progress=not quiet,
    )
    click.echo(json.dumps(result.as_dict(), indent=2) if as_json else result.format_table())
    if plot_path is not None:
        from .workflows.plots import plot_sweep

        try:
            plot_sweep(result, plot_path)
        except KpcaError as error:  # matplotlib missing: the table is still useful
            _note(str(error))
        else:
            click.echo(f"wrote the error against β -> {plot_path}", err=True)


@main.group(short_help="Plots of a model (matplotlib).")
def plot():
    """Plots of a model (matplotlib: pip install 'kpcacli[plot]')."""


@plot.command(short_help="Lines of constant value of the first kernel components.")
@model_option
@click.option("-o", "--output", required=True, help="PNG to write.")
@click.option("-n", "count", type=int, default=8, show_default=True, help="Number of kernel principal components.")
@force_option
def components(model_path, output, count, force):
    """Lines of constant value of the first n kernel principal components (2-D point models).

    As Schölkopf et al. (1998), figure 1, next to the first linear principal component.

    \b
    Examples:
      kpca plot components -m toy.npz -o levels.png
      kpca plot components -m toy.npz -o levels.png -n 4
      kpca plot components -m toy.npz -o figure.png --force   (replace a PNG kpca did not write)
    """
    from .estimator import FrameModel
    from .workflows.plots import plot_components

    _check_outputs([(output, "frames", "-o")], [model_path], force)
    plot_components(FrameModel.load(model_path), output, count)
    click.echo(f"wrote {output}", err=True)


@main.command(name="eval", short_help="Measure every pre-image solver on held-out frames.")
@click.argument("sources", nargs=-1, required=True)
@holdout_option
@solver_option(
    multiple=True,
    note="Solver to compare (repeat the option). Default: all that apply to the kernel and would take "
    "under 10 s on the held-out frames (gradient only below 250,000 pixels a frame).",
)
@neighbours_option
@model_options
@frames_option
@json_option
@click.option(
    "--report",
    "report_dir",
    default=None,
    type=click.Path(file_okay=False),
    help="Write pictures (original | reconstruction | error, and the codes) to this folder.",
)
@scheduler_option
@quiet_option
@force_option
def evaluate_command(sources, holdout, solvers, neighbours, as_json, report_dir, scheduler, quiet, force, **params):
    """Measure every pre-image solver on held-out frames, side by side.

    Fits on the training frames (default: the even ones), encodes and decodes the held-out
    frames with each solver, and prints mean and worst PSNR, mean SSIM and the solver's
    milliseconds per frame, with linear PCA at the same k and the neighbour oracle (the
    least-squares best combination of the 10 nearest training frames, using the true frame).

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
    """
    from .workflows import evaluate_sources

    _check_outputs([(report_dir, "frames", "--report")], sources, force)
    if report_dir is not None:
        from .io.outputs import FrameTarget

        FrameTarget.of(os.path.join(report_dir, "")).check(1)  # where its folder goes exists
    request = _request(sources, params.pop("selection"), params.pop("resize"), params.pop("colour"))
    result = evaluate_sources(
        request,
        model=_estimator(params),
        holdout=holdout,
        solvers=solvers,
        neighbours=neighbours,
        landmarks=params.pop("landmarks"),
        landmark_method=params.pop("landmark_method"),
        scheduler=scheduler,
        progress=not quiet,
    )
    for name, reason in result.left_out.items():
        _note(f"the {name} solver is left out: {reason}; add --solver {name} to run it")
    click.echo(json.dumps(result.as_dict(), indent=2) if as_json else result.format_table())
    if report_dir is not None:
        from .workflows.report import write_report

        try:
            written = write_report(result, report_dir)
        except KpcaError as error:  # matplotlib missing: the table is still useful
            _note(str(error))
        else:
            click.echo(f"report: {len(written)} pictures in {report_dir}", err=True)


@main.command(short_help="Describe a model: frames, kernel, k, eigenvalues, sizes.")
@model_option
@json_option
def info(model_path, as_json):
    """Describe a model: frames, kernel, k, explained variance, eigenvalues.

    \b
    Examples:
      kpca info -m model.npz
      kpca info -m model.npz --json | jq .k
    """
    from .workflows.summary import ModelSummary

    summary = ModelSummary.of_file(model_path)
    click.echo(json.dumps(summary.as_dict(), indent=2) if as_json else summary.format_text())


@main.command(short_help="Score every frame of OTHER against ORIGINAL (PSNR, SSIM).")
@click.argument("original")
@click.argument("other")
@frames_option
@click.option(
    "-m",
    "--model",
    "model_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="Also report the mean PSNR of this model's mean training frame against the originals, for reference.",
)
@json_option
@click.option(
    "-o", "--output", default=None, help="Write original | other | amplified difference of the worst frame to this PNG."
)
@quiet_option
@force_option
def compare(original, other, selection, model_path, as_json, output, quiet, force):
    """PSNR and SSIM of every frame of OTHER against the same frame of ORIGINAL.

    Each is a video, a folder of images, a glob, an image or - (one of them). Colour is
    compared as colour: when either holds colour (with -m, when the model is a colour one),
    every RGB channel counts, as ffmpeg's psnr filter reports RGB; else grey. Prints the
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
    from .workflows import compare_sequences

    _check_outputs([(output, "frames", "-o")], [original, other], force)
    result = compare_sequences(
        original, other, model_path=model_path, output=output, selection=selection, progress=not quiet
    )
    click.echo(json.dumps(result.as_dict(), indent=2) if as_json else result.format_text())
    if output is not None:
        click.echo(f"worst frame ({result.worst.index}): original | other | difference -> {output}", err=True)


@main.command(short_help="Write the frames encode would see, as images or a video.")
@click.argument("sources", nargs=-1, required=True)
@frames_option
@click.option(
    "-o",
    "--output",
    required=True,
    help="out.png for one frame, DIR/ for one PNG per frame (named after the inputs), or a video (.mp4, .mkv, ...).",
)
@resize_option
@extract_colour_option
@fps_option
@crf_option
@chroma_option
@force_option
def extract(sources, selection, output, resize, colour, fps, crf, chroma, force):
    """Write the frames kpca encode would see (same SOURCES, --frames, --resize) as images or a video.

    Frames are grey, as every command reads them, or RGB with --colour, as a colour model
    reads them. In a folder they keep their names:
    hand_001.png for frames/hand_001.png, clip_000005.png for frame 5 of clip.mp4.

    \b
    Examples:
      kpca extract clip.mp4 --frames 5 -o frame5.png
      kpca extract clip.mp4 --frames 1::2 -o odd/
      kpca extract frames/ --frames 10:20 --resize 320x180 -o part.mp4
      kpca extract clip.mp4 -o lossless.mkv
      kpca extract colour_clip.mp4 --colour --frames 0:50 -o part.mp4 --crf 18
      kpca extract colour_clip.mp4 --colour -o full_colour.mp4 --chroma 444
    """
    from .workflows import extract_frames

    _check_outputs([(output, "frames", "-o")], sources, force)
    count = extract_frames(_request(sources, selection, resize, colour), output, fps=fps, crf=crf, chroma=chroma)
    click.echo(f"wrote {count} frame{'s' if count != 1 else ''} -> {output}", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
