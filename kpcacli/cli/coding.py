"""``kpca encode``, ``decode``, ``denoise`` and ``extract``: frames to codes and back."""

from __future__ import annotations

import click

import kpcacli.cli.options as options  # not `from . import`: that imports kpcacli.cli, which imports this

from .shared import check_outputs, frame_request, note, warn


@click.command(short_help="Map frames to k codes each, one row per frame.")
@click.argument("sources", nargs=-1, required=True)
@options.model_option
@click.option(
    "-o", "--output", default=None, help="Codes file: .npy, .txt or .csv; - or absent for text on standard output."
)
@options.frames_option
@options.resize_option
@options.dtype_option
@options.scheduler_option
@options.device_option
@options.quiet_option
@options.force_option
def encode(sources, model_path, output, selection, resize, dtype, scheduler, device, quiet, force):
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
      kpca encode long.mp4 -m model.npz -o codes.npy --device cuda   (products on a GPU, the same codes)
      cat frame.png | kpca encode - -m model.npz
    """
    from ..workflows import encode_sources

    check_outputs([(output, "rows", "-o")], [*sources, model_path], force)
    result = encode_sources(
        frame_request(sources, selection, resize),
        model_path,
        output=output,
        dtype=dtype,
        scheduler=scheduler,
        progress=not quiet,
        device=device,
    )
    warning = result.novelty.warning()
    if warning is not None:
        warn(warning)


@click.command(short_help="Map codes back to frames with a pre-image solver.")
@click.argument("codes")
@options.model_option
@click.option(
    "-o",
    "--output",
    default=None,
    help="out.png for one frame, DIR/ for one PNG per row, a video (.mp4, .gif, ...), or - for one PNG on "
    "standard output (the default). Point models: .npy/.txt/.csv rows, or text on standard output.",
)
@options.solver_option(
    default=None,
    note="Default: auto, the solver that decoded training frames held back best when the model was fitted "
    "(kpca info names it).",
)
@options.neighbours_option
@options.video_options
@options.scheduler_option
@options.device_option
@options.quiet_option
@options.decode_force_option
def decode(codes, model_path, output, solver, neighbours, video, scheduler, device, quiet, force):
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
      kpca decode codes.npy -m model.npz -o back.mkv --solver transport   (moves pixels where things move)
      kpca decode codes.npy -m model.npz -o frames/ --solver learned --device cuda   (sums on a GPU)
    """
    from ..workflows import decode_codes

    check_outputs([(output, None, "-o")], [codes, model_path], force)
    decode_codes(
        codes,
        model_path,
        output=output,
        solver=solver,
        neighbours=neighbours,
        video=video,
        force=force,
        warn=warn,
        scheduler=scheduler,
        progress=not quiet,
        device=device,
    )


@click.command(short_help="Denoise frames or points: encode, then decode from the input.")
@click.argument("sources", nargs=-1, required=True)
@options.model_option
@click.option(
    "-o",
    "--output",
    default=None,
    help="Where the denoised samples go: rows (.npy/.txt/.csv) for point models, or as for decode "
    "(out.png, DIR/, a video, -).",
)
@options.solver_option(
    default=None,
    note="Default: auto, the denoiser the model chose at fit, under noise (kpca info names it on its "
    "denoiser line); fixed-point and gradient start at the input.",
)
@options.neighbours_option
@options.frames_option
@options.resize_option
@options.video_options
@options.scheduler_option
@options.device_option
@options.quiet_option
@options.force_option
def denoise(sources, model_path, output, solver, neighbours, selection, resize, video, scheduler, device, quiet, force):
    """Denoise frames or points: encode, then decode starting at the input.

    The first k components of Φ(x) keep the structure of the training data; the pre-image of
    that projection is the denoised x: by the model's denoiser for frames (the solver that
    denoised held-back frames best at fit; kpca info names it), by Mika's fixed point
    (Gaussian kernel) or the gradient solver (others) for points, the iterative solvers started
    at x itself (Schölkopf et al. 1998; Mika et al. 1999). A frame the model was fitted on is
    denoised from the other training frames, not from its own noisy copy. Point data keeps its
    format: .csv in, .csv out (standard output when -o is absent).

    \b
    Examples:
      kpca fit train.csv -m toy.npz --kernel rbf --beta 10 -k 2 --center
      kpca denoise noisy.csv -m toy.npz -o clean.csv
      kpca denoise noisy_frames/ -m model.npz -o clean_frames/   (clean_frames/ keeps the names)
      kpca denoise noisy.mp4 -m model.npz -o clean.mp4 --crf 12 --fps 30
      kpca denoise noisy_colour.mp4 -m colour.npz -o clean.mp4 --chroma 444
      kpca denoise noisy_frames/ -m model.npz -o clean_frames/ --device cuda:1   (the second GPU)
    """
    from ..workflows import denoise_sources

    check_outputs([(output, None, "-o")], [*sources, model_path], force)
    result = denoise_sources(
        frame_request(sources, selection, resize),
        model_path,
        output=output,
        solver=solver,
        neighbours=neighbours,
        video=video,
        scheduler=scheduler,
        progress=not quiet,
        device=device,
    )
    if result.not_converged:
        note(f"{result.not_converged} of {result.samples} solves did not converge (their last iterate is written)")


