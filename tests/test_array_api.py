"""kpcacli.KernelPCA and FrameModel on another array library, checked without a GPU:
array-api-strict (the standard and nothing more) stands in for CuPy and PyTorch, on its default
device and on a device of its own (``device1``, which refuses to mix with arrays elsewhere);
where PyTorch or CuPy is installed, the estimator's tests run on it too
(helpers.accelerators). Under scikit-learn's ``array_api_dispatch`` the fitted attributes and
every output are in the samples' namespace and on their device, and equal numpy's to 1e-12 of
their largest value (eigh, products and solves in another order or of another library:
rounding only)."""

from __future__ import annotations

import array_api_strict as xps
import numpy as np
import pytest
import sklearn
from array_api_compat import device as device_of
from helpers import accelerators

from kpcacli import FrameModel, KernelPCA
from kpcacli.utils.arrays import to_numpy

DEVICES = [xps.Device("CPU_DEVICE"), xps.Device("device1")]
# (namespace, device): array-api-strict on both of its devices, then each installed GPU library.
LIBRARIES = [pytest.param((xps, device), id=f"strict-{device}") for device in DEVICES] + [
    pytest.param((on.xp, on.device), id=found.id)
    for found in accelerators()
    if found.id != "strict"
    for on in found.values
]
CONFIGURATIONS = [
    {"kernel": "rbf"},  # every component: the dense eigenproblem in the namespace
    {"kernel": "rbf", "n_components": 5, "fit_inverse_transform": True},
    {"kernel": "poly", "n_components": 4, "degree": 2, "fit_inverse_transform": True},
    {"kernel": "linear", "n_components": 3, "fit_inverse_transform": True},
    {"kernel": "sigmoid", "n_components": 3, "gamma": 0.05},
    {"kernel": "rbf", "n_components": 4, "centre": False},
    {"kernel": "rbf", "n_components": 4, "eigen_solver": "arpack"},  # on the host
    {"kernel": "rbf", "n_components": 4, "eigen_solver": "randomized", "fit_inverse_transform": True},
    {"kernel": "poly", "degree": 2, "eigen_solver": "randomized", "iterated_power": 2},  # every component, no LU
    {"kernel": "rbf", "n_components": 4, "fit_inverse_transform": True, "solver": "auto"},  # kpca's model, on the host
    {"kernel": "rbf", "n_components": 3, "landmarks": 20},
]


def _dispatch_refused() -> str | None:
    """Why scikit-learn refuses ``array_api_dispatch`` here (its own floor: SciPy 1.14 for
    scikit-learn 1.6), None where it accepts it."""
    try:
        with sklearn.config_context(array_api_dispatch=True):
            return None
    except (ImportError, RuntimeError) as error:
        return str(error)


# The tests under scikit-learn's dispatch, skipped where the installed scikit-learn refuses it
# (make test-floors: SciPy 1.10 under scikit-learn 1.6); FrameModel's needs no dispatch.
under_dispatch = pytest.mark.skipif(_dispatch_refused() is not None, reason=f"{_dispatch_refused()}")


def close(xp_array, expected: np.ndarray) -> bool:
    got = to_numpy(xp_array)
    return got.shape == expected.shape and np.allclose(
        got, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max())
    )


@pytest.fixture(scope="module")
def samples():
    rng = np.random.default_rng(0)
    return rng.normal(size=(60, 8)), rng.normal(size=(7, 8))


