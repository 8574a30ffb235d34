"""kpca as a scikit-learn estimator: :class:`KernelPCA`, scikit-learn's ``KernelPCA`` with its
parameters, defaults and conventions, whose ``inverse_transform`` may be one of kpca's
pre-image solvers.

scikit-learn's own ``KernelPCA`` learns its inverse by kernel ridge regression (Bakır et al.
2004), with ``alpha``: so does this one by default (``solver="learned"``), so that changing
one import keeps every result. kpca's pre-images are the user's choice: ``solver="auto"``
decodes a code with the solver that reconstructs training samples held back best, measured
at fit (:mod:`kpcacli.preimage.measurement`): Mika et al.'s fixed point (1999), a weighted sum of
the training samples nearest to the code in reduced space, or for frames the transport
solver; or a solver by name.

Conventions (docs/sklearn.md): scikit-learn's, not the paper's. The kernel is centred
(``centre=False``, kpca's addition, gives the paper's uncentred model); codes are projections
on unit axes, ``z_l / √λ_l`` of the paper's ``z = V*ᵀ ḡ`` (:class:`FrameModel` and the command
line keep the paper's); ``gamma`` defaults to ``1 / n_features``; ``n_components=None`` keeps
every component of non-zero eigenvalue.

Where it needs kpca's own model (kpca's pre-images, landmarks, frames), it is a thin layer over
:class:`kpcacli.estimators.estimator.FrameModel`, the model the command line fits, saves and
decodes with: parameters under scikit-learn's names, input checked as scikit-learn checks it,
fitted attributes with a trailing underscore. Otherwise its fit is scikit-learn's, done in
place (:mod:`kpcacli.estimators.kernel_matrix`, :mod:`kpcacli.estimators.primal`), and the
FrameModel is fitted only if ``model_`` is asked for. Importing this module imports
scikit-learn (about a second), which is why the command line never does and ``kpcacli``
imports it only when ``kpcacli.KernelPCA`` is first asked for.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.decomposition import KernelPCA as ScikitKernelPCA
from sklearn.exceptions import NotFittedError
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import _num_samples, check_array, check_is_fitted, validate_data

from ..numerics.landmarks import choose_landmarks
from ..numerics.spectrum import EigenSolver
from ..preimage import AUTO, SOLVERS, get_solver
from ..utils.blas import threads_for_blas
from ..utils.cores import available_cores
from ..utils.errors import DegenerateKernelError, KpcaError, ParameterError, RankError
from ..utils.hyperparameters import sklearn_constraints
from ..utils.parallel import thread_budget
from .batches import batch_size, encode_rows
from .estimator import FrameModel

MATRIX_KERNELS = ("cosine", "precomputed")  # with callables, fitted from the kernel matrix itself

# The variance tolerance (eq. 3) that keeps every component of non-zero eigenvalue: far below
# rounding, so that only the kernel's rank stops it (scikit-learn's n_components=None).
ALL_VARIANCE = 1e-15

# The kernel values a direct fit's transform holds at once (32 MB): a block of rows at a time.
KERNEL_BLOCK_VALUES = 1 << 22


def _value_errors(method):
    """`method` raising kpca's errors that are not ValueErrors (a kernel that is not positive
    semi-definite on the data, a solver that fails) as ValueErrors, the type scikit-learn's
    users catch for data and parameters that do not fit."""

    @functools.wraps(method)
    def wrapped(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except KpcaError as error:
            if isinstance(error, ValueError):
                raise
            raise ValueError(str(error)) from error

    return wrapped


def _within_jobs(method):
    """`method` with kpca's own passes on the estimator's `n_jobs` threads (None: the cores
    available, :func:`kpcacli.utils.cores.available_cores`, which a joblib worker's share
    bounds) and BLAS on one thread but for its long calls
    (:func:`kpcacli.utils.blas.threads_for_blas`), whatever `n_jobs`: a BLAS pool spins
    while it waits, and beside other work on the cores (a grid search's other worker, any
    process) its threads made a grid search many times slower than one thread
    (docs/performance.md, "BLAS threads beside other work")."""

    @functools.wraps(method)
    def wrapped(self, *args, **kwargs):
        if self.n_jobs == 0:  # joblib's refusal, which scikit-learn's kernel computation meets
            raise ValueError("n_jobs == 0 in Parallel has no meaning")
        cores = available_cores()
        if self.n_jobs is None:
            threads = cores
        else:
            threads = self.n_jobs if self.n_jobs > 0 else max(1, cores + 1 + self.n_jobs)  # joblib's -1, -2, ...
        with thread_budget(threads):
            return method(self, *args, **kwargs)

    return wrapped


class SparseInverseError(NotImplementedError, TypeError):
    """scikit-learn's NotImplementedError for a kernel ridge inverse of sparse samples, and a
    TypeError too: the error scikit-learn's estimator checks expect of input an estimator does
    not take (its tags say which)."""


def _is_other_integer(dtype) -> bool:
    """Whether samples of `dtype` are integers other than the 8- and 16-bit ones kpca's model
    stores as they are: kept so in ``X_fit_``, as scikit-learn keeps them, and converted to
    float64 where kpca's model fits or codes them."""
    return dtype.kind in "ui" and dtype not in (np.uint8, np.uint16)


