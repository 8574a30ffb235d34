"""The cores kpca's own threads may use: the process's CPU affinity, at most what the
environment allows (``OMP_NUM_THREADS``, as scikit-learn and joblib's workers read it), and
fewer inside a thread budget (:func:`kpcacli.utils.parallel.thread_budget`); and the thread
variables of the environment as they were before kpca held BLAS to one thread
(:func:`kpcacli.utils.blas.hold_blas_to_one_thread`).
"""

from __future__ import annotations

import os
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
    limit = environment_thread_limit()
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
    threads, the store coded beside it) never together outnumber the cores."""
    import cv2

    cores = available_cores()
    if cv2.getNumThreads() != cores:
        cv2.setNumThreads(cores)
    return cv2
