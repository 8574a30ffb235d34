"""The ``kpca`` command line: a thin click layer over :mod:`kpcacli`.

Commands parse their options, call the library and report. Domain errors from the library
become one line on standard error: exit status 1 for runtime errors (bad file, bad model), 2
for bad usage (bad option values). Nothing here does mathematics.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import click
import numpy as np

from . import __version__
from .errors import KpcaError, ParameterError
from .kernels import KERNELS
from .preimage import DEFAULT_SOLVER, SOLVERS

MODEL_HELP = "Model file (default: $KPCA_MODEL or model.npz)."
ENCODE_BATCH_BYTES = 256 * 2**20  # frames encoded per pass over the store


class KpcaGroup(click.Group):
    """A click group whose every error is one line on standard error, never a traceback."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if standalone_mode:
            # SIGTERM unwinds like Ctrl-C, so temporary stores and files are removed.
            signal.signal(signal.SIGTERM, _terminate)
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.Abort:
            _fail("interrupted", 130)
        except click.ClickException as error:
            _fail(error.format_message(), error.exit_code)
        except ParameterError as error:
            _fail(str(error), 2)
        except KpcaError as error:
            _fail(str(error), 1)
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


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt


def _fail(message: str, status: int) -> None:
    message = " ".join(str(message).split())
    click.echo(f"Error: {message}", err=True)
    sys.exit(status)


def refuse_overwriting_inputs(outputs, inputs, force: bool) -> None:
    """Refuse (usage error) an output that is one of the inputs, unless --force."""
    if force:
        return
    from .sources import expand_sources

    try:
        sources = [Path(path).resolve() for path in expand_sources(inputs) if path != "-"]
    except KpcaError:
        return  # the inputs' own error is reported when they are read
    for output in outputs:
        if output in (None, "-"):
            continue
        target = Path(output).resolve()
        for source in sources:
            if target == source or (target.is_dir() and source.parent == target):
                raise click.UsageError(
                    f"output '{output}' would overwrite the input '{source}'; choose another output or add --force"
                )


def force_option(f):
    return click.option("--force", is_flag=True, help="Allow an output to overwrite one of the inputs.")(f)


def model_option(f):
    return click.option(
        "-m",
        "--model",
        "model_path",
        envvar="KPCA_MODEL",
        default="model.npz",
        show_default=True,
        type=click.Path(dir_okay=False),
        help=MODEL_HELP,
    )(f)


def resize_option(f):
    return click.option(
        "--resize", metavar="WxH", default=None, help="Resize every image frame to W x H pixels (e.g. 640x360)."
    )(f)


def _resize(value: str | None):
    from .sources import parse_size

    return parse_size(value) if value else None


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


