"""The outputs of kpcacli.KernelPCA over every route its fit may take, hashed a line each:
benchmarks/identity.sh writes them (sklearn-routes.txt) so that a refactor of the estimator
shows any output it changes. Each line: a digest of the fitted attributes, the codes of new and
training samples, and (with fit_inverse_transform) the pre-images, the score and the ridge's
arrays, for one kernel, dtype and set of parameters; the direct fit (kernel matrix, primal),
kpca's model (solvers, landmarks, eps, frames), integer and sparse samples, NaN completion, and
array-api-strict's arrays under scikit-learn's array-API dispatch (SCIPY_ARRAY_API=1).
"""

import hashlib
import warnings

import array_api_strict as xps
import numpy as np
import scipy.sparse
import sklearn

from kpcacli import KernelPCA

rng = np.random.default_rng(0)
X = rng.normal(size=(60, 6))
Y = rng.normal(size=(9, 6))
out = []


def h(name, *arrays):
    d = hashlib.sha256()
    for a in arrays:
        a = np.asarray(a)
        d.update(str(a.dtype).encode() + str(a.shape).encode() + np.ascontiguousarray(a).tobytes())
    out.append(f"{d.hexdigest()[:16]} {name}")


def run(name, params, Xf, Yf, inverse=True):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = KernelPCA(**params).fit(Xf)
            arrays = [m.eigenvalues_, m.eigenvectors_, m.transform(Yf), m.fit_transform(Xf)]
            m.fit(Xf)
            if params.get("fit_inverse_transform") and inverse:
                arrays.append(m.inverse_transform(m.transform(Yf)))
                arrays.append(np.float64(m.score(Yf)))
                for a in ("dual_coef_", "X_transformed_fit_"):
                    if hasattr(m, a):
                        arrays.append(getattr(m, a))
            arrays.append(np.asarray(m.X_fit_.toarray() if scipy.sparse.issparse(m.X_fit_) else m.X_fit_))
            arrays.append(np.int64(m.n_components_))
            h(name, *arrays)
            mm = m.model_
            out.append(f"   model_ {None if mm is None else mm.state_.n_components}")
    except Exception as e:
        out.append(f"ERR {name}: {type(e).__name__}: {e}")


for dtype in (np.float64, np.float32):
    Xd, Yd = X.astype(dtype), Y.astype(dtype)
    for kernel in ("linear", "rbf", "poly", "sigmoid", "cosine"):
        for inv in (False, True):
            run(
                f"{kernel} {dtype.__name__} inv={inv}",
                dict(n_components=4, kernel=kernel, fit_inverse_transform=inv),
                Xd,
                Yd,
            )
    run(f"rbf none {dtype.__name__}", dict(kernel="rbf"), Xd, Yd)
    run(f"rbf rze {dtype.__name__}", dict(n_components=70, kernel="rbf", remove_zero_eig=True), Xd, Yd)
    run(f"linear n>rank {dtype.__name__}", dict(n_components=10, kernel="linear"), Xd, Yd)
    for es in ("dense", "arpack", "randomized"):
        run(
            f"rbf {es} {dtype.__name__}",
            dict(n_components=4, kernel="rbf", eigen_solver=es, fit_inverse_transform=True),
            Xd,
            Yd,
        )
    for solver in ("auto", "fixed-point", "distance", "log"):
        run(
            f"rbf solver={solver} {dtype.__name__}",
            dict(
                n_components=4,
                kernel="rbf",
                fit_inverse_transform=True,
                solver=solver,
                centre=solver not in ("distance", "log"),
            ),
            Xd,
            Yd,
        )
    run(f"landmarks {dtype.__name__}", dict(n_components=3, kernel="rbf", landmarks=20), Xd, Yd)
    run(
        f"landmarks far {dtype.__name__}",
        dict(
            n_components=3,
            kernel="rbf",
            landmarks=20,
            landmark_method="farthest",
            fit_inverse_transform=True,
            solver="fixed-point",
        ),
        Xd,
        Yd,
    )
    run(f"eps {dtype.__name__}", dict(kernel="rbf", eps=0.2), Xd, Yd)
    run(
        f"uncentred {dtype.__name__}",
        dict(n_components=4, kernel="rbf", centre=False, fit_inverse_transform=True),
        Xd,
        Yd,
    )
