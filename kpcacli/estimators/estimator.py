"""The kernel-PCA estimator: parameters, and fit / encode (forward map) / decode (backward map).

Everything a fitted model holds is its :class:`~kpcacli.model.state.FittedState` (``state_``), the
one documented list of members; this class adds the parameters and the three operations of
García-González et al. (2021):

* fit: linear Gram (eq. 8) → kernel Gram (eq. 21) → centring (eqs. 24–25, optional) →
  eigenproblem (eq. 26) → k (given, or by eq. 3) → training codes (eq. 27), then decoding
  prepared (:mod:`kpcacli.estimators.fitting`);
* encode: ``z = V*ᵀ ḡ_new`` (eqs. 29–30);
* decode: a pre-image from :mod:`kpcacli.preimage` (default: the solver the model measured
  best on training frames it held back, :mod:`kpcacli.preimage.measurement`), most of them over
  the nearest training samples in reduced space.
"""

from __future__ import annotations

import os

import numpy as np

from ..io.provenance import Provenance
from ..model.spectralfit import with_components
from ..model.state import FittedState
from ..modelfile import load as load_state
from ..modelfile import save as save_state
from ..numerics.backend import Backend, backend_for
from ..numerics.components import check_k_request
from ..numerics.gram import LinearGram
from ..numerics.kernels import Kernel, check_kernel_parameters
from ..numerics.pivots import pivoted_columns
from ..numerics.spectrum import EigenSolver
from ..preimage import AUTO, SOLVERS, Preimage
from ..preimage.decoding import decoded_frames, solve_codes
from ..utils.checks import check_choice, check_int
from ..utils.errors import param
from ..utils.hyperparameters import check
from .fitting import fitted_state, k_request, parameters_of, prepared_for_decoding
from .operations import denoise, encode_with_distances
from .parametric import predicted_codes, predicted_frames, with_parameters
from .reconstruction import DEFAULT_ROUNDS, Reconstruction, reconstruct