def _dense(X):
    """`X` as a numpy array: sparse samples densified (kpca's own model holds dense ones)."""
    return X.toarray() if scipy.sparse.issparse(X) else X


class KernelPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Kernel PCA as scikit-learn's ``KernelPCA``, with kpca's pre-images, landmarks and frames.

    Non-linear dimensionality reduction by the eigenvectors of the centred kernel matrix
    (Schölkopf, Smola and Müller 1998), with scikit-learn's parameters, defaults, conventions
    and results; kpca's additions are asked for by name: its measured pre-images
    (``solver="auto"`` or a solver's name), landmarks, frames whose pixels move
    (``frame_shape``), the paper's uncentred kernel and a variance tolerance
    (García-González et al. 2021).

    Parameters
    ----------
    n_components : int, optional
        Number of components. None: every component of non-zero eigenvalue (scikit-learn's
        default), or with `eps` the smallest k keeping ``1 - eps`` of the variance (eq. 3). More
        than the kernel's rank: the others have eigenvalue 0 and codes 0, unless
        `remove_zero_eig`.
    kernel : {"linear", "rbf", "poly", "sigmoid", "cosine", "precomputed"} or callable, default "linear"
        ``x·y``, ``exp(-gamma |x - y|²)``, ``(gamma x·y + coef0)^degree``,
        ``tanh(gamma x·y + coef0)``, cosine similarity, a kernel matrix given as `X` (n_samples,
        n_samples; to transform, (n_new, n_samples) against the training samples), or a
        function of two samples. The last three are fitted from the kernel matrix itself
        (:mod:`kpcacli.estimators.kernel_matrix`): no ``model_``, and the only inverse is
        scikit-learn's ``learned`` one (none for a precomputed kernel, as in scikit-learn).
    gamma : float, optional
        Of rbf, poly and sigmoid; default ``1 / n_features``. The value used is ``gamma_``.
    degree : int, default 3
        Degree of the polynomial kernel.
    coef0 : float, default 1
        Offset of poly and sigmoid.
    kernel_params : dict, optional
        Keyword arguments of a callable kernel.
    alpha : float, default 1.0
        The ridge of ``solver="learned"``: scikit-learn's kernel ridge inverse (Bakır et al. 2004).
    fit_inverse_transform : bool, default False
        Prepare ``inverse_transform`` (and ``score``); without it they raise NotFittedError.
    eigen_solver : {"auto", "dense", "arpack", "randomized"}, default "auto"
        Every eigenpair (LAPACK), or the leading ones by Lanczos iteration (ARPACK) or by the
        randomized method (Halko et al. 2011). auto is scikit-learn's rule (arpack above 200
        samples and under 10 components, else dense), or where kpca's model is fitted (kpca's
        pre-images, landmarks, frames) kpca's: dense up to 3,000 samples, arpack beyond. The
        eigenpairs are the same to rounding. For the linear kernel with fewer features than
        samples, auto and dense solve the features' scatter matrix instead of the Gram
        (:mod:`kpcacli.estimators.primal`; the same eigenpairs, at a fraction of the cost).
    tol : float, default 0
        ARPACK's relative accuracy (0: machine precision).
    max_iter : int, optional
        ARPACK's iterations (None: its own).
    iterated_power : int or "auto", default "auto"
        Power iterations of the randomized method (auto: 7 when n_components < n / 10, else 4).
    remove_zero_eig : bool, default False
        Drop the components of eigenvalue 0, so that fewer than `n_components` may be kept
        (always so when `n_components` is None).
    random_state : int, RandomState or None, default None
        ARPACK's start vector and the randomized method's sketch. None: a fixed one, so that the
        same data gives the same model (scikit-learn draws one).
    copy_X : bool, default True
        Keep a copy of the training samples (``X_fit_``); False keeps `X` itself where its
        dtype allows, which must then not change.
    n_jobs : int, optional
        The threads kpca's passes use (the kernel values, the codes, the pre-images); -1 every
        core, -2 all but one. None: kpca's default, the cores available, at most
        ``OMP_NUM_THREADS`` (a joblib worker's share). BLAS runs one thread but for its long
        calls (scikit-learn's None is one job, its BLAS on its own threads).
    centre : bool, default True
        Kpca's addition: False fits the paper's uncentred kernel, which the distance and log solvers
        need (eqs. 24-25 centre it).
    eps : float, optional
        Kpca's addition: the variance tolerance of eq. 3 when `n_components` is None.
    landmarks : int, optional
        Kpca's addition: fit on this many training samples chosen by `landmark_method` (Nyström's subset:
        the model keeps them only; every sample still transforms and decodes).
    landmark_method : {"uniform", "farthest"}, default "uniform"
        Landmarks evenly spaced in the order of the samples, or by farthest-point sampling.
    solver : str, default "learned"
        Kpca's addition: the pre-image solver of ``inverse_transform``: ``learned`` (or None),
        scikit-learn's kernel ridge inverse with `alpha` (its results); ``auto``, the solver that
        reconstructs training samples held back best, measured by ``fit``
        (:mod:`kpcacli.preimage.measurement`); another name of :data:`kpcacli.preimage.SOLVERS`,
        that solver. ``transport`` moves pixels and needs `frame_shape`.
    neighbours : int, optional
        Kpca's addition: M, the training samples nearest in reduced space a pre-image is built from
        (default: the solver's own).
    frame_shape : tuple of int, optional
        Kpca's addition: the shape of one sample as an image, ``(height, width)`` or
        ``(height, width, 3)``, its values flattened into the sample's features in C order.

    Attributes
    ----------
    n_components_ : int
        The number of components as fitted.
    eigenvalues_ : ndarray of shape (n_components_,)
        The centred kernel matrix's leading eigenvalues, decreasing (0 beyond its rank).
    eigenvectors_ : ndarray of shape (n_training_samples, n_components_)
        The matching unit eigenvectors (eq. 26), each one's largest entry positive.
    gamma_ : float
        The kernel's width or scale as used.
    X_fit_ : ndarray of shape (n_training_samples, n_features)
        The training samples (the landmarks with `landmarks`).
    dual_coef_ : ndarray of shape (n_training_samples, n_features)
        The coefficients of scikit-learn's kernel ridge inverse; only with
        ``fit_inverse_transform`` and ``solver="learned"`` (or a kernel fitted from the kernel
        matrix).
    X_transformed_fit_ : ndarray of shape (n_training_samples, n_components_)
        The training samples' codes the kernel ridge inverse regresses from; only with
        ``fit_inverse_transform`` and ``solver="learned"`` (or a kernel fitted from the kernel
        matrix).
    model_ : FrameModel
        Kpca's model of the training samples, in the paper's conventions: ``model_.save(path)``
        writes a pickle-free model file the command line reads (``kpca decode codes.npy -m
        path``, codes scaled by ``√eigenvalues_``). Fitted when first asked for where the fit
        did not need it (scikit-learn's fit: no kpca pre-images, landmarks, frames or `eps`);
        None for the kernels fitted from the kernel matrix.
    n_features_in_ : int
        The number of features seen at fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The features' names; only when fitted on a DataFrame with string column names.

    See Also
    --------
    sklearn.decomposition.KernelPCA : The scikit-learn class whose results this one gives.
    kpcacli.FrameModel : Kpca's model of frames, in the paper's conventions.

    Notes
    -----
    kpca's addition: ``transform`` takes NaN for values not observed (scikit-learn's refuses
    them). Each such sample is completed through ``model_`` first, its missing values filled by
    rounds of encode and pre-image (:meth:`kpcacli.FrameModel.reconstruct`), and the completed
    sample is transformed; ``fit`` refuses NaN as scikit-learn's does, and the kernels without
    ``model_`` refuse it in ``transform`` too.

    Examples
    --------
    >>> import numpy as np
    >>> from kpcacli import KernelPCA
    >>> X = np.random.default_rng(0).normal(size=(40, 6))
    >>> kpca = KernelPCA(n_components=3, kernel="rbf", fit_inverse_transform=True).fit(X)
    >>> kpca.transform(X[:2]).shape
    (2, 3)
    >>> kpca.inverse_transform(kpca.transform(X[:2])).shape
    (2, 6)
    """

    # scikit-learn's own declarations for its parameters (the same ranges and messages as the
    # installed release's KernelPCA); kpca's from the table every surface checks against
    # (kpcacli.utils.hyperparameters); the solvers are the registry's.
    _parameter_constraints: dict = {
        **ScikitKernelPCA._parameter_constraints,
        **sklearn_constraints(
            {
                "centre": "center",
                "eps": "eps",
                "landmarks": "landmarks",
                "landmark_method": "landmark_method",
                "neighbours": "neighbours",
            }
        ),
        "solver": [StrOptions({AUTO, *SOLVERS}), None],
        "frame_shape": [tuple, None],  # checked against the samples by FrameModel.fit
    }

    def __init__(
        self,
        n_components=None,
        *,
        kernel="linear",
        gamma=None,
        degree=3,
        coef0=1,
        kernel_params=None,
        alpha=1.0,
        fit_inverse_transform=False,
        eigen_solver="auto",
        tol=0,
        max_iter=None,
        iterated_power="auto",
        remove_zero_eig=False,
        random_state=None,
        copy_X=True,
        n_jobs=None,
        centre=True,
        eps=None,
        landmarks=None,
        landmark_method="uniform",
        solver="learned",
        neighbours=None,
        frame_shape=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.alpha = alpha
        self.fit_inverse_transform = fit_inverse_transform
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.max_iter = max_iter
        self.iterated_power = iterated_power
        self.remove_zero_eig = remove_zero_eig
        self.random_state = random_state
        self.copy_X = copy_X
        self.n_jobs = n_jobs
        self.centre = centre
        self.eps = eps
        self.landmarks = landmarks
        self.landmark_method = landmark_method
        self.solver = solver
        self.neighbours = neighbours
        self.frame_shape = frame_shape

    @_fit_context(prefer_skip_nested_validation=True)
    @_value_errors
    @_within_jobs
    def fit(self, X, y=None):
        """Fit the model from the samples in `X`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training samples, one a row (or, with ``kernel="precomputed"``, their kernel matrix).
        y : None
            Ignored: there for the API's consistency.

        Returns
        -------
        self : KernelPCA
            The fitted estimator.
        """
        X = self._samples(X, reset=True)
        self.gamma_ = 1.0 / X.shape[1] if self.gamma is None else float(self.gamma)
        self._float32 = X.dtype == np.float32  # codes in float32 too, as scikit-learn keeps them
        self._model = None
        if scipy.sparse.issparse(X) and self.kernel == "precomputed":  # scikit-learn's centring refuses it
            raise TypeError(
                "Sparse data was passed for X, but dense data is required. Use '.toarray()' to convert to a "
                "dense numpy array."
            )
        if not self._needs_model():
            return self._fit_directly(X)
        X = _dense(X)  # kpca's own model holds dense samples
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
        if _is_other_integer(X.dtype):
            self.X_fit_ = X[kept] if kept is not None else (X.copy() if self.copy_X else X)
        else:
            self.X_fit_ = np.asarray(state.frames).reshape(len(rows), -1)  # frames as rows of features
        if self.fit_inverse_transform and self._preimage == "learned":
            self._fit_kernel_ridge(rows)
        return self

    def _set_eigenpairs(self, eigenvalues: np.ndarray, eigenvectors: np.ndarray) -> None:
        """``eigenvalues_`` and ``eigenvectors_``, computed in float64, in float32 after a fit
        on float32 samples, as scikit-learn's are; the float64 ones kept for the training
        codes (the same arrays after a float64 fit)."""
        self._eigenpairs = (eigenvalues, eigenvectors)
        dtype = np.float32 if self._float32 else np.float64
        self.eigenvalues_ = eigenvalues.astype(dtype, copy=False)
        self.eigenvectors_ = eigenvectors.astype(dtype, copy=False)

    @property
    def _preimage(self) -> str:
        """The pre-image solver `solver` names, None standing for the default, scikit-learn's
        kernel ridge (``learned``)."""
        return "learned" if self.solver is None else self.solver

    @property
    def model_(self) -> FrameModel | None:
        """Kpca's model of the training samples, fitted when first asked for.

        A :class:`FrameModel`, in the paper's conventions, fitted now if the fit did not need
        it; None for a kernel it does not have (precomputed, cosine, callable, ...) or samples
        the kernel cannot tell apart.
        """
        if self._model is None and self._direct is not None and not self._from_kernel_matrix():
            try:
                rows = self._training_rows(_dense(self.X_fit_), copy=False)  # as a fit that needs the model
                self._model = _within_jobs(KernelPCA._fitted_model)(self, rows)
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

    def _from_kernel_matrix(self) -> bool:
        """Whether the kernel is one kpca's model does not compute from frames (fitted from the
        kernel matrix itself): precomputed, cosine, a callable, or a kernel of gamma 0 or of a
        degree that is not a positive integer (constant, or scikit-learn's fractional powers)."""
        if callable(self.kernel) or self.kernel in MATRIX_KERNELS:
            return True
        fractional = self.kernel == "poly" and (self.degree < 1 or self.degree != int(self.degree))
        return fractional or (self.gamma is not None and self.gamma == 0 and self.kernel != "linear")

    def _fit_directly(self, X: np.ndarray) -> KernelPCA:
        """scikit-learn's fit, from the kernel matrix (:mod:`kpcacli.estimators.kernel_matrix`,
        in place), or for the linear kernel with fewer features than samples and an exact
        eigensolver (dense, auto) from the scatter matrix (:mod:`kpcacli.estimators.primal`);
        scikit-learn's kernel ridge the only inverse."""
        from .kernel_matrix import fit_kernel_matrix
        from .primal import fit_primal

        if self.fit_inverse_transform and self.kernel == "precomputed":
            raise ValueError("Cannot fit_inverse_transform with a precomputed kernel.")
        if self._from_kernel_matrix() and (self.landmarks is not None or self.frame_shape is not None):
            raise ParameterError("landmarks and frame_shape need one of kpca's kernels: linear, rbf, poly, sigmoid")
        if self.fit_inverse_transform and self._preimage not in (AUTO, "learned"):
            raise ParameterError(
                f"solver {self.solver!r} needs one of kpca's kernels (linear, rbf, poly, sigmoid); with this kernel "
                "the inverse is scikit-learn's, solver='learned'"
            )
        if self._from_kernel_matrix() and self.eps is not None:
            raise ParameterError("eps needs one of kpca's kernels: linear, rbf, poly, sigmoid")
        if self.fit_inverse_transform and scipy.sparse.issparse(X):
            raise SparseInverseError("Inverse transform not implemented for sparse matrices!")
        rows = self._training_rows(X, copy=self.copy_X)
        primal = (
            self.kernel == "linear"
            and self.eigen_solver in ("auto", "dense")
            and rows.shape[1] < rows.shape[0]
            and not scipy.sparse.issparse(rows)
        )
        direct = fit_primal(rows, self.n_components, self.remove_zero_eig, self.centre) if primal else None
        if direct is None:  # not the linear kernel, or components of eigenvalue 0 kept: the Gram's
            kernel = np.array(rows, dtype=np.float64) if self.kernel == "precomputed" else self._kernel(rows, rows)
            solver = self._eigen_solver(self.eigen_solver)
            direct = fit_kernel_matrix(kernel, self.n_components, self.remove_zero_eig, self.centre, solver)
        self._direct = direct
        self._set_eigenpairs(direct.eigenvalues, direct.eigenvectors)
        self.n_components_ = len(self.eigenvalues_)
        self.X_fit_ = (X.copy() if self.copy_X else X) if _is_other_integer(X.dtype) else rows
        if self.fit_inverse_transform:
            self._fit_kernel_ridge(rows)
        return self

    @staticmethod
    def _training_rows(X, copy: bool):
        """The rows the model keeps, in floating point: 8- and 16-bit samples are kept as they
        are in X and only the rows fitted on converted; a copy unless not `copy` (copy_X), so
        that the caller's array may change. Sparse samples stay sparse (the direct fit's kernel
        values take them as scikit-learn's do)."""
        dtype = np.float64 if X.dtype.kind in "ui" else X.dtype
        if scipy.sparse.issparse(X):
            return X.astype(dtype, copy=copy)
        return np.array(X, dtype=dtype, copy=True) if copy else np.asarray(X, dtype=dtype)

    def _eigen_solver(self, method: str) -> EigenSolver:
        """The eigensolver `method` with this estimator's tol, max_iter, iterated_power and
        random_state."""
        return EigenSolver(method, float(self.tol), self.max_iter, self.iterated_power, self.random_state)

    def _kernel(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """The kernel's values between `first` and `second` as scikit-learn computes them: a
        callable with `kernel_params`, the others with ``gamma_``, `degree` and `coef0`."""
        from sklearn.metrics.pairwise import pairwise_kernels

        if callable(self.kernel):
            params = self.kernel_params or {}
        else:
            params = {"gamma": self.gamma_, "degree": self.degree, "coef0": self.coef0}
        with threads_for_blas(first.shape[0] * second.shape[0] * first.shape[1]):
            return pairwise_kernels(first, second, metric=self.kernel, filter_params=True, **params)

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

    def _fit_kernel_ridge(self, rows: np.ndarray) -> None:
        """scikit-learn's inverse: kernel ridge regression from the training codes to the
        training samples, with the model's own kernel on the codes (Bakır et al. 2004)."""
        import scipy.linalg

        codes = self._codes_of_training()
        kernel = self._kernel(codes, codes)
        kernel.flat[:: len(codes) + 1] += self.alpha
        n = len(codes)
        with threads_for_blas(n * n * (n / 3 + rows.shape[1])):  # Cholesky, then the solves
            dual_coef = scipy.linalg.solve(kernel, rows, assume_a="pos", overwrite_a=True)
        dtype = np.float32 if self._float32 else np.float64  # scikit-learn solves in the samples' float
        self.dual_coef_, self.X_transformed_fit_ = dual_coef.astype(dtype, copy=False), codes.astype(dtype, copy=False)

    def _codes_of_training(self) -> np.ndarray:
        """The training samples' codes, scikit-learn's ``eigenvectors_ * √eigenvalues_``, in
        float64 from the eigenpairs as computed (not from their float32 copies)."""
        eigenvalues, eigenvectors = self._eigenpairs
        return eigenvectors * np.sqrt(eigenvalues)

    def _scales(self) -> np.ndarray:
        """√λ of each fitted component: the paper's codes are scikit-learn's times these."""
        state = self._model.state_
        return np.sqrt(state.eigenvalues[: state.n_components])

    def _codes_dtype(self, X: np.ndarray):
        """The dtype of codes of `X`: float32 when both `X` and the training samples are
        float32, else float64 (scikit-learn's kernel values take the wider of the two)."""
        return np.float32 if self._float32 and X.dtype == np.float32 else np.float64

    def _from_model_codes(self, codes: np.ndarray, dtype) -> np.ndarray:
        """The paper's codes (m, fitted k) as scikit-learn's (m, n_components_): divided by
        √λ, zero columns for the components of eigenvalue 0, in `dtype`."""
        out = np.zeros((len(codes), self.n_components_), dtype=dtype)
        out[:, : codes.shape[1]] = codes / self._scales()
        return out

    @_value_errors
    def fit_transform(self, X, y=None, **params):
        """Fit the model from the samples in `X` and give their codes.

        The codes are ``eigenvectors_ * √eigenvalues_`` (scikit-learn's: their transform to
        rounding); with landmarks, every sample's transform.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training samples, one a row.
        y : None
            Ignored: there for the API's consistency.
        **params : dict
            Passed to ``fit``, as scikit-learn's are; it takes none, so any is a TypeError.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components_)
            The training samples' codes.
        """
        self.fit(X, y, **params)
        if self.eigenvectors_.shape[0] != _num_samples(X):  # fitted on landmarks
            return self.transform(X)
        codes = self._codes_of_training()
        return codes.astype(np.float32) if self._float32 else codes

    @_value_errors
    @_within_jobs
    def transform(self, X):
        """Project the samples in `X` on the principal components.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples, one a row; NaN marks values not observed (kpca's addition: such samples
            are completed through ``model_`` first).

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components_)
            Their codes: projections on the unit axes of feature space (scikit-learn's), in
            float32 when both they and the training samples are float32.
        """
        check_is_fitted(self)
        X = self._samples(X, ensure_all_finite=True if self._from_kernel_matrix() else "allow-nan")
        if self._direct is not None and scipy.sparse.issparse(X):
            return self._direct_codes(X)  # sparse samples: kernel values as scikit-learn forms them
        X = _dense(X)
        if X.dtype.kind == "f" and np.isnan(X).any():
            X = self._completed(X)
        if self._direct is not None:
            return self._direct_codes(X)
        dtype = self._codes_dtype(X)
        if _is_other_integer(X.dtype):
            X = X.astype(np.float64)  # kpca's store takes 8- and 16-bit samples, or floats
        return self._from_model_codes(encode_rows(self._model.state_, X, self._model.progress), dtype)  # as kpca encode

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

    def _direct_codes(self, X: np.ndarray) -> np.ndarray:
        """The codes of a direct fit (:meth:`_fit_directly`), a block of rows of `X` at a
        time, so that the kernel values in memory stay within ``KERNEL_BLOCK_VALUES``
        (scikit-learn forms every one against every training sample, twice)."""
        from .primal import PrimalFit

        codes = np.empty((X.shape[0], self.n_components_), dtype=self._codes_dtype(X))
        size = max(1, KERNEL_BLOCK_VALUES // max(1, self.X_fit_.shape[0]))
        for start in range(0, X.shape[0], size):
            block = X[start : start + size]
            if isinstance(self._direct, PrimalFit):
                codes[start : start + block.shape[0]] = self._direct.codes(block)
                continue
            if self.kernel == "precomputed":  # the caller's values: centred in a copy
                kernel = np.array(block, dtype=np.float64)
            else:
                kernel = np.asarray(self._kernel(block, self.X_fit_), dtype=np.float64)
            codes[start : start + block.shape[0]] = self._direct.codes(kernel)
        return codes

    @_value_errors
    @_within_jobs
    def inverse_transform(self, X):
        """Map codes back to samples: their pre-images, by `solver`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components_)
            Codes, as ``transform`` gives them.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features_in_)
            Their pre-images (NotFittedError without ``fit_inverse_transform``).
        """
        check_is_fitted(self)
        if not self.fit_inverse_transform:
            raise NotFittedError(
                "The fit_inverse_transform parameter was not set to True when instantiating and hence "
                "the inverse transform is not available."
            )
        given = check_array(X, dtype=(np.float64, np.float32))
        codes = np.asarray(given, dtype=np.float64)
        if self._preimage == "learned" or self._direct is not None:
            weights = self._kernel(codes, self.X_transformed_fit_)
            with threads_for_blas(weights.size * self.dual_coef_.shape[1]):
                back = weights @ self.dual_coef_
            return back.astype(self._codes_dtype(given), copy=False)  # float32 codes of a float32 fit: float32
        fitted = self._model.state_.n_components
        if codes.shape[1] != self.n_components_:
            raise ParameterError(f"the codes have {codes.shape[1]} columns; the model has {self.n_components_}")
        decoded = self._model.decode(
            codes[:, :fitted] * self._scales(), solver=self._preimage, neighbours=self.neighbours
        )
        return decoded.reshape(len(decoded), -1)  # frames as rows of features

    @available_if(lambda self: self.fit_inverse_transform)
    @_value_errors
    @_within_jobs
    def score(self, X, y=None):
        """Score the reconstruction of the samples in `X`, kpca's addition.

        There with ``fit_inverse_transform`` only.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples, one a row.
        y : None
            Ignored: there for the API's consistency.

        Returns
        -------
        score : float
            The negative mean squared error of `X` through ``transform`` and
            ``inverse_transform``: greater is better, as scikit-learn's model selection wants.
        """
        check_is_fitted(self)
        X = self._samples(X)
        total, size = 0.0, batch_size(self._model.state_) if self._model is not None else max(1, X.shape[0])
        for start in range(0, X.shape[0], size):  # a batch at a time: X may be large and 8-bit
            rows = np.asarray(_dense(X[start : start + size]), dtype=np.float64)
            back = self.inverse_transform(self.transform(rows))
            total += float(np.sum((rows - back) ** 2))
        return -total / X.size

    def _samples(self, X, reset: bool = False, **checks) -> np.ndarray:
        """`X` as scikit-learn checks it (`reset`: at fit, recording n_features_in_): floats and
        integers kept as they are, as scikit-learn keeps them (and 1,000,000 samples of 784 bytes
        are 784 MB, 6.3 GB as float64), other values as float64; sparse input as CSR, as scikit-learn
        keeps it (only kpca's own model densifies it)."""
        X = validate_data(self, X, accept_sparse="csr", dtype="numeric", reset=reset, **checks)
        return X if X.dtype.kind in "uif" else X.astype(np.float64)

    @property
    def _n_features_out(self):
        """The number of codes, for ``get_feature_names_out`` (``kernelpca0`` ...)."""
        return self.n_components_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Sparse samples are taken as scikit-learn takes them, but for its kernel ridge inverse
        # and a precomputed kernel, which refuse them as scikit-learn's do; kpca's own model
        # densifies them.
        ridge = self.fit_inverse_transform and (self._preimage == "learned" or self._from_kernel_matrix())
        tags.input_tags.sparse = self.kernel != "precomputed" and not ridge
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.input_tags.pairwise = self.kernel == "precomputed"  # cross-validation slices both axes
        return tags
