"""The fit of :class:`kpcacli.KernelPCA` through kpca's own model (:class:`FrameModelFit`): a
:class:`kpcacli.FrameModel` in the paper's conventions (García-González et al. 2021) for
kpca's pre-images, landmarks, frames and eps, its eigenpairs and codes given in scikit-learn's
conventions (``z_l / √λ_l``), and samples with NaN completed through it.
"""

from __future__ import annotations

import numpy as np

from ..numerics.landmarks import choose_landmarks
from ..preimage import AUTO, get_solver
from ..utils.arrays import on_host
from ..utils.errors import DegenerateKernelError, KpcaError, ParameterError, RankError
from .batches import batch_size, encode_rows
from .estimator import FrameModel
from .sklearn_auto import measured_beats_default
from .sklearn_conventions import dense, is_other_integer, within_jobs
from .sklearn_direct import ScikitLearnFit

# The variance tolerance (eq. 3) that keeps every component of non-zero eigenvalue: far below
# rounding, so that only the kernel's rank stops it (scikit-learn's n_components=None).
ALL_VARIANCE = 1e-15


class FrameModelFit(ScikitLearnFit):
    """The fit, codes and pre-images of :class:`kpcacli.KernelPCA` through kpca's model
    (``model_``), from the estimator's parameters (a mixin of that class), and scikit-learn's
    own fit (:class:`ScikitLearnFit`) where the kernel or the samples need it."""

    @property
    def model_(self) -> FrameModel | None:
        """Kpca's model of the training samples, fitted when first asked for.

        A :class:`FrameModel`, in the paper's conventions, fitted now if the fit did not need
        it; None for a kernel it does not have (precomputed, cosine, callable, ...) or samples
        the kernel cannot tell apart.
        """
        if self._model is None and self._direct is not None and not self._from_kernel_matrix():
            try:
                rows = self._training_rows(dense(on_host(self.X_fit_)), copy=False)  # as a fit that needs the model
                self._model = within_jobs(FrameModelFit._fitted_model)(self, rows)
            except DegenerateKernelError:
                return None
        return self._model

    def _needs_model(self) -> bool:
        """Whether the fit needs kpca's own model (FrameModel): for kpca's pre-images
        (`fit_inverse_transform` with a solver other than ``learned``), landmarks, frames, or
        k by eq. 3 (`eps`). Otherwise it is scikit-learn's fit, from the kernel matrix
        (:meth:`_fit_directly`), and ``model_`` is fitted when first asked for."""
        kpca_inverse = self.fit_inverse_transform and self._preimage != "learned"
        wanted = kpca_inverse or self.landmarks is not None or self.frame_shape is not None or self.eps is not None
        return wanted and not self._from_kernel_matrix()

    def _fit_model(self, X: np.ndarray) -> FrameModelFit:
        """The fit through kpca's own model (:meth:`_fitted_model`, on the landmarks when there
        are fewer than samples): its eigenpairs as scikit-learn's attributes (zeros for the
        components beyond the kernel's rank), ``X_fit_``, and scikit-learn's kernel ridge when it
        is the inverse; scikit-learn's fit (:meth:`_fit_directly`) when every sample is the same
        to the kernel."""
        if X.shape[0] < 2:
            raise ValueError(
                "kpca's own model (for its pre-images, landmarks, frames or eps) needs at least 2 samples; got "
                f"{X.shape[0]} sample"
            )
        self._direct = None
        kept = None
        if self.landmarks is not None and self.landmarks < X.shape[0]:
            kept = choose_landmarks(X, self.landmarks, self.landmark_method)
            rows = self._training_rows(X[kept], copy=False)
        else:
            rows = self._training_rows(X, copy=self.copy_X)
        try:
            self._model = self._fitted_model(rows)
        except DegenerateKernelError:  # every sample the same to the kernel: no component, as scikit-learn
            return self._fit_directly(X)
        state = self._model.state_
        if self.fit_inverse_transform and self._preimage not in (AUTO, "learned"):
            try:  # refused now, not at the first inverse_transform
                get_solver(self._preimage).check(state)
            except KpcaError as error:
                raise ParameterError(
                    f"solver {self.solver!r} cannot invert this model ({error}); choose another solver"
                ) from None
        fitted = state.n_components
        wanted = fitted if self.n_components is None or self.remove_zero_eig else min(self.n_components, len(rows))
        self.n_components_ = max(fitted, wanted)
        eigenvalues = np.zeros(self.n_components_)
        eigenvalues[:fitted] = state.eigenvalues[:fitted]
        eigenvectors = np.zeros((len(rows), self.n_components_))
        eigenvectors[:, :fitted] = state.eigenvectors[:, :fitted]
        self._set_eigenpairs(eigenvalues, eigenvectors)
        if is_other_integer(X.dtype):
            self.X_fit_ = X[kept] if kept is not None else (X.copy() if self.copy_X else X)
        else:
            self.X_fit_ = np.asarray(state.frames).reshape(len(rows), -1)  # frames as rows of features
        # auto: kpca's measured choice where it reconstructs held-back samples better than the
        # default it replaces, else that default (kpcacli.estimators.sklearn_auto).
        self._auto_kept_default = self.fit_inverse_transform and self._preimage == AUTO
        if self._auto_kept_default:
            self._auto_kept_default = not measured_beats_default(self, state, rows)
        if self.fit_inverse_transform and (self._preimage == "learned" or self._auto_kept_default):
            self._fit_kernel_ridge(rows)
        return self

    def _fitted_model(self, rows: np.ndarray) -> FrameModel:
        """The FrameModel of `rows` with this estimator's kernel and k: the k asked for, or
        every component of non-zero eigenvalue (eq. 3 with a tolerance below rounding) when it
        is None or above the kernel's rank."""

        def fitted(n_components, eps):
            # Every component wanted: every eigenpair, at once (Lanczos would double its count
            # up to a quarter of them first).
            method = "dense" if eps == ALL_VARIANCE and self.eigen_solver == "auto" else self.eigen_solver
            model = FrameModel(
                kernel=self.kernel,
                n_components=n_components,
                eps=eps,
                beta=self.gamma_ if self.kernel == "rbf" else None,
                gamma=self.gamma_ if self.kernel in ("poly", "sigmoid") else None,
                degree=int(self.degree),
                coef0=float(self.coef0),
                center=self.centre,
                eigen_solver=self._eigen_solver(method),
            )
            # Decoding prepared only for an inverse by kpca's measured choice (auto): the choice's
            # measurement and the axes are most of a small fit, and a solver named needs neither
            # measured (the distance solver forms its axes at its first decode).
            prepare = bool(self.fit_inverse_transform) and self._preimage == AUTO
            return model.fit(rows, frame_shape=self.frame_shape, prepare_decoding=prepare)

        if self.n_components is None:
            return fitted(None, self.eps if self.eps is not None else ALL_VARIANCE)
        if self.n_components < len(rows):
            try:
                return fitted(self.n_components, None)
            except RankError:
                pass
        return fitted(None, ALL_VARIANCE)  # the kernel's rank is below what was asked

    def _scales(self) -> np.ndarray:
        """√λ of each fitted component: the paper's codes are scikit-learn's times these."""
        state = self._model.state_
        return np.sqrt(state.eigenvalues[: state.n_components])

    def _from_model_codes(self, codes: np.ndarray, dtype) -> np.ndarray:
        """The paper's codes (m, fitted k) as scikit-learn's (m, n_components_): divided by
        √λ, zero columns for the components of eigenvalue 0, in `dtype`."""
        out = np.zeros((len(codes), self.n_components_), dtype=dtype)
        out[:, : codes.shape[1]] = codes / self._scales()
        return out

    def _completed(self, X: np.ndarray) -> np.ndarray:
        """`X` with its NaN values filled through ``model_`` (:meth:`FrameModel.reconstruct`,
        a batch of rows at a time), the others kept."""
        model = self.model_
        if model is None:
            raise ValueError(
                "Input X contains NaN. kpca completes missing values through its own model of the samples, "
                "and the training samples are all the same to the kernel: there is none"
            )
        size = batch_size(model.state_)
        completed = [
            model.reconstruct(X[start : start + size], solver=self._preimage if self._preimage != "learned" else None)
            for start in range(0, len(X), size)
        ]
        return np.concatenate([part.frames.reshape(len(part.frames), -1) for part in completed]).astype(X.dtype)

    def _model_codes(self, X: np.ndarray) -> np.ndarray:
        """The codes of dense `X` through kpca's model, as ``kpca encode`` forms them, in
        scikit-learn's conventions (:meth:`_from_model_codes`)."""
        dtype = self._codes_dtype(X)
        if is_other_integer(X.dtype):
            X = X.astype(np.float64)  # kpca's store takes 8- and 16-bit samples, or floats
        return self._from_model_codes(encode_rows(self._model.state_, X, self._model.progress), dtype)

    def _model_inverse(self, codes: np.ndarray) -> np.ndarray:
        """The pre-images of scikit-learn's `codes` (float64) by the solver `solver`, through
        kpca's model (the paper's codes: times √λ), as rows of features."""
        fitted = self._model.state_.n_components
        if codes.shape[1] != self.n_components_:
            raise ParameterError(f"the codes have {codes.shape[1]} columns; the model has {self.n_components_}")
        decoded = self._model.decode(
            codes[:, :fitted] * self._scales(), solver=self._preimage, neighbours=self.neighbours
        )
        return decoded.reshape(len(decoded), -1)  # frames as rows of features
