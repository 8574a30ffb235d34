"""The kernel-PCA model: fit, encode (forward map) and decode (backward map).

The notation follows seed 000 with samples as rows:

========================  ===============================================  =========
attribute                 meaning                                          equation
========================  ===============================================  =========
``linear_gram_``          shifted linear Gram ``L`` and its shift          8
``kernel_gram_``          ``G_ij = κ(x_i, x_j)``                           21
``gram_row_means_``       ``G 1 / n`` (centring term)                      24–25
``gram_mean_``            ``1ᵀ G 1 / n²`` (centring term)                  24–25
``eigenvalues_``          all ``λ_i`` of ``Ḡ`` (or ``G``), decreasing      26
``eigenvectors_``         ``V*``, the first k eigenvectors, (n, k)         26
``codes_``                ``Z*ᵀ = Ḡ V*``, training codes, (n, k)            27
========================  ===============================================  =========

Encoding a new frame is eqs. 29–30: ``z = V*ᵀ ḡ_new``. Decoding solves for a pre-image with a
solver from :mod:`kpcacli.preimage` (default: the log-discrepancy solver of eq. 35).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from . import modelfile
from .centring import centre_gram, centre_kernel_vectors
from .errors import InputError, ParameterError
from .gram import LinearGram, linear_gram
from .kernels import KERNELS, Kernel, make_kernel
from .preimage import DEFAULT_SOLVER, Preimage, Start, get_solver
from .sources import Frame
from .spectrum import check_k_request, choose_k, eigendecomposition

# Training samples whose codes are closer than this fraction of the typical code spacing count
# as one view when neighbours are chosen (clips that go back and forth, static shots).
DUPLICATE_FRACTION = 0.25
DEFAULT_EPS = 0.1  # eq. 3's tolerance when neither -k nor --eps is given


class KernelPCA:
    """Kernel PCA of a frame sequence with a pre-image map back to frames.

    Parameters
    ----------
    kernel : {"rbf", "poly", "linear", "sigmoid"}, default "rbf"
        The kernel (see :mod:`kpcacli.kernels`).
    n_components : int, optional
        k, the number of components. Give this or `eps`.
    eps : float, optional
        Variance tolerance of eq. 3: the smallest k keeping ``1 - eps`` of the variance.
        Used when `n_components` is None (default 0.1 when both are None).
    beta : float, optional
        Gaussian width; default ``1 / median`` pairwise squared distance.
    gamma : float, optional
        Dot-product scale of poly and sigmoid; default ``1 / median |x_i|²``.
    degree : int, default 3
        Degree of the polynomial kernel.
    coef0 : float, optional
        Offset of poly (default 1) and sigmoid (default 0).
    center : bool, default False
        Centre the kernel in feature space (eqs. 24–25). Off by default because the default
        log-discrepancy decoder (eq. 35) needs the uncentred kernel.
    progress : bool, default False
        Show progress bars on standard error (when it is a terminal).

    Examples
    --------
    >>> import numpy as np
    >>> from kpcacli import KernelPCA
    >>> frames = np.random.default_rng(0).integers(0, 256, size=(20, 8, 8), dtype=np.uint8)
    >>> model = KernelPCA(n_components=3).fit(frames)
    >>> codes = model.encode(frames[:2])
    >>> codes.shape
    (2, 3)
    >>> model.decode(codes).shape
    (2, 8, 8)
    """

    def __init__(
        self,
        kernel: str = "rbf",
        n_components: int | None = None,
        eps: float | None = None,
        beta: float | None = None,
        gamma: float | None = None,
        degree: int = 3,
        coef0: float | None = None,
        center: bool = False,
        progress: bool = False,
    ):
        self.kernel = kernel
        self.n_components = n_components
        self.eps = eps
        self.beta = beta
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.center = center
        self.progress = progress

    # -- fitting ------------------------------------------------------------------------
    def fit(self, frames, frame_shape: tuple[int, ...] | None = None, names: list[str] | None = None) -> KernelPCA:
        """Fit the model to training frames.

        Parameters
        ----------
        frames : (n, ...) array-like
            Training frames: ``(n, height, width)`` images, ``(n, d)`` rows (points, or
            flattened frames of shape `frame_shape`), or a ``numpy.memmap`` from
            :class:`kpcacli.store.FrameStore`. Kept by reference: the model reads frames from
            it when decoding.
        frame_shape : tuple of int, optional
            Shape of one frame when `frames` is ``(n, d)`` (default ``(d,)``, point data).
        names : list of str, optional
            Where each frame came from (kept in the model file).
        """
        if self.kernel not in KERNELS:
            raise ParameterError(f"kernel must be one of {', '.join(KERNELS)}. Got {self.kernel!r} instead.")
        # Refuse a bad -k or --eps before the Gram pass over the frames, not after it.
        check_k_request(*self._k_request())
        frames, shape = _as_rows(frames, frame_shape)
        n = frames.shape[0]
        if n < 2:
            raise InputError(f"a model needs at least two frames; got {n}")
        if np.dtype(frames.dtype).kind == "f" and not isinstance(frames, np.memmap):
            if not np.all(np.isfinite(frames)):
                raise InputError("the training frames contain NaN or infinite values")
        self.frames_ = frames
        self.frame_shape_ = shape
        self.frame_names_ = list(names) if names is not None else [f"frame {i}" for i in range(n)]
        self.linear_gram_ = linear_gram(frames, progress=self.progress)
        self.kernel_ = make_kernel(self.kernel, self.linear_gram_, self.beta, self.gamma, self.degree, self.coef0)
        self._fit_spectrum()
        return self

    def _fit_spectrum(self) -> None:
        """Everything after the pixel pass: kernel Gram, centring, eigenproblem, codes."""
        gram = self.kernel_.gram(self.linear_gram_)
        if not np.all(np.isfinite(gram)):
            raise InputError("the kernel Gram matrix has infinite values; use a smaller --gamma or --degree")
        if self.center:
            centred, self.gram_row_means_, self.gram_mean_ = centre_gram(gram)
        else:
            centred = gram
            self.gram_row_means_, self.gram_mean_ = np.zeros(gram.shape[0]), 0.0
        self.centred_ = bool(self.center)
        eigenvalues, eigenvectors = eigendecomposition(centred)
        k = choose_k(eigenvalues, *self._k_request())
        self.eigenvalues_ = eigenvalues
        self.eigenvectors_ = eigenvectors[:, :k]
        self.codes_ = centred @ self.eigenvectors_  # Z*ᵀ = Ḡ V*, eq. 27
        self.kernel_gram_ = gram

    def _k_request(self) -> tuple[int | None, float | None]:
        """(n_components, eps) as asked; neither means the default ``eps = 0.1``."""
        if self.n_components is None and self.eps is None:
            return None, DEFAULT_EPS
        return self.n_components, self.eps

    @property
    def n_components_(self) -> int:
        """k, the number of kept components."""
        return self.eigenvectors_.shape[1]

    @property
    def explained_variance_ratio_(self) -> float:
        """``Σ_{i≤k} λ_i / Σ_i λ_i``: the share of the (feature-space) variance kept."""
        return float(self.eigenvalues_[: self.n_components_].sum() / self.eigenvalues_.sum())

    @property
    def smallest_kernel_value_(self) -> float:
        """The smallest positive kernel value between training frames (a floor for logs)."""
        positive = self.kernel_gram_[self.kernel_gram_ > 0]
        return float(positive.min()) if positive.size else np.finfo(float).tiny

    def mean_frame(self) -> np.ndarray:
        """The mean training frame, shape ``frame_shape_``, float64 (one pass over the store)."""
        total = np.zeros(self.frames_.shape[1])
        for start in range(0, self.frames_.shape[0], 64):
            total += np.asarray(self.frames_[start : start + 64], dtype=np.float64).sum(axis=0)
        return (total / self.frames_.shape[0]).reshape(self.frame_shape_)

    # -- forward map ---------------------------------------------------------------------
    def kernel_vectors(self, frames) -> np.ndarray:
        """Kernel vectors ``g_new`` (eq. 29) of new frames against the training frames, (m, n)."""
        return self.kernel_.value(self._arguments(self._check_frames(frames)))

    def _arguments(self, rows: np.ndarray) -> np.ndarray:
        """Kernel arguments (squared distances or dot products) of rows with the training frames."""
        products = self.linear_gram_.cross(self.frames_, rows, progress=self.progress)
        return products.squared_distances() if self.kernel_.uses_distance else products.dots()

    def _codes(self, vectors: np.ndarray) -> np.ndarray:
        """Eq. 30 from kernel vectors: centre them (eq. 25) if the model is centred, project."""
        if self.centred_:
            vectors = centre_kernel_vectors(vectors, self.gram_row_means_, self.gram_mean_)
        return vectors @ self.eigenvectors_

    def encode(self, frames) -> np.ndarray:
        """Map frames to codes, eqs. 29–30: ``z = V*ᵀ ḡ_new``.

        Parameters
        ----------
        frames : (m, ...) array-like or iterable of Frame
            Frames of the model's frame shape (a single frame is also accepted).

        Returns
        -------
        codes : (m, k) ndarray
        """
        return self._codes(self.kernel_vectors(frames))

    def with_components(self, k: int, kernel: Kernel | None = None) -> KernelPCA:
        """The same fit with k components (and optionally another kernel), derived from the
        stored linear Gram: no pixel is read."""
        other = KernelPCA.__new__(KernelPCA)
        other.__dict__.update(self.__dict__)
        if kernel is not None:
            other.kernel_ = kernel
        other.n_components, other.eps, other._code_spacing = k, None, None
        other.center = self.centred_
        other._fit_spectrum()
        return other

    # -- backward map -------------------------------------------------------------------
    @property
    def code_spacing_(self) -> float:
        """Typical distance between a training code and its nearest distinct neighbour.

        The median of the positive nearest-neighbour distances among the training codes, so
        that runs of identical frames do not shrink it to zero.
        """
        if getattr(self, "_code_spacing", None) is None:
            codes = self.codes_
            squared = np.sum(codes**2, axis=1)
            nearest = np.empty(len(codes))
            for start in range(0, len(codes), 512):  # rows in chunks: memory stays O(n), not O(n²)
                rows = slice(start, start + 512)
                block = squared[rows, None] + squared[None, :] - 2.0 * codes[rows] @ codes.T
                block[np.arange(block.shape[0]), np.arange(start, start + block.shape[0])] = np.inf
                nearest[rows] = np.sqrt(np.maximum(block.min(axis=1), 0.0))
            scale = float(np.sqrt(squared.max())) or 1.0
            positive = nearest[nearest > 1e-9 * scale]
            self._code_spacing = float(np.median(positive)) if positive.size else 0.0
        return self._code_spacing

    def neighbours(self, code: np.ndarray, count: int, distinct: bool = True) -> np.ndarray:
        """Indices of the `count` training samples nearest to `code` in reduced space.

        Nearest first. With `distinct`, a sample whose code lies within ``DUPLICATE_FRACTION``
        of :attr:`code_spacing_` of an already chosen one is the same view and is skipped.
        """
        distances = np.linalg.norm(self.codes_ - code, axis=1)
        order = np.argsort(distances, kind="stable")
        if not distinct:
            return order[: min(count, len(order))]
        radius = DUPLICATE_FRACTION * self.code_spacing_
        chosen: list[int] = []
        for index in order:
            if all(np.linalg.norm(self.codes_[index] - self.codes_[other]) > radius for other in chosen):
                chosen.append(int(index))
                if len(chosen) == count:
                    break
        return np.asarray(chosen)

    def _solver_for(self, codes, solver: str, neighbours: int | None):
        """Checked codes, the solver (checked against this model) and M, for the decoders."""
        codes = self.check_codes(codes)
        method = get_solver(solver)
        count = method.default_neighbours if neighbours is None else neighbours
        if not isinstance(count, (int, np.integer)) or count < 1:
            raise ParameterError(f"neighbours must be an int in the range [1, inf). Got {neighbours!r} instead.")
        method.check(self)
        return codes, method, int(count)

    def solve_preimages(self, codes, solver: str = DEFAULT_SOLVER, neighbours: int | None = None) -> list[Preimage]:
        """Run a pre-image solver for each code without touching pixels.

        Parameters
        ----------
        codes : (m, k) array-like
        solver : str
            A name from :data:`kpcacli.preimage.SOLVERS`.
        neighbours : int, optional
            M, the number of distinct nearest training samples (in reduced space) the
            pre-image is built from; default: the solver's own (2 for ``log``).
        """
        codes, method, count = self._solver_for(codes, solver, neighbours)
        return [method.solve(self, code, self.neighbours(code, count)) for code in codes]

    def assemble(self, preimage: Preimage) -> np.ndarray:
        """The pre-image as a float64 frame vector: ``x* = Σ_j w_j x^j`` (eq. 31), shape (d,)."""
        if preimage.pixels is not None:
            return np.asarray(preimage.pixels, dtype=np.float64)
        # One row at a time, in file order: memory stays at two float64 frames whatever M is.
        total = np.zeros(self.frames_.shape[1])
        order = np.argsort(preimage.indices)
        for index, weight in zip(preimage.indices[order], preimage.weights[order]):
            if weight != 0.0:
                total += weight * np.asarray(self.frames_[index], dtype=np.float64)
        return total

    def decode_iter(self, codes, solver: str = DEFAULT_SOLVER, neighbours: int | None = None):
        """Like :meth:`decode`, one frame at a time (a generator): for long clips.

        The codes and the solver are checked before the first frame is yielded.
        """
        codes, method, count = self._solver_for(codes, solver, neighbours)

        def frames():
            for code in codes:
                preimage = method.solve(self, code, self.neighbours(code, count))
                yield self.to_frame_dtype(self.assemble(preimage)).reshape(self.frame_shape_)

        return frames()

    def decode(self, codes, solver: str = DEFAULT_SOLVER, neighbours: int | None = None) -> np.ndarray:
        """Map codes back to frames.

        Returns
        -------
        frames : (m, *frame_shape) ndarray
            In the training frames' dtype: integer frames are rounded and clipped to range.
        """
        return np.stack(list(self.decode_iter(codes, solver, neighbours)))

    def to_frame_dtype(self, vector: np.ndarray) -> np.ndarray:
        """Round and clip a float frame to the training frames' dtype."""
        dtype = np.dtype(self.frames_.dtype)
        if dtype.kind == "u":
            return np.clip(np.rint(vector), 0, np.iinfo(dtype).max).astype(dtype)
        return vector.astype(dtype)

    def denoise(self, frames, solver: str | None = None, neighbours: int | None = None):
        """Denoise frames or points: encode them and decode with the solver started at the input.

        This is the use of seeds 001, 002 and 004: keep the first k components of Φ(x) and come
        back to input space, the iterative solvers starting at x itself (seed 002, section 3).

        Parameters
        ----------
        frames : (m, ...) array-like or iterable of Frame
        solver : str, optional
            Default: ``fixed-point`` for the Gaussian kernel, ``gradient`` otherwise.
        neighbours : int, optional
            M for solvers that use neighbours.

        Returns
        -------
        denoised : (m, *frame_shape) ndarray
            In the training frames' dtype.
        preimages : list of Preimage
            One per input; ``converged`` says whether each solve met its convergence test.
        """
        rows = self._check_frames(frames)
        arguments = self._arguments(rows)
        codes = self._codes(self.kernel_.value(arguments))
        method = get_solver(solver or default_denoise_solver(self.kernel_.name))
        method.check(self)
        count = neighbours or method.default_neighbours
        preimages = [
            method.solve(self, code, self.neighbours(code, count), Start(np.asarray(row, dtype=np.float64), argument))
            for code, row, argument in zip(codes, rows, arguments)
        ]
        denoised = np.stack([self.to_frame_dtype(self.assemble(p)) for p in preimages])
        return denoised.reshape((len(rows),) + tuple(self.frame_shape_)), preimages

    # -- checks -------------------------------------------------------------------------
    @property
    def is_points(self) -> bool:
        """True for point data (1-D samples), False for images."""
        return len(self.frame_shape_) == 1

    def check_codes(self, codes) -> np.ndarray:
        """Validate codes: 2-D, k columns, finite. Returns a float64 (m, k) array."""
        codes = np.asarray(codes, dtype=np.float64)
        if codes.ndim == 1:
            codes = codes[np.newaxis, :]
        if codes.ndim != 2 or codes.shape[0] == 0:
            raise InputError("the codes are empty; expected one row of k values per frame")
        if codes.shape[1] != self.n_components_:
            raise InputError(f"the codes have {codes.shape[1]} columns but the model has k = {self.n_components_}")
        if not np.all(np.isfinite(codes)):
            row = int(np.argwhere(~np.isfinite(codes))[0, 0])
            raise InputError(f"the codes have a NaN or infinite value in row {row + 1}")
        return codes

    def _check_frames(self, frames) -> np.ndarray:
        """New frames as (m, d) rows, checked against the model's frame shape."""
        if isinstance(frames, Frame):
            frames = [frames]
        if not isinstance(frames, np.ndarray):
            items = list(frames)
            for item in items:
                pixels = item.pixels if isinstance(item, Frame) else np.asarray(item)
                if pixels.shape != tuple(self.frame_shape_):
                    name = item.name if isinstance(item, Frame) else "a frame"
                    raise InputError(
                        f"'{name}' has shape {_shape_text(pixels.shape)} but the model was fitted on "
                        f"{_shape_text(self.frame_shape_)}; use --resize to match"
                    )
            if not items:
                raise InputError("no frames to encode")
            frames = np.stack([item.pixels if isinstance(item, Frame) else np.asarray(item) for item in items])
        d = int(np.prod(self.frame_shape_))
        if frames.shape == tuple(self.frame_shape_):
            frames = frames[np.newaxis]
        if frames.ndim < 1 or frames.shape[1:] not in (tuple(self.frame_shape_), (d,)):
            raise InputError(
                f"frames of shape {_shape_text(frames.shape[1:])} do not match the model's "
                f"{_shape_text(self.frame_shape_)}"
            )
        rows = frames.reshape(frames.shape[0], d)
        if rows.dtype.kind == "f" and not np.all(np.isfinite(rows)):
            raise InputError("the frames to encode contain NaN or infinite values")
        return rows

    # -- persistence --------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """Write the model to one ``.npz`` file, atomically (see :mod:`kpcacli.modelfile`)."""
        modelfile.save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> KernelPCA:
        """Read a model written by :meth:`save`; training frames are memory-mapped."""
        return modelfile.load(path)

    @classmethod
    def _from_state(cls, state: dict) -> KernelPCA:
        """Rebuild a fitted model from the arrays of a model file (used by modelfile.load)."""
        kernel: Kernel = state["kernel"]
        model = cls(kernel=kernel.name, n_components=state["eigenvectors"].shape[1], center=state["centred"])
        model.kernel_ = kernel
        model.centred_ = state["centred"]
        model.frames_ = state["frames"]
        model.frame_shape_ = tuple(int(v) for v in state["frame_shape"])
        model.frame_names_ = list(state["frame_names"])
        model.linear_gram_ = LinearGram(
            state["linear_gram"], state["origin"], state["origin_dots"], float(state["origin_norm2"])
        )
        model.kernel_gram_ = kernel.gram(model.linear_gram_)
        model.gram_row_means_ = state["gram_row_means"]
        model.gram_mean_ = float(state["gram_mean"])
        model.eigenvalues_ = state["eigenvalues"]
        model.eigenvectors_ = state["eigenvectors"]
        model.codes_ = state["codes"]
        return model


