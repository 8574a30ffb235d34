"""The sign convention of eigenvectors (as scikit-learn's): each one's entry of largest
magnitude positive, the first such entry winning ties, so that the same input always gives
the same model. numpy's, lean on memory; :class:`kpcacli.numerics.arraybackend.ArrayBackend`
has the array API's.
"""

from __future__ import annotations

import numpy as np


def fix_signs(eigenvectors: np.ndarray, in_place: bool = False) -> np.ndarray:
    """Make the entry of largest magnitude of every eigenvector positive (`in_place`: in
    `eigenvectors` itself, for a matrix too large to copy).

    The first such entry wins ties, so the convention is deterministic.
    """
    return flip_signs(eigenvectors, eigenvector_signs(eigenvectors), in_place)


def eigenvector_signs(eigenvectors: np.ndarray) -> np.ndarray:
    """The sign (±1) that makes each column's entry of largest magnitude positive, the first
    such entry winning ties. From each column's largest and smallest entries, not their
    magnitudes: no temporary as large as the matrix."""
    columns = np.arange(eigenvectors.shape[1])
    highest, lowest = np.argmax(eigenvectors, axis=0), np.argmin(eigenvectors, axis=0)
    high, low = eigenvectors[highest, columns], -eigenvectors[lowest, columns]
    largest = np.where(high > low, highest, np.where(low > high, lowest, np.minimum(highest, lowest)))
    signs = np.sign(eigenvectors[largest, columns])
    signs[signs == 0] = 1.0
    return signs


def flip_signs(vectors: np.ndarray, signs: np.ndarray, in_place: bool = False) -> np.ndarray:
    """`vectors` with column j times ``signs[j]``, in `vectors` itself when `in_place`."""
    return np.multiply(vectors, signs, out=vectors if in_place else None)
