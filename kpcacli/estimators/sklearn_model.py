"""The fit of :class:`kpcacli.KernelPCA` through kpca's own model (:class:`ModelFit`, one of the
estimator's fitted cores): a :class:`kpcacli.FrameModel` in the paper's conventions
(García-González et al. 2021) for kpca's pre-images, landmarks, frames and eps, its eigenpairs
and codes given in scikit-learn's conventions (``z_l / √λ_l``), and samples with NaN
completed through it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..numerics.landmarks import choose_landmarks
from ..preimage import AUTO, get_solver
from ..utils.errors import DegenerateKernelError, KpcaError, ParameterError, RankError
from .batches import batch_size, encode_rows
from .estimator import FrameModel
from .sklearn_auto import measured_beats_default
from .sklearn_conventions import dense, is_other_integer
from .sklearn_direct import fit_directly, training_rows
from .sklearn_ridge import KernelRidge, training_codes

# The variance tolerance (eq. 3) that keeps every component of non-zero eigenvalue: far below
# rounding, so that only the kernel's rank stops it (scikit-learn's n_components=None).
ALL_VARIANCE = 1e-15


@dataclass
class ModelFit:
    """kpca's `model` of the training `samples` (``X_fit_``) with its eigenpairs as scikit-learn
    keeps them (zeros for the components beyond the kernel's rank), and the kernel `ridge` when
    one was fitted (``learned``, or ``auto`` where it `kept_default`, the ridge). A
    :class:`kpcacli.estimators.sklearn_estimator.FittedCore`."""

    model: FrameModel
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    samples: np.ndarray
    ridge: KernelRidge | None = None
    kept_default: bool = False
    on_host = True

    def _scales(self) -> np.ndarray:
        """√λ of each fitted component: the paper's codes are scikit-learn's times these."""
        state = self.model.state_
        return np.sqrt(state.eigenvalues[: state.n_components])

    def codes(self, X) -> np.ndarray:
        """The codes (m, c) of `X` through kpca's model, as ``kpca encode`` forms them, divided by
        √λ (scikit-learn's), zero columns for the components of eigenvalue 0, float64."""
        X = dense(X)
        if is_other_integer(X.dtype):
            X = X.astype(np.float64)  # kpca's store takes 8- and 16-bit samples, or floats
        paper = encode_rows(self.model.state_, X, self.model.progress)
        codes = np.zeros((len(paper), len(self.eigenvalues)))
        codes[:, : paper.shape[1]] = paper / self._scales()
        return codes

    def inverse(self, codes: np.ndarray, dtype, solver: str, neighbours: int | None) -> np.ndarray:
        """The pre-images of scikit-learn's `codes` (float64) by `solver` with M = `neighbours`:
        the kernel ridge's for ``learned`` (and for ``auto`` where it kept the ridge), in
        `dtype`, else the model's (the paper's codes: times √λ), as rows of features in the
        samples' own dtype."""
        if solver == "learned" or (solver == AUTO and self.kept_default):
            return self.ridge.invert(codes).astype(dtype, copy=False)
        fitted = self.model.state_.n_components
        if codes.shape[1] != len(self.eigenvalues):
            raise ParameterError(f"the codes have {codes.shape[1]} columns; the model has {len(self.eigenvalues)}")
        decoded = self.model.decode(codes[:, :fitted] * self._scales(), solver=solver, neighbours=neighbours)
        return decoded.reshape(len(decoded), -1)  # frames as rows of features


def fit_model(estimator, X: np.ndarray):
    """The fit of dense numpy `X` through kpca's own model by `estimator`'s parameters (a
    :class:`kpcacli.KernelPCA`; on the landmarks when there are fewer than samples); scikit-learn's
    fit (:func:`kpcacli.estimators.sklearn_direct.fit_directly`) when every sample is the same to
    the kernel."""
    if X.shape[0] < 2:
        raise ValueError(
            "kpca's own model (for its pre-images, landmarks, frames or eps) needs at least 2 samples; got "
            f"{X.shape[0]} sample"
        )
    kept = None
    if estimator.landmarks is not None and estimator.landmarks < X.shape[0]:
        kept = choose_landmarks(X, estimator.landmarks, estimator.landmark_method)
        rows = training_rows(X[kept], copy=False)
    else:
        rows = training_rows(X, copy=estimator.copy_X)
    try:
        model = fitted_model(estimator, rows)
    except DegenerateKernelError:  # every sample the same to the kernel: no component, as scikit-learn
        return fit_directly(estimator, X)
    state = model.state_
    preimage = estimator._preimage
    if estimator.fit_inverse_transform and preimage not in (AUTO, "learned"):
        try:  # refused now, not at the first inverse_transform
            get_solver(preimage).check(state)
        except KpcaError as error:
            raise ParameterError(
                f"solver {estimator.solver!r} cannot invert this model ({error}); choose another solver"
            ) from None
    fitted = state.n_components
    n = estimator.n_components
    wanted = fitted if n is None or estimator.remove_zero_eig else min(n, len(rows))
    count = max(fitted, wanted)
    eigenvalues = np.zeros(count)
    eigenvalues[:fitted] = state.eigenvalues[:fitted]
    eigenvectors = np.zeros((len(rows), count))
    eigenvectors[:, :fitted] = state.eigenvectors[:, :fitted]
    if is_other_integer(X.dtype):
        samples = X[kept] if kept is not None else (X.copy() if estimator.copy_X else X)
    else:
        samples = np.asarray(state.frames).reshape(len(rows), -1)  # frames as rows of features
    fit = ModelFit(model, eigenvalues, eigenvectors, samples)
    # auto: kpca's measured choice where it reconstructs held-back samples better than the
    # default it replaces, else that default (kpcacli.estimators.sklearn_auto).
    if estimator.fit_inverse_transform and preimage == AUTO:
        fit.kept_default = not measured_beats_default(estimator._sample_kernel(), estimator.alpha, state, rows)
    if estimator.fit_inverse_transform and (preimage == "learned" or fit.kept_default):
        fit.ridge = estimator._ridge(training_codes(eigenvalues, eigenvectors), rows)
    return fit


def fitted_model(estimator, rows: np.ndarray) -> FrameModel:
    """The FrameModel of `rows` with `estimator`'s kernel and k: the k asked for, or every
    component of non-zero eigenvalue (eq. 3 with a tolerance below rounding) when it is None or
    above the kernel's rank."""

    def fitted(n_components, eps):
        # Every component wanted: every eigenpair, at once (Lanczos would double its count
        # up to a quarter of them first).
        method = "dense" if eps == ALL_VARIANCE and estimator.eigen_solver == "auto" else estimator.eigen_solver
        model = FrameModel(
            kernel=estimator.kernel,
            n_components=n_components,
            eps=eps,
            beta=estimator.gamma_ if estimator.kernel == "rbf" else None,
            gamma=estimator.gamma_ if estimator.kernel in ("poly", "sigmoid") else None,
            degree=int(estimator.degree),
            coef0=float(estimator.coef0),
            center=estimator.centre,
            eigen_solver=estimator._eigen_solver(method),
        )
        # Decoding prepared only for an inverse by kpca's measured choice (auto): the choice's
        # measurement and the axes are most of a small fit, and a solver named needs neither
        # measured (the distance solver forms its axes at its first decode).
        prepare = bool(estimator.fit_inverse_transform) and estimator._preimage == AUTO
        return model.fit(rows, frame_shape=estimator.frame_shape, prepare_decoding=prepare)

    if estimator.n_components is None:
        return fitted(None, estimator.eps if estimator.eps is not None else ALL_VARIANCE)
    if estimator.n_components < len(rows):
        try:
            return fitted(estimator.n_components, None)
        except RankError:
            pass
    return fitted(None, ALL_VARIANCE)  # the kernel's rank is below what was asked


def completed(model: FrameModel | None, X: np.ndarray, solver: str | None) -> np.ndarray:
    """`X` with its NaN values filled through kpca's `model` (:meth:`FrameModel.reconstruct`, a
    batch of rows at a time, by `solver`), the others kept."""
    if model is None:
        raise ValueError(
            "Input X contains NaN. kpca completes missing values through its own model of the samples, "
            "and the training samples are all the same to the kernel: there is none"
        )
    size = batch_size(model.state_)
    parts = [model.reconstruct(X[start : start + size], solver=solver) for start in range(0, len(X), size)]
    return np.concatenate([part.frames.reshape(len(part.frames), -1) for part in parts]).astype(X.dtype)
