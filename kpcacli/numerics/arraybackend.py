"""The array API's backend (:class:`kpcacli.numerics.backend.Backend`): the passes that are array
algebra on an accelerator (a GPU through CuPy or PyTorch, or any array-API library:
:class:`kpcacli.utils.arrays.Accelerator`), :class:`ArrayBackend`: the linear Gram and the products
of new frames with the training frames (the passes of :mod:`kpcacli.numerics.gram`, each block
of pixel columns sent to the device in the frames' own dtype, one byte a value for 8-bit
frames, and its products formed there), every eigenpair of the centred kernel Gram, and the
weighted sums of training frames that are the pre-images (García-González et al. 2021, eq. 31).

For integer frames every product and sum is an exact integer in float64 (the same shift by the
rounded mean frame as the CPU's pass, García-González et al. 2021, eq. 8; the pre-images'
weights on the CPU's grid of exact sums), so the Gram and a decoded frame are the CPU's bit for
bit, whatever order the device adds in; float frames agree to rounding. The
results come back to the host as numpy arrays: a model holds no device array.
"""

from __future__ import annotations

import numpy as np

from ..utils.arrays import Accelerator, free_device_memory, from_numpy, to_numpy
from ..utils.budgets import BUDGETS, count_within
from ..utils.progress import progress_bar
from .gram import CrossProducts, LinearGram


def _block_columns(n_rows: int, d: int) -> int:
    """Pixel columns per block so that one float64 block of `n_rows` rows stays within
    ``BUDGETS.device_block`` in the device's memory."""
    return int(max(1, min(d, count_within(BUDGETS.device_block, 8 * n_rows))))


def _sent(values, xp, device, kind=None):
    """`values` (a numpy block of frames) on `device`, sent in their own dtype (one byte a value
    for 8-bit frames) and converted there to `kind` (a float type of `xp`) when one is given;
    `values` already on the device (not numpy) are taken as they are."""
    sent = from_numpy(np.ascontiguousarray(values), xp, device) if isinstance(values, np.ndarray) else values
    return sent if kind is None else xp.astype(sent, kind)


def held_on_device(frames, on: Accelerator, progress: bool = False):
    """`frames` (n, d) in the device's memory in their own dtype, sent a block of whole frames
    at a time (contiguous rows: nothing gathered on the host first), when they fit within
    ``BUDGETS.device_frames`` and half the device's free memory (when its library tells it);
    else None, and a pass sends them a block of pixel columns at a time."""
    n, d = frames.shape
    row_bytes = d * np.dtype(frames.dtype).itemsize
    free = free_device_memory(on)
    if n * row_bytes > BUDGETS.device_frames or (free is not None and 2 * n * row_bytes > free):
        return None
    rows = count_within(BUDGETS.device_block, row_bytes)
    held = None
    with progress_bar(progress, desc="frames to device", total=n, unit="frame") as bar:
        for start in range(0, n, rows):
            part = _sent(frames[start : start + rows], on.xp, on.device)
            if held is None:
                held = on.xp.empty((n, d), dtype=part.dtype, device=on.device)
            held[start : start + part.shape[0], :] = part
            bar.update(part.shape[0])
    return held


class DeviceRows:
    """The training frames' rows a decode's batches weigh, on the device: each batch's rows
    read on the host and sent as they are needed, until as many rows have been sent as the
    model has frames; from then on every frame is held there (:func:`held_on_device`, when
    they fit) and a batch's rows are taken there. A decode of a few codes by a sparse solver
    sends its few rows; a long one, or a dense solver's, sends each frame at most twice,
    however many batches."""

    def __init__(self, frames, on: Accelerator):
        self.frames, self.on = frames, on
        self.sent = 0  # rows sent so far
        self.held = None
        self.tried = False  # whether holding every frame was tried (it may not fit)

    def rows(self, indices: np.ndarray, read):
        """The frames at `indices` on the device in their own dtype: ``read()`` (a numpy (r, d)
        block of them) sent, or taken from every frame held there."""
        n = self.frames.shape[0]
        if self.held is None and not self.tried and self.sent + len(indices) > n:
            self.tried = True
            self.held = held_on_device(self.frames, self.on)
        xp = self.on.xp
        if self.held is not None:
            return xp.take(self.held, from_numpy(np.asarray(indices, dtype=np.int64), xp, self.on.device), axis=0)
        self.sent += len(indices)
        return _sent(read(), xp, self.on.device)


