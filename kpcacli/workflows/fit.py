"""``kpca fit``: frames in, a saved model out, over an engine."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

from ..estimators.estimator import FrameModel
from ..io.codes import codes_header, write_matrix
from ..io.request import FrameRequest
from ..modelfile import save as save_state
from ..modelfile import with_saved_frames
from ..modelfile.storechoice import check_store, model_store
from ..modelfile.zarrlayout import is_directory_target, is_url
from ..numerics.landmarks import check_landmarks
from ..utils.atomic import check_target, check_writable
from ..utils.errors import InputWarning, param
from .fitparameters import kept_rows, read_fit_parameters
from .running import engine_for


def fit_sources(
    request: FrameRequest,
    model_path,
    *,
    model: FrameModel | None = None,
    landmarks: int | None = None,
    landmark_method: str = "uniform",
    codes_path: str | None = None,
    scheduler: str | None = None,
    store: str | None = None,
    store_crf: int | None = None,
    params: str | None = None,
    stdin=None,
) -> FrameModel:
    """``kpca fit``: fit `model` (an unfitted :class:`FrameModel`: its parameters; default
    ones when None) to the frames of `request` and save it to `model_path` (a file, a directory
    or a URL: :mod:`kpcacli.modelfile`).

    The frames are held by the engine in a temporary store beside a local model (on the file
    system that will hold it), else in the temporary folder; it disappears whatever happens.

    Parameters
    ----------
    landmarks : int, optional
        Fit on this many frames chosen across the clip (:mod:`kpcacli.numerics.landmarks`); the model
        keeps only them.
    landmark_method : {"uniform", "farthest"}
    codes_path : str, optional
        Also write the codes of every chosen frame, in order (landmarks or not), as
        ``kpca encode`` would.
    scheduler : str, optional
        A dask.distributed scheduler's address: load, compute the Gram and encode on its
        workers; the model is the same file.
    store : {"source", "lossless", "compact"}, optional
        How the model keeps 8-bit frames (:mod:`kpcacli.modelfile.storechoice`). By default the
        smallest exact store: the clip's own packets copied ("source") where the frames come
        from one video that allows it, else lossless H.264 ("lossless"); training frames come
        back bit for bit. "compact" is lossy H.264 at `store_crf`; the model is fitted to the
        frames as stored.
    store_crf : int, optional
        A lossy store's rate factor, 0 (lossless) to 51.
    params : str, optional
        A table of the parameters each chosen frame was made at (a file or ``-``: `stdin`;
        :mod:`kpcacli.io.parametertable`): the model also fits a map from parameters to codes
        (:mod:`kpcacli.estimators.parametric`).
    """
    local = not is_url(model_path)
    if local and not is_directory_target(model_path):
        check_target(model_path)
    elif local:
        check_writable(str(model_path).rstrip("/"))  # the folder that will hold the model's
    model = model if model is not None else FrameModel()
    model.check_parameters()  # before reading any frame
    check_landmarks(landmarks, landmark_method)
    check_store(store, store_crf)
    values, names = read_fit_parameters(params, request, stdin) if params is not None else (None, None)
    directory = Path(str(model_path).rstrip("/")).parent if local else tempfile.gettempdir()
    with (
        engine_for(scheduler, model.progress) as engine,
        engine.training(request, directory, landmarks=landmarks, landmark_method=landmark_method) as training,
    ):
        kept = training.store
        if kept.grey_in_colour:
            warnings.warn(
                f"the frames are grey (R = G = B in every frame): {param('colour')} keeps three times their values "
                "for the same model; fit without it",
                InputWarning,
                stacklevel=1,
            )
        with model_store(kept, store, store_crf, model.progress, training.source) as stored:
            model.fit(
                stored.frames,
                frame_shape=kept.frame_shape,
                names=kept.names,
                gram=training.linear_gram() if stored.exact else None,  # else the stored frames' own
                provenance=request.provenance(training.indices, training.chosen, total=training.total),
                params=None
                if values is None
                else kept_rows(values, names, request, training.indices, training.chosen, training.total),
                param_names=names,
            )
            codes = training.codes_of_all(model.state_) if codes_path is not None else None
            encoded = stored.finished(model.progress)
            model.state_ = save_state(
                model.state_,
                model_path,
                progress=model.progress,
                compressor=training.compressor,
                encoded=encoded,
            )
    # The store is gone: the model holds the frames.
    model.state_ = with_saved_frames(model.state_, model_path, encoded)
    if codes is not None:  # named by the model, as encode names them
        write_matrix(
            codes, codes_path, header=codes_header(model.state_.fingerprint, model.state_.n_components), column="z"
        )
    return model
