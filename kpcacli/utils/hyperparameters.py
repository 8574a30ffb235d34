"""The estimators' hyperparameters, declared once: what each accepts and how a refusal reads.

:class:`kpcacli.FrameModel`, :class:`kpcacli.KernelPCA` and the command line take the same
hyperparameters (k, ε, the kernel's β, γ, degree and offset, M, the landmarks, the eigensolver).
Each is declared here, once, with the values it accepts; from the declaration come

* the checks (:func:`check`), which every layer calls where a value enters: the estimators'
  parameters, the kernel, the spectrum's k, the solvers' M, the landmarks;
* scikit-learn's ``_parameter_constraints``
  (:func:`kpcacli.estimators.sklearn_conventions.sklearn_constraints`), so that ``KernelPCA``'s
  own validation says what the checks say;
* the choices the command line offers (``click.Choice``, :mod:`kpcacli.cli.options`).

A refusal reads as scikit-learn's does, the range written as its ``Interval`` writes it:
``n_components must be an int in the range [1, inf). Got 0 instead.`` The name is a
:func:`kpcacli.utils.errors.param` marker, so the command line says ``-k`` where the Python API
says ``n_components``.

References
----------
scikit-learn's ``sklearn/utils/_param_validation.py`` (``Interval``, ``StrOptions``), whose
wording the messages keep.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .checks import INTEGER_TYPES, REAL_TYPES, check_bool, check_choice, invalid
from .errors import KpcaError, ParameterError, param


@dataclass(frozen=True)
class Interval:
    """The numbers of one kind between two bounds (None: unbounded), as scikit-learn's
    ``Interval``: `closed` is ``"left"``, ``"right"``, ``"both"`` or ``"neither"``. Reals are
    finite whatever the bounds."""

    kind: type  # int or float
    low: float | None
    high: float | None
    closed: str

    def __contains__(self, value) -> bool:
        types = INTEGER_TYPES if self.kind is int else REAL_TYPES
        if not isinstance(value, types) or isinstance(value, (bool, np.bool_)):
            return False
        if self.kind is float and not math.isfinite(value):
            return False
        above = self.low is None or (value >= self.low if self.closed in ("left", "both") else value > self.low)
        below = self.high is None or (value <= self.high if self.closed in ("right", "both") else value < self.high)
        return bool(above and below)

    def describe(self) -> str:
        """``an int in the range [1, inf)``, ``a float in the range (0.0, 1.0)``: scikit-learn's
        words for the same interval."""
        low = "-inf" if self.low is None else (float(self.low) if self.kind is float else self.low)
        high = "inf" if self.high is None else (float(self.high) if self.kind is float else self.high)
        left = "[" if self.closed in ("left", "both") else "("
        right = "]" if self.closed in ("right", "both") else ")"
        article = "an int" if self.kind is int else "a float"
        return f"{article} in the range {left}{low}, {high}{right}"


@dataclass(frozen=True)
class Hyperparameter:
    """One hyperparameter: the values it accepts (an :class:`Interval`, a tuple of names, or
    ``bool``), and whether None stands for a default computed from the data."""

    name: str
    accepts: Interval | tuple | type
    optional: bool = False


KERNELS = ("rbf", "poly", "linear", "sigmoid")
# auto: dense up to spectrum.FULL_EIGENDECOMPOSITION_MAX samples
EIGEN_SOLVERS = ("auto", "dense", "arpack", "randomized")
LANDMARK_METHODS = ("uniform", "farthest")

HYPERPARAMETERS = {
    spec.name: spec
    for spec in (
        Hyperparameter("n_components", Interval(int, 1, None, "left"), optional=True),
        Hyperparameter("eps", Interval(float, 0, 1, "neither"), optional=True),
        Hyperparameter("kernel", KERNELS),
        Hyperparameter("beta", Interval(float, 0, None, "neither"), optional=True),
        Hyperparameter("gamma", Interval(float, 0, None, "neither"), optional=True),
        Hyperparameter("degree", Interval(int, 1, None, "left")),
        Hyperparameter("coef0", Interval(float, None, None, "neither"), optional=True),
        Hyperparameter("center", bool),
        Hyperparameter("neighbours", Interval(int, 1, None, "left"), optional=True),
        Hyperparameter("landmarks", Interval(int, 2, None, "left"), optional=True),
        Hyperparameter("landmark_method", LANDMARK_METHODS),
        Hyperparameter("eigen_solver", EIGEN_SOLVERS),
        Hyperparameter("rounds", Interval(int, 1, None, "left")),
        Hyperparameter("mask_threshold", Interval(float, 0, None, "neither"), optional=True),
    )
}


def check(name: str, value, error: type[KpcaError] = ParameterError, required: bool = False):
    """`value` of the hyperparameter `name` as its declaration accepts it (ints and floats as
    Python numbers; None where the declaration is optional and the value not `required`, as
    a resolved kernel's are), else `error` naming it."""
    spec = HYPERPARAMETERS[name]
    if value is None and spec.optional and not required:
        return None
    if spec.accepts is bool:
        return check_bool(param(name), value, error)
    if isinstance(spec.accepts, tuple):
        return check_choice(param(name), value, spec.accepts, error)
    if value not in spec.accepts:
        raise invalid(param(name), spec.accepts.describe(), value, error)
    return int(value) if spec.accepts.kind is int else float(value)
