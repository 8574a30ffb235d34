"""Centring the kernel in feature space (García-González et al. 2021, section 3.3, eqs. 24–25)."""

from __future__ import annotations

import numpy as np


def centre_gram(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Centre a Gram matrix, eq. 24: ``Ḡ = G − G1/n − 1G/n + 1G1/n²``.

    Parameters
    ----------
    gram : (n, n) ndarray
        The kernel Gram ``G``.

    Returns
    -------
    centred_gram : (n, n) ndarray
        ``Ḡ``.
    row_means : (n,) ndarray
        ``G 1 / n``: the "aver(g^j)" term of eq. 25, kept to centre new kernel vectors.
    grand_mean : float
        ``1ᵀ G 1 / n²``: the "aver(G)" term of eq. 25.
    """
    row_means = gram.mean(axis=1)
    grand_mean = float(row_means.mean())
    # The same arithmetic, in the same order, as for a new frame: a training frame encoded
    # later gets exactly its training code.
    return centre_kernel_vectors(gram, row_means, grand_mean), row_means, grand_mean


def centre_kernel_vectors(vectors: np.ndarray, row_means: np.ndarray, grand_mean: float) -> np.ndarray:
    """Centre kernel vectors of new samples, eq. 25 applied to ``g_new`` (eq. 29).

    ``ḡ = g − G1/n − (1ᵀg/n) 1 + (1ᵀG1/n²) 1``

    Parameters
    ----------
    vectors : (m, n) ndarray
        One kernel vector ``g_new`` per row.
    row_means, grand_mean
        The centring terms returned by :func:`centre_gram` for the training Gram.

    Returns
    -------
    (m, n) ndarray
    """
    vectors = np.atleast_2d(vectors)
    return vectors - row_means[None, :] - vectors.mean(axis=1, keepdims=True) + grand_mean
