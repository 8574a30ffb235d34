"""Every command-line option shared by more than one command, declared once.

Choices come from the library's constants and help from the library's own summaries, so the
command line cannot drift from what the library accepts. Values are only parsed here; the
library checks them (:mod:`kpcacli.utils.checks`), whichever way they come in.
"""

from __future__ import annotations

import functools

import click

from ..estimators.fitting import DEFAULT_EPS
from ..io.sources import FrameSelection, parse_size
from ..io.videowriter import VideoSettings
from ..preimage import AUTO, SOLVERS, neighbours_help, solver_help
from ..utils.hyperparameters import KERNELS, LANDMARK_METHODS
from ..workflows import HOLDOUTS

SOLVER_NAMES = click.Choice([AUTO, *sorted(SOLVERS)])


def compose(*decorators):
    """One decorator applying `decorators` in order (the first is the outermost option)."""

    def apply(function):
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


def _size(context, parameter, value):
    return parse_size(value) if value is not None else None


def _frames(context, parameter, value):
    return FrameSelection.parse(value) if value is not None else None


frames_option = click.option(
    "--frames",
    "selection",
    metavar="SLICE",
    default=None,
    callback=_frames,
    help="Only these frames, counted from 0 across all the sources in order, in Python slice syntax: "
    "5 (frame 5), 10:20 (10 to 19), ::2 (the even ones), 1::2 (the odd ones), -10: (the last ten).",
)
fps_option = click.option(
    "--fps",
    type=float,
    default=None,
    help="Frame rate of a video output. Default: the source video's own (for decode, that of the video the "
    "model was fitted on; 25 for images).",
)
crf_option = click.option(
    "--crf",
    type=int,
    default=None,
    help="Quality of an .mp4, .mov, .avi (H.264, 0-51) or .webm (VP9, 0-63) output: lower is better and "
    "larger, 0 is lossless. Default: visually lossless (8 for H.264, 6 for VP9). .mkv (FFV1) is always lossless; "
    ".gif is lossless for grey frames and a palette of 256 colours a frame for colour ones (a warning says so).",
)
chroma_option = click.option(
    "--chroma",
    type=click.Choice(["420", "444"]),
    default=None,
    help="Colour resolution of an .mp4, .mov, .avi or .webm output of colour frames: 420 (the default, as "
    "browsers and most players need) or 444 (full colour resolution; ffmpeg-based players). .mkv keeps RGB.",
)


def video_options(function):
    """``--fps``, ``--crf`` and ``--chroma``, given to the command as one
    :class:`kpcacli.io.videowriter.VideoSettings`, `video`."""

    @functools.wraps(function)
    def with_video(*args, fps, crf, chroma, **kwargs):
        return function(*args, video=VideoSettings(fps, crf, chroma), **kwargs)

    return compose(fps_option, crf_option, chroma_option)(with_video)


