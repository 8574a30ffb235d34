"""The fitted state: everything a fitted kernel-PCA model holds, in one documented place.

The notation follows García-González et al. (2021) with samples as rows:

==================  ================  =========================================  =========
member              shape / type      meaning                                    equation
==================  ================  =========================================  =========
``kernel``          Kernel            κ and its resolved parameters              21–23
``centred``         bool              Ḡ is G centred in feature space            24–25
``frames``          (n, d)            training frames (uint8 for 8-bit input)    —
``frame_shape``     tuple             ``(height, width)``, ``(height, width, 3)``  —
                                      (colour) or ``(d,)`` (points)
``frame_names``     tuple of str      where each training frame came from        —
``linear_gram``     LinearGram        ``L = (X − s)(X − s)ᵀ`` and its shift s    8
``gram_row_means``  (n,)              ``G1/n`` (zeros when not centred)          25
``gram_mean``       float             ``1ᵀG1/n²`` (zero when not centred)        25
``eigenvalues``     (n,)              every λ_i of Ḡ, decreasing                 26
``eigenvectors``    (n, k)            V*, the first k eigenvectors               26
``codes``           (n, k)            ``Z*ᵀ = Ḡ V*``, the training codes         27
``provenance``      Provenance|None   frame numbers, frame rate, source size     —
==================  ================  =========================================  =========

Everything else is derived from these and cached: the kernel Gram ``G`` (from L, no pixel
read), the neighbour search among the codes, k, the explained variance.

:meth:`FittedState.validate` is the one check of a state that did not come from a fit (a
model file): types, shapes, ranges, finiteness and consistency between members.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .budgets import BUDGETS, count_within
from .centring import centre_kernel_vectors
from .checks import FRAME_DTYPES, check_array, check_bool, check_int, check_real, frame_size
from .errors import InputError, ModelFileError, param
from .gram import LinearGram
from .kernels import Kernel
from .neighbours import NeighbourSearch, reach
from .provenance import Provenance
from .spectrum import project

# Relative tolerance of the consistency checks of a loaded state (rounding is ~1e-15).
CONSISTENCY_TOLERANCE = 1e-6
# Codes this many times larger than every training code are no model's codes (and their squares
# overflow long before 1e308): refused in one line rather than decoded to noise or a warning.
ABSURD_CODE_FACTOR = 1e6


@dataclass(frozen=True, eq=False)
class FittedState:
    """What a fitted model holds (see the module docstring for the members)."""

    kernel: Kernel
    centred: bool
    frames: np.ndarray
    frame_shape: tuple[int, ...]
    frame_names: tuple[str, ...]
    linear_gram: LinearGram
    gram_row_means: np.ndarray
    gram_mean: float
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    codes: np.ndarray
    provenance: Provenance | None = None  # None: fitted in memory, or a model older than it

    # -- derived ---------------------------------------------------------------------------
    @property
    def n_samples(self) -> int:
        """n, the number of training frames."""
        return int(self.frames.shape[0])

    @property
    def n_components(self) -> int:
        """k, the number of kept components."""
        return int(self.eigenvectors.shape[1])

    @property
    def is_points(self) -> bool:
        """True for point data (1-D samples), False for images."""
        return len(self.frame_shape) == 1

    @property
    def is_colour(self) -> bool:
        """True for RGB frames (``kpca fit --colour``): vectors of 3·h·w values."""
        return len(self.frame_shape) == 3

    @property
    def explained_variance_ratio(self) -> float:
        """``Σ_{i≤k} λ_i / Σ_i λ_i``: the share of the (feature-space) variance kept."""
        return float(self.eigenvalues[: self.n_components].sum() / self.eigenvalues.sum())

    @cached_property
    def kernel_gram(self) -> np.ndarray:
        """``G_ij = κ(x_i, x_j)`` (eq. 21), from the linear Gram alone, (n, n)."""
        return self.kernel.gram(self.linear_gram)

    @cached_property
    def smallest_kernel_value(self) -> float:
        """The smallest positive kernel value between training frames (a floor for logs)."""
        positive = self.kernel_gram[self.kernel_gram > 0]
        return float(positive.min()) if positive.size else np.finfo(float).tiny

    @cached_property
    def neighbours(self) -> NeighbourSearch:
        """Nearest-neighbour queries among the training codes."""
        return NeighbourSearch(self.codes)

    @cached_property
    def float_rows(self) -> np.ndarray:
        """The training frames in float64, (n, d): for solvers working in input space on
        point data (d ≤ n), read once per model, not once per solve."""
        return np.asarray(self.frames, dtype=np.float64)

    @cached_property
    def squared_norms(self) -> np.ndarray:
        """``|x_i|²`` of the raw training frames, from the linear Gram, (n,)."""
        gram = self.linear_gram
        return gram.squared_norms() + 2.0 * gram.origin_dots + gram.origin_norm2

    @cached_property
    def frame_reach(self) -> float:
        """The largest input-space distance from a training frame to its nearest other one
        (:func:`kpcacli.neighbours.reach`), from the linear Gram: no pixel is read."""
        shifted = self.linear_gram.shifted
        return reach(np.diag(shifted).copy(), lambda rows: shifted[rows])

    @cached_property
    def fingerprint(self) -> str:
        """16 hex digits naming this model: a SHA-256 of the kernel and its parameters, the
        centring, the frame shape, V*, the training codes and the Gram's shift s (the mean
        frame). Text codes written by ``kpca encode`` carry it, so that ``kpca decode`` can
        tell codes of another model. The shift is what tells apart two frame sets with one
        Gram: the same frames mirrored give the same V* and codes, and other pictures."""
        digest = hashlib.sha256()
        facts = [self.kernel.name, self.kernel.params(), bool(self.centred), [int(v) for v in self.frame_shape]]
        digest.update(json.dumps(facts).encode())
        for array in (self.eigenvectors, self.codes, self.linear_gram.origin):
            digest.update(np.ascontiguousarray(array, dtype="<f8").tobytes())
        return digest.hexdigest()[:16]

    # -- forward map ------------------------------------------------------------------------
    def kernel_arguments(self, rows: np.ndarray, progress: bool = False) -> np.ndarray:
        """Kernel arguments of new rows with every training frame: squared distances for the
        Gaussian, dot products otherwise, (m, n). One pass over the stored frames."""
        return self.kernel_arguments_of(self.linear_gram.cross(self.frames, rows, progress=progress))

    def kernel_arguments_of(self, products) -> np.ndarray:
        """Kernel arguments from products already computed (:class:`kpcacli.gram.CrossProducts`),
        which serve every model fitted on the same frames (e.g. linear PCA beside it)."""
        return products.squared_distances() if self.kernel.uses_distance else products.dots()

    def nearest_frame_distances(self, products) -> np.ndarray:
        """Input-space distance from each new frame to its nearest training frame, (m,), from
        the products with the training frames (:class:`kpcacli.gram.CrossProducts`)."""
        return np.sqrt(np.maximum(products.squared_distances().min(axis=1), 0.0))

    def codes_of_kernel_vectors(self, vectors: np.ndarray) -> np.ndarray:
        """Eqs. 29–30 from kernel vectors ``g_new`` (m, n): centred by eq. 25 when the model is
        centred, then projected, ``z = V*ᵀ ḡ``. Returns (m, k)."""
        if self.centred:
            vectors = centre_kernel_vectors(vectors, self.gram_row_means, self.gram_mean)
        return project(vectors, self.eigenvectors)

    def check_rows(self, frames) -> np.ndarray:
        """New frames as (m, d) rows, checked against the frame shape and for finiteness.

        Accepts one frame of ``frame_shape``, a stack ``(m, *frame_shape)``, rows ``(m, d)`` or
        a list of frames.
        """
        if not isinstance(frames, np.ndarray):
            items = [np.asarray(item) for item in frames]
            if not items:
                raise InputError("no frames to encode")
            for item in items:
                if item.shape != self.frame_shape and item.shape != (self.frames.shape[1],):
                    raise InputError(self._shape_mismatch("a frame", item.shape))
            frames = np.stack([item.reshape(-1) for item in items])
        d = self.frames.shape[1]
        if frames.shape == self.frame_shape:
            frames = frames[np.newaxis]
        if frames.ndim < 2 or frames.shape[1:] not in (self.frame_shape, (d,)):
            raise InputError(self._shape_mismatch("frames", frames.shape[1:]))
        rows = frames.reshape(frames.shape[0], d)
        if rows.dtype.kind not in "uif":
            raise InputError(f"the frames to encode hold {rows.dtype} values, not numbers")
        if rows.dtype.kind == "f" and not np.all(np.isfinite(rows)):
            raise InputError("the frames to encode contain NaN or infinite values")
        return rows

    def _shape_mismatch(self, what: str, shape) -> str:
        return (
            f"{what} of {frame_size(shape)} do not match the model's {frame_size(self.frame_shape)}; {self.size_advice}"
        )

    @property
    def size_advice(self) -> str:
        """What to do about a sample of the wrong size: resize a frame; a point model takes
        only rows of its own length (resizing a picture cannot make one)."""
        if len(self.frame_shape) == 1:
            return f"give rows of {self.frame_shape[0]} values (.npy, .csv), as the model's points are"
        return f"use {param('resize')} to match"

    def check_codes(self, codes) -> np.ndarray:
        """Codes as a float64 (m, k) array: 2-D, k columns, finite."""
        codes = np.asarray(codes, dtype=np.float64)
        if codes.ndim == 1:
            codes = codes[np.newaxis, :]
        if codes.ndim != 2 or codes.shape[0] == 0:
            raise InputError("the codes are empty; expected one row of k values per frame")
        if codes.shape[1] != self.n_components:
            raise InputError(f"the codes have {codes.shape[1]} columns but the model has k = {self.n_components}")
        if not np.all(np.isfinite(codes)):
            row = int(np.argwhere(~np.isfinite(codes))[0, 0])
            raise InputError(f"the codes have a NaN or infinite value in row {row + 1}")
        largest = float(np.abs(self.codes).max()) or 1.0
        if np.abs(codes).max() > ABSURD_CODE_FACTOR * largest:
            row, column = (int(v) for v in np.unravel_index(np.argmax(np.abs(codes)), codes.shape))
            raise InputError(
                f"the code in row {row + 1}, column {column + 1} is {codes[row, column]:.3g}, over "
                f"{ABSURD_CODE_FACTOR:.0e} times the largest training code ({largest:.3g}): these are not codes of "
                "this model"
            )
        return codes

    # -- pixels -----------------------------------------------------------------------------
    def mean_frame(self) -> np.ndarray:
        """The mean training frame, shape ``frame_shape``, float64 (one pass over the store)."""
        total = np.zeros(self.frames.shape[1])
        for block in _row_blocks(self.frames):
            total += block.sum(axis=0)
        return (total / self.n_samples).reshape(self.frame_shape)

    # -- validation -------------------------------------------------------------------------
    def validate(self) -> None:
        """Check every member and their consistency; raise ModelFileError naming the member.

        Checks types, shapes and dtypes; finiteness; ranges (eigenvalues decreasing and
        non-negative within rounding, 1 ≤ k < n); the frame shape against the frame length;
        that L is symmetric with a non-negative diagonal; that V* has orthonormal columns; that
        the codes are Ḡ V* and their squared norms the eigenvalues; that the centring terms
        are G's. The kernel's own parameters were checked when it was made.
        """
        error = ModelFileError
        frames = self.frames
        if not isinstance(self.kernel, Kernel):
            raise error(f"kernel must be a Kernel. Got {type(self.kernel).__name__} instead.")
        check_bool("centred", self.centred, error)
        if getattr(frames, "ndim", 0) != 2 or np.dtype(frames.dtype) not in FRAME_DTYPES:
            raise error(
                f"frames must be an (n, d) array of uint8, uint16, float32 or float64. Got "
                f"shape {getattr(frames, 'shape', '?')} and dtype {getattr(frames, 'dtype', '?')} instead."
            )
        n, d = frames.shape
        check_int("the number of training frames", n, 2, error=error)
        shape = self.frame_shape
        if not (
            isinstance(shape, tuple)
            and len(shape) in (1, 2, 3)
            and all(int(v) >= 1 for v in shape)
            and (len(shape) < 3 or int(shape[2]) == 3)
        ):
            raise error(f"frame_shape must be (height, width), (height, width, 3) or (d,). Got {shape!r} instead.")
        if int(np.prod(shape)) != d:
            raise error(f"frame_shape must hold the frame length {d}. Got {list(shape)} instead.")
        if len(self.frame_names) != n or not all(isinstance(name, str) for name in self.frame_names):
            raise error(f"frame_names must be {n} strings. Got {len(self.frame_names)} instead.")
        if self.provenance is not None and len(self.provenance.frame_indices) != n:
            raise error(
                f"provenance.frame_indices must be {n} numbers. Got {len(self.provenance.frame_indices)} instead."
            )
        gram = self.linear_gram
        check_array("linear_gram", gram.shifted, (n, n), error=error)
        if not np.array_equal(gram.shifted, gram.shifted.T) or np.any(np.diag(gram.shifted) < 0):
            raise error("linear_gram must be symmetric with a non-negative diagonal. Got another matrix instead.")
        check_array("origin", gram.origin, (d,), kinds="uif", error=error)
        check_array("origin_dots", gram.origin_dots, (n,), error=error)
        check_real("origin_norm2", gram.origin_norm2, non_negative=True, error=error)
        eigenvalues = check_array("eigenvalues", self.eigenvalues, (n,), error=error)
        largest = float(eigenvalues[0])
        if largest <= 0 or np.any(np.diff(eigenvalues) > 0) or eigenvalues[-1] < -1e-10 * largest:
            raise error("eigenvalues must be decreasing, non-negative and not all zero. Got other values instead.")
        vectors = check_array("eigenvectors", self.eigenvectors, (n, None), error=error)
        check_int("k (the eigenvectors' columns)", vectors.shape[1], 1, n - 1, error=error)
        k = vectors.shape[1]
        check_array("codes", self.codes, (n, k), error=error)
        check_array("gram_row_means", self.gram_row_means, (n,), error=error)
        check_real("gram_mean", self.gram_mean, error=error)
        if not np.allclose(vectors.T @ vectors, np.eye(k), rtol=0, atol=CONSISTENCY_TOLERANCE):
            raise error("eigenvectors must have orthonormal columns. Got other columns instead.")
        kernel_gram = self.kernel_gram
        if not np.all(np.isfinite(kernel_gram)):
            raise error("the kernel Gram of these frames must be finite. Got infinite values instead.")
        if self.centred:
            row_means = kernel_gram.mean(axis=1)
            scale = max(float(np.abs(row_means).max()), 1e-300)
            if not np.allclose(self.gram_row_means, row_means, rtol=0, atol=CONSISTENCY_TOLERANCE * scale) or not (
                abs(self.gram_mean - float(row_means.mean())) <= CONSISTENCY_TOLERANCE * scale
            ):
                raise error("gram_row_means and gram_mean must be the kernel Gram's. Got other values instead.")
        elif np.any(self.gram_row_means != 0) or self.gram_mean != 0:
            raise error("gram_row_means and gram_mean must be zero for an uncentred model. Got other values instead.")
        expected = self.codes_of_kernel_vectors(kernel_gram)
        scale = max(float(np.abs(expected).max()), 1e-300)
        if not np.allclose(self.codes, expected, rtol=0, atol=CONSISTENCY_TOLERANCE * scale):
            raise error("codes must be the training codes Ḡ V* (eq. 27). Got other values instead.")
        norms = np.sqrt(np.sum(self.codes**2, axis=0))
        if not np.allclose(norms, eigenvalues[:k], rtol=CONSISTENCY_TOLERANCE, atol=CONSISTENCY_TOLERANCE * largest):
            raise error("eigenvalues must match the norms of the codes (Ḡ V* = V* Λ). Got other values instead.")
        if np.dtype(frames.dtype).kind == "f":
            for block in _row_blocks(frames):
                if not np.all(np.isfinite(block)):
                    raise error("frames must be finite. Got NaN or infinite values instead.")


def _row_blocks(frames: np.ndarray):
    """The frames as float64 blocks of rows, a few MiB at a time."""
    step = count_within(BUDGETS.row_block, 8 * frames.shape[1])
    for start in range(0, frames.shape[0], step):
        yield np.asarray(frames[start : start + step], dtype=np.float64)
