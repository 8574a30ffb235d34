"""Parallel work that holds up when the machine is shared.

OpenBLAS's own threads spin while they wait for work. Two processes each running a
multi-threaded BLAS on two cores (a pipeline, a test suite beside a fit, any numpy job) spin
against each other, many times slower than one alone. So kpca keeps every BLAS at one thread
(threadpoolctl, which limits the libraries loaded at the time: the numpy and scipy OpenBLAS
builds are separate libraries, and scipy's loads lazily, so the limit is applied where the
work is) and parallelises the large passes itself, over blocks of pixel columns, on Python
threads that sleep while they wait. Decoding threads and these never run at the same time.
"""

from __future__ import annotations

import contextlib
import contextvars
import queue
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait

from .blas import single_threaded_blas
from .cores import THREAD_BUDGET, within_budget

# Set on a thread while it closes an iterator through `joined`: the ordered_map pools closed
# then wait for their threads (see ordered_map on why a close by the garbage collector must not).
_JOINING = threading.local()


@contextlib.contextmanager
def thread_budget(threads: int | Callable[[], int], blas: bool = True) -> Iterator[None]:
    """Every pass inside the block (Gram, encoding, decoding, compression) uses at most
    `threads` threads of kpca's own, and BLAS one thread unless not `blas`: for work that runs
    beside other work of its process. `threads` may be a function, asked as each pass starts
    (the cores that work beside it leaves free, as it finishes). Work that calls no BLAS
    passes ``blas=False``, and need not load scipy's; blocks on several threads at once are
    safe either way (:func:`single_threaded_blas`)."""
    token = THREAD_BUDGET.set(threads if callable(threads) else max(1, int(threads)))
    try:
        with single_threaded_blas() if blas else contextlib.nullcontext():
            yield
    finally:
        THREAD_BUDGET.reset(token)


# How often map_as_cores_allow asks whether a core is free for its next job.
CORE_POLL_SECONDS = 0.01


def map_as_cores_allow(function: Callable, items: Iterable) -> list:
    """``[function(item) for item in items]``, each item on a thread of its own with one core
    (:func:`thread_budget` of 1), as many at once as the cores this block may use allow, asked
    as each starts (a budget that grows as work beside it ends); the
    results in the items' order. For independent jobs whose bytes do not depend on the threads
    (each runs as it would alone). The first failure is raised and the jobs not started are
    dropped."""
    items = list(items)
    outer = THREAD_BUDGET.get()
    if len(items) <= 1 or (not callable(outer) and within_budget(outer) < 2):
        return [function(item) for item in items]

    def job(item):
        with thread_budget(1):
            return function(item)

    pool = ThreadPoolExecutor(max_workers=within_budget(None))
    futures: list[Future] = []
    try:
        running: set = set()
        while len(futures) < len(items) or running:
            while len(futures) < len(items) and len(running) < within_budget(outer):
                future = submit_uninterrupted(pool, contextvars.copy_context().run, job, items[len(futures)])
                futures.append(future)
                running.add(future)
            done, running = wait(running, timeout=CORE_POLL_SECONDS, return_when=FIRST_EXCEPTION)
            for future in done:
                future.result()  # the first failure, raised here
        return [future.result() for future in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


_INTERRUPTS = {signal.SIGINT, signal.SIGTERM}


def submit_uninterrupted(pool: ThreadPoolExecutor, function: Callable, *args) -> Future:
    """``pool.submit(function, *args)`` with Ctrl-C and SIGTERM held until it returns.

    Submitting may start a thread, and an interrupt raised while the pool waits for it to
    start left that thread outside the pool's list: ``shutdown(wait=True)`` did not join it,
    and it went on with its share after the pass had stopped (seen: a Gram share running on
    after Ctrl-C). Held, the interrupt is raised at the caller's next step instead, where the
    pool knows all its threads. Threads inherit the mask, so the main thread receives them."""
    held = threading.current_thread() is threading.main_thread()
    if held:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS)
    try:
        return pool.submit(function, *args)
    finally:
        if held:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


# The stop signal of the run_partitioned pass the current thread works for.
_PASS = threading.local()


class Stopped(Exception):
    """Raised in a worker thread by :func:`until_stopped` once its pass was stopped."""


def until_stopped(items: Iterable) -> Iterator:
    """`items`, one at a time, until the :func:`run_partitioned` pass this thread works for is
    stopped (Ctrl-C or SIGTERM in the main thread, or another share's failure): a share loops
    over its blocks through this, so that an interrupt acts after the block in hand, not after
    the whole share."""
    stop = getattr(_PASS, "stop", None)
    for item in items:
        if stop is not None and stop.is_set():
            raise Stopped
        yield item