@under_dispatch
@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("parameters", CONFIGURATIONS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_kernel_pca_on_another_array_library_is_numpys(samples, parameters, library):
    X, Y = samples
    xp, device = library
    reference = KernelPCA(**parameters).fit(X)
    with sklearn.config_context(array_api_dispatch=True):
        X_xp, Y_xp = xp.asarray(X, device=device), xp.asarray(Y, device=device)
        fitted = KernelPCA(**parameters).fit(X_xp)
        codes = fitted.transform(Y_xp)
        training_codes = KernelPCA(**parameters).fit_transform(X_xp)
        inverse = fitted.inverse_transform(codes) if fitted.fit_inverse_transform else None
        score = fitted.score(Y_xp) if fitted.fit_inverse_transform else None
    for name in ("eigenvalues_", "eigenvectors_", "X_fit_"):
        value = getattr(fitted, name)
        assert type(value) is type(X_xp) and device_of(value) == device, name
        assert close(value, getattr(reference, name)), name
    assert device_of(codes) == device and close(codes, reference.transform(Y))
    assert device_of(training_codes) == device and close(training_codes, reference.fit_transform(X))
    if inverse is not None:
        assert device_of(inverse) == device and close(inverse, reference.inverse_transform(reference.transform(Y)))
        assert abs(score - reference.score(Y)) <= 1e-12 * abs(reference.score(Y))


@under_dispatch
def test_the_randomized_method_runs_in_the_samples_namespace(samples, monkeypatch):
    """Its products, QR and SVD on the samples' device (numpy's normalise the power iterations
    by LU, which the standard lacks: by QR there, the same subspace, the same eigenpairs to
    rounding as the configurations above show); the sketch is drawn on the host, as numpy's."""
    from kpcacli.numerics.arraybackend import ArrayBackend

    namespaces = []
    original = ArrayBackend.randomized_sketch
    monkeypatch.setattr(
        ArrayBackend,
        "randomized_sketch",
        lambda self, matrix, *rest: namespaces.append(type(matrix)) or original(self, matrix, *rest),
    )
    with sklearn.config_context(array_api_dispatch=True):
        KernelPCA(n_components=3, eigen_solver="randomized").fit(xps.asarray(samples[0], device=DEVICES[1]))
    assert namespaces == [type(xps.asarray(samples[0]))]


@under_dispatch
def test_float32_samples_keep_float32_as_numpys_do(samples):
    X, Y = (values.astype(np.float32) for values in samples)
    reference = KernelPCA(n_components=3, kernel="rbf", fit_inverse_transform=True).fit(X)
    with sklearn.config_context(array_api_dispatch=True):
        fitted = KernelPCA(n_components=3, kernel="rbf", fit_inverse_transform=True).fit(xps.asarray(X))
        codes = fitted.transform(xps.asarray(Y))
        back = fitted.inverse_transform(codes)
    assert fitted.eigenvectors_.dtype == codes.dtype == back.dtype == xps.float32
    assert np.allclose(to_numpy(codes), reference.transform(Y), atol=1e-5)


@under_dispatch
def test_another_namespace_than_the_fits_is_refused(samples):
    X, Y = samples
    with sklearn.config_context(array_api_dispatch=True):
        fitted = KernelPCA(n_components=3, kernel="rbf").fit(xps.asarray(X))
        with pytest.raises(ValueError, match="namespace"):
            fitted.transform(Y)


@pytest.mark.parametrize("library", LIBRARIES[1:])
def test_frame_model_takes_another_librarys_frames(hand, library):
    """FrameModel brings them to the host (its model is numpy's, in the paper's conventions):
    the same model, codes and frames as from numpy frames, bit for bit."""
    xp, device = library
    train, new = hand[::3], hand[1::3][:4]
    reference = FrameModel(n_components=4, solver="distance").fit(train)
    fitted = FrameModel(n_components=4, solver="distance").fit(xp.asarray(train, device=device))
    assert np.array_equal(fitted.state_.eigenvectors, reference.state_.eigenvectors)
    codes = fitted.encode(xp.asarray(new, device=device))
    assert np.array_equal(codes, reference.encode(new))
    assert np.array_equal(fitted.decode(codes), reference.decode(codes))


@under_dispatch
def test_a_fit_on_another_library_pickles_and_gives_its_model(samples):
    """The estimator keeps arrays only (no namespace or device object); ``model_`` is kpca's
    model of the samples, on the host."""
    import pickle

    X, Y = samples
    with sklearn.config_context(array_api_dispatch=True):
        fitted = KernelPCA(n_components=3, kernel="rbf").fit(xps.asarray(X, device=DEVICES[1]))
        again = pickle.loads(pickle.dumps(fitted))
        assert close(
            again.transform(xps.asarray(Y, device=DEVICES[1])),
            KernelPCA(n_components=3, kernel="rbf").fit(X).transform(Y),
        )
    assert fitted.model_.state_.n_samples == len(X)


@under_dispatch
@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"kernel": "cosine", "landmarks": 5}, "landmarks and frame_shape need one of kpca's kernels"),
        ({"kernel": "cosine", "eps": 0.1}, "eps needs one of kpca's kernels"),
        ({"kernel": "precomputed", "fit_inverse_transform": True}, "Cannot fit_inverse_transform"),
    ],
)
def test_another_librarys_samples_are_refused_as_numpys_are(samples, parameters, message):
    """The direct fit's checks are one (sklearn_direct.check_direct_fit), whatever the samples."""
    X = samples[0] @ samples[0].T if parameters["kernel"] == "precomputed" else samples[0]
    for given in (X, xps.asarray(X)):
        with sklearn.config_context(array_api_dispatch=True), pytest.raises(ValueError, match=message):
            KernelPCA(n_components=2, **parameters).fit(given)
