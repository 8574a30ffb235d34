"""Maps from parameters to codes: a reduced model's answer for parameter values never computed.

Snapshots of a system at parameter values p_i (a load, a position, the opening of a hand) are
reduced to codes z_i; a map p -> z fitted on the pairs (p_i, z_i) gives the codes at any other
p, and the pre-image gives the snapshot (González et al. 2018, kPCA-based parametric solutions
within the PGD framework; García-González et al. 2021, section 1; Díez et al. 2021). Two maps:

* **thin-plate**: the thin-plate spline ``z(p) = Σ_i c_i φ(|p − p_i|) + a + Bp`` with
  ``φ(r) = r² log r`` and smoothing λ (scipy's ``RBFInterpolator``'s): exact at the training
  parameters when λ = 0, closer to a least-squares plane as λ grows. λ is chosen from a grid
  by leave-one-out error, which Rippa's formula gives for every training point from one
  factorisation: ``e_i = c_i / (M⁻¹)_ii`` (Rippa 1999), M the spline's system matrix.
* **gaussian-process**: a Gaussian process with a Matérn 5/2 correlation of one length scale
  per parameter and a nugget η, a constant mean and a variance per code (profiled out of the
  likelihood), fitted by maximum likelihood (Rasmussen and Williams 2006, chapters 2 and 5):
  a mean and a standard deviation for each code. Its leave-one-out residuals are
  ``e_i = [K⁻¹ z]_i / (K⁻¹)_ii`` (ibid., section 5.4.2).

:func:`fit_map` fits both and keeps the one whose leave-one-out error is smaller. Parameters
are scaled to the unit box of their training range first, so that a map's smoothing and
length scales do not depend on the units. Everything is deterministic: the same pairs give
the same map, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAP_KINDS = ("thin-plate", "gaussian-process")
THIN_PLATE_SMOOTHING = (0.0, *(10.0**e for e in range(-8, 1)))  # λ's grid, in the unit box's units
# The polynomial block [1, p] counts as rank-deficient when its smallest singular value is below
# this fraction of its largest: points on a line give rounding (about 1e-17), points that span
# the unit box 1e-2 and more, orders of magnitude either side of the threshold.
POLYNOMIAL_RANK_TOLERANCE = 1e-8
GP_MAX_SAMPLES = 2000  # beyond, only the thin-plate spline (the likelihood's n³ per step)
GP_LENGTH_BOUNDS = (1e-2, 1e1)  # in the unit box
GP_NUGGET_BOUNDS = (1e-10, 1.0)  # relative to the codes' variance


@dataclass(frozen=True)
class Box:
    """The training parameters' range, column by column: the unit box maps onto it."""

    lower: np.ndarray
    upper: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray) -> Box:
        return cls(values.min(axis=0), values.max(axis=0))

    def scaled(self, values: np.ndarray) -> np.ndarray:
        return (np.asarray(values, dtype=np.float64) - self.lower) / (self.upper - self.lower)

    def outside(self, values: np.ndarray) -> np.ndarray:
        """Which rows of `values` lie outside the range in at least one parameter, (m,) bool."""
        values = np.asarray(values, dtype=np.float64)
        return np.any((values < self.lower) | (values > self.upper), axis=1)