def default_denoise_solver(kernel: str) -> str:
    """Mika's fixed point for the Gaussian (seeds 001, 004), Schölkopf's gradient otherwise (seed 002)."""
    return "fixed-point" if kernel == "rbf" else "gradient"


def _as_rows(frames, frame_shape) -> tuple[np.ndarray, tuple[int, ...]]:
    """Training frames as an (n, d) array (memory maps are kept as they are)."""
    if isinstance(frames, (list, tuple)) or (not hasattr(frames, "shape")):
        items = list(frames)
        if items and isinstance(items[0], Frame):
            items = [item.pixels for item in items]
        frames = np.stack([np.asarray(item) for item in items]) if items else np.empty((0, 0))
    if frames.ndim == 1:
        raise InputError("training frames must be a 2-D (n, d) or 3-D (n, height, width) array")
    n = frames.shape[0]
    if frames.ndim == 2:
        shape = tuple(frame_shape) if frame_shape is not None else (frames.shape[1],)
        if int(np.prod(shape)) != frames.shape[1]:
            raise InputError(f"frame_shape {shape} does not hold {frames.shape[1]} values")
        return frames, shape
    shape = tuple(frames.shape[1:])
    return frames.reshape(n, -1), shape


def _shape_text(shape) -> str:
    shape = tuple(shape)
    if len(shape) == 2:
        return f"{shape[1]}x{shape[0]}"
    return " x ".join(str(v) for v in shape) or "()"


