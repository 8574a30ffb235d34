"""kpca: compress and reconstruct image sequences with kernel PCA.

The library behind the ``kpca`` command. The main entry point is :class:`KernelPCA`::

    from kpcacli import KernelPCA
    model = KernelPCA(kernel="rbf", n_components=3).fit(frames)   # (n, height, width) array
    codes = model.encode(new_frames)                               # (m, 3)
    images = model.decode(codes)                                   # (m, height, width)
    model.save("model.npz"); model = KernelPCA.load("model.npz")

Everything a fitted model holds is ``model.state_`` (:class:`kpcacli.state.FittedState`).
Files in, model / codes / frames out: :mod:`kpcacli.workflows`. See docs/mathematics.md for the
mathematics (García-González et al. 2021) and docs/commands.md for the command line.
"""

from .errors import InputError, KpcaError, ModelFileError, ParameterError
from .estimator import KernelPCA
from .state import FittedState
from .version import __version__

__all__ = ["FittedState", "InputError", "KernelPCA", "KpcaError", "ModelFileError", "ParameterError", "__version__"]