colour_option = click.option(
    "--colour",
    "colour",
    is_flag=True,
    help="Model RGB frames, as vectors of 3 x height x width values (default: grey). Encode, decode, "
    "denoise follow the model.",
)
extract_colour_option = click.option(
    "--colour",
    "colour",
    is_flag=True,
    help="Write the frames in RGB, as a colour model (fit --colour) reads them (default: grey, as every "
    "command reads them).",
)
quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output (JSON).")
FORCE_HELP = (
    "Allow an output to replace a file kpca did not write (or wrote as another kind: codes with a model), "
    "or one of the inputs."
)
force_option = click.option("--force", is_flag=True, help=FORCE_HELP)
decode_force_option = click.option(
    "--force", is_flag=True, help=FORCE_HELP[:-1] + "; and decode text codes that name another model."
)
dtype_option = click.option(
    "--dtype",
    type=click.Choice(["float64", "float32"]),
    default="float64",
    show_default=True,
    help="Codes' precision: float64 decodes exactly as encoded; float32 halves the codes' size.",
)
resize_option = click.option(
    "--resize",
    metavar="WxH",
    default=None,
    callback=_size,
    help="Resize every image frame to W x H pixels (e.g. 640x360).",
)
model_option = click.option(
    "-m",
    "--model",
    "model_path",
    envvar="KPCA_MODEL",
    default="model.npz",
    show_default=True,
    type=click.Path(),
    help="Model: one file (default: $KPCA_MODEL or model.npz), a directory (e.g. -m clip.zarr) or a URL "
    "workers elsewhere can read (e.g. -m file:///shared/clip.zarr, or s3://bucket/clip.zarr with s3fs).",
)
scheduler_option = click.option(
    "--scheduler",
    metavar="ADDRESS",
    envvar="DASK_SCHEDULER_ADDRESS",
    default=None,
    help="Run on a dask.distributed cluster: its scheduler's address, e.g. tcp://10.0.0.5:8786 (default: "
    "$DASK_SCHEDULER_ADDRESS; none: in this process). Workers must read the sources, and the model, at the "
    "same paths. Needs pip install 'kpcacli[cluster]'.",
)
device_option = click.option(
    "--device",
    metavar="cpu|cuda[:N]",
    default="cpu",
    show_default=True,
    help="Where the array algebra runs (fit: the Gram and the eigenproblem; encode and denoise: the products "
    "with the training frames; decode and denoise: the sums of training frames that form the pre-images): cpu, "
    "or cuda or cuda:N, an NVIDIA GPU through CuPy (pip install 'kpcacli[gpu]') or a CUDA PyTorch. The same "
    "Gram, codes and frames for 8- and 16-bit frames.",
)
neighbours_option = click.option(
    "--neighbours",
    type=int,
    default=None,
    help="M, the distinct nearest training samples (in reduced space) a pre-image is built from. "
    f"Default: the solver's own ({neighbours_help()}).",
)
holdout_option = click.option(
    "--holdout",
    type=click.Choice(HOLDOUTS),
    default="odd",
    show_default=True,
    help="Held-out frames: every odd frame, every third frame from the second, or the middle one "
    "(as García-González et al. 2021).",
)


def solver_option(default: str | None = None, multiple: bool = False, note: str = ""):
    """``--solver``, its help built from every solver's own summary."""
    return click.option(
        "--solver",
        "solvers" if multiple else "solver",
        type=SOLVER_NAMES,
        default=() if multiple else default,
        multiple=multiple,
        show_default=default is not None and not multiple,
        help=(note + " " if note else "") + "Pre-image methods: " + solver_help() + ".",
    )


def center_option(default: bool | None = False, note: str = ""):
    """``--center/--no-center``."""
    return click.option(
        "--center/--no-center",
        default=default,
        show_default=default is not None,
        help="Centre the kernel in feature space (eqs. 24-25). " + note,
    )


model_options = compose(
    click.option("-k", "n_components", type=int, default=None, help="Number of components k."),
    click.option(
        "--eps",
        type=float,
        default=None,
        help=f"Variance tolerance ε (eq. 3): the smallest k keeping 1-ε of the variance. Default {DEFAULT_EPS} "
        "when -k is not given.",
    ),
    click.option("--kernel", type=click.Choice(KERNELS), default="rbf", show_default=True, help="Kernel."),
    click.option(
        "--beta",
        type=float,
        default=None,
        help="Gaussian width β in exp(-β|x-y|²). Default: 1 / median pairwise squared distance.",
    ),
    click.option(
        "--gamma", type=float, default=None, help="Dot-product scale γ of poly and sigmoid. Default: 1 / median |x|²."
    ),
    click.option("--degree", type=int, default=3, show_default=True, help="Degree p of the polynomial kernel."),
    click.option("--coef0", type=float, default=None, help="Offset c of poly (default 1) and sigmoid (default 0)."),
    center_option(False, "The default decoders (distance, log) need --no-center."),
    resize_option,
    click.option(
        "--landmarks",
        type=int,
        default=None,
        help="Fit on this many frames chosen across the clip (for clips of thousands of frames); "
        "the model keeps only them.",
    ),
    click.option(
        "--landmark-method",
        type=click.Choice(LANDMARK_METHODS),
        default="uniform",
        show_default=True,
        help="Landmarks evenly spaced in time, or by farthest-point sampling in kernel distance.",
    ),
    colour_option,
)