def run_partitioned(function: Callable[[int, int], object], workers: int) -> list:
    """``[function(w, workers) for w in range(workers)]`` on `workers` threads, BLAS single-threaded.

    Each call gets its index and the worker count, and works on its own share (for example
    every ``workers``-th block from its index, looped over with :func:`until_stopped`): the
    partition, and so the order of every floating-point sum, depends only on `workers`, never
    on timing. An interrupt or a failure stops every share at its next block.
    """
    with single_threaded_blas():
        if workers <= 1:
            return [function(0, 1)]
        stop = threading.Event()

        def share(index: int):
            _PASS.stop = stop
            try:
                return function(index, workers)
            finally:
                _PASS.stop = None

        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            futures = [submit_uninterrupted(pool, share, index) for index in range(workers)]
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            failures = [future.exception() for future in done if future.exception() is not None]
            if failures:  # a failing share stops the others at their next block
                raise failures[0]
            return [future.result() for future in futures]
        except BaseException:
            stop.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def ordered_map(function: Callable, items: Iterable, workers: int) -> Iterator:
    """``map(function, items)`` on a thread pool, in order, at most ``2 * workers`` ahead (`items`
    may be a generator: it is drawn from as results are taken, never all at once); on an
    interrupt or a failure the items not yet started are dropped, not run."""
    if workers <= 1:
        yield from map(function, items)
        return
    pool = ThreadPoolExecutor(max_workers=workers)
    wait = True
    try:
        pending: deque = deque()
        iterator = iter(items)
        for item in iterator:
            pending.append(submit_uninterrupted(pool, function, item))
            if len(pending) >= 2 * workers:
                break
        while pending:
            result = pending.popleft().result()  # the first failure, in input order, is raised
            for item in iterator:
                pending.append(submit_uninterrupted(pool, function, item))
                break
            yield result
    except GeneratorExit:
        # Closed. By `joined` (the consumer stopped: an error, an interrupt, enough frames), the
        # threads are waited for, so that no reader still holds a file open when the error
        # reaches the user. Otherwise abandoned and collected by the garbage collector, which
        # may run on any thread at any point, even inside threading's own bookkeeping while a
        # new thread starts; a join there waited for a lock that thread held (a test run hung):
        # the started items finish on their own.
        wait = getattr(_JOINING, "active", False)
        raise
    finally:
        pool.shutdown(wait=wait, cancel_futures=True)


@contextlib.contextmanager
def joined(items: Iterable) -> Iterator:
    """``contextlib.closing`` for a stream whose items threads make (:func:`ordered_map`, and
    the generators built on it, such as :func:`kpcacli.io.sources.iter_frames`): when the
    block ends, normally or by an error, the stream is closed and its threads are joined
    before the block's error goes on, so that no file stays open behind it."""
    try:
        yield items
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            _JOINING.active = True
            try:
                close()
            finally:
                _JOINING.active = False


_DONE = object()  # the end of run_ahead's items


def run_ahead(items: Iterable, depth: int = 2) -> Iterator:
    """`items`, made on a thread of their own up to `depth` ahead of the caller: the two stages
    of a pipeline (making frames, then encoding and writing them) run at once, so the slower
    sets the pace instead of the sum of both.

    An error of `items` is raised in the caller at the item it replaced. When the caller stops
    (an error of its own, an interrupt, closing the generator), the maker stops after the item
    in hand; it is not waited for (see :func:`ordered_map` on why an abandoned generator must
    not join a thread)."""
    slots: queue.Queue = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def make() -> None:
        iterator = iter(items)
        try:
            for item in iterator:
                if not _offer(slots, (item, None), stop):
                    return
            _offer(slots, (_DONE, None), stop)
        except BaseException as error:  # handed to the caller, raised there
            _offer(slots, (_DONE, error), stop)
        finally:
            getattr(iterator, "close", lambda: None)()  # a generator's own clean-up runs here, now

    # The maker runs in the caller's context: a thread budget (thread_budget) holds there too.
    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(make,), name="kpca-run-ahead", daemon=True).start()
    try:
        while True:
            item, error = slots.get()
            if error is not None:
                raise error
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()


def _offer(slots: queue.Queue, entry: tuple, stop: threading.Event) -> bool:
    """Put `entry` in `slots` once there is room, unless `stop` is set first; whether it was put."""
    while not stop.is_set():
        try:
            slots.put(entry, timeout=0.1)
            return True
        except queue.Full:
            continue
    return False
