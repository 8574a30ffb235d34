"""``kpca fit``, ``kpca info`` and ``kpca plot components``: making a model and describing it."""

from __future__ import annotations

import json

import click

import kpcacli.cli.options as options  # not `from . import`: that imports kpcacli.cli, which imports this

from ..utils.checks import percent
from .shared import check_outputs, estimator_of, frame_request, note


@click.command(short_help="Fit a kernel-PCA model to frames and save it.")
@click.argument("sources", nargs=-1, required=True)
@options.model_option
@options.model_options
@click.option(
    "--codes",
    "codes_path",
    default=None,
    help="Also write the codes of every input frame (.npy, .txt, .csv), as kpca encode would.",
)
@click.option(
    "--store",
    type=click.Choice(["source", "lossless", "compact"]),
    default=None,
    help="How the model keeps 8-bit frames. By default the smallest exact store (training frames come back bit "
    "for bit): source, the clip's own H.264, HEVC, VP8, VP9 or AV1 packets copied (about the clip's size), where "
    "the frames come from one such video, unresized, or image files' own bytes where smaller; lossless (lossless "
    "H.264 in groups of 32) otherwise. Ask for "
    "lossless to decode single frames of a clip with long groups of pictures faster. compact is lossy H.264 at "
    "--store-crf N, smaller; fit and info print its PSNR, and the model is fitted to the frames as stored.",
)
@click.option(
    "--store-crf",
    type=int,
    default=None,
    help="A lossy store at this H.264 rate factor: 0 (lossless) to 51, higher is smaller (as ffmpeg's -crf).",
)
@click.option(
    "--params",
    "params",
    default=None,
    metavar="PARAMS",
    help="The parameters each chosen frame was made at, one row per frame in order: a .csv or text table whose "
    "first line may name the columns, a .npy array, or -. The model also maps parameters to codes (kpca predict).",
)
@options.solver_option(
    default=None,
    note="The model's default solver for decode and denoise. Default: auto, measured at fit on held-back "
    "training frames (kpca info gives the scores); a solver named here is not measured, and the fit is faster.",
)
@options.frames_option
@options.scheduler_option
@options.device_option
@options.quiet_option
@options.force_option
def fit(
    sources,
    model_path,
    codes_path,
    store,
    store_crf,
    params,
    solver,
    selection,
    resize,
    colour,
    landmarks,
    landmark_method,
    scheduler,
    device,
    quiet,
    force,
    **model_options,
):
    """Fit a kernel-PCA model to frames and save it.

    SOURCES are folders of images (natural order), image files, glob patterns, videos,
    multi-frame TIFFs, .npy/.csv matrices of row vectors, or - for standard input.

    \b
    Examples:
      kpca fit sample_data/hand/ -m model.npz --eps 0.5
      kpca fit clip.mp4 -m clip.npz -k 3 --beta 1e-7
      kpca fit clip.mp4 -m even.npz -k 8 --frames ::2
      kpca fit clip.mp4 -m moving.npz -k 8 --solver transport
      kpca fit jpegs/ -m own.npz -k 8 --store source       (the files kept as they are)
      kpca fit clip.mp4 -m exact.npz -k 8 --store lossless
      kpca fit clip.mp4 -m small.npz -k 8 --store-crf 18
      kpca fit points.csv -m toy.npz --kernel rbf --beta 10 -k 2 --center
      kpca fit long.mp4 -m long.npz -k 8 --landmarks 300 --codes long_codes.npy
      kpca fit colour_clip.mp4 -m colour.npz -k 8 --colour
      kpca fit /shared/long.mp4 -m /shared/long.npz --landmarks 500 --scheduler tcp://10.0.0.5:8786
      kpca fit snapshots/ -m field.npz -k 8 --params loads.csv   (then: kpca predict new_loads.csv)
      kpca fit long_1080p.mp4 -m long.npz -k 8 --device cuda   (the Gram and eigenproblem on a GPU)
    """
    from ..workflows import fit_sources

    check_outputs([(model_path, "model", "-m"), (codes_path, "rows", "--codes")], [*sources, params], force)
    state = fit_sources(
        frame_request(sources, selection, resize, colour),
        model_path,
        model=estimator_of(model_options, progress=not quiet, solver=solver, device=device),
        landmarks=landmarks,
        landmark_method=landmark_method,
        codes_path=codes_path,
        scheduler=scheduler,
        store=store,
        store_crf=store_crf,
        params=params,
    ).state_
    kind = "samples" if state.is_points else "frames"
    if landmarks is not None and landmarks > state.n_samples:  # fewer chosen than asked for
        note(f"--landmarks {landmarks} is more than the {state.n_samples} {kind} chosen: the model keeps them all")
    click.echo(
        f"fitted {state.n_samples} {kind}, k = {state.n_components} "
        f"({percent(state.explained_variance_ratio)} of the variance) -> {model_path}",
        err=True,
    )
    from ..workflows import fit_report

    for line in fit_report(state, model_path):
        click.echo(f"  {line}", err=True)


@click.group(short_help="Plots of a model (matplotlib).")
def plot():
    """Plots of a model (matplotlib: pip install 'kpcacli[plot]')."""


@plot.command(short_help="Lines of constant value of the first kernel components.")
@options.model_option
@click.option("-o", "--output", required=True, help="PNG to write.")
@click.option("-n", "count", type=int, default=8, show_default=True, help="Number of kernel principal components.")
@options.force_option
def components(model_path, output, count, force):
    """Lines of constant value of the first n kernel principal components (2-D point models).

    As Schölkopf et al. (1998), figure 1, next to the first linear principal component.

    \b
    Examples:
      kpca plot components -m toy.npz -o levels.png
      kpca plot components -m toy.npz -o levels.png -n 4
      kpca plot components -m toy.npz -o figure.png --force   (replace a PNG kpca did not write)
    """
    from ..estimators.estimator import FrameModel
    from ..workflows import plot_components

    check_outputs([(output, "frames", "-o")], [model_path], force)
    plot_components(FrameModel.load(model_path), output, count)
    click.echo(f"wrote {output}", err=True)


@click.command(short_help="Describe a model: frames, kernel, k, eigenvalues, sizes.")
@options.model_option
@options.json_option
def info(model_path, as_json):
    """Describe a model: frames, kernel, k, explained variance, eigenvalues.

    \b
    Examples:
      kpca info -m model.npz
      kpca info -m model.npz --json | jq .k
    """
    from ..workflows import ModelSummary

    summary = ModelSummary.of_file(model_path)
    click.echo(json.dumps(summary.as_dict(), indent=2) if as_json else summary.format_text())
