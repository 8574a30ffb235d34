"""The parameters a model's training frames were made at, and the map from them to codes.

A model fitted with parameters (``kpca fit --params``, ``FrameModel.fit(frames, params=...)``)
holds one row of p values per training frame, their names, and the map p -> codes chosen at
fit (:mod:`kpcacli.numerics.parametermap`): its kind, the hyperparameters of both maps, and
how well each predicted the training codes left out one at a time. The map itself is rebuilt
from these and the training codes when first used (a linear solve: milliseconds).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..numerics.parametermap import MAP_KINDS, Box, build_map, fit_map
from ..utils.errors import InputError, ModelFileError, ParameterError, param


@dataclass(frozen=True, eq=False)
class Parameters:
    """Parameters of the training frames and the map fitted on them.

    Attributes
    ----------
    names : tuple of str
        The parameters' names, p of them (``param1``, … when none were given).
    values : (n, p) ndarray
        Each training frame's parameters, in the frames' order.
    kind : {"thin-plate", "gaussian-process"}
        The map chosen: the one with the smaller leave-one-out error.
    hyperparameters : dict
        Each map's hyperparameters by kind (None for a map that could not be fitted).
    loo_rms : dict
        Each map's leave-one-out RMS error in code units, by kind (None: not fitted).
    loo_psnr : float or None
        The mean PSNR of training frames decoded from their leave-one-out codes (None: not
        measured, or every one exact).
    loo_frames : int
        How many training frames that PSNR was measured on.
    solver : str or None
        The solver ``predict`` uses by default: the one that predicted the left-out frames
        best (None: a model fitted before it was chosen, which predicts with its decoding
        choice). `loo_psnr` is its figure.
    solver_scores : dict
        Each candidate's mean PSNR on the left-out frames (None: every one exact), by name.
    """

    names: tuple[str, ...]
    values: np.ndarray
    kind: str
    hyperparameters: dict
    loo_rms: dict
    loo_psnr: float | None = None
    loo_frames: int = 0
    solver: str | None = None
    solver_scores: dict = field(default_factory=dict)
    _maps: dict = field(default_factory=dict, init=False, repr=False)  # kind -> the map, once built

    @classmethod
    def fitted(cls, names, values: np.ndarray, codes: np.ndarray) -> tuple[Parameters, np.ndarray]:
        """The parameters `values` (checked: :func:`check_parameter_values`) with both maps
        fitted to `codes`; and the chosen map's leave-one-out codes, (n, k)."""
        result = fit_map(Box.of(values).scaled(values), codes)
        parameters = cls(tuple(names), values, result.kind, result.hyperparameters, result.loo_rms)
        return parameters, codes - result.residuals

    @property
    def count(self) -> int:
        """p, the number of parameters."""
        return int(self.values.shape[1])

    @property
    def box(self) -> Box:
        """The training parameters' range."""
        return Box.of(self.values)

    def available(self) -> tuple[str, ...]:
        """The map kinds this model can predict with."""
        return tuple(kind for kind in MAP_KINDS if self.hyperparameters.get(kind) is not None)

    def map(self, codes: np.ndarray, kind: str | None = None):
        """The map `kind` (default: the chosen one) through the training parameters and
        `codes`, built once."""
        kind = kind or self.kind
        if kind not in self._maps:
            self._maps[kind] = build_map(kind, self.box.scaled(self.values), codes, self.hyperparameters[kind])
        return self._maps[kind]

    def as_attributes(self) -> dict:
        """What the model file records (JSON: floats as their shortest exact text)."""
        return {
            "names": list(self.names),
            "values": self.values.tolist(),
            "map": self.kind,
            "hyperparameters": self.hyperparameters,
            "loo_rms": self.loo_rms,
            "loo_psnr": self.loo_psnr,
            "loo_frames": self.loo_frames,
            **({"solver": self.solver, "solver_scores": self.solver_scores} if self.solver is not None else {}),
        }

    def describe(self) -> str:
        """One line for ``fit`` and ``info``: the parameters, the map and its leave-one-out error."""
        others = [
            f"{kind} {value:.3g}" for kind, value in self.loo_rms.items() if kind != self.kind and value is not None
        ]
        psnr = (
            f", {self.loo_psnr:.1f} dB decoded on {self.loo_frames} frames"
            if self.loo_psnr is not None
            else (" (every leave-one-out frame decoded exactly)" if self.loo_frames else "")
        )
        return (
            f"{self.ranges()}; map {self.kind}: leave-one-out error {self.loo_rms[self.kind]:.3g} in code units"
            + (f" ({'; '.join(others)})" if others else "")
            + (psnr if self.solver is None else "")
        )

    def describe_solver(self) -> str | None:
        """One line for ``fit`` and ``info``: the solver ``predict`` uses by default and what each
        candidate scored predicting left-out frames; None for a model fitted before it was
        chosen."""
        if self.solver is None:
            return None

        def figure(score: float | None) -> str:
            return "exact" if score is None else f"{score:.1f} dB"

        ranked = sorted(self.solver_scores.items(), key=lambda item: -ranked_psnr(item[1]))
        others = ", ".join(f"{name} {figure(score)}" for name, score in ranked if name != self.solver)
        return (
            f"auto: {self.solver}, {figure(self.solver_scores[self.solver])} predicting {self.loo_frames} training "
            f"frames each left out, from its parameters" + (f"; {others}" if others else "")
        )

    def box_bounds(self) -> tuple[list[float], list[float]]:
        box = self.box
        return [float(v) for v in box.lower], [float(v) for v in box.upper]

    def ranges(self) -> str:
        """Each parameter's training range, as ``fit``, ``info`` and the range warning say it:
        ``phase 0 to 0.971429``."""
        return ", ".join(f"{name} {low:.6g} to {high:.6g}" for name, low, high in zip(self.names, *self.box_bounds()))


