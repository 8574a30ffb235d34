"""The backend: where the array algebra of a fit, an encode and a decode runs, chosen once per
command or estimator (:func:`backend_for`) and handed to every pass, which calls its methods
and never asks which it is.

Two implement :class:`Backend`: numpy's on this process's cores
(:class:`kpcacli.numerics.hostbackend.HostBackend`, :data:`HOST`: threaded, exact float32
products, LAPACK), and the array API's on an accelerator
(:class:`kpcacli.numerics.arraybackend.ArrayBackend`: any namespace and device, exact where the
device's float64 allows). Both return numpy arrays: a model holds no device array. A new pass
over pixels or a new eigenproblem is a method of this protocol, written once in each.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..utils.arrays import accelerator
from .arraybackend import ArrayBackend
from .gram import CrossProducts, LinearGram
from .hostbackend import HostBackend


class Backend(Protocol):
    """The array algebra of kpca's passes (García-González et al. 2021): what each does is in
    :class:`kpcacli.numerics.hostbackend.HostBackend`'s docstrings."""

    on_device: bool  # whether it runs away from this process's memory (a decode that cannot use it says so)
    dense_at_any_size: bool  # whether every eigenpair is cheap at any n (a GPU's dense solver)

    def linear_gram(self, frames, progress: bool = False) -> LinearGram:
        """The shifted linear Gram of `frames` (n, d), eq. 8."""

    def hold(self, frames):
        """`frames` kept where :meth:`cross` reads them for a run of passes, or None."""

    def cross(self, gram: LinearGram, frames, new: np.ndarray, held=None, progress: bool = False) -> CrossProducts:
        """The products of `new` (m, d) with the training `frames`, shifted by `gram`'s origin."""

    def eigh(self, symmetric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every eigenpair of `symmetric` (n, n), increasing, as numpy arrays."""

    def randomized_sketch(self, matrix, count: int, sketch: np.ndarray, power: int) -> tuple[np.ndarray, np.ndarray]:
        """The randomized method's `count` eigenpairs from the Gaussian `sketch`, unsorted."""

    def fix_signs(self, eigenvectors):
        """`eigenvectors` (of the backend's arrays) with each one's largest entry positive."""

    def decode_rows(self, frames):
        """Where a decode's batches take the training rows they weigh: ``.rows(indices, read)``."""

    def weighted_sums(self, terms: list, finish, workers: int, dtype=np.float64) -> None:
        """``finish(columns, Σ part @ block[:, columns])`` over the `terms`, eq. 31's sums."""


HOST: Backend = HostBackend()


def backend_for(device: str | None) -> Backend:
    """The backend a user's device name means (:func:`kpcacli.utils.arrays.accelerator`): None or
    ``cpu``, :data:`HOST`; ``cuda`` or ``cuda:N``, that GPU's array API
    (:class:`~kpcacli.numerics.arraybackend.ArrayBackend`). A
    :class:`kpcacli.utils.errors.ParameterError` in one line for any other name, or when no
    such device is there."""
    on = accelerator(device)
    return HOST if on is None else ArrayBackend(on)