def fit_sources(
    sources: Iterable[str],
    model_path: str | os.PathLike,
    resize: tuple[int, int] | None = None,
    stdin=None,
    landmarks: int | None = None,
    landmark_method: str = "uniform",
    codes_path: str | None = None,
    **params,
) -> KernelPCA:
    """Load `sources` into a temporary frame store, fit, and save the model to `model_path`.

    The store lives beside `model_path`, becomes the model file on success (the frames are
    written once) and is removed on failure.

    Parameters
    ----------
    landmarks : int, optional
        Fit on this many frames chosen across the clip (:mod:`kpcacli.landmarks`); the model
        keeps only them.
    landmark_method : {"uniform", "farthest"}
    codes_path : str, optional
        Also write the codes of every input frame, in input order (landmarks or not), as
        ``kpca encode`` would.
    """
    from .landmarks import choose_landmarks
    from .sources import Frame, iter_frames
    from .store import FrameStore

    model_path = Path(model_path)
    modelfile.check_target(model_path)
    model = KernelPCA(**params)
    with FrameStore(model_path.parent) as store:
        frames = store.extend(iter_frames(sources, resize=resize, stdin=stdin), progress=model.progress)
        every = store
        if landmarks is not None and landmarks < frames.shape[0]:
            chosen = choose_landmarks(frames, landmarks, landmark_method)
            subset = FrameStore(model_path.parent)
            rows = (Frame(store.names[i], np.asarray(frames[i]).reshape(store.frame_shape)) for i in chosen)
            subset.extend(rows)
            store = subset
        try:
            model.fit(store.frames, frame_shape=store.frame_shape, names=store.names)
            codes = model.encode(every.frames) if codes_path is not None else None
            modelfile.save(model, model_path, store=store)  # the store becomes the model file
        finally:
            if store is not every:
                store.remove()
    if codes is not None:
        from .outputs import write_matrix

        write_matrix(codes, codes_path)
    return KernelPCA.load(model_path)