@click.command(short_help="Write the frames encode would see, as images or a video.")
@click.argument("sources", nargs=-1, required=True)
@options.frames_option
@click.option(
    "-o",
    "--output",
    required=True,
    help="out.png for one frame, DIR/ for one PNG per frame (named after the inputs), or a video (.mp4, .mkv, ...).",
)
@options.resize_option
@options.extract_colour_option
@options.video_options
@options.quiet_option
@options.force_option
def extract(sources, selection, output, resize, colour, video, quiet, force):
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
    from ..workflows import extract_frames

    check_outputs([(output, "frames", "-o")], sources, force)
    count = extract_frames(frame_request(sources, selection, resize, colour), output, video=video, progress=not quiet)
    click.echo(f"wrote {count} frame{'s' if count != 1 else ''} -> {output}", err=True)


@click.command(short_help="Frames at new parameter values (models fitted with --params).")
@click.argument("params_table", required=False, metavar="[PARAMS]")
@options.model_option
@click.option(
    "-o",
    "--output",
    default=None,
    help="out.png for one row, DIR/ for one PNG per row, a video (.mp4, ...), a .npy stack of the frames, or - "
    "for one PNG on standard output (the default). Point models: .npy/.txt/.csv rows, or text on standard output.",
)
@click.option(
    "--param",
    "param",
    multiple=True,
    metavar="NAME=VALUE",
    help="One row of parameter values by name, instead of PARAMS (repeat for each parameter).",
)
@click.option(
    "--codes",
    "codes_path",
    default=None,
    help="Also write the codes the frames come from (.npy, .txt, .csv): the map's; with the transport solver, "
    "the codes of the training frames it moved, weighted as they were.",
)
@click.option(
    "--std",
    "std_path",
    default=None,
    help="Also write each predicted code's standard deviation (.npy, .txt, .csv): the Gaussian-process map's.",
)
@click.option(
    "--map",
    "map",
    type=click.Choice(["auto", "thin-plate", "gaussian-process"]),
    default="auto",
    show_default=True,
    help="The map from parameters to codes: auto is the one with the smaller leave-one-out error at fit "
    "(kpca info names it). The transport solver uses none (refused beside --solver transport).",
)
@options.solver_option(default=None, note="Default: auto, the solver the model chose at fit (kpca info names it).")
@options.neighbours_option
@options.video_options
@options.quiet_option
@options.force_option
def predict(
    params_table,
    model_path,
    output,
    param,
    codes_path,
    std_path,
    map,
    solver,
    neighbours,
    video,
    quiet,
    force,
):
    """Frames for parameter values never seen: the model's map gives their codes, the
    pre-image their frames (a model fitted with kpca fit --params). The transport solver
    instead moves the training frames nearest in parameter space toward one another, by where
    the values lie among them: no map is used.

    PARAMS is a table of parameter values, one row per frame to predict: a .csv or text file
    whose first line may name the columns (in any order; else in the model's order), a .npy
    array, or - for standard input. Values outside the training range are predicted after a
    warning: the map extrapolates there.

    \b
    Examples:
      kpca fit hand/ -m hand.npz -k 8 --params phases.csv
      kpca predict new_phases.csv -m hand.npz -o predicted/
      kpca predict --param phase=0.37 -m hand.npz -o hand_037.png
      kpca predict --param phase=0.37 -m hand.npz -o hand_037.png --solver transport   (frames moved, not blended)
      kpca predict sweep.csv -m hand.npz -o sweep.mp4 --codes sweep_codes.npy
      kpca predict loads.csv -m field.npz -o fields.npy --map gaussian-process --std sigma.npy
    """
    from ..workflows import predict_frames

    outputs = [(output, None, "-o"), (codes_path, "rows", "--codes"), (std_path, "rows", "--std")]
    check_outputs(outputs, [model_path, params_table], force)
    predict_frames(
        params_table,
        model_path,
        output=output,
        assignments=param,
        codes_path=codes_path,
        std_path=std_path,
        map=map,
        solver=solver,
        neighbours=neighbours,
        video=video,
        warn=warn,
        note=note,
        progress=not quiet,
    )
