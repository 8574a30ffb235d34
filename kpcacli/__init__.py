"""kpca: compress and reconstruct image sequences with kernel PCA.

The library behind the ``kpca`` command. The main entry point is :class:`KernelPCA`::

    from kpcacli import KernelPCA
    model = KernelPCA(kernel="rbf", n_components=3).fit(frames)   # (n, height, width) array
    codes = model.encode(new_frames)                               # (m, 3)
    images = model.decode(codes)                                   # (m, height, width)
    model.save("model.npz"); model = KernelPCA.load("model.npz")

See README.md for the mathematics (seed 000 equations) and the command line.
"""

from .errors import InputError, KpcaError, ModelFileError, ParameterError
from .model import KernelPCA, fit_sources

__version__ = "0.1.0"

__all__ = ["InputError", "KernelPCA", "KpcaError", "ModelFileError", "ParameterError", "fit_sources", "__version__"]