def ranked_psnr(score: float | None) -> float:
    """A left-out frames' PSNR as it ranks (:attr:`Parameters.solver_scores`): None, every frame
    exact, above any figure."""
    return float("inf") if score is None else score


# -- checks of what enters ----------------------------------------------------------------
MIN_PARAMETER_ROWS = 3  # a map left one out needs two others


def check_parameter_values(values, names, frames: int) -> tuple[np.ndarray, tuple[str, ...]]:
    """Parameters given with `frames` training frames (``--params``, ``fit(params=...)``): an
    (n, p) table of finite numbers, one row per frame, no column constant; `names` p distinct
    names (None: ``param1``, ``param2``, …). Returns the values as float64 and the names.

    Raises
    ------
    InputError
        For a row count other than `frames`, a value that is not finite, a constant column,
        names that do not match the columns or a name given twice (a table's content, as the
        other errors of a table file).
    ParameterError
        For values that are not a table of numbers.
    """
    array = np.asarray(values)
    if array.ndim == 1:
        array = array[:, np.newaxis]
    if array.ndim != 2 or array.dtype.kind not in "uif" or array.size == 0:
        raise ParameterError(
            f"{param('params')} must be a table of numbers, one row per frame. Got shape {array.shape} "
            f"of {array.dtype} instead."
        )
    array = array.astype(np.float64)
    count = array.shape[1]
    names = tuple(f"param{i + 1}" for i in range(count)) if names is None else tuple(names)
    if len(names) != count or not all(isinstance(name, str) and name.strip() for name in names):
        raise InputError(f"{param('params')} needs {count} names, one per column. Got {list(names)} instead.")
    if len(set(names)) != count:
        raise InputError(f"{param('params')} names a parameter twice: {list(names)}")
    if array.shape[0] != frames:
        raise InputError(
            f"{param('params')} has {array.shape[0]} rows but there are {frames} frames: one row per frame, in order"
        )
    if frames < MIN_PARAMETER_ROWS:
        raise InputError(f"a map from parameters to codes needs at least {MIN_PARAMETER_ROWS} frames; got {frames}")
    bad = np.argwhere(~np.isfinite(array))
    if len(bad):
        row, column = bad[0]
        raise InputError(f"{param('params')} has a NaN or infinite value in row {row} ({names[column]})")
    for column, name in enumerate(names):
        if np.all(array[:, column] == array[0, column]):
            raise InputError(
                f"parameter {name} is {array[0, column]:g} in every row: a constant says nothing of the frames; "
                "leave it out"
            )
    return array, names