class FrameModel:
    """Kernel PCA of a frame sequence with a pre-image map back to frames.

    Each parameter is ``kpca fit``'s option of the same name (``n_components`` is ``-k``;
    ``center`` is ``--center/--no-center``, spelled ``centre`` by the scikit-learn estimator
    :class:`kpcacli.KernelPCA`).

    Parameters
    ----------
    kernel : {"rbf", "poly", "linear", "sigmoid"}, default "rbf"
        The kernel (see :mod:`kpcacli.numerics.kernels`).
    n_components : int, optional
        k, the number of components (``-k``). Give this or `eps`.
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
        Centre the kernel in feature space (eqs. 24–25). Off by default because the distance
        and log-discrepancy decoders (eq. 35) need the uncentred kernel.
    progress : bool, default False
        Show progress bars on standard error (when it is a terminal).
    eigen_solver : {"auto", "dense", "arpack", "randomized"} or EigenSolver, default "auto"
        Every eigenpair (dense), or the leading ones by Lanczos iteration (arpack) or by the
        randomized method; auto is dense up to 3,000 frames
        (:func:`kpcacli.numerics.spectrum.leading_eigenpairs`). An
        :class:`kpcacli.numerics.spectrum.EigenSolver` gives the method with its settings.
    solver : str, optional
        The pre-image solver the model decodes and denoises with when none is named
        (:mod:`kpcacli.preimage`). None or ``"auto"``: measured at fit on held-back training
        frames (:func:`kpcacli.preimage.measurement.measure_solvers`); a name: that solver, nothing
        measured, a faster fit (refused at fit when it cannot decode the frames).
    device : {"cpu", "cuda", "cuda:N"}, optional
        Where the Gram, the eigenproblem and the products of encoding, denoising and decoding run:
        None or cpu; cuda, a GPU through CuPy (``pip install "kpcacli[gpu]"``) or a CUDA PyTorch
        (:mod:`kpcacli.numerics.backend`: the same bits for integer frames). No device array is kept.

    Attributes
    ----------
    state_ : FittedState
        Everything the fitted model holds (:mod:`kpcacli.model.state`).

    Examples
    --------
    >>> import numpy as np
    >>> from kpcacli import FrameModel
    >>> frames = np.random.default_rng(0).integers(0, 256, size=(20, 8, 8), dtype=np.uint8)
    >>> model = FrameModel(n_components=3).fit(frames)
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
        eigen_solver: str | EigenSolver = "auto",
        solver: str | None = None,
        device: str | None = None,
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
        self.eigen_solver = eigen_solver
        self.solver = solver
        self.device = device

    def check_parameters(self) -> None:
        """Check every parameter as given (before any pass over the frames)."""
        check_kernel_parameters(self.kernel, self.beta, self.gamma, self.degree, self.coef0)
        check_k_request(*k_request(self.n_components, self.eps))
        check("center", self.center)
        check("eigen_solver", getattr(self.eigen_solver, "method", self.eigen_solver))
        if self.solver is not None:
            check_choice("solver", self.solver, [AUTO, *sorted(SOLVERS)])
        backend_for(self.device)  # a device that is not there: refused before any frame is read

    @property
    def _backend(self) -> Backend:
        """Where the array algebra runs: the one resolution of `device` (every method's)."""
        return backend_for(self.device)

    # -- fitting ------------------------------------------------------------------------
    def fit(
        self,
        frames,
        frame_shape: tuple[int, ...] | None = None,
        names: list[str] | None = None,
        gram: LinearGram | None = None,
        provenance: Provenance | None = None,
        params=None,
        param_names=None,
        prepare_decoding: bool = True,
    ) -> FrameModel:
        """Fit the model to training frames.

        Parameters
        ----------
        frames : (n, ...) array-like
            Training frames: ``(n, height, width)`` images, ``(n, d)`` rows (points, or
            flattened frames of shape `frame_shape`), a list of frames, or a ``numpy.memmap``
            from :class:`kpcacli.io.trainingstore.TrainingStore`. Kept by reference: decoding reads frames
            from it.
        frame_shape : tuple of int, optional
            Shape of one frame when `frames` is ``(n, d)`` (default ``(d,)``, point data).
        names : list of str, optional
            Where each frame came from (kept in the model file).
        gram : LinearGram, optional
            The linear Gram of `frames` when it was computed elsewhere (on a cluster:
            :mod:`kpcacli.engines.cluster`), instead of the pass over pixels here.
        provenance : Provenance, optional
            Where the frames came from (kept in the model file: :mod:`kpcacli.io.provenance`).
        params : (n, p) array-like, optional
            The parameters each frame was made at (a load, a position, a time), one row per
            frame: the model then also fits a map from parameters to codes, and
            :meth:`predict` gives frames for parameter values never seen
            (:mod:`kpcacli.estimators.parametric`).
        param_names : list of str, optional
            The parameters' names (default ``param1``, ``param2``, …).
        prepare_decoding : bool, default True
            Measure the default solver and form the distance solver's axes, the fit's last
            steps; False for a model that is only encoded with (scikit-learn's KernelPCA without
            ``fit_inverse_transform``): a decode then measures and forms them when first needed.
        """
        self.check_parameters()
        state = fitted_state(
            frames,
            frame_shape,
            names,
            gram,
            provenance,
            kernel=self.kernel,
            kernel_parameters=(self.beta, self.gamma, self.degree, self.coef0),
            centred=bool(self.center),
            k_request=k_request(self.n_components, self.eps),
            eigen_solver=self.eigen_solver,
            progress=self.progress,
            backend=self._backend,
        )
        if prepare_decoding:
            state = prepared_for_decoding(state, progress=self.progress, solver=self.solver)
        self.state_ = with_parameters(state, params, param_names) if params is not None else state
        return self

    @property
    def n_components_(self) -> int:
        """k, the number of kept components."""
        return self.state_.n_components

    def with_components(self, k: int, kernel: Kernel | None = None) -> FrameModel:
        """The same fit with k components (and optionally another kernel), derived from the
        stored linear Gram: no pixel is read; on this model's device."""
        state = with_components(self.state_, k, kernel, self.eigen_solver, self._backend)
        other = FrameModel.from_state(state, self.progress)
        other.eigen_solver, other.device = self.eigen_solver, self.device
        return other

    # -- forward map ---------------------------------------------------------------------
    def encode(self, frames, mask=None) -> np.ndarray:
        """Map frames to codes, eqs. 29–30: ``z = V*ᵀ ḡ_new``.

        A frame's codes do not depend on the batch it is encoded in (bit for bit for integer
        frames, whose products with the training frames are exact).

        Parameters
        ----------
        frames : (m, ...) array-like
            Frames of the model's frame shape (a single frame is also accepted).
        mask : array-like of bool, optional
            True where a value is observed: the codes of the whole frame from its observed
            values (:meth:`reconstruct`, which gives the whole frame too).

        Returns
        -------
        codes : (m, k) ndarray
        """
        if mask is not None:
            return self.reconstruct(frames, mask).codes
        return self.encode_with_distances(frames)[0]

    def reconstruct(
        self,
        frames,
        mask=None,
        replace: bool = False,
        rounds: int = DEFAULT_ROUNDS,
        solver: str | None = None,
        neighbours: int | None = None,
    ) -> Reconstruction:
        """Whole frames from the values of `frames` where `mask` is True
        (:mod:`kpcacli.estimators.reconstruction`): the candidate that agrees best with the observed
        values (the nearest training frame, the model's frame between the two nearest, or a
        round of encode, decode, refill) fills the hidden ones.

        Parameters
        ----------
        frames : (m, ...) array-like
            Frames of the model's shape; hidden values are ignored (they may be NaN).
        mask : array-like of bool, optional
            True (non-zero) where observed: one frame's shape for all, or one per frame.
            Default: wherever `frames` is not NaN.
        replace : bool, default False
            Give back the candidate kept everywhere, not only at the hidden values.
        rounds : int, default 8
            The most encode-decode rounds; they stop sooner once the hidden values settle.
        solver, neighbours :
            As :meth:`decode`.

        Returns
        -------
        Reconstruction
            ``frames`` (m, *frame_shape) in the training frames' dtype, ``codes`` (m, k), and
            ``estimate`` (m,): each frame's error estimated without ground truth (the
            root-mean-square gap between its observed values and their pre-image).
        """
        return reconstruct(
            self.state_, frames, mask, replace=replace, rounds=rounds, solver=solver, neighbours=neighbours
        )

    def encode_with_distances(self, frames, progress: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`encode`, and each frame's input-space distance to its nearest training frame
        (from the same pass over the stored frames): how far outside the training set it is,
        against :attr:`FittedState.frame_reach`. `progress` (default: the model's) shows
        the pass over the stored frames.

        Returns
        -------
        codes : (m, k) ndarray
        distances : (m,) ndarray
        """
        progress = self.progress if progress is None else progress
        return encode_with_distances(self.state_, frames, progress, self._backend)

    def sensors(self, count: int) -> np.ndarray:
        """Where to read a frame with `count` sensors: flat indices into the frame vector, the
        best first (:func:`kpcacli.numerics.pivots.pivoted_columns`, QR with column pivoting of
        the centred training frames), for :meth:`reconstruct` from their readings."""
        frames, origin = self.state_.frames, self.state_.linear_gram.origin
        return pivoted_columns(frames, origin, check_int(param("count"), count, 1, frames.shape[1]), self.progress)

    # -- backward map -------------------------------------------------------------------
    def solve_preimages(self, codes, solver: str | None = None, neighbours: int | None = None) -> list[Preimage]:
        """Run a pre-image solver for each code without touching pixels.

        Parameters
        ----------
        codes : (m, k) array-like
        solver : str, optional
            A name from :data:`kpcacli.preimage.SOLVERS`, or ``auto`` (the default): the
            solver the model chose by measurement (:mod:`kpcacli.preimage.choice`).
        neighbours : int, optional
            M, the number of distinct nearest training samples (in reduced space) the
            pre-image is built from; default: the solver's own (3 for ``distance``).
        """
        return solve_codes(self.state_, codes, solver, neighbours)

    def decode_iter(self, codes, solver: str | None = None, neighbours: int | None = None):
        """Like :meth:`decode`, one frame at a time (a generator): for long clips.

        The codes and the solver are checked before the first frame is yielded.
        """
        return decoded_frames(self.state_, codes, solver, neighbours, self._backend)

    def decode(self, codes, solver: str | None = None, neighbours: int | None = None) -> np.ndarray:
        """Map codes back to frames.

        Returns
        -------
        frames : (m, *frame_shape) ndarray
            In the training frames' dtype: integer frames are rounded and clipped to range.
        """
        return np.stack(list(self.decode_iter(codes, solver, neighbours)))

    def denoise(self, frames, solver: str | None = None, neighbours: int | None = None):
        """Denoise frames or points: encode them and decode with the solver started at the input.

        Keep the first k components of Φ(x) and come back to input space, the iterative
        solvers starting at x itself (Schölkopf et al. 1998, section 3; Mika et al. 1999).
        A frame the model holds (its code is a training frame's and it lies at that frame: fit
        on noisy frames, denoise them, as Mika et al. 1999 do) is denoised from the other
        training frames: its own noisy copies, which would give it back unchanged, are left out
        of the neighbours (:meth:`kpcacli.model.neighbours.NeighbourSearch.own_view`,
        :func:`kpcacli.model.noise.training_copies`). A new frame's white noise beyond the
        training frames' is taken out of its kernel arguments first
        (:func:`kpcacli.model.noise.noise_free_arguments`): under the Gaussian kernel it shrinks
        the code, and the frame would be decoded far from the clean one.

        Parameters
        ----------
        frames : (m, ...) array-like
        solver : str, optional
            A name from :data:`kpcacli.preimage.SOLVERS`, or ``auto`` (the default): for frames,
            the solver that denoised held-back training frames best when the model was fitted
            (:mod:`kpcacli.preimage.choice`); for points, and for a model whose denoising was
            not measured, Mika's fixed point (Gaussian kernel) or the gradient solver (others).
            The fixed-point and gradient solvers start at the input.
        neighbours : int, optional
            M for solvers that use neighbours.

        Returns
        -------
        denoised : (m, *frame_shape) ndarray
            In the training frames' dtype.
        preimages : list of Preimage
            One per input; ``converged`` says whether each solve met its convergence test.
        """
        return denoise(self.state_, frames, solver, neighbours, self.progress, self._backend)

    # -- parameters to frames --------------------------------------------------------------
    def predict_codes(self, params, map: str | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """The codes (m, k) at parameter values `params` never seen, (m, p), by the map fitted
        with the model (`map`: ``thin-plate``, ``gaussian-process``, or by default the one the
        fit chose), and their standard deviations where the map gives them (else None)."""
        return predicted_codes(self.state_, params, map)

    def predict(self, params, map: str | None = None, solver: str | None = None, neighbours: int | None = None):
        """Frames (m, *frame_shape) at parameter values never seen: :meth:`predict_codes`, then
        :meth:`decode` (the model's default pre-image unless `solver` names another); the
        transport solver moves the training frames nearest in parameter space instead
        (:func:`kpcacli.estimators.parametric.predicted_frames`)."""
        return np.stack(list(predicted_frames(self.state_, params, map, solver, neighbours)))

    # -- persistence --------------------------------------------------------------------
    def save(self, location: str | os.PathLike) -> None:
        """Write the model atomically: one file, or a directory or URL (:mod:`kpcacli.modelfile`).
        Computes nothing; the model is then what the file holds (axes not stored: formed when needed)."""
        self.state_ = save_state(self.state_, location, progress=self.progress)

    @classmethod
    def load(cls, path: str | os.PathLike, progress: bool = False) -> FrameModel:
        """Read and validate a model written by :meth:`save` (or by kpca 0.1)."""
        return cls.from_state(load_state(path), progress=progress)

    @classmethod
    def from_state(cls, state: FittedState, progress: bool = False) -> FrameModel:
        """An estimator around a fitted state (its parameters are the state's)."""
        model = cls(**parameters_of(state), progress=progress)
        model.state_ = state
        return model