def model_options(function):
    """The model's options, shared by `fit` and `eval`: k or ε, the kernel and its parameters,
    centring, resizing and landmarks."""
    decorators = [
        click.option("-k", "n_components", type=int, default=None, help="Number of components k."),
        click.option(
            "--eps",
            type=float,
            default=None,
            help="Variance tolerance ε (eq. 3): smallest k keeping 1-ε of the variance. Default 0.1 when -k is not given.",
        ),
        click.option("--kernel", type=click.Choice(KERNELS), default="rbf", show_default=True, help="Kernel."),
        click.option(
            "--beta",
            type=float,
            default=None,
            help="Gaussian width β in exp(-β|x-y|²). Default: 1 / median pairwise squared distance.",
        ),
        click.option(
            "--gamma",
            type=float,
            default=None,
            help="Dot-product scale γ of poly and sigmoid. Default: 1 / median |x|².",
        ),
        click.option("--degree", type=int, default=3, show_default=True, help="Degree p of the polynomial kernel."),
        click.option("--coef0", type=float, default=None, help="Offset c of poly (default 1) and sigmoid (default 0)."),
        click.option(
            "--center/--no-center",
            default=False,
            show_default=True,
            help="Centre the kernel in feature space (eqs. 24-25). The default decoder (--solver log) needs --no-center.",
        ),
        resize_option,
        click.option(
            "--landmarks",
            type=click.IntRange(min=2),
            default=None,
            help="Fit on this many frames chosen across the clip (for clips of thousands of frames); the model keeps only them.",
        ),
        click.option(
            "--landmark-method",
            type=click.Choice(["uniform", "farthest"]),
            default="uniform",
            show_default=True,
            help="Landmarks evenly spaced in time, or by farthest-point sampling in kernel distance.",
        ),
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def split_model_options(options: dict) -> tuple[dict, dict]:
    """The values of :func:`model_options`: KernelPCA's parameters, and how to load frames
    (``resize`` parsed, ``landmarks``, ``landmark_method``)."""
    options = dict(options)
    loading = {
        "resize": _resize(options.pop("resize")),
        "landmarks": options.pop("landmarks"),
        "landmark_method": options.pop("landmark_method"),
    }
    return options, loading


@main.command()
@click.argument("sources", nargs=-1, required=True)
@model_option
@model_options
@click.option(
    "--codes",
    "codes_path",
    default=None,
    help="Also write the codes of every input frame (.npy, .txt, .csv), as kpca encode would.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@force_option
def fit(sources, model_path, force, codes_path, quiet, **model):
    """Fit a kernel-PCA model to frames and save it.

    SOURCES are folders of images (natural order), image files, glob patterns, videos,
    multi-frame TIFFs, .npy/.csv matrices of row vectors, or - for standard input.

    \b
    Examples:
      kpca fit sample_data/hand/ -m model.npz --eps 0.5
      kpca fit clip.mp4 -m clip.npz -k 3 --beta 1e-7
      kpca fit points.csv -m toy.npz --kernel rbf --beta 10 -k 2 --center
      kpca fit long.mp4 -m long.npz -k 8 --landmarks 300 --codes long_codes.npy
    """
    from .model import fit_sources

    refuse_overwriting_inputs([model_path, codes_path], sources, force)
    params, loading = split_model_options(model)
    model = fit_sources(sources, model_path, codes_path=codes_path, progress=not quiet, **loading, **params)
    click.echo(
        f"fitted {len(model.frame_names_)} {'samples' if model.is_points else 'frames'}, k = {model.n_components_} "
        f"({100 * model.explained_variance_ratio_:.1f}% of the variance) -> {model_path}",
        err=True,
    )


@main.command()
@click.argument("sources", nargs=-1, required=True)
@model_option
@click.option(
    "-o", "--output", default=None, help="Codes file: .npy, .txt or .csv; - or absent for text on standard output."
)
@resize_option
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@force_option
def encode(sources, model_path, output, resize, quiet, force):
    """Map frames to k codes each (eqs. 29-30), one row per frame in input order.

    \b
    Examples:
      kpca encode held_out.png -m model.npz -o codes.npy
      kpca encode clip.mp4 -m model.npz -o codes.txt
      cat frame.png | kpca encode - -m model.npz
    """
    from .model import KernelPCA
    from .outputs import write_matrix
    from .sources import iter_frames

    refuse_overwriting_inputs([output], [*sources, model_path], force)
    model = KernelPCA.load(model_path)
    model.progress = not quiet
    frame_bytes = int(np.prod(model.frame_shape_)) * 8
    batch_size = max(1, ENCODE_BATCH_BYTES // frame_bytes)
    codes, batch = [], []
    for frame in iter_frames(sources, resize=_resize(resize)):
        batch.append(frame)
        if len(batch) == batch_size:
            codes.append(model.encode(batch))
            batch = []
    if batch:
        codes.append(model.encode(batch))
    write_matrix(np.concatenate(codes), output)


@main.command()
@click.argument("codes")
@model_option
@click.option(
    "-o",
    "--output",
    default=None,
    help="out.png for one frame, DIR/ for one PNG per row, a video (.mp4, .gif, ...), or - for one PNG on standard output. Point models: .npy/.txt/.csv rows.",
)
@click.option(
    "--solver",
    type=click.Choice(sorted(SOLVERS)),
    default=DEFAULT_SOLVER,
    show_default=True,
    help="Pre-image method: log (seed 000 eq. 35, needs --no-center), discrepancy (eq. 33), "
    "fixed-point (Mika, rbf), gradient (Schölkopf), nearest, linear (linear kernel).",
)
@click.option(
    "--neighbours",
    type=click.IntRange(min=1),
    default=None,
    help="Distinct nearest training samples (in reduced space) the pre-image is built from. "
    "Default: the solver's own (log: 2, discrepancy and gradient: 10).",
)
@click.option(
    "--fps",
    type=click.FloatRange(min=0, min_open=True),
    default=25.0,
    show_default=True,
    help="Frame rate of a video output.",
)
@force_option
def decode(codes, model_path, output, solver, neighbours, fps, force):
    """Map codes back to frames with a pre-image solver.

    CODES is a .npy or text file (.txt, .csv) with one row of k codes per frame, or - for
    standard input.

    \b
    Examples:
      kpca decode codes.npy -m model.npz -o back.png
      kpca decode codes.txt -m model.npz -o frames/
      kpca encode held_out.png | kpca decode - -o back.png
    """
    from .model import KernelPCA
    from .outputs import check_frame_target, read_codes, write_frames, write_matrix

    refuse_overwriting_inputs([output], [codes, model_path], force)
    model = KernelPCA.load(model_path)
    values = model.check_codes(read_codes(codes))
    if output is None and not model.is_points:
        output = "-"
    if output == "-" and not model.is_points and sys.stdout.isatty():
        raise click.UsageError("refusing to write a PNG to the terminal; give -o FILE or pipe the output")
    check_frame_target(output, len(values), points=model.is_points)
    if model.is_points:
        write_matrix(model.decode(values, solver=solver, neighbours=neighbours), output)
    else:  # one frame at a time: a long clip never sits in memory
        frames = model.decode_iter(values, solver=solver, neighbours=neighbours)
        write_frames(frames, output, fps=fps, count=len(values))


@main.command()
@click.argument("sources", nargs=-1, required=True)
@model_option
@click.option(
    "-o",
    "--output",
    default=None,
    help="Where the denoised samples go: rows (.npy/.txt/.csv) for point models, or as for decode (out.png, DIR/, a video, -).",
)
@click.option(
    "--solver",
    type=click.Choice(sorted(SOLVERS)),
    default=None,
    help="Pre-image method; default fixed-point for rbf (started at the input), gradient otherwise.",
)
@click.option("--neighbours", type=click.IntRange(min=1), default=None, help="M for solvers that use neighbours.")
@resize_option
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@force_option
def denoise(sources, model_path, output, solver, neighbours, resize, quiet, force):
    """Denoise frames or points: encode, then decode starting at the input (seeds 001, 002, 004).

    The first k components of Φ(x) keep the structure of the training data; the pre-image of
    that projection, found by an iterative solver started at x itself, is the denoised x.
    Point data keeps its format: .csv in, .csv out (standard output when -o is absent).

    \b
    Examples:
      kpca fit train.csv -m toy.npz --kernel rbf --beta 10 -k 2 --center
      kpca denoise noisy.csv -m toy.npz -o clean.csv
      kpca denoise noisy_frames/ -m model.npz -o clean_frames/
    """
    from .model import KernelPCA
    from .outputs import check_frame_target, write_frames, write_matrix
    from .sources import expand_sources, iter_frames

    refuse_overwriting_inputs([output], [*sources, model_path], force)
    model = KernelPCA.load(model_path)
    model.progress = not quiet
    frames = list(iter_frames(sources, resize=_resize(resize)))
    if not frames:
        raise KpcaError("the sources hold no samples")
    if output is None and not model.is_points:
        output = "-"
    check_frame_target(output, len(frames), points=model.is_points)
    denoised, preimages = model.denoise(frames, solver=solver, neighbours=neighbours)
    failed = sum(not p.converged for p in preimages)
    if failed:
        click.echo(
            f"Note: {failed} of {len(preimages)} solves did not converge (their last iterate is written)", err=True
        )
    if model.is_points:
        first = expand_sources(sources)[0]
        delimiter = "," if output is None and first.lower().endswith(".csv") else None
        write_matrix(denoised, output, delimiter=delimiter)
    else:
        write_frames(denoised, output)


@main.command()
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "--beta-range",
    "beta_range",
    default=None,
    metavar="LO:HI:N",
    help="N values of β spaced logarithmically from LO to HI. Default: 0.001 to 10 times 1 / median squared distance, 17 values.",
)
@click.option(
    "-k",
    "ks",
    type=click.IntRange(min=1),
    multiple=True,
    help="Number of components (repeat the option). Default: 1, 2, 4, 8.",
)
@click.option(
    "--noise",
    type=float,
    default=None,
    help="Add Gaussian noise of this standard deviation to the held-out samples and measure denoising instead of reconstruction.",
)
@click.option(
    "--holdout", type=click.Choice(["odd", "middle"]), default="odd", show_default=True, help="Held-out samples."
)
@click.option(
    "--center/--no-center",
    default=None,
    help="Centre the kernel. Default: centred for points (as the seeds), uncentred for images (the log solver).",
)
@click.option(
    "--solver",
    type=click.Choice(sorted(SOLVERS)),
    default=None,
    help="Default: fixed-point with --noise; log (uncentred) or discrepancy (centred) otherwise.",
)
@resize_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--plot",
    "plot_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="Also plot the error against β to this PNG (needs matplotlib).",
)
def sweep(sources, beta_range, ks, noise, holdout, center, solver, resize, as_json, plot_path):
    """Held-out reconstruction or denoising error against the kernel width β and k.

    As seed 001 figure 7: prints one row per β and one column per k, marks the best β.

    \b
    Examples:
      kpca sweep points.csv --noise 0.1 -k 2 -k 4
      kpca sweep sample_data/hand/ -k 3 --beta-range 1e-8:1e-6:9 --json
      kpca sweep points.csv --plot sweep.png
    """
    from .sources import iter_frames
    from .sweep import best, parse_beta_range
    from .sweep import sweep as run_sweep

    samples = [frame.pixels for frame in iter_frames(sources, resize=_resize(resize))]
    shapes = {sample.shape for sample in samples}
    if len(shapes) > 1:
        raise KpcaError(f"samples of different shapes: {sorted(shapes)}; use --resize WxH")
    frames = np.stack(samples)
    points = frames.ndim == 2
    betas = None
    if beta_range is not None:
        low, high, count = parse_beta_range(beta_range)
        betas = np.geomspace(low, high, count)
    rows, betas = run_sweep(
        frames,
        betas=betas,
        ks=ks or (1, 2, 4, 8),
        noise=noise,
        holdout=holdout,
        center=points if center is None else center,
        solver=solver,
    )
    top = best(rows)
    measure = "mean_distance" if points else "psnr"
    if as_json:
        click.echo(
            json.dumps({"measure": measure, "best": top.as_dict(), "rows": [r.as_dict() for r in rows]}, indent=2)
        )
    else:
        click.echo(format_sweep(rows, betas, measure, noise))
    if plot_path is not None:
        from .plots import plot_sweep

        try:
            plot_sweep(rows, plot_path, measure)
        except KpcaError as error:
            click.echo(f"Note: {error}", err=True)


def format_sweep(rows, betas, measure: str, noise) -> str:
    """The table `kpca sweep` prints: β down, k across, the best cell marked with *."""
    from .sweep import best

    ks = sorted({row.k for row in rows})
    top = best(rows)
    label = "mean distance to the clean samples" if measure == "mean_distance" else "mean PSNR (dB)"
    lines = [f"{'denoising' if noise else 'reconstruction'}: {label}, held-out samples; * marks the lowest error", ""]
    lines.append(f"{'beta':>12}" + "".join(f"{'k = ' + str(k):>12}" for k in ks))
    for beta in betas:
        cells = []
        for k in ks:
            row = next(r for r in rows if r.beta == beta and r.k == k)
            mark = "*" if row is top else " "
            cells.append(f"{getattr(row, measure):>11.4f}{mark}")
        lines.append(f"{beta:>12.4g}" + "".join(cells))
    lines.append("")
    lines.append(f"best: beta = {top.beta:.4g}, k = {top.k} ({label} {getattr(top, measure):.4f})")
    failed = sum(row.not_converged for row in rows)
    if failed:
        lines.append(f"({failed} solves did not converge)")
    return "\n".join(lines)


@main.group()
def plot():
    """Plots of a model (matplotlib: pip install 'kpcacli[plot]')."""


@plot.command()
@model_option
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="PNG to write.")
@click.option(
    "-n",
    "count",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Number of kernel principal components.",
)
def components(model_path, output, count):
    """Lines of constant value of the first n kernel principal components (2-D point models).

    As seed 002 figure 1 and seed 001 figure 2, next to the first linear principal component.

    \b
    Examples:
      kpca plot components -m toy.npz -o levels.png
      kpca plot components -m toy.npz -o levels.png -n 4
    """
    from .model import KernelPCA
    from .plots import plot_components

    plot_components(KernelPCA.load(model_path), output, count)
    click.echo(f"wrote {output}", err=True)


