"""kpca as a scikit-learn estimator: :class:`KernelPCA`, a transformer whose
``inverse_transform`` is one of kpca's pre-image solvers.

scikit-learn's own ``KernelPCA`` learns its inverse by kernel ridge regression (Bakır et al.
2004); this one decodes a code with the solvers of the command line, by default the one that
reconstructs training samples held back best (:mod:`kpcacli.preimage.choice`): that ridge map,
Mika et al.'s fixed point (1999), or a weighted sum of the training samples nearest to the
code in reduced space (the distance solver of Kwok and Tsang 2004, the log-discrepancy solver
of García-González et al. 2021, eq. 35).

It is a thin layer over :class:`kpcacli.estimators.estimator.FrameModel`, the model the command line fits,
saves and decodes with: parameters under scikit-learn's names, input checked as scikit-learn
checks it, fitted attributes with a trailing underscore. Importing this module imports
scikit-learn (about a second), which is why the command line never does and ``kpcacli``
imports it only when ``kpcacli.KernelPCA`` is first asked for.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ..numerics.landmarks import choose_landmarks
from ..preimage import AUTO, SOLVERS, get_solver
from ..utils.errors import KpcaError, ParameterError
from ..utils.hyperparameters import sklearn_constraints
from .batches import batch_size, encode_rows
from .estimator import FrameModel


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


class KernelPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Kernel PCA with pre-images (García-González et al. 2021), as a scikit-learn transformer.

    Parameters
    ----------
    n_components : int, optional
        k, the number of components. When None, the smallest k keeping ``1 - eps`` of the
        variance (eq. 3).
    kernel : {"rbf", "poly", "linear", "sigmoid"}, default "rbf"
        ``exp(-gamma |x - y|²)``, ``(gamma x·y + coef0)^degree``, ``x·y`` or
        ``tanh(gamma x·y + coef0)``.
    gamma : float, optional
        β of the Gaussian kernel, or the dot-product scale of poly and sigmoid. Default: the
        inverse of the median pairwise squared distance between training samples (rbf), or of
        their median squared norm (poly, sigmoid). The value used is ``gamma_``.
    degree : int, default 3
        Degree of the polynomial kernel.
    coef0 : float, optional
        Offset of poly (default 1) and sigmoid (default 0).
    centre : bool, default False
        Centre the kernel in feature space (eqs. 24-25): ``kpca fit --center``, and
        ``FrameModel(center=...)``.
    eps : float, optional
        Variance tolerance of eq. 3 when `n_components` is None (default 0.1). Given with
        `n_components`, it is not used: scikit-learn's tools set `n_components` on an
        estimator as they find it (``FrameModel`` and ``kpca fit`` refuse both).
    landmarks : int, optional
        Fit on this many training samples chosen by `landmark_method` (Nyström's subset: the
        model keeps them only; every sample still transforms and decodes).
    landmark_method : {"uniform", "farthest"}, default "uniform"
        Landmarks evenly spaced in the order of the samples, or by farthest-point sampling.
    solver : str, default "auto"
        The pre-image solver of ``inverse_transform``, a name of
        :data:`kpcacli.preimage.SOLVERS`, or ``auto``: the solver that reconstructs training
        samples held back best, measured by ``fit`` (:mod:`kpcacli.preimage.choice`; noisy
        training samples lead it to the solver that denoises best). ``transport`` moves pixels
        and needs `frame_shape`.
    neighbours : int, optional
        M, the training samples nearest in reduced space a pre-image is built from (default:
        the solver's own).
    eigen_solver : {"auto", "dense", "arpack"}, default "auto"
        Every eigenpair (LAPACK), or the leading ones by Lanczos iteration (ARPACK); auto is
        dense up to 3,000 samples.
    frame_shape : tuple of int, optional
        The shape of one sample as an image, ``(height, width)`` or ``(height, width, 3)``,
        its values flattened into the sample's features in C order: samples are then frames,
        and ``inverse_transform`` may move their pixels (``solver="transport"``). Default:
        samples are points.

    Attributes
    ----------
    n_components_ : int
        k as fitted.
    eigenvalues_ : ndarray of shape (n_components_,)
        The kernel matrix's leading eigenvalues, decreasing.
    eigenvectors_ : ndarray of shape (n_training_samples, n_components_)
        The matching unit eigenvectors (eq. 26).
    gamma_ : float or None
        The kernel's width or scale as used (None for the linear kernel).
    model_ : FrameModel
        The fitted model: ``model_.save(path)`` writes a pickle-free model file the command
        line reads (``kpca decode codes.npy -m path``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When fitted on a DataFrame with string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from kpcacli import KernelPCA
    >>> X = np.random.default_rng(0).normal(size=(40, 6))
    >>> kpca = KernelPCA(n_components=3).fit(X)
    >>> kpca.transform(X[:2]).shape
    (2, 3)
    >>> kpca.inverse_transform(kpca.transform(X[:2])).shape
    (2, 6)
    """

    # From the declarations every surface checks against (kpcacli.utils.hyperparameters):
    # the estimator's name -> the declared one; the solvers are the registry's.
    _parameter_constraints: dict = {
        **sklearn_constraints(
            {
                "n_components": "n_components",
                "kernel": "kernel",
                "gamma": "gamma",
                "degree": "degree",
                "coef0": "coef0",
                "centre": "center",
                "eps": "eps",
                "landmarks": "landmarks",
                "landmark_method": "landmark_method",
                "neighbours": "neighbours",
                "eigen_solver": "eigen_solver",
            }
        ),
        "solver": [StrOptions({AUTO, *SOLVERS}), None],
        "frame_shape": [tuple, None],  # checked against the samples by FrameModel.fit
    }

    def __init__(
        self,
        n_components=None,
        *,
        kernel="rbf",
        gamma=None,
        degree=3,
        coef0=None,
        centre=False,
        eps=None,
        landmarks=None,
        landmark_method="uniform",
        solver=AUTO,
        neighbours=None,
        eigen_solver="auto",
        frame_shape=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.centre = centre
        self.eps = eps
        self.landmarks = landmarks
        self.landmark_method = landmark_method
        self.solver = solver
        self.neighbours = neighbours
        self.eigen_solver = eigen_solver
        self.frame_shape = frame_shape

    @_fit_context(prefer_skip_nested_validation=True)
    @_value_errors
    def fit(self, X, y=None):
        """Fit the model to the rows of `X`, (n_samples, n_features); `y` is ignored."""
        X = self._samples(X, reset=True, ensure_min_samples=2)
        # The model keeps a copy of its rows (the caller's array may change), in floating point:
        # 8- and 16-bit samples are kept as they are in X and only the rows fitted on converted.
        dtype = np.float64 if X.dtype.kind in "ui" else X.dtype
        if self.landmarks is not None and self.landmarks < X.shape[0]:
            rows = np.asarray(X[choose_landmarks(X, self.landmarks, self.landmark_method)], dtype=dtype)
        else:
            rows = np.array(X, dtype=dtype, copy=True)
        model = FrameModel(
            kernel=self.kernel,
            n_components=self.n_components,
            eps=self.eps if self.n_components is None else None,  # n_components wins: see eps
            beta=self.gamma if self.kernel == "rbf" else None,
            gamma=self.gamma if self.kernel in ("poly", "sigmoid") else None,
            degree=self.degree,
            coef0=self.coef0,
            center=self.centre,
            eigen_solver=self.eigen_solver,
        )
        self.model_ = model.fit(rows, frame_shape=self.frame_shape)
        state = model.state_
        if self.solver not in (None, AUTO):  # the measured choice takes only solvers that apply
            try:  # refused now, not at the first inverse_transform
                get_solver(self.solver).check(state)
            except KpcaError as error:
                raise ParameterError(
                    f"solver {self.solver!r} cannot invert this model ({error}); choose another solver"
                ) from None
        self.n_components_ = state.n_components
        self.eigenvalues_ = state.eigenvalues[: state.n_components].copy()
        self.eigenvectors_ = state.eigenvectors
        self.gamma_ = state.kernel.beta if self.kernel == "rbf" else state.kernel.gamma
        return self

    @_value_errors
    def transform(self, X):
        """The codes of the rows of `X` (eqs. 29-30), (n_samples, n_components_)."""
        check_is_fitted(self)
        return encode_rows(self.model_, self._samples(X))  # in batches of bounded memory, as kpca encode

    @_value_errors
    def inverse_transform(self, X):
        """Pre-images of the codes in `X`, (n_samples, n_components_): samples
        (n_samples, n_features_in_) of the training samples' dtype, by `solver`."""
        check_is_fitted(self)
        codes = check_array(X, dtype=np.float64)  # k columns, checked against the model by decode
        decoded = self.model_.decode(codes, solver=self.solver, neighbours=self.neighbours)
        return decoded.reshape(len(decoded), -1)  # frames as rows of features

    @_value_errors
    def score(self, X, y=None):
        """The negative mean squared reconstruction error of `X` through ``transform`` and
        ``inverse_transform`` (greater is better, as scikit-learn's model selection wants)."""
        check_is_fitted(self)
        X = self._samples(X)
        total, size = 0.0, batch_size(self.model_)
        for start in range(0, X.shape[0], size):  # a batch at a time: X may be large and 8-bit
            rows = np.asarray(X[start : start + size], dtype=np.float64)
            back = self.model_.decode(self.model_.encode(rows), solver=self.solver, neighbours=self.neighbours)
            total += float(np.sum((rows - back) ** 2))
        return -total / X.size

    def _samples(self, X, reset: bool = False, **checks) -> np.ndarray:
        """`X` as scikit-learn checks it (`reset`: at fit, recording n_features_in_): float32,
        float64, uint8 and uint16 kept as they are (1,000,000 samples of 784 bytes are 784 MB,
        6.3 GB as float64), other numbers as float64, sparse input densified (kernel PCA's Gram
        is dense)."""
        X = validate_data(
            self,
            X,
            accept_sparse=("csr", "csc", "coo"),
            dtype=(np.float64, np.float32, np.uint8, np.uint16),
            reset=reset,
            **checks,
        )
        return X.toarray() if scipy.sparse.issparse(X) else X

    @property
    def _n_features_out(self):
        """The number of codes, for ``get_feature_names_out`` (``kernelpca0`` ...)."""
        return self.n_components_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # densified: the Gram needs every product anyway
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