def _column_blocks(frames, held, on: Accelerator, step: int):
    """``(start, stop, block)`` for each block of `step` pixel columns of `frames` (n, d), the
    block a float64 array on the device: taken from `held`, the frames held there
    (:func:`held_on_device`), or, when None, sent a block at a time (:func:`_sent`)."""
    xp, d = on.xp, frames.shape[1]
    for start in range(0, d, step):
        stop = min(start + step, d)
        if held is None:
            yield start, stop, _sent(frames[:, start:stop], xp, on.device, xp.float64)
        else:
            yield start, stop, xp.astype(held[:, start:stop], xp.float64)


class ArrayBackend:
    """The array algebra on the accelerator `on` (its namespace and device): every result comes
    back to the host as numpy arrays, the Gram and the decoded frames of integer frames the
    CPU's bit for bit (the module docstring says how)."""

    on_device = True
    # A device's dense eigensolver takes seconds at 20,000 samples: every eigenpair there,
    # whatever n (kpcacli/numerics/spectrum.py).
    dense_at_any_size = True

    def __init__(self, on: Accelerator):
        self.on = on

    def hold(self, frames):
        """The training `frames` on the device for a run of passes (:func:`held_on_device`), or
        None when they do not fit there."""
        return held_on_device(frames, self.on)

    def decode_rows(self, frames) -> DeviceRows:
        """Where a decode's batches take the training rows they weigh (:class:`DeviceRows`)."""
        return DeviceRows(frames, self.on)

    def fix_signs(self, eigenvectors):
        """`eigenvectors` (of the namespace, on the device) with each one's entry of largest
        magnitude positive, the first such entry winning ties, as
        :func:`kpcacli.numerics.signs.fix_signs` signs numpy's."""
        xp, columns = self.on.xp, eigenvectors.shape[1]
        rows = to_numpy(xp.argmax(xp.abs(eigenvectors), axis=0)) if columns else np.zeros(0, dtype=np.int64)
        flat_indices = from_numpy(rows * columns + np.arange(columns), xp, self.on.device)
        largest = to_numpy(xp.take(xp.reshape(eigenvectors, (-1,)), flat_indices))
        return eigenvectors * from_numpy(np.where(largest < 0, -1.0, 1.0), xp, self.on.device)

    def linear_gram(self, frames, progress: bool = False) -> LinearGram:
        """:func:`kpcacli.numerics.gram.linear_gram` on the accelerator `on`: ``L = (X - s)(X - s)ᵀ``
        with ``s`` the mean frame (rounded to integers for integer frames), a block of pixel columns
        at a time; the same Gram, bit for bit, for integer frames."""
        on = self.on
        xp, device = on.xp, on.device
        n, d = frames.shape
        integer = np.dtype(frames.dtype).kind in "ui"
        origin = np.empty(d, dtype=frames.dtype if integer else np.float64)
        shifted = xp.zeros((n, n), dtype=xp.float64, device=device)
        origin_dots = xp.zeros((n,), dtype=xp.float64, device=device)
        origin_norm2 = xp.zeros((), dtype=xp.float64, device=device)
        held = held_on_device(frames, on, progress)
        with progress_bar(progress, desc="Gram (device)", total=d, unit="px", unit_scale=True) as bar:
            for start, stop, block in _column_blocks(frames, held, on, _block_columns(n, d)):
                # numpy's mean: the sum (exact for integer frames) over a true division by n. A
                # library's own mean may multiply by 1/n instead (PyTorch's reduction does), an ulp
                # away, and at a column mean of x.5 that moves the rounding below.
                mean = xp.sum(block, axis=0) / n
                if integer:
                    mean = xp.round(mean)  # half to even, as numpy's rint: exact integers below
                origin[start:stop] = to_numpy(mean)
                block = block - mean
                shifted += block @ block.T
                origin_dots += block @ mean
                origin_norm2 += xp.sum(mean * mean)
                bar.update(stop - start)
        shifted = 0.5 * (shifted + shifted.T)  # as linear_gram: exactly symmetric
        return LinearGram(to_numpy(shifted), origin, to_numpy(origin_dots), float(to_numpy(origin_norm2)))

    def cross(self, gram: LinearGram, frames, new: np.ndarray, held=None, progress: bool = False) -> CrossProducts:
        """:meth:`kpcacli.numerics.gram.LinearGram.cross` on the accelerator `on`: the products of
        `new` (m, d) with the training frames `frames` (n, d), both shifted by the Gram's origin, a
        block of pixel columns at a time; exact for integer frames, as the CPU's. `held`: the
        training frames already on the device (:func:`held_on_device`, kept by a caller that
        encodes batch after batch), else they are sent here."""
        on = self.on
        xp, device = on.xp, on.device
        n, d = frames.shape
        m = new.shape[0]
        products = xp.zeros((n, m), dtype=xp.float64, device=device)
        norms = xp.zeros((m,), dtype=xp.float64, device=device)
        origin_dots = xp.zeros((m,), dtype=xp.float64, device=device)
        step = _block_columns(n + m, d)
        for (start, stop, block), (_, _, new_block) in zip(
            _column_blocks(frames, held if held is not None else held_on_device(frames, on), on, step),
            _column_blocks(new, held_on_device(new, on), on, step),
        ):
            origin = from_numpy(gram.origin[start:stop].astype(np.float64), xp, device)
            block = block - origin
            new_block = new_block - origin
            products += block @ new_block.T
            norms += xp.sum(new_block * new_block, axis=1)
            origin_dots += new_block @ origin
        return CrossProducts(gram, to_numpy(products).T, to_numpy(norms), to_numpy(origin_dots))

    def eigh(self, symmetric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every eigenpair of the `symmetric` (n, n) matrix on the accelerator `on`
        (the namespace's ``linalg.eigh``), increasing, as numpy arrays: the CPU's
        :func:`kpcacli.numerics.spectrum.eigendecomposition` orders, checks and signs them alike."""
        xp = self.on.xp
        values, vectors = xp.linalg.eigh(from_numpy(symmetric, xp, self.on.device))
        return to_numpy(values), to_numpy(vectors)

    def randomized_sketch(self, matrix, count: int, sketch: np.ndarray, power: int):
        """The algebra of :func:`kpcacli.numerics.spectrum.randomized_eigenpairs` on the accelerator
        `on` (Halko, Martinsson and Tropp 2011, algorithms 4.4 and 5.1): the Gaussian `sketch` (n,
        count + oversampling, drawn on the host from the same random state as the CPU's) multiplied
        `power` times by the symmetric `matrix` and its transpose, each product normalised by QR
        when ``power > 2`` (the standard has no LU: scikit-learn's array-API randomized range
        finder normalises by QR too; either spans the same subspace, so the eigenpairs agree with
        the CPU's to rounding), an orthonormal basis of the result, the SVD of the matrix on it,
        and the `count` largest singular values signed by ``v_iᵀ u_i``. `matrix` may be numpy or
        already on the device; the eigenvalues (count,) and eigenvectors (n, count) come back as
        numpy arrays in the SVD's order, neither sorted, checked nor sign-fixed (the CPU's steps
        finish them)."""
        on = self.on
        xp = on.xp
        matrix = from_numpy(matrix, xp, on.device) if isinstance(matrix, np.ndarray) else matrix
        basis = xp.astype(from_numpy(sketch, xp, on.device), matrix.dtype)
        for _ in range(power):
            for product in (matrix, matrix.T):
                basis = product @ basis
                if power > 2:
                    basis = xp.linalg.qr(basis, mode="reduced")[0]
        basis = xp.linalg.qr(matrix @ basis, mode="reduced")[0]
        left, singular, right = xp.linalg.svd(basis.T @ matrix, full_matrices=False)
        vectors = (basis @ left)[:, :count]
        signs = xp.sign(xp.sum(right[:count, :].T * vectors, axis=0))
        return to_numpy(singular[:count] * signs), to_numpy(vectors)

    def weighted_sums(self, terms: list, finish, workers: int, dtype=np.float64) -> None:
        """``finish(columns, Σ part @ block[:, columns])`` over the `terms` (part (m, r), block
        (r, d)) on the accelerator `on`, a block of pixel columns at a time: the products of
        :func:`kpcacli.preimage.synthesis.weighted_frame_sums` (García-González et al. 2021,
        eq. 31), each term's frames sent whole in their own dtype (a group of rows: nothing
        gathered on the host), their columns converted there and the products formed in `dtype`.
        On the weights of :func:`kpcacli.preimage.synthesis.exact_terms` every product
        and sum is exact, so integer frames decode to the CPU's bits; `finish` gets numpy sums."""
        on = self.on
        xp, device = on.xp, on.device
        kind = xp.float64 if np.dtype(dtype) == np.float64 else xp.float32
        d = terms[0][1].shape[1]
        step = _block_columns(sum(block.shape[0] for _, block in terms) + terms[0][0].shape[0], d)
        parts = [_sent(part, xp, device, kind) for part, _ in terms]
        blocks = [_sent(block, xp, device) for _, block in terms]
        for start in range(0, d, step):
            columns = slice(start, min(start + step, d))
            sums = None
            for part, block in zip(parts, blocks):
                product = part @ xp.astype(block[:, columns], kind)
                sums = product if sums is None else sums + product
            sums = to_numpy(sums)
            finish(columns, sums if sums.flags.writeable else sums.copy())
