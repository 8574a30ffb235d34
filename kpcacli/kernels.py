"""Kernels as functions of dot products or squared distances (seed 000, section 3.2).

Every kernel here is evaluated from the linear Gram (:mod:`kpcacli.gram`) alone, so no kernel
ever touches pixels. Each kernel is a function of one *argument*: the squared distance
``a = |x - y|²`` (Gaussian) or the dot product ``a = x · y`` (polynomial, linear, sigmoid).
The pre-image solvers use :meth:`Kernel.value`, :meth:`Kernel.log_value` and their derivatives
with respect to that argument.

=========  ==========================================  ====================================
name       κ(x, y)                                     default parameters
=========  ==========================================  ====================================
rbf        exp(−β |x − y|²)            (eq. 22)        β = 1 / median of |x_i − x_j|², i≠j
poly       (γ x·y + c)^p                               p = 3, c = 1, γ = 1 / median |x_i|²
linear     x·y                                         —
sigmoid    tanh(γ x·y + c)                             c = 0, γ = 0.1 / median |x_i|²
=========  ==========================================  ====================================

The default scales (β, γ) make the kernel's argument of order one on the training set, so the
defaults work for 8-bit megapixel frames and for unit-scale point clouds alike. The sigmoid's
default is ten times smaller: tanh then stays near its linear range, where its Gram is close to
positive semi-definite (the sigmoid is not a Mercer kernel; fitting refuses a Gram with
significant negative eigenvalues rather than return a meaningless model).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import ParameterError
from .gram import CrossProducts, LinearGram

KERNELS = ("rbf", "poly", "linear", "sigmoid")


def check_positive(name: str, value: float | None) -> None:
    """Raise ParameterError unless `value` is None or a finite number > 0."""
    if value is None:
        return
    if not isinstance(value, (int, float, np.floating, np.integer)) or not math.isfinite(value) or value <= 0:
        raise ParameterError(f"{name} must be a finite number > 0. Got {value!r} instead.")


def check_finite(name: str, value: float) -> None:
    if not isinstance(value, (int, float, np.floating, np.integer)) or not math.isfinite(value):
        raise ParameterError(f"{name} must be a finite number. Got {value!r} instead.")


@dataclass(frozen=True)
class Kernel:
    """A kernel with resolved parameters.

    Parameters
    ----------
    name : {"rbf", "poly", "linear", "sigmoid"}
    beta : float, optional
        Width of the Gaussian kernel, ``exp(-beta |x - y|²)``.
    gamma : float, optional
        Scale of the dot product for ``poly`` and ``sigmoid``.
    degree : int
        Degree ``p`` of the polynomial kernel.
    coef0 : float
        Offset ``c`` of ``poly`` and ``sigmoid``.
    """

    name: str
    beta: float | None = None
    gamma: float | None = None
    degree: int = 3
    coef0: float = 1.0

    @property
    def uses_distance(self) -> bool:
        """True when the kernel's argument is ``|x - y|²``, False when it is ``x · y``."""
        return self.name == "rbf"

    @property
    def unit_diagonal(self) -> bool:
        """True when ``κ(x, x) = 1`` for every x, i.e. Φ(x) has unit norm (the Gaussian)."""
        return self.name == "rbf"

    def params(self) -> dict:
        """The parameters that matter for this kernel, for display and JSON."""
        if self.name == "rbf":
            return {"beta": self.beta}
        if self.name == "poly":
            return {"gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}
        if self.name == "sigmoid":
            return {"gamma": self.gamma, "coef0": self.coef0}
        return {}

    # -- values -------------------------------------------------------------------------
    def value(self, a: np.ndarray) -> np.ndarray:
        """κ as a function of its argument ``a`` (squared distance or dot product)."""
        if self.name == "rbf":
            return np.exp(-self.beta * a)
        if self.name == "poly":
            return (self.gamma * a + self.coef0) ** self.degree
        if self.name == "sigmoid":
            return np.tanh(self.gamma * a + self.coef0)
        return np.asarray(a, dtype=np.float64)

    def derivative(self, a: np.ndarray) -> np.ndarray:
        """dκ/da."""
        if self.name == "rbf":
            return -self.beta * np.exp(-self.beta * a)
        if self.name == "poly":
            return self.degree * self.gamma * (self.gamma * a + self.coef0) ** (self.degree - 1)
        if self.name == "sigmoid":
            return self.gamma / np.cosh(self.gamma * a + self.coef0) ** 2
        return np.ones_like(a, dtype=np.float64)

    def log_value(self, a: np.ndarray) -> np.ndarray:
        """log κ(a), computed without underflow for the Gaussian (``-beta a``).

        Non-positive kernel values (possible for poly, linear and sigmoid) give ``-inf``.
        """
        if self.name == "rbf":
            return -self.beta * np.asarray(a, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = self.value(a)
            return np.where(value > 0, np.log(np.where(value > 0, value, 1.0)), -np.inf)

    def log_derivative(self, a: np.ndarray) -> np.ndarray:
        """d log κ / da."""
        if self.name == "rbf":
            return np.full_like(np.asarray(a, dtype=np.float64), -self.beta)
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.derivative(a) / self.value(a)

    # -- matrices -----------------------------------------------------------------------
    def gram(self, linear: LinearGram) -> np.ndarray:
        """The kernel Gram matrix ``G_ij = κ(x_i, x_j)`` (eq. 21), shape (n, n)."""
        argument = linear.squared_distances() if self.uses_distance else linear.dots()
        return self.value(argument)

    def cross(self, products: CrossProducts) -> np.ndarray:
        """Kernel values between new and training frames, ``g_new`` of eq. 29, shape (m, n)."""
        argument = products.squared_distances() if self.uses_distance else products.dots()
        return self.value(argument)


def make_kernel(
    name: str,
    linear: LinearGram,
    beta: float | None = None,
    gamma: float | None = None,
    degree: int = 3,
    coef0: float | None = None,
) -> Kernel:
    """Validate the parameters and fill the data-dependent defaults from the linear Gram.

    Raises
    ------
    ParameterError
        For an unknown kernel name or a parameter outside its range.
    """
    if name not in KERNELS:
        raise ParameterError(f"kernel must be one of {', '.join(KERNELS)}. Got {name!r} instead.")
    check_positive("beta", beta)
    check_positive("gamma", gamma)
    if coef0 is not None:
        check_finite("coef0", coef0)
    if not isinstance(degree, (int, np.integer)) or degree < 1:
        raise ParameterError(f"degree must be an int in the range [1, inf). Got {degree!r} instead.")
    if name == "rbf":
        if beta is None:
            beta = default_beta(linear)
        return Kernel("rbf", beta=float(beta))
    if name == "linear":
        return Kernel("linear")
    if gamma is None:
        gamma = default_gamma(linear) * (0.1 if name == "sigmoid" else 1.0)
    if name == "poly":
        return Kernel("poly", gamma=float(gamma), degree=int(degree), coef0=1.0 if coef0 is None else float(coef0))
    return Kernel("sigmoid", gamma=float(gamma), coef0=0.0 if coef0 is None else float(coef0))


def default_beta(linear: LinearGram) -> float:
    """``1 / median`` of the pairwise squared distances between distinct training frames."""
    distances = linear.squared_distances()
    upper = distances[np.triu_indices_from(distances, k=1)]
    positive = upper[upper > 0]
    if positive.size == 0:
        raise ParameterError("all training frames are identical; the Gaussian kernel width is undefined")
    return 1.0 / float(np.median(positive))


def default_gamma(linear: LinearGram) -> float:
    """``1 / median`` of the training frames' squared norms ``|x_i|²``."""
    norms = np.diag(linear.dots())
    positive = norms[norms > 0]
    if positive.size == 0:
        raise ParameterError("all training frames are zero; the dot-product scale is undefined")
    return 1.0 / float(np.median(positive))
