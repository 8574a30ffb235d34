"""kpcacli.KernelPCA's docstrings as scikit-learn checks its own estimators': numpydoc validation
of the class and every public method (sklearn/tests/test_docstrings.py, the same codes left
out), and every fitted attribute documented, each one there after a fit unless its description
says "only" (sklearn/tests/test_docstring_parameters.py::test_fit_docstring_attributes)."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("sklearn")
numpydoc_validation = pytest.importorskip("numpydoc.validate")

from numpydoc import docscrape  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402

from kpcacli.estimators.sklearn_estimator import KernelPCA  # noqa: E402

PATH = "kpcacli.estimators.sklearn_estimator.KernelPCA"


def public_methods() -> list[str | None]:
    """None (the class itself), then every public method and property, as scikit-learn lists
    them."""
    names = []
    for name in dir(KernelPCA):
        member = getattr(KernelPCA, name, None)
        if not name.startswith("_") and (callable(member) or isinstance(member, property)):
            names.append(name)
    return [None, *sorted(names)]


def kept_errors(errors, method: str | None):
    """scikit-learn's filter_errors: RT02, GL01 and GL02 never count; a property's PR02 and
    GL08 do not; ES01, SA01 and EX01 count for the class alone."""
    for code, message in errors:
        if code in ("RT02", "GL01", "GL02"):
            continue
        if code in ("PR02", "GL08") and method is not None and isinstance(getattr(KernelPCA, method), property):
            continue
        if method is not None and code in ("EX01", "SA01", "ES01"):
            continue
        yield code, message


@pytest.mark.parametrize("method", public_methods(), ids=lambda method: method or "class")
def test_numpydoc_validation_passes_as_scikit_learns_runs_it(method):
    """It failed 7 of 12 (SS06, RT01, PR01, PR08, SA01, ES01, SS02, SS05)."""
    result = numpydoc_validation.validate(PATH if method is None else f"{PATH}.{method}")
    errors = list(kept_errors(result["errors"], method))
    assert not errors, errors


def test_every_fitted_attribute_is_documented_and_there():
    """The class's Attributes: one entry each (``dual_coef_, X_transformed_fit_`` shared one),
    each present after a default fit unless its description says "only" (feature_names_in_
    did not), and every fitted attribute, properties included, documented."""
    attributes = docscrape.ClassDoc(KernelPCA)["Attributes"]
    X, y = make_classification(n_samples=20, n_features=3, n_redundant=0, n_classes=2, random_state=2)
    estimator = KernelPCA(random_state=0).fit(X, y)
    for attribute in attributes:
        if "only " not in " ".join(attribute.desc).lower():
            assert hasattr(estimator, attribute.name), attribute.name
    fitted = [name for name in vars(estimator) if name.endswith("_") and not name.startswith("_")]
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        for name in dir(KernelPCA):
            if isinstance(getattr(KernelPCA, name), property) and name.endswith("_") and not name.startswith("_"):
                try:
                    getattr(estimator, name)
                except (AttributeError, FutureWarning):
                    continue
                fitted.append(name)
    assert set(fitted) <= {attribute.name for attribute in attributes}
    assert len({attribute.name for attribute in attributes}) == len(attributes)  # one entry each
