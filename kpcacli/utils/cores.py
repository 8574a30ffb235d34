"""The cores kpca's own threads may use: the process's CPU affinity, at most what the
environment allows (``OMP_NUM_THREADS``, as scikit-learn and joblib's workers read it) and
what a limit set in the process allows (threadpoolctl's ``threadpool_limits``, as joblib sets
it in a grid search's workers: :func:`caller_limit`), and fewer inside a thread budget
(:func:`kpcacli.utils.parallel.thread_budget`); and the thread variables of the environment as
they were before kpca held BLAS to one thread (:func:`kpcacli.utils.blas.hold_blas_to_one_thread`).

As the environment's variables do, a process limit on OpenMP (``user_api="openmp"``) bounds
kpca's own threads, and one on BLAS bounds BLAS's: ``threadpool_limits(1)`` sets both.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from contextvars import ContextVar

# Threads the current task may use, when it shares its process with other tasks: a Dask
# worker runs one task per worker thread, and each must stay on its own core.
THREAD_BUDGET: ContextVar[int | Callable[[], int] | None] = ContextVar("kpca_thread_budget", default=None)


def available_cores() -> int:
    """Cores this process may run on: its CPU affinity (e.g. under taskset or a container),
    at most the environment's thread limit (:func:`environment_thread_limit`), and fewer
    inside :func:`kpcacli.utils.parallel.thread_budget`."""
    return within_budget(THREAD_BUDGET.get())


def within_budget(budget: int | Callable[[], int] | None) -> int:
    """:func:`available_cores` under the thread budget `budget` (a number, a function asked
    now, or None)."""
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    for limit in (environment_thread_limit(), caller_limit("openmp")):
        if limit:
            cores = min(cores, limit)
    if callable(budget):
        budget = max(1, int(budget()))
    return min(cores, budget) if budget else cores


BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# Set when kpca set the BLAS thread variables itself (hold_blas_to_one_thread), which then hold
# BLAS's pool, not the process, to one thread: the values they had before, as "NAME=VALUE"
# pairs separated by spaces (none: ""), which the processes kpca starts inherit with them.
KPCA_THREAD_LIMITS = "KPCA_THREAD_LIMITS"
# Every variable that sets how many threads kpca and its BLAS may use.
THREAD_VARIABLES = (*BLAS_THREAD_VARIABLES, KPCA_THREAD_LIMITS)


def _environment(variable: str) -> str | None:
    """`variable` as the environment set it, before kpca held BLAS to one thread."""
    held = os.environ.get(KPCA_THREAD_LIMITS)
    if held is None:
        return os.environ.get(variable)
    return dict(pair.split("=", 1) for pair in held.split()).get(variable)


def _positive(value: str | None) -> int | None:
    try:
        limit = int(value or "")
    except ValueError:
        return None
    return limit if limit >= 1 else None


def environment_thread_limit() -> int | None:
    """The threads the environment allows this process: ``OMP_NUM_THREADS``, as scikit-learn's
    own parallel code reads it, and as joblib sets it in each of its worker processes (the
    cores divided by ``n_jobs``: a grid search's workers share the cores instead of each
    taking them all). None where it is unset, not a positive integer, or was set by kpca
    itself to hold BLAS alone."""
    return _positive(_environment("OMP_NUM_THREADS"))


def environment_blas_limit() -> int | None:
    """The threads the environment allows BLAS: the least of the BLAS thread variables it set
    (:data:`BLAS_THREAD_VARIABLES`: a test run's, a joblib worker's), None where it set none."""
    limits = [_positive(_environment(variable)) for variable in BLAS_THREAD_VARIABLES]
    return min((limit for limit in limits if limit), default=None)


def decoder_threads() -> int:
    """Threads for an FFmpeg decoder: 0 (FFmpeg's own choice) unless a thread budget applies."""
    budget = THREAD_BUDGET.get()
    return available_cores() if budget else 0


def opencv():
    """OpenCV, imported on first use (the transport pre-image's flows and warps, video range
    stretched to full), its thread pool held to the cores this pass may use
    (:func:`available_cores`), so that it and kpca's own threads beside it (a fit's decoder
    threads, the store coded beside it) never together outnumber the cores. Imported under
    ``LIBRARY_LOADING``: the solver choice's folds decode on several threads at once."""
    with LIBRARY_LOADING:
        import cv2

    cores = available_cores()
    if cv2.getNumThreads() != cores:
        cv2.setNumThreads(cores)
    return cv2


# The modules that bring a thread pool of their own when they load: numpy's OpenBLAS (the
# command line loads it after it held BLAS to one thread), scipy's, OpenCV's (the transport
# solver's optical flow) and scikit-learn's OpenMP, which a controller made before them would
# not see.
THREADPOOL_MODULES = ("numpy", "scipy.linalg", "cv2", "sklearn")
_CONTROLLERS: dict[tuple[bool, ...], object] = {}
# Finding the loaded libraries (threadpoolctl walks them with dl_iterate_phdr, the dynamic
# loader's lock held, calling back into Python) and loading one (an extension module's dlopen,
# the GIL held) deadlock when two threads do them at once: one waits for the GIL, the other for
# the loader (seen with the solver choice's folds, one importing OpenCV while another made a
# controller). kpca does both under this lock: the controllers made here, the libraries its
# threads load on first use (:func:`opencv`, :func:`kpcacli.utils.blas.single_threaded_blas`).
LIBRARY_LOADING = threading.RLock()


def threadpool_controller(refresh: bool = True):
    """threadpoolctl's view of the thread pools loaded (BLAS, OpenMP), made once for each set of
    the ``THREADPOOL_MODULES`` loaded (under ``LIBRARY_LOADING``): finding the libraries is
    slow beside setting or reading a limit through a kept controller, and a solver sets one at
    every step of its descent. Not `refresh`: the latest made, for reading a limit (a library
    loaded since is missed), made only when there is none."""
    from threadpoolctl import ThreadpoolController

    key = tuple(_loaded(name) for name in THREADPOOL_MODULES)
    if key in _CONTROLLERS or (not refresh and _CONTROLLERS):
        return _CONTROLLERS[key] if key in _CONTROLLERS else next(reversed(_CONTROLLERS.values()))
    with LIBRARY_LOADING:
        if key not in _CONTROLLERS:
            _CONTROLLERS[key] = ThreadpoolController()
        return _CONTROLLERS[key]


def _loaded(name: str) -> bool:
    """Whether the module `name` is imported, its import finished (a module being imported is
    in ``sys.modules`` already, its libraries perhaps half loaded)."""
    module = sys.modules.get(name)
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


# While kpca holds BLAS to one thread (kpcacli.utils.blas.single_threaded_blas), BLAS reads 1:
# the threads it had before, what the caller allowed, are kept here for that time.
_CALLER_BLAS = threading.Lock()
_caller_blas: list[int | None] = []


def keep_caller_blas_limit(threads: int | None) -> None:
    """Keep `threads`, BLAS's threads before kpca's hold on it began; None when the hold ends."""
    with _CALLER_BLAS:
        _caller_blas[:] = [] if threads is None else [threads]


def caller_limit(user_api: str) -> int | None:
    """The threads this process allows `user_api` (``"blas"`` or ``"openmp"``), as the loaded
    libraries say: a caller's ``threadpoolctl.threadpool_limits`` (scikit-learn's and joblib's
    users set it), or their pool's size. BLAS's as it was before kpca held it to one thread.
    None where no such library is loaded, or where kpca's command line set the environment's
    thread variables itself (the limits are then the environment's, ``KPCA_THREAD_LIMITS``)."""
    if KPCA_THREAD_LIMITS in os.environ or "numpy" not in sys.modules:
        return None
    if user_api == "blas":
        with _CALLER_BLAS:
            if _caller_blas:
                return _caller_blas[0]
    controller = threadpool_controller(refresh=False)  # reading: no new search of the libraries
    counts = [int(info["num_threads"]) for info in controller.select(user_api=user_api).info()]
    return min(counts, default=None)
