"""k, the number of components (García-González et al. 2021, eq. 3): ``-k`` and ``--eps``
checked on their own before any data is read (:func:`check_k_request`), and k given or chosen
from the eigenvalues (:func:`choose_k`).
"""

from __future__ import annotations

import numpy as np

from ..utils.errors import ParameterError, RankError, param
from ..utils.hyperparameters import check


def check_k_request(n_components: int | None, eps: float | None) -> None:
    """Validate ``-k`` / ``--eps`` on their own (before any data is read): exactly one, in range.

    Raises
    ------
    ParameterError
    """
    if n_components is not None and eps is not None:
        raise ParameterError(f"give either {param('n_components')} or {param('eps')}, not both")
    if n_components is None and eps is None:
        raise ParameterError(f"give one of {param('n_components')} and {param('eps')}")
    check("n_components", n_components)
    check("eps", eps)


def choose_k(
    eigenvalues: np.ndarray,
    n_components: int | None = None,
    eps: float | None = None,
    total: float | None = None,
    n: int | None = None,
    centred: bool = True,
) -> int:
    """The number of components: given, or the smallest k meeting eq. 3.

    Eq. 3: ``Σ_{i≤k} λ_i ≥ (1 − ε) Σ_i λ_i``. When `eigenvalues` are the leading r of `n`,
    `total` is the sum of all n (the trace); k is then at most r. A centred Gram has rank at
    most n − 1 (its rows sum to zero), so k is below n; an uncentred one may have rank n.

    Raises
    ------
    ParameterError
        When both or neither of `n_components` and `eps` are given, or either is out of range.
    """
    check_k_request(n_components, eps)
    n = eigenvalues.shape[0] if n is None else n
    rank = int(np.count_nonzero(eigenvalues > eigenvalues[0] * 1e-12))
    largest = n - 1 if centred else n
    if n_components is not None:
        if n_components > largest:
            limit = f"smaller than the number of frames ({n})" if centred else f"at most the number of frames ({n})"
            raise ParameterError(f"{param('n_components')} must be {limit}. Got {n_components} instead.")
        if n_components > rank:
            raise RankError(f"k = {n_components} exceeds the rank of the kernel matrix ({rank}); choose k ≤ {rank}")
        return int(n_components)
    cumulative = np.cumsum(eigenvalues)
    total = cumulative[-1] if total is None else total
    k = int(np.searchsorted(cumulative, (1.0 - eps) * total * (1 - 1e-12), side="left")) + 1
    return max(1, min(k, rank, largest))
