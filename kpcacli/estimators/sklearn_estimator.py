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

Its fit is scikit-learn's, done in place (:mod:`kpcacli.estimators.sklearn_direct`), unless it
needs kpca's own model (kpca's pre-images, landmarks, frames, eps): then it is a thin layer over
:class:`kpcacli.estimators.estimator.FrameModel`, the model the command line fits, saves and
decodes with (:mod:`kpcacli.estimators.sklearn_model`), which is otherwise fitted only if
``model_`` is asked for. Importing this module imports scikit-learn (about a second), which is
why the command line never does and ``kpcacli`` imports it only when ``kpcacli.KernelPCA`` is
first asked for.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_array, check_is_fitted

from ..utils.arrays import is_numpy
from .batches import batch_size
from .sklearn_arrays import ArrayAPIFit, namespace_of
from .sklearn_compat import _fit_context, _num_samples, available_if, check_same_namespace
from .sklearn_conventions import PARAMETER_CONSTRAINTS, dense, value_errors, within_jobs


class KernelPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ArrayAPIFit, BaseEstimator):
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
        self._model, self._foreign, self._auto_kept_default = None, False, False
        if not is_numpy(xp):  # another library's arrays, under scikit-learn's array_api_dispatch
            return self._fit_in(X, xp, device)
        if not self._needs_model():
            return self._fit_directly(X)
        return self._fit_model(dense(X))  # kpca's own model holds dense samples

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
        return self._as_fitted_float(self._codes_of_training())

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
        X = self._samples(X, ensure_all_finite=True if self._from_kernel_matrix() else "allow-nan")
        if self._namespace is not None:
            return self._transform_in(X)
        if self._direct is not None and scipy.sparse.issparse(X):
            return self._direct_codes(X)  # sparse samples: kernel values as scikit-learn forms them
        X = dense(X)
        if X.dtype.kind == "f" and np.isnan(X).any():
            X = self._completed(X)
        if self._direct is not None:
            return self._direct_codes(X)
        return self._model_codes(X)

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
        if self._namespace is not None:
            return self._inverse_in(check_array(X, dtype="numeric"))
        given = check_array(X, dtype=(np.float64, np.float32))
        codes = np.asarray(given, dtype=np.float64)
        if self._inverts_by_ridge():
            return self._learned_inverse(codes, self._codes_dtype(given))  # float32 codes of a float32 fit: float32
        return self._model_inverse(codes)

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
        if self._namespace is not None:
            return self._score_in(X)
        total, size = 0.0, batch_size(self._model.state_) if self._model is not None else max(1, X.shape[0])
        for start in range(0, X.shape[0], size):  # a batch at a time: X may be large and 8-bit
            rows = np.asarray(dense(X[start : start + size]), dtype=np.float64)
            back = self.inverse_transform(self.transform(rows))
            total += float(np.sum((rows - back) ** 2))
        return -total / X.size

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
