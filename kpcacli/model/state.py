"""The fitted state: everything a fitted kernel-PCA model holds, in one documented place.

The notation follows García-González et al. (2021) with samples as rows:

==================  ================  =========================================  =========
member              shape / type      meaning                                    equation
==================  ================  =========================================  =========
``kernel``          Kernel            κ and its resolved parameters              21–23
``centred``         bool              Ḡ is G centred in feature space            24–25
``frames``          (n, d)            training frames (uint8 for 8-bit input)    —
                                      as an array, or rows read on demand
                                      (:mod:`kpcacli.model.framerows`)
``frame_shape``     tuple             ``(height, width)``, ``(height, width, 3)``  —
                                      (colour) or ``(d,)`` (points)
``frame_names``     tuple of str      where each training frame came from        —
``linear_gram``     LinearGram        ``L = (X − s)(X − s)ᵀ`` and its shift s    8
``gram_row_means``  (n,)              ``G1/n`` (zeros when not centred)          25
``gram_mean``       float             ``1ᵀG1/n²`` (zero when not centred)        25
``eigenvalues``     (r,)              the leading λ_i of Ḡ, decreasing: all n    26
                                      up to 3,000 samples, r ≥ k beyond
                                      (:mod:`kpcacli.numerics.spectrum`)
``eigenvectors``    (n, k)            V*, the first k eigenvectors               26
``codes``           (n, k)            ``Z*ᵀ = Ḡ V*``, the training codes         27
``provenance``      Provenance|None   frame numbers, frame rate, source size     —
``frame_store``     dict|None         how the model file codes the frames (CRF,  —
                                      how chosen, PSNR): format 3's H.264 store
``linear_axes``     LinearAxes|None   the distance solver's R linear-PCA axes    —
                                      and their frames, as a model stores them
                                      (None: derived when first needed)
``solver_choice``   SolverChoice|None the default pre-image solver chosen at fit —
                                      and its scores (:mod:`kpcacli.model.solverchoice`)
``parameters``      Parameters|None   each training frame's parameters and the   —
                                      map from parameters to codes
                                      (:mod:`kpcacli.model.parameters`)
==================  ================  =========================================  =========

Everything else is derived from these and cached: the kernel Gram ``G`` (from L, no pixel
read), the neighbour search among the codes, k, the explained variance.

The state only holds: the checks of what enters it are :mod:`kpcacli.model.validation`'s (new
frames and codes) and :mod:`kpcacli.modelfile.integrity`'s (a model file's members), and pixels
are formed by :mod:`kpcacli.preimage.synthesis`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..io.provenance import Provenance
from ..numerics.centring import centre_kernel_vectors
from ..numerics.gram import LinearGram
from ..numerics.kernels import Kernel
from ..numerics.linearaxes import LinearAxes
from ..numerics.spectrum import project
from ..utils.budgets import BUDGETS, count_within
from .framerows import FrameRows
from .neighbours import NeighbourSearch, reach
from .parameters import Parameters
from .solverchoice import SolverChoice


@dataclass(frozen=True, eq=False)
class FittedState:
    """What a fitted model holds (see the module docstring for the members)."""

    kernel: Kernel
    centred: bool
    frames: FrameRows  # an array, or rows read on demand (model/framerows.py)
    frame_shape: tuple[int, ...]
    frame_names: tuple[str, ...]
    linear_gram: LinearGram
    gram_row_means: np.ndarray
    gram_mean: float
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    codes: np.ndarray
    provenance: Provenance | None = None  # None: fitted in memory, or a model older than it
    frame_store: dict | None = None  # None: not saved yet, or frames not stored as H.264
    linear_axes: LinearAxes | None = None  # None: not saved yet, or a model stored without them
    solver_choice: SolverChoice | None = None  # None: a model older than the measured choice, or too small
    parameters: Parameters | None = None  # None: fitted without parameters

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
        return float(self.eigenvalues[: self.n_components].sum() / self.eigenvalue_total)

    @cached_property
    def eigenvalue_total(self) -> float:
        """``Σ_i λ_i`` over all n eigenvalues of Ḡ: their sum when the model keeps every one,
        otherwise the trace of Ḡ, from the kernel's values on the diagonal: ``Σ_i κ(x_i, x_i)``,
        less n times the Gram's mean when centred (eq. 25)."""
        n = self.n_samples
        if len(self.eigenvalues) == n:
            return float(self.eigenvalues.sum())
        arguments = np.zeros(n) if self.kernel.uses_distance else self.squared_norms
        trace = float(np.sum(self.kernel.value(arguments)))
        return trace - n * self.gram_mean if self.centred else trace

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
        """The longest edge of the training frames' minimum spanning tree in input space
        (:func:`kpcacli.model.neighbours.reach`), from the linear Gram: no pixel is read."""
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
        facts = [
            self.kernel.name,
            self.kernel.hyperparameters(),
            bool(self.centred),
            [int(v) for v in self.frame_shape],
        ]
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
        """Kernel arguments from products already computed (:class:`kpcacli.numerics.gram.CrossProducts`),
        which serve every model fitted on the same frames (e.g. linear PCA beside it)."""
        return products.squared_distances() if self.kernel.uses_distance else products.dots()

    def nearest_frame_distances(self, products) -> np.ndarray:
        """Input-space distance from each new frame to its nearest training frame, (m,), from
        the products with the training frames (:class:`kpcacli.numerics.gram.CrossProducts`)."""
        return np.sqrt(np.maximum(products.squared_distances().min(axis=1), 0.0))

    def codes_of_products(self, products) -> np.ndarray:
        """Codes (m, k) of new frames from their products with the training frames
        (:class:`kpcacli.numerics.gram.CrossProducts`): the kernel's arguments, its values, and
        eqs. 29–30 (:meth:`codes_of_arguments`)."""
        return self.codes_of_arguments(self.kernel_arguments_of(products))

    def codes_of_arguments(self, arguments: np.ndarray) -> np.ndarray:
        """Codes (m, k) from kernel arguments (m, n) with every training frame
        (:meth:`kernel_arguments_of`): ``κ`` applied, then :meth:`codes_of_kernel_vectors`."""
        return self.codes_of_kernel_vectors(self.kernel.value(arguments))

    def codes_of_kernel_vectors(self, vectors: np.ndarray) -> np.ndarray:
        """Eqs. 29–30 from kernel vectors ``g_new`` (m, n): centred by eq. 25 when the model is
        centred, then projected, ``z = V*ᵀ ḡ``. Returns (m, k)."""
        if self.centred:
            vectors = centre_kernel_vectors(vectors, self.gram_row_means, self.gram_mean)
        return project(vectors, self.eigenvectors)

    # -- pixels -----------------------------------------------------------------------------
    def mean_frame(self) -> np.ndarray:
        """The mean training frame, shape ``frame_shape``, float64 (one pass over the store)."""
        total = np.zeros(self.frames.shape[1])
        for block in row_blocks(self.frames):
            total += block.sum(axis=0)
        return (total / self.n_samples).reshape(self.frame_shape)


def row_blocks(frames: np.ndarray):
    """The frames as float64 blocks of rows, a few MiB at a time."""
    step = count_within(BUDGETS.row_block, 8 * frames.shape[1])
    for start in range(0, frames.shape[0], step):
        yield np.asarray(frames[start : start + step], dtype=np.float64)
