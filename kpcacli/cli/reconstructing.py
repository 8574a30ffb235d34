"""``kpca reconstruct`` and ``kpca sensors``: whole frames from part of them (a mask, or readings
at sensors), and where to put the sensors."""

from __future__ import annotations

import json

import click

import kpcacli.cli.options as options  # not `from . import`: that imports kpcacli.cli, which imports this

from ..estimators.reconstruction import DEFAULT_ROUNDS
from ..utils.checks import percent
from .shared import check_outputs, frame_request, note


@click.command(short_help="Whole frames from part of them: a mask, or readings at sensors.")
@click.argument("sources", nargs=-1, required=True)
@options.model_option
@click.option(
    "--mask",
    metavar="MASK",
    default=None,
    help="Where the frames are observed (non-zero) and hidden (zero): one image for every frame, or a folder "
    "or video of masks, one a frame in order; of the model's frame size.",
)
@click.option(
    "--mask-threshold",
    "mask_threshold",
    type=float,
    metavar="T",
    default=None,
    help="Count mask values below T as hidden, at or above it as observed (default: every non-zero value is "
    "observed, and a mask with values between 0 and its largest, a lossy image's edges, is warned of).",
)
@click.option(
    "--sensors",
    "sensors_path",
    metavar="SENSORS",
    default=None,
    help="A sensor file (CSV: index, or row,col; kpca sensors writes one): SOURCES is then one file of "
    "readings (.npy, .txt, .csv, or - for standard input), one row a frame, one column a sensor.",
)
@click.option(
    "-o",
    "--output",
    default=None,
    help="Where the whole frames go, as decode writes them (out.png, DIR/, a video, - for one PNG on standard "
    "output); rows (.npy/.txt/.csv) for point models.",
)
@click.option(
    "--replace",
    is_flag=True,
    help="Give the frame kept everywhere (a pre-image, or the nearest training frame), not only where hidden.",
)
@click.option(
    "--rounds",
    type=int,
    default=DEFAULT_ROUNDS,
    show_default=True,
    help="The most rounds of encode, decode, refill the hidden values; they stop sooner once these settle.",
)
@options.solver_option(default=None, note="Default: auto, the solver the model chose at fit (kpca info names it).")
@options.neighbours_option
@options.frames_option
@options.resize_option
@options.video_options
@options.scheduler_option
@options.json_option
@options.quiet_option
@options.force_option
def reconstruct(
    sources,
    model_path,
    mask,
    mask_threshold,
    sensors_path,
    output,
    replace,
    rounds,
    solver,
    neighbours,
    selection,
    resize,
    video,
    scheduler,
    as_json,
    quiet,
    force,
):
    """Whole frames from the part of them that is observed.

    The hidden values start from the training frame nearest on the observed ones; then rounds
    of encode, decode and refill bring them to what the model holds (kpca's kernel model and
    pre-images in place of gappy POD's linear modes). The observed values are kept as given
    unless --replace. Each frame gets an error estimate without ground truth: the
    root-mean-square gap between its observed values and the model's pre-image of them, in grey
    levels (--json lists it for every frame).

    \b
    Examples:
      kpca reconstruct occluded/ --mask logo.png -m model.npz -o whole/
      kpca reconstruct clip.mp4 --mask masks/ -m model.npz -o whole.mp4
      kpca reconstruct readings.csv --sensors sensors.csv -m model.npz -o frames/
      cat readings.txt | kpca reconstruct - --sensors sensors.csv -m model.npz -o - > frame.png
    """
    from ..estimators.reconstruction import ReconstructOptions
    from ..utils.hyperparameters import check

    if (mask is None) == (sensors_path is None):
        raise click.UsageError("give --mask (frames seen in part) or --sensors (readings at sensors), one of them")
    if mask_threshold is not None and mask is None:
        raise click.UsageError("--mask-threshold applies to --mask")
    if as_json and output in (None, "-"):
        raise click.UsageError("--json prints to standard output: give -o a file, folder or video for the frames")
    completion = ReconstructOptions(
        replace=replace, rounds=check("rounds", rounds), solver=solver, neighbours=neighbours
    )
    if sensors_path is not None:
        from ..workflows import reconstruct_readings

        if len(sources) != 1 or selection is not None or resize is not None:
            raise click.UsageError("with --sensors give one file of readings, without --frames or --resize")
        check_outputs([(output, None, "-o")], [sources[0], sensors_path, model_path], force)
        done = reconstruct_readings(
            sources[0],
            sensors_path,
            model_path,
            output=output,
            options=completion,
            video=video,
            scheduler=scheduler,
            progress=not quiet,
        )
    else:
        from ..workflows import reconstruct_sources

        check_outputs([(output, None, "-o")], [*sources, mask, model_path], force)
        done = reconstruct_sources(
            frame_request(sources, selection, resize),
            model_path,
            masks=frame_request([mask]),
            mask_threshold=mask_threshold,
            output=output,
            options=completion,
            video=video,
            scheduler=scheduler,
            progress=not quiet,
        )
    summary = done.as_json()
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    worst = max(summary["frames"], key=lambda frame: frame["estimate"])
    count = len(done.names)
    note(
        f"{count} frame{'s' if count != 1 else ''}, {percent(sum(done.hidden) / count)} of the values hidden; "
        f"error estimate (RMS gap between the observed values and the frame filled in): mean "
        f"{summary['mean_estimate']:.3g}, largest {worst['estimate']:.3g} ({worst['name']})"
    )
    from ..estimators.reconstruction import NEAREST

    looked_up = done.kept.count(NEAREST)
    if looked_up:
        note(
            f"{looked_up} of {count} frames filled from the training frame nearest on the observed values: "
            "neither the model's frame between the two nearest nor any round agreed better with them"
        )
    unsettled = len(done.converged) - sum(done.converged)
    if unsettled:
        note(f"{unsettled} of {len(done.names)} frames were still changing after {rounds} rounds (--rounds)")


@click.command(short_help="Where to read frames: P sensor locations chosen for a model.")
@options.model_option
@click.option("-n", "count", type=int, required=True, help="P, the number of sensors.")
@click.option(
    "-o",
    "--output",
    default=None,
    help="The sensor file (CSV: index, row, col; channel in colour); default: standard output.",
)
@options.quiet_option
@options.force_option
def sensors(model_path, count, output, quiet, force):
    """P sensor locations for a model: the values of a frame whose readings tell its training
    frames apart best, the best first (QR with column pivoting of the centred training frames,
    as PySensors pivots on linear modes). The file lists them one a row, with its header;
    kpca reconstruct --sensors reads it, and the readings' columns follow its order.

    \b
    Examples:
      kpca sensors -m model.npz -n 40 -o sensors.csv
      kpca reconstruct readings.csv --sensors sensors.csv -m model.npz -o frames/
    """
    from ..workflows import choose_sensors

    check_outputs([(output, "sensors", "-o")], [model_path], force)
    choose_sensors(model_path, count, output=output, progress=not quiet)
