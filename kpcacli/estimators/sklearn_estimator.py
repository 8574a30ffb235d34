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

The estimator holds one fitted core (:class:`FittedCore`), chosen once at fit by the route the
parameters and samples call for, which gives the codes and the inverse: scikit-learn's fit,
done in place (:mod:`kpcacli.estimators.sklearn_direct`); kpca's own model, where kpca's
pre-images, landmarks, frames or eps need it (:mod:`kpcacli.estimators.sklearn_model`: a
:class:`kpcacli.estimators.estimator.FrameModel`, the model the command line fits, saves and
decodes with, otherwise fitted only if ``model_`` is asked for); or scikit-learn's fit in
another array library's namespace (:mod:`kpcacli.estimators.sklearn_arrays`). The estimator
itself checks what enters, moves samples to where the core computes, and gives what comes out
in the fit's float, namespace and device.

Importing this module imports scikit-learn (about a second), which is why the command line never does and ``kpcacli`` imports it only when ``kpcacli.KernelPCA`` is
first asked for.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ..numerics.spectrum import EigenSolver
from ..utils.arrays import device_of, from_numpy, is_numpy, namespace, on_host
from ..utils.errors import DegenerateKernelError
from .batches import batch_size
from .estimator import FrameModel
from .sklearn_arrays import fit_in_namespace
from .sklearn_compat import _fit_context, _num_samples, available_if, check_same_namespace, get_namespace_and_device
from .sklearn_conventions import PARAMETER_CONSTRAINTS, dense, value_errors, within_jobs
from .sklearn_direct import MATRIX_KERNELS, fit_directly, training_rows
from .sklearn_model import completed, fit_model, fitted_model
from .sklearn_ridge import KernelRidge, SampleKernel, training_codes


