"""Parallel work that holds up when the machine is shared.

OpenBLAS's own threads spin while they wait for work. Two processes each running a
multi-threaded BLAS on two cores (a pipeline, a test suite beside a fit, any numpy job) spin
against each other: a 1-second fit measured 30 s. So kpca keeps every BLAS at one thread
(threadpoolctl, which limits the libraries loaded at the time: the numpy and scipy OpenBLAS
builds are separate libraries, and scipy's loads lazily, so the limit is applied where the
work is) and parallelises the large passes itself, over blocks of pixel columns, on Python
threads that sleep while they wait. Decoding threads and these never run at the same time.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar

# Threads the current task may use, when it shares its process with other tasks: a Dask
# worker runs one task per worker thread, and each must stay on its own core.
_THREAD_BUDGET: ContextVar[int | None] = ContextVar("kpca_thread_budget", default=None)


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity, e.g. under taskset or a container),
    or fewer inside :func:`thread_budget`."""
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    budget = _THREAD_BUDGET.get()
    return min(cores, budget) if budget else cores


def decoder_threads() -> int:
    """Threads for an FFmpeg decoder: 0 (FFmpeg's own choice) unless a thread budget applies."""
    budget = _THREAD_BUDGET.get()
    return available_cores() if budget else 0


@contextlib.contextmanager
def thread_budget(threads: int) -> Iterator[None]:
    """Every pass inside the block (Gram, encoding, decoding, compression) uses at most
    `threads` threads, BLAS's included: for work that runs beside other tasks of its process."""
    token = _THREAD_BUDGET.set(max(1, int(threads)))
    try:
        with single_threaded_blas():
            yield
    finally:
        _THREAD_BUDGET.reset(token)


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Every BLAS loaded so far runs on the calling thread only, inside the block."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def run_partitioned(function: Callable[[int, int], object], workers: int) -> list:
    """``[function(w, workers) for w in range(workers)]`` on `workers` threads, BLAS single-threaded.

    Each call gets its index and the worker count, and works on its own share (for example
    every ``workers``-th block from its index): the partition, and so the order of every
    floating-point sum, depends only on `workers`, never on timing.
    """
    with single_threaded_blas():
        if workers <= 1:
            return [function(0, 1)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda index: function(index, workers), range(workers)))


def ordered_map(function: Callable, items: Iterable, workers: int) -> Iterator:
    """``map(function, items)`` on a thread pool, in order, at most ``2 * workers`` ahead."""
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        yield from map(function, items)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: deque = deque()
        iterator = iter(items)
        for item in iterator:
            pending.append(pool.submit(function, item))
            if len(pending) >= 2 * workers:
                break
        while pending:
            result = pending.popleft().result()  # the first failure, in input order, is raised
            for item in iterator:
                pending.append(pool.submit(function, item))
                break
            yield result
