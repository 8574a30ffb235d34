"""Whole frames from sparse sensors: PySensors' own cross-validation protocol, kpca beside it.

    python benchmarks/sensors.py            # k = 64
    python benchmarks/sensors.py --k 32

PySensors' protocol (its examples/cross_validation notebook): ``load_digits(n_class=6)`` (1083
digits of 8 x 8 pixels on the 0-16 scale), five unshuffled folds, the root-mean-square error
over all 64 pixels of the held-out fold's digits reconstructed from p = 10, 20, 30, 40 pixel
sensors, mean over the folds (scikit-learn's cross-validation score). PySensors: SSPOR, the
best of its grid for each p (basis Identity, SVD or RandomProjection; 20, 30, 40 or 50 modes;
its QR sensors; the randomised bases seeded), by ``GridSearchCV(cv=5)``, run here. kpca: a FrameModel of each training
fold (Gaussian, k components, its default width), the digits reconstructed from their
readings (``FrameModel.reconstruct``, the fixed-point pre-image, the one kpca uses for
points), at kpca's own sensors (``FrameModel.sensors``) and at the sensors PySensors' best
model chose on the same fold.

Results go to benchmarks/results/sensors.json, under the k asked for.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kpcacli import FrameModel  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
SENSORS = (10, 20, 30, 40)
MODES = (20, 30, 40, 50)


def pysensors_best(X: np.ndarray) -> dict:
    """For each p, PySensors' best SSPOR of the grid: its parameters and mean fold RMSE."""
    import pysensors as ps
    from sklearn.model_selection import GridSearchCV

    grid = {
        "basis": [ps.basis.Identity(), ps.basis.SVD(random_state=0), ps.basis.RandomProjection(random_state=0)],
        "basis__n_basis_modes": list(MODES),
        "n_sensors": list(SENSORS),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PySensors warns of modes beyond a basis's rank
        search = GridSearchCV(ps.SSPOR(), grid, cv=5).fit(X)
    results = search.cv_results_
    best = {}
    for p in SENSORS:
        chosen = [i for i, params in enumerate(results["params"]) if params["n_sensors"] == p]
        top = max(chosen, key=lambda i: results["mean_test_score"][i])
        params = results["params"][top]
        best[p] = {
            "rmse": float(-results["mean_test_score"][top]),
            "basis": type(params["basis"]).__name__,
            "modes": params["basis__n_basis_modes"],
            "params": params,
        }
    return best


def pysensors_sensors(params: dict, train: np.ndarray) -> np.ndarray:
    """The sensors PySensors' model of `params` chooses on `train`."""
    import pysensors as ps
    from sklearn.base import clone

    model = ps.SSPOR(basis=clone(params["basis"]), n_sensors=params["n_sensors"])
    model.basis.n_basis_modes = params["basis__n_basis_modes"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(train)
    return model.get_selected_sensors()


def kpca_rmse(model: FrameModel, test: np.ndarray, sensors: np.ndarray) -> float:
    """The root-mean-square error over every pixel of `test` reconstructed from `sensors`."""
    readings = np.full(test.shape, np.nan)
    readings[:, sensors] = test[:, sensors]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fewer sensors than k: underdetermined codes, as expected here
        whole = model.reconstruct(readings, solver="fixed-point").frames
    return float(np.sqrt(np.mean((whole - test) ** 2)))


def main(argv=None) -> int:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import KFold

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=64)
    args = parser.parse_args(argv)
    X = load_digits(n_class=6).data
    started = time.perf_counter()
    best = pysensors_best(X)
    pysensors_seconds = time.perf_counter() - started
    folds = list(KFold(5).split(X))
    started = time.perf_counter()
    models = [FrameModel(n_components=args.k).fit(X[train]) for train, _ in folds]
    own, given = {}, {}
    for p in SENSORS:
        own[p] = float(np.mean([kpca_rmse(m, X[test], m.sensors(p)) for m, (_, test) in zip(models, folds)]))
        given[p] = float(
            np.mean(
                [
                    kpca_rmse(m, X[test], pysensors_sensors(best[p]["params"], X[train]))
                    for m, (train, test) in zip(models, folds)
                ]
            )
        )
    kpca_seconds = time.perf_counter() - started
    print(f"load_digits(n_class=6), 5 unshuffled folds, RMSE over the 64 pixels (0-16), kpca k = {args.k}")
    print(f"{'p':>3} {'PySensors best':>26} {'kpca, its sensors':>22} {'kpca, PySensors sensors':>24}")
    table = []
    for p in SENSORS:
        reference = best[p]["rmse"]
        label = f"{reference:.3f} ({best[p]['basis']} {best[p]['modes']})"
        print(
            f"{p:>3} {label:>26} {own[p]:>8.3f} ({own[p] / reference - 1:+.0%}) {given[p]:>13.3f} ({given[p] / reference - 1:+.0%})"
        )
        table.append(
            {
                "sensors": p,
                "pysensors": reference,
                "pysensors_basis": best[p]["basis"],
                "pysensors_modes": best[p]["modes"],
                "kpca_own_sensors": own[p],
                "kpca_pysensors_sensors": given[p],
            }
        )
    print(f"[PySensors' grid search {pysensors_seconds:.1f} s; kpca's fits and reconstructions {kpca_seconds:.1f} s]")
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "sensors.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    results[f"k = {args.k}"] = {"date": time.strftime("%Y-%m-%d"), "table": table}
    path.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
