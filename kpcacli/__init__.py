"""kpca: compress and reconstruct image sequences with kernel PCA.

The package's front, beside the estimators in layer 4 (docs/architecture.md): it re-exports
what a user imports and nothing else.

The library behind the ``kpca`` command. The main entry point is :class:`FrameModel`::

    from kpcacli import FrameModel
    model = FrameModel(kernel="rbf", n_components=3).fit(frames)   # (n, height, width) array
    codes = model.encode(new_frames)                               # (m, 3)
    images = model.decode(codes)                                   # (m, height, width)
    model.save("model.npz"); model = FrameModel.load("model.npz")

Everything a fitted model holds is ``model.state_`` (:class:`kpcacli.model.state.FittedState`).
Files in, model / codes / frames out: :mod:`kpcacli.workflows`. See docs/mathematics.md for the
mathematics (García-González et al. 2021) and docs/commands.md for the command line.
"""

from .utils.errors import InputError, KpcaError, ModelFileError, ParameterError
from .utils.version import __version__

# KernelPCA is left out of __all__: `from kpcacli import *` must not need scikit-learn.
__all__ = ["FittedState", "FrameModel", "InputError", "KpcaError", "ModelFileError", "ParameterError", "__version__"]


def __getattr__(name: str):
    # The estimators load numpy and the model's modules when first asked for, so that importing
    # the package (as the command line's entry does, kpcacli.cli.entry) loads nothing heavy.
    if name == "FrameModel":
        from .estimators.estimator import FrameModel

        return FrameModel
    if name == "FittedState":
        from .model.state import FittedState

        return FittedState
    # KernelPCA imports scikit-learn (about a second): only when asked for.
    if name == "KernelPCA":
        try:
            from .estimators.sklearn_estimator import KernelPCA
        except ModuleNotFoundError as error:
            if not (error.name or "").startswith("sklearn"):
                raise
            raise ImportError(
                "kpcacli.KernelPCA needs scikit-learn 1.6 or later, which is not installed: "
                "pip install 'kpcacli[sklearn]'"
            ) from None
        return KernelPCA
    raise AttributeError(f"module 'kpcacli' has no attribute {name!r}")