# -- the thin-plate spline ----------------------------------------------------------------
def _thin_plate_kernel(distances: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        values = distances**2 * np.log(distances)
    return np.where(distances > 0, values, 0.0)


def _distances(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    return np.sqrt(np.maximum(np.sum((first[:, None, :] - second[None, :, :]) ** 2, axis=2), 0.0))


def _thin_plate_system(points: np.ndarray, smoothing: float) -> np.ndarray:
    """M = [[Φ + λI, P], [Pᵀ, 0]], P = [1, p]: the spline's linear system."""
    n, p = points.shape
    system = np.zeros((n + p + 1, n + p + 1))
    system[:n, :n] = _thin_plate_kernel(_distances(points, points)) + smoothing * np.eye(n)
    system[:n, n] = system[n, :n] = 1.0
    system[:n, n + 1 :] = points
    system[n + 1 :, :n] = points.T
    return system


def polynomial_determined(points: np.ndarray) -> bool:
    """Whether `points` (n, p) determine a polynomial of degree 1: the block P = [1, p] of the
    thin-plate system has full column rank p + 1. When it does not (fewer than p + 1 points,
    points on a line in two dimensions, on a plane in three), the system is singular for every
    smoothing: exactly, not by the rounding of a factorisation (scipy's ``RBFInterpolator``
    refuses these points for the same reason). Decided by the singular values of P with the
    margin of :data:`POLYNOMIAL_RANK_TOLERANCE`."""
    n, p = points.shape
    if n < p + 1:
        return False
    singular = np.linalg.svd(np.c_[np.ones(n), points], compute_uv=False)
    return bool(singular[-1] > POLYNOMIAL_RANK_TOLERANCE * singular[0])


def _repeated(points: np.ndarray) -> bool:
    return len(np.unique(points, axis=0)) < len(points)


def thin_plate_residuals(points: np.ndarray, codes: np.ndarray, smoothing: float) -> np.ndarray | None:
    """Leave-one-out residuals (n, k) of the thin-plate spline with `smoothing` on
    (`points`, `codes`), by Rippa's formula; None when its system is singular, which is
    decided from the points alone: they do not determine a degree-1 polynomial
    (:func:`polynomial_determined`), or a point is repeated and there is no smoothing (two
    equal rows). Otherwise the system is non-singular (the thin-plate kernel is conditionally
    positive definite of order 2: Wendland 2005, chapter 8)."""
    n = len(points)
    if not polynomial_determined(points) or (smoothing == 0.0 and _repeated(points)):
        return None
    inverse = np.linalg.inv(_thin_plate_system(points, smoothing))
    coefficients = inverse[:n, :n] @ codes
    return coefficients / np.diag(inverse)[:n, None]


class ThinPlateMap:
    """The thin-plate spline with smoothing `smoothing` through (`points`, `codes`), `points`
    in the unit box, with a degree-1 polynomial: the spline of scipy's ``RBFInterpolator``
    (``kernel="thin_plate_spline"``, the same system: tested equal), solved with numpy so that
    a prediction does not import scipy.interpolate (most of a one-frame ``kpca predict``)."""

    kind = "thin-plate"

    def __init__(self, points: np.ndarray, codes: np.ndarray, smoothing: float):
        self.points = points
        self.smoothing = float(smoothing)
        n, p = points.shape
        system = _thin_plate_system(points, self.smoothing)
        right = np.zeros((n + p + 1, codes.shape[1]))
        right[:n] = codes
        solution = np.linalg.solve(system, right)
        self._weights, self._polynomial = solution[:n], solution[n:]

    def codes(self, points: np.ndarray) -> np.ndarray:
        polynomial = np.c_[np.ones(len(points)), points] @ self._polynomial
        return _thin_plate_kernel(_distances(points, self.points)) @ self._weights + polynomial

    def std(self, points: np.ndarray) -> None:
        return None

    def hyperparameters(self) -> dict:
        return {"smoothing": self.smoothing}


def fit_thin_plate(points: np.ndarray, codes: np.ndarray) -> tuple[float, np.ndarray] | None:
    """The grid's smoothing with the smallest leave-one-out error, and its residuals; None
    when the spline's system is singular for every smoothing."""
    best = None
    for smoothing in THIN_PLATE_SMOOTHING:
        residuals = thin_plate_residuals(points, codes, smoothing)
        if residuals is not None and (best is None or _rms(residuals) < _rms(best[1])):
            best = (smoothing, residuals)
    return best


# -- the Gaussian process -----------------------------------------------------------------
def _matern52(points: np.ndarray, others: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    distance = _distances(points / lengths, others / lengths) * np.sqrt(5.0)
    return (1.0 + distance + distance**2 / 3.0) * np.exp(-distance)


@dataclass(frozen=True)
class _Likelihood:
    """The profiled likelihood's pieces at one (lengths, nugget)."""

    cholesky: np.ndarray
    weights: np.ndarray  # K⁻¹ (z − mean), (n, k)
    variances: np.ndarray  # σ_j², (k,)
    negative_log: float


def _likelihood(points, centred, lengths, nugget, fitting: bool = False) -> _Likelihood | None:
    """At the fit (`fitting`: many calls) the solves are scipy's triangular ones; a map built to
    predict solves once with numpy, so that a prediction does not import scipy.linalg."""
    n = len(points)
    correlation = _matern52(points, points, lengths) + nugget * np.eye(n)
    try:
        cholesky = np.linalg.cholesky(correlation)
    except np.linalg.LinAlgError:
        return None
    if fitting:
        from scipy.linalg import cho_solve

        weights = cho_solve((cholesky, True), centred)
    else:
        weights = np.linalg.solve(cholesky.T, np.linalg.solve(cholesky, centred))
    variances = np.maximum(np.sum(centred * weights, axis=0) / n, 1e-300)
    k = centred.shape[1]
    negative_log = 0.5 * n * float(np.sum(np.log(variances))) + k * float(np.sum(np.log(np.diag(cholesky))))
    return _Likelihood(cholesky, weights, variances, negative_log)


class GaussianProcessMap:
    """A Gaussian process through (`points`, `codes`), `points` in the unit box, with the
    Matérn 5/2 length scales `lengths` (one per parameter) and relative nugget `nugget`."""

    kind = "gaussian-process"

    def __init__(self, points: np.ndarray, codes: np.ndarray, lengths, nugget: float, mean=None):
        self.points = points
        self.lengths = np.asarray(lengths, dtype=np.float64)
        self.nugget = float(nugget)
        self.mean = codes.mean(axis=0) if mean is None else np.asarray(mean, dtype=np.float64)
        fitted = _likelihood(points, codes - self.mean, self.lengths, self.nugget)
        if fitted is None:
            raise np.linalg.LinAlgError("the Gaussian process's correlation matrix is not positive definite")
        self._fitted = fitted

    def codes(self, points: np.ndarray) -> np.ndarray:
        return self.mean + _matern52(points, self.points, self.lengths) @ self._fitted.weights

    def std(self, points: np.ndarray) -> np.ndarray:
        """The standard deviation of each code at `points`, (m, k): the process's own, not
        the nugget's."""
        cross = _matern52(points, self.points, self.lengths)
        solved = np.linalg.solve(self._fitted.cholesky, cross.T)
        reduction = np.clip(1.0 - np.sum(solved**2, axis=0), 0.0, None)
        return np.sqrt(reduction[:, None] * self._fitted.variances[None, :])

    def residuals(self) -> np.ndarray:
        """Leave-one-out residuals (n, k) at these hyperparameters and this mean."""
        from scipy.linalg import cho_solve

        inverse = cho_solve((self._fitted.cholesky, True), np.eye(len(self.points)))
        return self._fitted.weights / np.diag(inverse)[:, None]

    def hyperparameters(self) -> dict:
        return {"lengths": [float(v) for v in self.lengths], "nugget": self.nugget}


def fit_gaussian_process(points: np.ndarray, codes: np.ndarray) -> GaussianProcessMap | None:
    """The Gaussian process of largest likelihood over its length scales and nugget (L-BFGS-B
    in logarithms from three starts), or None when no start gives a positive-definite matrix
    or there are too many samples (:data:`GP_MAX_SAMPLES`)."""
    from scipy.optimize import minimize

    n, p = points.shape
    if n > GP_MAX_SAMPLES:
        return None
    centred = codes - codes.mean(axis=0)
    bounds = [tuple(np.log(GP_LENGTH_BOUNDS))] * p + [tuple(np.log(GP_NUGGET_BOUNDS))]

    def objective(logs):
        fitted = _likelihood(points, centred, np.exp(logs[:p]), float(np.exp(logs[p])), fitting=True)
        return np.inf if fitted is None else fitted.negative_log

    best = None
    for length, nugget in ((0.1, 1e-6), (0.3, 1e-4), (1.0, 1e-2)):
        start = np.log([length] * p + [nugget])
        if not np.isfinite(objective(start)):
            continue
        result = minimize(objective, start, method="L-BFGS-B", bounds=bounds)
        if np.isfinite(result.fun) and (best is None or result.fun < best.fun):
            best = result
    if best is None:
        return None
    try:
        return GaussianProcessMap(points, codes, np.exp(best.x[:p]), float(np.exp(best.x[p])))
    except np.linalg.LinAlgError:
        return None


# -- both, and the choice -----------------------------------------------------------------
@dataclass(frozen=True)
class MapFit:
    """What :func:`fit_map` found: each map's hyperparameters and leave-one-out RMS error (in
    code units), by kind (None for a map that could not be fitted), and the chosen kind."""

    kind: str
    hyperparameters: dict  # kind -> the map's hyperparameters
    loo_rms: dict  # kind -> RMS over every code of every leave-one-out residual
    residuals: np.ndarray  # the chosen map's leave-one-out residuals, (n, k)


def fit_map(points: np.ndarray, codes: np.ndarray) -> MapFit:
    """Fit both maps on (`points` in the unit box, `codes`) and choose the one whose
    leave-one-out error is smaller.

    Raises
    ------
    ValueError
        When neither can be fitted (it cannot happen for distinct points and a nugget).
    """
    codes = np.asarray(codes, dtype=np.float64)
    spline = fit_thin_plate(points, codes)
    process = fit_gaussian_process(points, codes)
    candidates = {}
    if spline is not None:
        candidates["thin-plate"] = spline[1]
    if process is not None:
        candidates["gaussian-process"] = process.residuals()
    if not candidates:
        raise ValueError("neither map could be fitted to these parameters")
    scores = {kind: _rms(residuals) for kind, residuals in candidates.items()}
    kind = min(scores, key=lambda name: (scores[name], MAP_KINDS.index(name)))
    hyperparameters = {
        "thin-plate": {"smoothing": spline[0]} if spline is not None else None,
        "gaussian-process": process.hyperparameters() if process is not None else None,
    }
    return MapFit(kind, hyperparameters, {name: scores.get(name) for name in MAP_KINDS}, candidates[kind])


def build_map(kind: str, points: np.ndarray, codes: np.ndarray, hyperparameters: dict):
    """The map `kind` with recorded `hyperparameters`, through (`points`, `codes`)."""
    if kind == "thin-plate":
        return ThinPlateMap(points, codes, hyperparameters["smoothing"])
    return GaussianProcessMap(points, codes, hyperparameters["lengths"], hyperparameters["nugget"])


def _rms(residuals: np.ndarray) -> float:
    return float(np.sqrt(np.mean(residuals**2)))
