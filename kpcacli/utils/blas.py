"""BLAS's threads, held. OpenBLAS's threads spin while they wait for work, so two processes
each running a multi-threaded BLAS on the same cores run many times slower than one alone
(:mod:`kpcacli.utils.parallel`): kpca holds every BLAS to one thread (:func:`single_threaded_blas`,
:func:`hold_blas_to_one_thread` before numpy loads) and gives BLAS the cores only for calls large
enough to pay for its pool (:func:`threads_for_blas`).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

from .cores import (
    BLAS_THREAD_VARIABLES,
    KPCA_THREAD_LIMITS,
    LIBRARY_LOADING,
    available_cores,
    caller_limit,
    environment_blas_limit,
    keep_caller_blas_limit,
    threadpool_controller,
)


def hold_blas_to_one_thread() -> None:
    """Every BLAS this process loads from now on starts with one thread: numpy's and scipy's
    OpenBLAS builds are separate libraries, and scipy's loads lazily, after a limit set on the
    libraries loaded at the time (threadpoolctl) was applied; it ran two threads beside the
    limited numpy. The command line calls this first, before numpy is imported. The limits
    the environment set before are kept in ``KPCA_THREAD_LIMITS``, for kpca's own threads and
    its large BLAS calls (:func:`threads_for_blas`)."""
    if KPCA_THREAD_LIMITS not in os.environ:
        before = {variable: os.environ.get(variable) for variable in BLAS_THREAD_VARIABLES}
        os.environ[KPCA_THREAD_LIMITS] = " ".join(f"{name}={value}" for name, value in before.items() if value)
    for variable in BLAS_THREAD_VARIABLES:
        os.environ[variable] = "1"


def blas_held_by_environment() -> bool:
    """Whether every BLAS this process loads starts on one thread (its environment says so)."""
    return all(os.environ.get(variable) == "1" for variable in BLAS_THREAD_VARIABLES)


# single_threaded_blas's holds in force in this process, and the limits to restore after the last.
_BLAS_HOLD = threading.Lock()
_blas_holders = 0
_blas_limits: list = []
_blas_limited: set = set()  # the controllers (sets of libraries) whose limit is in force


@contextlib.contextmanager
def single_threaded_blas(load_scipy: bool = True) -> Iterator[None]:
    """Every BLAS, numpy's and scipy's (loaded here if it was not, unless not `load_scipy`),
    runs on one thread inside the block.

    The limit is process-wide, and blocks may run at once on several threads (Dask's worker
    threads, a threaded grid search) and end in any order: the first block to start sets it
    and the last to end restores what was there before, where each restoring its own would
    leave the limit of whichever ended last. scipy is not loaded when the environment already
    starts every BLAS on one thread (:func:`hold_blas_to_one_thread`, as the command line
    does): its BLAS will start held whenever it loads, and a fit need not pay for loading a
    library it never uses."""
    global _blas_holders
    if load_scipy and not blas_held_by_environment():
        with LIBRARY_LOADING:  # loads scipy's own BLAS, so that the limit holds it too
            import scipy.linalg  # noqa: F401
    controller = threadpool_controller()
    with _BLAS_HOLD:
        if not _blas_holders:  # what the caller allowed BLAS, before kpca holds it to one thread
            keep_caller_blas_limit(caller_limit("blas"))
        if id(controller) not in _blas_limited:  # a library loaded since the last limit: held too
            _blas_limits.append(controller.limit(limits=1, user_api="blas"))
            _blas_limited.add(id(controller))
        _blas_holders += 1
    try:
        yield
    finally:
        with _BLAS_HOLD:
            _blas_holders -= 1
            if not _blas_holders:
                while _blas_limits:
                    _blas_limits.pop().restore_original_limits()
                _blas_limited.clear()
                keep_caller_blas_limit(None)


@contextlib.contextmanager
def blas_threads(threads: int, load_scipy: bool = True) -> Iterator[None]:
    """Every BLAS, numpy's and scipy's (loaded here if it was not, unless not `load_scipy`),
    runs on at most `threads` threads inside the block: for work that leaves its parallelism
    to BLAS."""
    if load_scipy:
        with LIBRARY_LOADING:  # loads scipy's own BLAS, so that the limit holds it too
            import scipy.linalg  # noqa: F401
    with threadpool_controller().limit(limits=max(1, int(threads)), user_api="blas"):
        yield


# A BLAS or LAPACK call of this many multiply-adds or more is worth BLAS's threads: it runs long
# enough that a pool's spinning and waiting at its barriers cost little, even beside other work
# on the cores, where many short calls on a threaded pool were many times slower (the
# measurements: docs/performance.md, "BLAS threads beside other work").
THREADED_BLAS_FROM = 1e9


@contextlib.contextmanager
def threads_for_blas(multiply_adds: float) -> Iterator[None]:
    """BLAS on the cores available (:func:`available_cores`, within a thread budget, at most
    :func:`environment_blas_limit` and a limit the caller set in the process,
    :func:`kpcacli.utils.cores.caller_limit`) for one call of about `multiply_adds` (an
    eigenproblem of order n: n³; a product of (m, n) and (n, c): m n c) from
    ``THREADED_BLAS_FROM``, on one thread below it. Never more threads than the caller
    allows: a grid search's workers (joblib's ``threadpool_limits``) keep theirs."""
    if multiply_adds < THREADED_BLAS_FROM:
        with single_threaded_blas():
            yield
        return
    limits = [available_cores(), environment_blas_limit(), caller_limit("blas")]
    with blas_threads(min(limit for limit in limits if limit)):
        yield
