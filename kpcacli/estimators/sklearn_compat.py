"""scikit-learn's private names that kpcacli's estimator uses, in one place, guarded for every
release pyproject.toml accepts (the floors `make test-floors` installs).

scikit-learn's own estimators validate their parameters, mark their fit and check their
inputs with helpers it does not export (``sklearn.utils._param_validation``, ``_fit_context``,
``_check_psd_eigenvalues``); :class:`kpcacli.KernelPCA` behaves as scikit-learn's ``KernelPCA``
by calling the same ones. A private name may move or appear between releases, so every module
imports them from here, never from scikit-learn itself, and a name a supported release lacks
is written here for that release.
"""

from __future__ import annotations

from sklearn import get_config
from sklearn.base import _fit_context
from sklearn.utils._array_api import get_namespace_and_device
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_psd_eigenvalues, _num_samples

from ..utils.arrays import is_numpy

try:
    from sklearn.utils._array_api import check_same_namespace
except ImportError:  # scikit-learn before 1.9

    def check_same_namespace(X, estimator, *, attribute: str, method: str) -> None:
        """scikit-learn 1.9's check that `X` is in the namespace and on the device of the fitted
        `attribute` of `estimator` (only under ``array_api_dispatch``): a ValueError naming
        `method` otherwise."""
        if not get_config()["array_api_dispatch"]:
            return
        fitted_xp, _, fitted_device = get_namespace_and_device(getattr(estimator, attribute))
        given_xp, _, given_device = get_namespace_and_device(X)
        if (given_xp == fitted_xp and given_device == fitted_device) or (is_numpy(fitted_xp) and is_numpy(given_xp)):
            return
        raise ValueError(
            f"Inputs passed to {type(estimator).__name__}.{method}() must use the same namespace and the same "
            f"device as those passed to fit(): fitted with {getattr(fitted_xp, '__name__', fitted_xp)} on "
            f"{fitted_device}, given {getattr(given_xp, '__name__', given_xp)} on {given_device}."
        )


__all__ = [
    "Interval",
    "StrOptions",
    "_check_psd_eigenvalues",
    "_fit_context",
    "_num_samples",
    "available_if",
    "check_same_namespace",
    "get_namespace_and_device",
]
