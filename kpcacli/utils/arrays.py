"""Arrays of any library through the Python array API standard (array-api-compat): numpy by
default, CuPy or PyTorch on a GPU. The numerical core takes its namespace from its inputs
(:func:`namespace`), so the same code runs where the arrays are; what leaves it (a model file,
a code matrix written to disk) comes back to numpy (:func:`to_numpy`). A device named by the
user (``--device cuda``, ``FrameModel(device="cuda")``) becomes a namespace and a device here,
once (:func:`accelerator`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .errors import ParameterError, param

CPU = "cpu"


def namespace(*arrays):
    """The array-API namespace of `arrays` (array-api-compat's: numpy's own functions under
    the standard's names for numpy arrays)."""
    from array_api_compat import array_namespace

    return array_namespace(*arrays)


# The names of numpy's namespace and its wrappers: array-api-compat's, the copy scikit-learn
# vendors, and scikit-learn 1.6's own wrapper (named "numpy"). Compared whole, as
# array-api-compat's is_numpy_namespace does: "jax.numpy" ends with "numpy" and is not numpy.
NUMPY_NAMESPACES = frozenset({"numpy", "array_api_compat.numpy", "sklearn.externals.array_api_compat.numpy"})


def is_numpy(xp) -> bool:
    """Whether `xp` is numpy's namespace (numpy itself, or array-api-compat's or scikit-learn's
    wrapper of it)."""
    return xp is np or getattr(xp, "__name__", None) in NUMPY_NAMESPACES


def device_of(array):
    """The device `array` lives on (array-api-compat's ``device``)."""
    from array_api_compat import device

    return device(array)


def to_numpy(array) -> np.ndarray:
    """`array`, of any array library and on any device, as a numpy array (copied to the host
    when it lives elsewhere)."""
    if isinstance(array, np.ndarray):
        return array
    from array_api_compat import is_cupy_array, is_torch_array

    if is_cupy_array(array):
        return array.get()
    if is_torch_array(array):
        return array.detach().cpu().numpy()
    try:
        return np.from_dlpack(array)
    except (BufferError, RuntimeError, TypeError, ValueError):  # not on the host: move it first
        xp = namespace(array)
        host = xp.Device("CPU_DEVICE") if hasattr(xp, "Device") else CPU
        return np.from_dlpack(array.to_device(host))


def on_host(values):
    """`values` as numpy when they are another array library's (CuPy, PyTorch, ...: copied to
    the host); anything else (numpy arrays, memory maps, lists) as given. PyTorch's tensors
    have no ``__array_namespace__``: array-api-compat tells them."""
    if isinstance(values, np.ndarray):
        return values
    from array_api_compat import is_cupy_array, is_torch_array

    if hasattr(values, "__array_namespace__") or is_torch_array(values) or is_cupy_array(values):
        return to_numpy(values)
    return values


def from_numpy(array: np.ndarray, xp, device=None):
    """`array` in namespace `xp` on `device` (None: the namespace's default): the one way a
    numpy array enters another library. A read-only one (a memory-mapped frame store, a
    loaded model's arrays) is taken as it is: PyTorch warns that it cannot mark its tensor
    read-only, but nothing here writes into an array it was given, and on a GPU it is a copy;
    copying it on the host first would only double the bytes a send moves."""
    if is_numpy(xp):
        return array
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable", category=UserWarning)
        return xp.asarray(array, device=device)


@dataclass(frozen=True)
class Accelerator:
    """Where the passes that are array algebra run when a device is named: the user's name for
    it (``cuda``, ``cuda:1``), its array namespace and the namespace's device object."""

    name: str
    xp: object
    device: object


def free_device_memory(on: Accelerator) -> int | None:
    """Bytes free on the device of `on`: CuPy's or PyTorch's count, with the blocks their
    memory pools hold free, None for a library that does not tell (the array API has no
    such query, and PyTorch's host memory: its counts are its GPUs')."""
    library = getattr(on.xp, "__name__", "")
    if "cupy" in library:
        import cupy

        with on.device:
            return int(cupy.cuda.runtime.memGetInfo()[0] + cupy.get_default_memory_pool().free_bytes())
    if "torch" in library and getattr(on.device, "type", None) == "cuda":
        import torch

        cached = torch.cuda.memory_reserved(on.device) - torch.cuda.memory_allocated(on.device)
        return int(torch.cuda.mem_get_info(on.device)[0] + cached)
    return None


def accelerator(name: str | None) -> Accelerator | None:
    """The accelerator a user's device name means: None or ``cpu``, none (numpy, this
    process's cores); ``cuda`` or ``cuda:N``, that GPU through CuPy (``pip install
    "kpcacli[gpu]"``), else through PyTorch when it was built with CUDA. A
    :class:`kpcacli.utils.errors.ParameterError` (one line: what to install) when neither is
    there, or when no such GPU is."""
    if name is None or name == CPU:
        return None
    if not isinstance(name, str) or not (name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit())):
        raise ParameterError(f"{param('device')} must be cpu, cuda or cuda:N. Got {name!r} instead.")
    return _gpu(name, int(name[5:]) if ":" in name else 0)


def _gpu(name: str, index: int) -> Accelerator:
    """GPU `index` through CuPy, else through a CUDA PyTorch; refused in one line without."""
    try:
        import cupy
        from array_api_compat import cupy as xp

        if cupy.cuda.runtime.getDeviceCount() > index:
            return Accelerator(name, xp, cupy.cuda.Device(index))
    except (ImportError, RuntimeError):  # CuPy absent, or without a driver (CUDARuntimeError): try PyTorch
        pass
    try:
        import torch
        from array_api_compat import torch as xp

        if torch.cuda.is_available() and torch.cuda.device_count() > index:
            return Accelerator(name, xp, torch.device(name))
    except ImportError:
        pass
    raise ParameterError(
        f"{param('device')} {name} needs an NVIDIA GPU and CuPy (pip install 'kpcacli[gpu]') or a CUDA build of "
        "PyTorch; neither found one"
    )