def namespace_of(X):
    """`X`'s namespace and device as scikit-learn sees them (numpy's unless
    ``array_api_dispatch`` is on)."""
    xp, _, device = get_namespace_and_device(X)
    return xp, device


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
        (:mod:`kpcacli.preimage.measurement`), kept only where it also beats ``learned`` on the
        same held-back samples, else ``learned`` (:mod:`kpcacli.estimators.sklearn_auto`): it
        never loses to the default, and costs a fit many times the default's (every candidate
        decodes held-back samples on four folds: docs/sklearn.md measures it); another name
        of :data:`kpcacli.preimage.SOLVERS`, that solver. ``transport`` needs `frame_shape`.
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

    _parameter_constraints: dict = PARAMETER_CONSTRAINTS

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

    # -- what the parameters say, for every route --------------------------------------
    @property
    def _preimage(self) -> str:
        """The pre-image solver `solver` names, None standing for the default, scikit-learn's
        kernel ridge (``learned``)."""
        return "learned" if self.solver is None else self.solver

    def _from_kernel_matrix(self) -> bool:
        """Whether the kernel is one kpca's model does not compute from frames (fitted from the
        kernel matrix itself): precomputed, cosine, a callable, or a kernel of gamma 0 or of a
        degree that is not a positive integer (constant, or scikit-learn's fractional powers)."""
        if callable(self.kernel) or self.kernel in MATRIX_KERNELS:
            return True
        fractional = self.kernel == "poly" and (self.degree < 1 or self.degree != int(self.degree))
        return fractional or (self.gamma is not None and self.gamma == 0 and self.kernel != "linear")

    def _needs_model(self) -> bool:
        """Whether the fit needs kpca's own model (FrameModel): for kpca's pre-images
        (`fit_inverse_transform` with a solver other than ``learned``), landmarks, frames, or
        k by eq. 3 (`eps`). Otherwise it is scikit-learn's fit, from the kernel matrix, and
        ``model_`` is fitted when first asked for."""
        kpca_inverse = self.fit_inverse_transform and self._preimage != "learned"
        wanted = kpca_inverse or self.landmarks is not None or self.frame_shape is not None or self.eps is not None
        return wanted and not self._from_kernel_matrix()

    def _eigen_solver(self, method: str) -> EigenSolver:
        """The eigensolver `method` with this estimator's tol, max_iter, iterated_power and
        random_state."""
        return EigenSolver(method, float(self.tol), self.max_iter, self.iterated_power, self.random_state)

    def _sample_kernel(self) -> SampleKernel:
        """The kernel between samples as scikit-learn computes it: a callable with
        `kernel_params`, the others with ``gamma_``, `degree` and `coef0`."""
        if callable(self.kernel):
            return SampleKernel(self.kernel, self.kernel_params or {})
        return SampleKernel(self.kernel, {"gamma": self.gamma_, "degree": self.degree, "coef0": self.coef0})

    def _ridge(self, codes, rows) -> KernelRidge:
        """scikit-learn's inverse from the training `codes` to `rows`, with `alpha`, kept in the
        fit's float (scikit-learn solves in the samples' float)."""
        return KernelRidge.fitted(self._sample_kernel(), codes, rows, self.alpha, self._float_of(namespace(codes)))

    @property
    def _n_features_out(self):
        """The number of codes, for ``get_feature_names_out`` (``kernelpca0`` ...)."""
        return self.n_components_

    def _samples(self, X, reset: bool = False, **checks):
        """`X` as scikit-learn checks it (`reset`: at fit, recording n_features_in_): floats and
        integers kept as they are, as scikit-learn keeps them (and 1,000,000 samples of 784 bytes
        are 784 MB, 6.3 GB as float64), other values as float64; sparse input as CSR, as scikit-learn
        keeps it (only kpca's own model densifies it)."""
        X = validate_data(self, X, accept_sparse="csr", dtype="numeric", reset=reset, **checks)
        if not isinstance(X, np.ndarray) and not scipy.sparse.issparse(X):
            return X  # another library's arrays (array_api_dispatch): numbers, as checked
        return X if X.dtype.kind in "uif" else X.astype(np.float64)

    # -- what comes out: the fit's float, namespace and device --------------------------
    def _float_of(self, xp, given=None):
        """The float of what the estimator gives, in namespace `xp`: float32 after a fit on
        float32 samples, as scikit-learn keeps it (when the output comes from an input, `given`,
        only if that input is float32 too: scikit-learn's kernel values take the wider of the
        two), else float64."""
        single = self._float32 and (given is None or _is_float32(given))
        return xp.float32 if single else xp.float64

    def _moved(self, values, where=None):
        """`values` in the fit's namespace and on its device (`where`: (namespace, device) during
        the fit, else the fitted eigenvectors'): a host core's numpy arrays go back there."""
        xp, device = where if where is not None else (namespace(self.eigenvectors_), device_of(self.eigenvectors_))
        return from_numpy(values, xp, device) if isinstance(values, np.ndarray) else values

    def _given(self, values, given=None, where=None):
        """Float64 `values` as the estimator gives them: moved (:meth:`_moved`) and in the fit's
        float (:meth:`_float_of`)."""
        values = self._moved(values, where)
        xp = namespace(values)
        return xp.astype(values, self._float_of(xp, given), copy=False)

    @property
    def model_(self) -> FrameModel | None:
        """Kpca's model of the training samples, fitted when first asked for.

        A :class:`FrameModel`, in the paper's conventions, fitted now if the fit did not need
        it; None for a kernel it does not have (precomputed, cosine, callable, ...) or samples
        the kernel cannot tell apart.
        """
        core = self._core
        if core.model is None and not self._from_kernel_matrix():
            try:
                rows = training_rows(dense(on_host(self.X_fit_)), copy=False)  # as a fit that needs the model
                core.model = within_jobs(fitted_model)(self, rows)
            except DegenerateKernelError:
                return None
        return core.model

    @_fit_context(prefer_skip_nested_validation=True)
    @value_errors
    @within_jobs
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
        xp, device = namespace_of(X)
        self._float32 = X.dtype == xp.float32  # codes in float32 too, as scikit-learn keeps them
        # The route, chosen once: another library's arrays fit in their namespace but for what
        # runs on the CPU alone (kpca's model, ARPACK), where they come to the host.
        if not is_numpy(xp) and not (self._needs_model() or self.eigen_solver == "arpack"):
            core = fit_in_namespace(self, X, xp)
        elif self._needs_model():
            core = fit_model(self, dense(on_host(X)))  # kpca's own model holds dense samples
        else:
            core = fit_directly(self, on_host(X))
        self._core, where = core, (xp, device)
        self.n_components_ = int(core.eigenvalues.shape[0])
        self.eigenvalues_ = self._given(core.eigenvalues, where=where)
        self.eigenvectors_ = self._given(core.eigenvectors, where=where)
        self.X_fit_ = self._moved(core.samples, where)
        if core.ridge is not None:
            self.dual_coef_ = self._moved(core.ridge.dual_coef, where)
            self.X_transformed_fit_ = self._moved(core.ridge.codes, where)
        return self

    @value_errors
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
        return self._given(training_codes(self._core.eigenvalues, self._core.eigenvectors))

    @value_errors
    @within_jobs
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
        check_same_namespace(X, self, attribute="eigenvectors_", method="transform")
        X = given = self._samples(X, ensure_all_finite=True if self._from_kernel_matrix() else "allow-nan")
        if self._core.on_host:
            X = on_host(X)
            if X.dtype.kind == "f" and np.isnan(X.data if scipy.sparse.issparse(X) else X).any():
                X = completed(self.model_, dense(X), self._preimage if self._preimage != "learned" else None)
        return self._given(self._core.codes(X), given)

    @value_errors
    @within_jobs
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
        check_same_namespace(X, self, attribute="eigenvectors_", method="inverse_transform")
        foreign = not is_numpy(namespace(self.eigenvectors_))  # another library's codes: numbers, as checked
        given = check_array(X, dtype="numeric") if foreign else X
        if self._core.on_host:
            given = check_array(on_host(given), dtype=(np.float64, np.float32))
        xp = namespace(given)
        codes = xp.asarray(given, dtype=xp.float64)
        back = self._core.inverse(codes, self._float_of(xp, given), self._preimage, self.neighbours)
        return self._moved(back)

    @available_if(lambda self: self.fit_inverse_transform)
    @value_errors
    @within_jobs
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
        check_same_namespace(X, self, attribute="eigenvectors_", method="score")
        X = self._samples(X)
        xp, model = namespace(self.eigenvectors_), self._core.model
        total, size = 0.0, batch_size(model.state_) if model is not None else max(1, X.shape[0])
        for start in range(0, X.shape[0], size):  # a batch at a time: X may be large and 8-bit
            rows = xp.asarray(dense(X[start : min(start + size, X.shape[0]), :]), dtype=xp.float64)
            back = xp.asarray(self.inverse_transform(self.transform(rows)), dtype=xp.float64)
            total += float(xp.sum((rows - back) ** 2))
        return -total / (X.shape[0] * X.shape[1])

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


