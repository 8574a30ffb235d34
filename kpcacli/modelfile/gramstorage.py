"""The linear Gram as a model file stores it: its upper triangle, in integers where it is made
of them.

``L = (X - s)(X - s)ᵀ`` (:mod:`kpcacli.numerics.gram`) is symmetric by construction, and for
integer frames every entry is an exact integer. Stored whole in float64 it was the largest
member after the frames, an n² term that outgrows a short clip's own bytes (docs/performance.md):
the upper triangle, row by row (``numpy.triu_indices`` order), halves it, and int64 instead
of float64 lets the zip's deflate take the eleven zero bits of each mantissa's top away. Both
are exact: the matrix read back is the one written, bit for bit. A model written before keeps
its (n, n) float64 array, which reads as it did.
"""

from __future__ import annotations

import numpy as np

from ..utils.errors import ModelFileError

EXACT_INTEGERS = 2.0**53  # float64 holds every integer up to this, so int64 round-trips exactly


def packed_gram(gram: np.ndarray) -> np.ndarray:
    """The member ``linear_gram`` of the (n, n) symmetric `gram`: its upper triangle,
    ``(n (n + 1) / 2,)``, int64 when every entry is an integer float64 holds exactly, else
    float64. A matrix that is not exactly symmetric is stored whole."""
    gram = np.asarray(gram, dtype=np.float64)
    if not np.array_equal(gram, gram.T):
        return gram
    upper = gram[np.triu_indices(gram.shape[0])]
    if np.all(np.abs(upper) < EXACT_INTEGERS) and np.array_equal(upper, np.rint(upper)):
        return upper.astype(np.int64)
    return upper


def unpacked_gram(member: np.ndarray, n: int) -> np.ndarray:
    """The (n, n) float64 Gram of a model's ``linear_gram``: whole, or its upper triangle.

    Raises
    ------
    ModelFileError
        For a triangle of another length than n frames give.
    """
    if member.ndim != 1:
        return member
    if member.shape != (n * (n + 1) // 2,):
        raise ModelFileError(f"linear_gram must hold the {n * (n + 1) // 2} values of its upper triangle")
    gram = np.empty((n, n))
    rows, columns = np.triu_indices(n)
    gram[rows, columns] = member
    gram[columns, rows] = member
    return gram