def check_parameter_rows(parameters: Parameters | None, rows) -> np.ndarray:
    """Parameter values to predict at: (m, p) finite numbers for a model fitted with p
    parameters (one row of p values is also accepted)."""
    if parameters is None:
        raise InputError(f"this model was fitted without parameters ({param('params')}): it cannot predict")
    array = np.asarray(rows)
    if array.ndim == 1 and array.shape[0] == parameters.count:
        array = array[np.newaxis]
    elif array.ndim == 1 and parameters.count == 1:
        array = array[:, np.newaxis]
    if array.ndim != 2 or array.dtype.kind not in "uif" or array.shape[1] != parameters.count or not len(array):
        raise InputError(
            f"the model predicts from {parameters.count} parameter{'s' if parameters.count > 1 else ''} "
            f"({', '.join(parameters.names)}) a row. Got shape {array.shape} instead."
        )
    array = array.astype(np.float64)
    bad = np.argwhere(~np.isfinite(array))
    if len(bad):
        raise InputError(f"parameter row {bad[0][0]} has a NaN or infinite value ({parameters.names[bad[0][1]]})")
    return array


def parameters_of_attributes(attributes, frames: int, error=ModelFileError) -> Parameters | None:
    """A model file's ``parameters`` (:meth:`Parameters.as_attributes`), checked: None for a
    model fitted without them."""
    if attributes is None:
        return None
    shown = json.dumps(attributes)[:80] if _jsonable(attributes) else repr(attributes)[:80]
    problem = error(
        "parameters must hold names, one row of values per training frame, the map, both maps' "
        f"hyperparameters and leave-one-out errors. Got {shown} instead."
    )
    if not isinstance(attributes, dict):
        raise problem
    try:
        values, names = check_parameter_values(attributes["values"], attributes["names"], frames)
    except (KeyError, TypeError, ValueError, InputError, ParameterError):
        raise problem from None
    kind, hyperparameters, loo_rms = attributes.get("map"), attributes.get("hyperparameters"), attributes.get("loo_rms")
    loo_psnr, loo_frames = attributes.get("loo_psnr"), attributes.get("loo_frames")
    solver, solver_scores = attributes.get("solver"), attributes.get("solver_scores", {})
    valid = (
        kind in MAP_KINDS
        and isinstance(hyperparameters, dict)
        and isinstance(loo_rms, dict)
        and set(hyperparameters) == set(MAP_KINDS) == set(loo_rms)
        and hyperparameters[kind] is not None
        and all(_map_hyperparameters(name, hyperparameters[name], values.shape[1]) for name in MAP_KINDS)
        and all((loo_rms[name] is None) == (hyperparameters[name] is None) for name in MAP_KINDS)
        and all(_finite_number(value) and value >= 0 for value in loo_rms.values() if value is not None)
        and (loo_psnr is None or _finite_number(loo_psnr))
        and isinstance(loo_frames, int)
        and not isinstance(loo_frames, bool)
        and 0 <= loo_frames <= frames
        and (
            solver is None or (isinstance(solver, str) and isinstance(solver_scores, dict) and solver in solver_scores)
        )
        and all(isinstance(name, str) for name in solver_scores)
        and all(score is None or _finite_number(score) for score in solver_scores.values())
    )
    if not valid:
        raise problem
    return Parameters(names, values, kind, hyperparameters, loo_rms, loo_psnr, loo_frames, solver, solver_scores)


def _map_hyperparameters(kind: str, values, count: int) -> bool:
    if values is None:
        return True
    if not isinstance(values, dict):
        return False
    if kind == "thin-plate":
        return set(values) == {"smoothing"} and _finite_number(values["smoothing"]) and values["smoothing"] >= 0
    lengths = values.get("lengths")
    return (
        set(values) == {"lengths", "nugget"}
        and isinstance(lengths, list)
        and len(lengths) == count
        and all(_finite_number(v) and v > 0 for v in lengths)
        and _finite_number(values["nugget"])
        and values["nugget"] > 0
    )


def _finite_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and bool(np.isfinite(value))


def _jsonable(value) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def ordered_rows(parameters: Parameters | None, rows: np.ndarray, names) -> np.ndarray:
    """Parameter `rows` with the columns in the model's order: by `names` when the table
    names its columns (any order, every one of the model's), else as they come."""
    if parameters is None or names is None:
        return check_parameter_rows(parameters, rows)
    rows = np.asarray(rows, dtype=np.float64)
    if sorted(names) != sorted(parameters.names):
        raise InputError(
            f"the parameters given are {', '.join(names)}; the model was fitted on {', '.join(parameters.names)}"
        )
    return check_parameter_rows(parameters, rows[:, [list(names).index(name) for name in parameters.names]])