class FittedCore(Protocol):
    """What :class:`KernelPCA` holds after a fit: one route's fitted core, chosen once at fit
    (:class:`kpcacli.estimators.sklearn_direct.DirectFit`,
    :class:`kpcacli.estimators.sklearn_model.ModelFit`,
    :class:`kpcacli.estimators.sklearn_arrays.NamespaceFit`), which gives the codes and the
    inverse; the estimator checks what enters and gives what comes out in the fit's float."""

    on_host: bool  # numpy samples in (another library's come to the host), or the samples' own namespace
    eigenvalues: object  # (c,), float64 as computed, in the core's namespace
    eigenvectors: object  # (n, c)
    samples: object  # X_fit_
    ridge: KernelRidge | None  # scikit-learn's inverse, when fitted
    model: FrameModel | None  # kpca's model, when fitted (KernelPCA.model_ fits it for the others)

    def codes(self, X):
        """The codes (m, c) of checked samples `X`, float64."""

    def inverse(self, codes, dtype, solver: str, neighbours: int | None):
        """The pre-images of float64 `codes` by `solver` (the estimator's, as it is when asked)
        with M = `neighbours`; the ridge's in `dtype`."""


def _is_float32(X) -> bool:
    """Whether the samples or codes `X` (numpy, sparse or another library's) are float32."""
    if isinstance(X, np.ndarray) or scipy.sparse.issparse(X):
        return X.dtype == np.float32
    return X.dtype == namespace(X).float32