@main.command(name="eval")
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "--holdout",
    type=click.Choice(["odd", "middle"]),
    default="odd",
    show_default=True,
    help="Held-out frames: every odd frame, or the middle one (seed 000).",
)
@click.option(
    "--solver",
    "solvers",
    multiple=True,
    type=click.Choice(sorted(SOLVERS)),
    help="Solver to compare (repeat the option). Default: all that apply to the kernel (gradient only below 250,000 pixels a frame).",
)
@click.option(
    "--neighbours", type=click.IntRange(min=1), default=None, help="M for every solver (default: each solver's own)."
)
@model_options
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--report",
    "report_dir",
    default=None,
    type=click.Path(file_okay=False),
    help="Write pictures (original | reconstruction | error, and the codes) to this folder.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
def evaluate_command(sources, holdout, solvers, neighbours, as_json, report_dir, quiet, **model):
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
      kpca eval long.mp4 -k 8 --landmarks 300 --solver log
    """
    import tempfile

    from .evaluation import GRADIENT_DEFAULT_MAX_PIXELS, evaluate
    from .sources import iter_frames
    from .store import FrameStore

    params, loading = split_model_options(model)
    with FrameStore(tempfile.gettempdir()) as store:
        frames = store.extend(iter_frames(sources, resize=loading.pop("resize")), progress=not quiet)
        result = evaluate(
            frames,
            frame_shape=store.frame_shape,
            holdout=holdout,
            solvers=list(solvers) or None,
            neighbours=neighbours,
            **loading,
            **params,
        )
    if not solvers and "gradient" not in [score.method for score in result.scores]:
        if result.model.frames_.shape[1] > GRADIENT_DEFAULT_MAX_PIXELS:
            click.echo(
                "Note: the pixel-space gradient solver is left out for frames this large; add --solver gradient",
                err=True,
            )
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2))
    else:
        click.echo(format_evaluation(result))
    if report_dir is not None:
        from .report import write_report

        try:
            written = write_report(result, report_dir)
        except KpcaError as error:  # matplotlib missing: the table is still useful
            click.echo(f"Note: {error}", err=True)
        else:
            click.echo(f"report: {len(written)} pictures in {report_dir}", err=True)


def format_evaluation(result) -> str:
    """The table `kpca eval` prints (PSNR and SSIM for images, distances for points)."""
    model = result.model
    params = ", ".join(f"{key}={value:.4g}" for key, value in model.kernel_.params().items())
    kind = "samples" if model.is_points else "frames"
    lines = [
        f"{result.total} {kind}: {len(result.train)} train, "
        f"{len(result.held_out)} held out; {model.kernel_.name}"
        + (f" ({params})" if params else "")
        + (", centred" if model.centred_ else ", uncentred")
        + f"; k = {model.n_components_} ({100 * model.explained_variance_ratio_:.1f}% of the variance)",
        "",
    ]
    if model.is_points:
        lines.append(f"{'method':<14}{'mean distance':>15}{'worst distance':>16}{'ms/sample':>11}")
    else:
        lines.append(f"{'method':<14}{'mean PSNR':>11}{'worst PSNR':>12}{'mean SSIM':>11}{'ms/frame':>10}")
    for score in result.scores:
        ms = f"{score.milliseconds:.2f}" if score.milliseconds is not None else "-"
        if model.is_points:
            lines.append(f"{score.method:<14}{np.mean(score.distances):>15.4g}{np.max(score.distances):>16.4g}{ms:>11}")
        else:
            lines.append(
                f"{score.method:<14}{score.mean_psnr:>11.2f}{score.worst_psnr:>12.2f}{score.mean_ssim:>11.4f}{ms:>10}"
            )
    return "\n".join(lines)


@main.command()
@model_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def info(model_path, as_json):
    """Describe a model: frames, kernel, k, explained variance, eigenvalues.

    \b
    Examples:
      kpca info -m model.npz
      kpca info -m model.npz --json | jq .k
    """
    from .model import KernelPCA

    model = KernelPCA.load(model_path)
    summary = model_summary(model, model_path)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    shape = summary["frame_shape"]
    size = f"{shape[1]}x{shape[0]} pixels" if len(shape) == 2 else f"{shape[0]} values"
    params = ", ".join(f"{key}={value:.6g}" for key, value in summary["kernel_params"].items())
    leading = " ".join(f"{value:.6g}" for value in summary["eigenvalues"][:10])
    lines = [
        ("model", f"{model_path} ({summary['file_size'] / 2**20:.1f} MiB, format {summary['format_version']})"),
        ("frames", f"{summary['frames']} of {size} ({summary['frame_dtype']})"),
        (
            "kernel",
            f"{summary['kernel']}"
            + (f" ({params})" if params else "")
            + (", centred" if summary["centred"] else ", uncentred"),
        ),
        ("k", f"{summary['k']} ({100 * summary['explained_variance']:.1f}% of the variance)"),
        ("eigenvalues", leading + (" ..." if summary["frames"] > 10 else "")),
    ]
    for label, value in lines:
        click.echo(f"{label:<12} {value}")


def model_summary(model, model_path) -> dict:
    """The facts `kpca info` reports, as a JSON-ready dict."""
    from .modelfile import FORMAT_VERSION

    return {
        "model": str(model_path),
        "file_size": Path(model_path).stat().st_size,
        "format_version": FORMAT_VERSION,
        "frames": int(model.frames_.shape[0]),
        "frame_shape": [int(v) for v in model.frame_shape_],
        "frame_dtype": str(model.frames_.dtype),
        "kernel": model.kernel_.name,
        "kernel_params": model.kernel_.params(),
        "centred": bool(model.centred_),
        "k": int(model.n_components_),
        "explained_variance": model.explained_variance_ratio_,
        "eigenvalues": [float(v) for v in model.eigenvalues_[:20]],
    }


@main.command()
@click.argument("original")
@click.argument("reconstruction")
@click.option(
    "-m",
    "--model",
    "model_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="Also report the PSNR of this model's mean training frame, for reference.",
)
@click.option("-o", "--output", default=None, help="Write original | reconstruction side by side to this image.")
@force_option
def compare(original, reconstruction, model_path, output, force):
    """Print the PSNR of a reconstruction against the original frame.

    \b
    Examples:
      kpca compare held_out.png back.png
      kpca compare held_out.png back.png -m model.npz -o side_by_side.png
    """
    from .metrics import psnr
    from .outputs import write_frames
    from .sources import iter_frames

    refuse_overwriting_inputs([output], [original, reconstruction], force)

    reference = next(iter(iter_frames([original]))).pixels
    estimate = next(iter(iter_frames([reconstruction]))).pixels
    if reference.shape != estimate.shape:
        raise KpcaError(f"'{original}' is {reference.shape} but '{reconstruction}' is {estimate.shape}")
    click.echo(f"reconstruction       PSNR {psnr(reference, estimate):6.2f} dB")
    if model_path is not None:
        from .model import KernelPCA

        model = KernelPCA.load(model_path)
        mean = model.mean_frame()
        if mean.shape != reference.shape:
            raise KpcaError(f"model '{model_path}' has frames of shape {mean.shape}, '{original}' is {reference.shape}")
        click.echo(f"mean training frame  PSNR {psnr(reference, mean):6.2f} dB")
    if output is not None:
        if reference.dtype != estimate.dtype:
            estimate = estimate.astype(reference.dtype)
        gap = np.full(
            (reference.shape[0], max(2, reference.shape[1] // 100)), np.iinfo(np.uint8).max, dtype=reference.dtype
        )
        write_frames(np.hstack([reference, gap, estimate])[np.newaxis], output)
        click.echo(f"side by side -> {output}", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
