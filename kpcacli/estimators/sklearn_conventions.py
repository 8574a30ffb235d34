"""What :class:`kpcacli.KernelPCA` keeps of scikit-learn's conventions at its edge: its
parameters' constraints, kpca's errors raised as the ValueErrors scikit-learn's users catch,
``n_jobs`` as kpca's thread budget, the error of a sparse kernel ridge inverse, and which
samples are kept as they are or densified.
"""

from __future__ import annotations

import functools
from numbers import Integral, Real

import numpy as np
import scipy.sparse
from sklearn.decomposition import KernelPCA as ScikitKernelPCA

from ..preimage import AUTO, SOLVERS
from ..utils.cores import available_cores
from ..utils.errors import KpcaError
from ..utils.hyperparameters import HYPERPARAMETERS
from ..utils.parallel import thread_budget
from .sklearn_compat import Interval, StrOptions


def sklearn_constraints(names: dict[str, str]) -> dict:
    """scikit-learn's ``_parameter_constraints`` for the hyperparameters `names` (their name in
    the estimator -> their name here), from their declarations."""
    constraints = {}
    for estimator_name, name in names.items():
        spec = HYPERPARAMETERS[name]
        if spec.accepts is bool:
            allowed = ["boolean"]
        elif isinstance(spec.accepts, tuple):
            allowed = [StrOptions(set(spec.accepts))]
        else:
            interval = spec.accepts
            kind = Integral if interval.kind is int else Real
            allowed = [Interval(kind, interval.low, interval.high, closed=interval.closed)]
        constraints[estimator_name] = allowed + ([None] if spec.optional else [])
    return constraints


# KernelPCA's parameters: scikit-learn's own declarations for its own (the same ranges and
# messages as the installed release's KernelPCA); kpca's from the table every surface checks
# against (kpcacli.utils.hyperparameters); the solvers are the registry's.
PARAMETER_CONSTRAINTS: dict = {
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


def value_errors(method):
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


def within_jobs(method):
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


def is_other_integer(dtype) -> bool:
    """Whether samples of `dtype` are integers other than the 8- and 16-bit ones kpca's model
    stores as they are: kept so in ``X_fit_``, as scikit-learn keeps them, and converted to
    float64 where kpca's model fits or codes them."""
    return dtype.kind in "ui" and dtype not in (np.uint8, np.uint16)


def dense(X):
    """`X` as a numpy array: sparse samples densified (kpca's own model holds dense ones)."""
    return X.toarray() if scipy.sparse.issparse(X) else X
