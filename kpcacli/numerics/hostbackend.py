"""numpy's backend (:class:`kpcacli.numerics.backend.Backend`): the array algebra on this
process's cores. Its passes over pixels are threaded (:mod:`kpcacli.utils.parallel`) and exact
for integer frames (the linear Gram's float32 runs, :mod:`kpcacli.numerics.gram`; the
pre-images' sums on :func:`kpcacli.preimage.synthesis.exact_terms`'s grid), so a model, a code
and a decoded frame are the same bytes whatever the threads; its eigenproblems are LAPACK's.
"""

from __future__ import annotations

import numpy as np

from ..utils.blas import threads_for_blas
from ..utils.parallel import run_partitioned, until_stopped
from .gram import CrossProducts, LinearGram, block_columns, float_block, linear_gram
from .signs import fix_signs

# Above this share of non-zero weights the dense GEMM beats a sparse product.
DENSE_MIN_DENSITY = 0.25


class HostRows:
    """The rows a decode's batches weigh, as each batch reads them: they are here already."""

    def rows(self, indices: np.ndarray, read):
        """``read()``: the frames at `indices`, (r, d), read on the host."""
        return read()


class HostBackend:
    """numpy on this process's cores: the backend of every command without ``--device``."""

    on_device = False
    # Every eigenpair costs O(n³) on the CPU: kpca's model takes Lanczos beyond a size
    # (kpcacli/numerics/spectrum.py).
    dense_at_any_size = False

    def linear_gram(self, frames, progress: bool = False) -> LinearGram:
        """:func:`kpcacli.numerics.gram.linear_gram` (eq. 8): exact for integer frames."""
        return linear_gram(frames, progress=progress)

    def hold(self, frames):
        """None: the training frames are read from where they are at each pass."""
        return None

    def cross(self, gram: LinearGram, frames, new: np.ndarray, held=None, progress: bool = False) -> CrossProducts:
        """:meth:`kpcacli.numerics.gram.LinearGram.cross`: the products of `new` (m, d) with the
        training `frames` (n, d), both shifted by the Gram's origin."""
        return gram.cross(frames, new, progress=progress)

    def eigh(self, symmetric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every eigenpair of `symmetric` (n, n), increasing: numpy's eigh is LAPACK's divide and
        conquer (syevd), as scipy's ``driver="evd"`` is; scipy would cost its import and a
        start of its own OpenBLAS."""
        with threads_for_blas(len(symmetric) ** 3):
            return np.linalg.eigh(symmetric)

    def randomized_sketch(self, matrix, count: int, sketch: np.ndarray, power: int) -> tuple[np.ndarray, np.ndarray]:
        """:func:`kpcacli.numerics.spectrum.randomized_eigenpairs`'s algebra, scikit-learn's
        steps (Halko, Martinsson and Tropp 2011, algorithms 4.4 and 5.1): the `sketch` (n,
        count + oversampling) multiplied `power` times by `matrix` and its transpose, each
        product normalised by LU (none when ``power <= 2``), the basis by QR, the SVD by
        scipy's LAPACK; the `count` largest singular values signed by ``v_iᵀ u_i`` and their
        vectors, unsorted."""
        import scipy.linalg  # lazily: the command line's fits never come here

        basis = sketch.astype(np.float32) if matrix.dtype == np.float32 else sketch
        for _ in range(power):
            for product in (matrix, matrix.T):
                basis = product @ basis
                if power > 2:
                    basis = scipy.linalg.lu(basis, permute_l=True, check_finite=False)[0]
        basis = scipy.linalg.qr(matrix @ basis, mode="economic", check_finite=False)[0]
        left, singular, right = scipy.linalg.svd(basis.T @ matrix, full_matrices=False, check_finite=False)
        vectors = (basis @ left)[:, :count]
        return singular[:count] * np.sign(np.einsum("ji,ij->j", right[:count], vectors)), vectors

    def fix_signs(self, eigenvectors: np.ndarray) -> np.ndarray:
        """:func:`kpcacli.numerics.signs.fix_signs`, in `eigenvectors` itself."""
        return fix_signs(eigenvectors, in_place=True)

    def decode_rows(self, frames) -> HostRows:
        """Where a decode's batches take the training rows they weigh: as read."""
        return HostRows()

    def weighted_sums(self, terms: list, finish, workers: int, dtype=np.float64) -> None:
        """``finish(columns, Σ part @ block[:, columns])`` over the `terms` (part (m, r), block
        (r, d)), for blocks of pixel columns, each of `workers` threads its own columns, in
        `dtype` (the parts' own): the products of
        :func:`kpcacli.preimage.synthesis.weighted_frame_sums` (García-González et al. 2021,
        eq. 31). A part mostly of zeros is a sparse product."""
        d = terms[0][1].shape[1]
        step = block_columns(sum(block.shape[0] for _, block in terms) + terms[0][0].shape[0], d)
        starts = range(0, d, step)
        terms = [(_dense_or_sparse(part), block) for part, block in terms]

        def share(index: int, count: int) -> None:
            buffers = [np.empty((block.shape[0], step), dtype=dtype) for _, block in terms]
            for start in until_stopped(starts[index::count]):
                columns = slice(start, min(start + step, d))
                sums = None
                for (part, block), buffer in zip(terms, buffers):
                    product = part @ float_block(block[:, columns], buffer)
                    sums = product if sums is None else np.add(sums, product, out=sums)
                finish(columns, sums)

        if len(starts) == 1:  # one block: no threads to share it, nor BLAS limits to set
            share(0, 1)
        else:
            run_partitioned(share, min(workers, len(starts)))


def _dense_or_sparse(part: np.ndarray):
    """`part` as it is, or as :class:`SparseRows` where most of it is zeros (the ``log``
    solver's two rows a code, the ``distance`` solver's few neighbours), whose product then
    costs only its non-zeros."""
    if np.count_nonzero(part) >= DENSE_MIN_DENSITY * part.size:
        return part
    return SparseRows(part)


class SparseRows:
    """Weights (m, r) mostly of zeros, multiplied by a block of frames one row at a time over
    that row's non-zeros (``part @ block``): a CSR product without importing scipy.sparse into
    every decode; and each row's sum depends on its own weights alone, never on the rows
    beside it."""

    def __init__(self, part: np.ndarray):
        self.part = part
        self.columns = []
        for row in part:
            columns = np.flatnonzero(row)
            # A short run of rows is read in place (a view), zeros within it included: the
            # neighbours of a frame of a video are mostly consecutive frames. Others are gathered.
            if len(columns) and columns[-1] - columns[0] < 2 * len(columns):
                columns = slice(int(columns[0]), int(columns[-1]) + 1)
            self.columns.append(columns)

    def __matmul__(self, block: np.ndarray) -> np.ndarray:
        out = np.zeros((len(self.columns), block.shape[1]), dtype=np.result_type(self.part, block))
        for row, columns in enumerate(self.columns):
            if isinstance(columns, slice) or len(columns):
                np.matmul(self.part[row, columns], block[columns], out=out[row])
        return out
