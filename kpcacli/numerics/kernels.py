"""Kernels as functions of dot products or squared distances (García-González et al. 2021, section 3.2).

Every kernel here is evaluated from the linear Gram (:mod:`kpcacli.numerics.gram`) alone, so no kernel
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

from dataclasses import dataclass

import numpy as np

from ..utils.errors import ParameterError
from ..utils.hyperparameters import check
from .gram import LinearGram

# The hyperparameters each kernel's formula takes, in the order they are reported (the table
# above); the others are ignored by that kernel, as scikit-learn's KernelPCA ignores them.
KERNEL_HYPERPARAMETERS = {
    "rbf": ("beta",),
    "poly": ("gamma", "degree", "coef0"),
    "linear": (),
    "sigmoid": ("gamma", "coef0"),
}


@dataclass(frozen=True)
class Kernel:
    """A kernel with resolved parameters.

    Constructing one checks every parameter the kernel uses (:mod:`kpcacli.utils.checks`), whether
    it comes from an option, the Python API or a model file.

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

    def __post_init__(self) -> None:
        check("kernel", self.name)
        # Plain Python numbers whatever came in (numpy scalars from a file, ints from the API).
        if self.name == "rbf":
            object.__setattr__(self, "beta", check("beta", self.beta, required=True))
        if self.name in ("poly", "sigmoid"):
            object.__setattr__(self, "gamma", check("gamma", self.gamma, required=True))
            object.__setattr__(self, "coef0", check("coef0", self.coef0, required=True))
        if self.name == "poly":
            object.__setattr__(self, "degree", check("degree", self.degree))

    @property
    def uses_distance(self) -> bool:
        """True when the kernel's argument is ``|x - y|²``, False when it is ``x · y``."""
        return self.name == "rbf"

    def hyperparameters(self) -> dict:
        """The hyperparameters that matter for this kernel (beta, gamma, degree, coef0 by kernel:
        ``KERNEL_HYPERPARAMETERS``), for display and JSON (``kernel_params``)."""
        return {name: getattr(self, name) for name in KERNEL_HYPERPARAMETERS[self.name]}

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
        if self.name == "sigmoid":  # 1 − tanh², which cannot overflow as 1 / cosh² can
            return self.gamma * (1.0 - np.tanh(self.gamma * a + self.coef0) ** 2)
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


def make_kernel(
    name: str,
    linear: LinearGram,
    beta: float | None = None,
    gamma: float | None = None,
    degree: int = 3,
    coef0: float | None = None,
) -> Kernel:
    """Fill the data-dependent defaults from the linear Gram; the Kernel checks the rest.

    Raises
    ------
    ParameterError
        For an unknown kernel name or a parameter outside its range.
    """
    check_kernel_parameters(name, beta, gamma, degree, coef0)
    if name == "rbf":
        return Kernel("rbf", beta=default_beta(linear) if beta is None else beta)
    if name == "linear":
        return Kernel("linear")
    if gamma is None:
        gamma = default_gamma(linear) * (0.1 if name == "sigmoid" else 1.0)
    if name == "poly":
        return Kernel("poly", gamma=gamma, degree=degree, coef0=1.0 if coef0 is None else coef0)
    return Kernel("sigmoid", gamma=gamma, coef0=0.0 if coef0 is None else coef0)


def check_kernel_parameters(name, beta=None, gamma=None, degree=3, coef0=None) -> None:
    """Check the parameters as given, before any pass over the frames (None: the default)."""
    check("kernel", name)
    check("beta", beta)
    check("gamma", gamma)
    check("coef0", coef0)
    check("degree", degree)


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