run("precomputed", dict(n_components=4, kernel="precomputed"), X @ X.T, Y @ X.T)
run(
    "callable",
    dict(n_components=3, kernel=lambda a, b: float(np.exp(-np.sum((a - b) ** 2))), fit_inverse_transform=True),
    X[:30],
    Y,
)
run("gamma0", dict(n_components=3, kernel="rbf", gamma=0), X, Y)
run("poly frac", dict(n_components=3, kernel="poly", degree=1.5), np.abs(X), np.abs(Y))
Xi = rng.integers(0, 255, size=(40, 12)).astype(np.uint8)
Yi = rng.integers(0, 255, size=(5, 12)).astype(np.uint8)
run("uint8 direct", dict(n_components=3, kernel="rbf", gamma=1e-4), Xi, Yi)
run(
    "uint8 model",
    dict(n_components=3, kernel="rbf", gamma=1e-4, fit_inverse_transform=True, solver="fixed-point"),
    Xi,
    Yi,
)
run(
    "uint8 frames",
    dict(n_components=3, kernel="rbf", gamma=1e-4, frame_shape=(3, 4), fit_inverse_transform=True, solver="transport"),
    Xi,
    Yi,
)
run(
    "int32 model",
    dict(n_components=3, kernel="rbf", gamma=1e-4, fit_inverse_transform=True, solver="fixed-point"),
    Xi.astype(np.int32),
    Yi.astype(np.int32),
)
run("int32 direct", dict(n_components=3, kernel="rbf", gamma=1e-4), Xi.astype(np.int32), Yi.astype(np.int32))
S = scipy.sparse.random(60, 6, density=0.5, random_state=1, format="csr")
run("sparse direct", dict(n_components=3, kernel="rbf"), S, S[:9])
run("sparse model", dict(n_components=3, kernel="rbf", landmarks=30), S, S[:9])
# NaN completion
m = KernelPCA(n_components=4, kernel="rbf", fit_inverse_transform=True, solver="fixed-point").fit(X)
Z = Y.copy()
Z[0, 1] = np.nan
Z[3, 4] = np.nan
h("nan model", m.transform(Z))
m = KernelPCA(n_components=4, kernel="rbf").fit(X)
h("nan direct", m.transform(Z))
m = KernelPCA(n_components=4, kernel="rbf").fit(np.ones((5, 3)))
h("degenerate", m.eigenvalues_, m.transform(Y[:, :3]))
out.append(f"   degenerate model_ {m.model_}")
# auto kept default
m = KernelPCA(n_components=4, kernel="rbf", fit_inverse_transform=True, solver="auto").fit(X)
h("auto", m.inverse_transform(m.transform(Y)), m.transform(Y))
# another library's arrays
with sklearn.config_context(array_api_dispatch=True):
    for params in (
        dict(n_components=3, kernel="rbf", fit_inverse_transform=True),
        dict(n_components=3, kernel="linear"),
        dict(n_components=3, kernel="rbf", eigen_solver="randomized"),
        dict(n_components=3, kernel="rbf", eigen_solver="arpack", fit_inverse_transform=True),
        dict(n_components=3, kernel="rbf", fit_inverse_transform=True, solver="fixed-point"),
        dict(n_components=3, kernel="rbf", landmarks=20),
    ):
        for dtype in (xps.float64, xps.float32):
            try:
                Xx, Yx = (
                    xps.asarray(X, dtype=dtype, device=xps.Device("device1")),
                    xps.asarray(Y, dtype=dtype, device=xps.Device("device1")),
                )
                m = KernelPCA(**params).fit(Xx)
                arrays = [m.eigenvalues_, m.eigenvectors_, m.transform(Yx), m.fit_transform(Xx)]
                m.fit(Xx)
                if params.get("fit_inverse_transform"):
                    arrays += [m.inverse_transform(m.transform(Yx)), m.score(Yx)]
                arrays = [
                    np.asarray(a.to_device(xps.Device("CPU_DEVICE"))) if hasattr(a, "to_device") else np.asarray(a)
                    for a in arrays
                ]
                h(f"xp {params} {dtype}", *arrays)
                out.append(f"   types {type(m.eigenvectors_).__name__} model_ {m.model_ is not None}")
            except Exception as e:
                out.append(f"ERR xp {params}: {type(e).__name__}: {e}")
print("\n".join(out))
