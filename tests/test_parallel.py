"""Threads and interrupts (kpcacli.utils.parallel): Ctrl-C acts after the block in hand in a threaded pass,
every BLAS kpca loads runs one thread, and eval's time projection holds when the machine
becomes busy."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import kpcacli.numerics.gram
import kpcacli.utils.cores
import kpcacli.utils.parallel
from kpcacli.numerics.gram import linear_gram
from kpcacli.utils.budgets import BUDGETS
from kpcacli.utils.cores import BLAS_THREAD_VARIABLES, THREAD_VARIABLES
from kpcacli.utils.parallel import run_partitioned, until_stopped


def test_ctrl_c_stops_the_gram_pass_at_the_next_block(monkeypatch):
    """Each thread finished its whole share of the Gram before the interrupt took effect (12 s
    on 792 frames of 720p); it now ends the block in hand and starts no other. Counted, not
    timed: the third block sends Ctrl-C to the main thread and holds its thread until the pass
    is stopped, and every block records whether the pass was stopped when it ended. Once
    stopped, each of the two threads ends at most the block in hand.

    Ctrl-C raises KeyboardInterrupt here whatever the test run inherited: a shell that starts
    a job in the background starts it with SIGINT ignored, and Python keeps that (the pass then
    waited for an interrupt that never came)."""
    float_block = kpcacli.numerics.gram.float_block
    main = threading.main_thread().ident
    started, ended_after_stop = [], []
    counting = threading.Lock()

    def counted_block(*args):
        stop = kpcacli.utils.parallel._PASS.stop  # this thread's pass
        with counting:  # two threads count: exactly one of them sees the third block
            started.append(None)
            third = len(started) == 3
        if third:
            signal.pthread_kill(main, signal.SIGINT)
            assert stop.wait(600), "the interrupt never stopped the pass"
        result = float_block(*args)
        ended_after_stop.append(stop.is_set())
        return result

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    monkeypatch.setattr(kpcacli.numerics.gram, "float_block", counted_block)
    monkeypatch.setattr(BUDGETS, "gram_block", 1)  # the narrowest blocks: 256 columns
    frames = np.random.default_rng(0).integers(0, 256, (8, 256 * 200), dtype=np.uint8)
    try:
        with pytest.raises(KeyboardInterrupt):
            linear_gram(frames, workers=2)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert 1 <= sum(ended_after_stop) <= 2, ended_after_stop
    assert len(started) < 200


def test_a_failing_share_stops_the_others():
    """The other share ends the block in hand and starts no other. Counted, not timed: share 0
    holds its second block until share 1 has failed and the pass is stopped."""
    failed = threading.Event()
    ended = []

    def share(index, count):
        stop = kpcacli.utils.parallel._PASS.stop
        for block in until_stopped(range(100)):
            if index == 1 and block == 2:
                failed.set()
                raise ValueError("broken block")
            if index == 0 and block == 1:
                assert failed.wait(600) and stop.wait(600), "the failure never stopped the pass"
            if index == 0:
                ended.append(block)
        return index

    with pytest.raises(ValueError, match="broken block"):
        run_partitioned(share, 2)
    assert ended == [0, 1]
    assert run_partitioned(lambda index, count: index * 10, 3) == [0, 10, 20]


@pytest.mark.slow  # fresh Python processes, as the other real-process tests
@pytest.mark.parametrize("held", [False, True])
def test_every_blas_the_command_line_loads_runs_one_thread(held):
    """scipy's OpenBLAS is a library of its own, loaded after the command line limited the
    ones loaded at its start: it ran two threads. Measured in a fresh process, without the
    test run's own one-thread variables."""
    environment = {key: value for key, value in os.environ.items() if key not in THREAD_VARIABLES}
    script = (
        "import threadpoolctl\n"
        "from kpcacli.utils.blas import hold_blas_to_one_thread, single_threaded_blas\n"
        f"hold = {held}\n"
        "if hold:\n"
        "    hold_blas_to_one_thread()\n"
        "with single_threaded_blas(load_scipy=False):\n"
        "    import scipy.linalg\n"
        "    print(sorted(i['num_threads'] for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas'))\n"
    )
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment, check=True)
    threads = eval(shown.stdout)
    assert len(threads) >= 2  # numpy's and scipy's
    if held:
        assert threads == [1] * len(threads)
    elif (os.cpu_count() or 1) >= 2:
        assert max(threads) > 1  # the library loaded late is not held by the limit alone
    with_scipy = script.replace("load_scipy=False", "load_scipy=True").replace("hold = True", "hold = False")
    shown = subprocess.run([sys.executable, "-c", with_scipy], capture_output=True, text=True, env=environment)
    assert eval(shown.stdout) == [1] * len(threads)  # single_threaded_blas loads scipy's, then holds it


def test_eval_leaves_out_a_solver_that_slows_down_after_its_second_solve(monkeypatch):
    """The projection is renewed after every solve: a machine that becomes busy after the
    second solve no longer runs a solver to the end (51.5 s where 10 were allowed)."""
    from kpcacli.workflows.evaluation import _solve_all

    clock = [0.0]
    monkeypatch.setattr("kpcacli.workflows.evaluation.time.perf_counter", lambda: clock[0])

    class Slowing:  # a prepared solver whose solves take 0.01 s, then 1 s from the third on
        solves = 0

        def preimage(self, state, code):
            Slowing.solves += 1
            clock[0] += 0.01 if Slowing.solves <= 2 else 1.0
            return None

    method, reason = _solve_all("slowing", None, np.zeros((20, 3)), Slowing(), 10.0, False)
    assert method is None and "it would take about" in reason
    assert Slowing.solves < 6  # stopped soon after it slowed, not after 20 solves (18 s)


def test_an_abandoned_ordered_map_does_not_wait_for_its_threads():
    """Closing (or collecting) an ordered_map part-way returns at once: the garbage collector
    may finalise it on any thread, even one that is starting and holds threading's own locks,
    where waiting for the pool's threads hung a test run. Started items finish on their own."""
    from kpcacli.utils.parallel import ordered_map

    release = threading.Event()
    finished = []

    def work(item):
        if item > 0:
            release.wait(600)
            finished.append(item)
        return item

    results = ordered_map(work, range(6), 2)
    assert next(results) == 0
    results.close()  # items 1 and 2 are running, blocked until released: close did not wait for them
    assert finished == []
    release.set()


def test_ordered_map_draws_from_a_generator_as_it_goes():
    """ordered_map keeps at most 2 x workers items ahead of its caller: a generator of frames
    is never drawn into memory at once (a long decode would hold every frame)."""
    from kpcacli.utils.parallel import ordered_map

    drawn = []

    def items():
        for item in range(100):
            drawn.append(item)
            yield item

    results = ordered_map(lambda item: item * item, items(), 2)
    assert [next(results) for _ in range(3)] == [0, 1, 4]
    assert len(drawn) <= 3 + 2 * 2
    assert list(results) == [item * item for item in range(3, 100)]


def test_run_ahead_makes_items_on_another_thread_in_order_and_bounded():
    from kpcacli.utils.parallel import run_ahead

    makers, made = set(), []

    def items():
        for item in range(50):
            makers.add(threading.get_ident())
            made.append(item)
            yield item

    ahead = run_ahead(items(), depth=2)
    assert next(ahead) == 0
    time.sleep(0.3)  # the maker fills its slots, then waits
    assert len(made) <= 1 + 2 + 1  # taken, queued, and the one waiting for a slot
    assert list(ahead) == list(range(1, 50))
    assert makers and threading.get_ident() not in makers


def test_run_ahead_raises_the_makers_error_at_its_place():
    from kpcacli.utils.parallel import run_ahead

    def items():
        yield 1
        yield 2
        raise ValueError("frame 2 is damaged")

    ahead = run_ahead(items())
    assert [next(ahead), next(ahead)] == [1, 2]
    with pytest.raises(ValueError, match="frame 2 is damaged"):
        next(ahead)


def test_a_stopped_run_ahead_stops_its_maker_and_closes_it():
    """When the caller stops (an encoder failed, Ctrl-C), the maker stops after the item in
    hand and its own clean-up (a generator's finally: closing a decoder) runs."""
    from kpcacli.utils.parallel import run_ahead

    closed = threading.Event()
    made = []

    def items():
        try:
            for item in range(1000):
                made.append(item)
                yield item
        finally:
            closed.set()

    ahead = run_ahead(items(), depth=1)
    assert next(ahead) == 0
    ahead.close()
    assert closed.wait(600)
    assert len(made) <= 3


def test_run_ahead_keeps_the_callers_thread_budget():
    """A decode inside a Dask task runs within the task's thread budget; the thread making its
    frames must see that budget too, or it would use every core beside the other tasks."""
    from kpcacli.utils.cores import available_cores
    from kpcacli.utils.parallel import run_ahead, thread_budget

    def cores():
        yield available_cores()

    with thread_budget(1):
        assert list(run_ahead(cores())) == [1]


def test_blas_holds_ended_out_of_order_restore_the_limit_before_them():
    """Two holds on one thread's BLAS limit, ended in the order they began (as two Dask worker
    threads, or a threaded grid search, may end them): the first to end restored the limit it
    found (two threads) while the other still ran, and the last left one thread for good. In a
    fresh process whose BLAS starts on two threads."""
    environment = {key: value for key, value in os.environ.items() if key not in THREAD_VARIABLES}
    environment["OPENBLAS_NUM_THREADS"] = "2"
    script = (
        "import threadpoolctl\n"
        "from kpcacli.utils.blas import single_threaded_blas\n"
        "def threads():\n"
        "    return sorted({i['num_threads'] for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas'})\n"
        "import scipy.linalg\n"
        "before = threads()\n"
        "first, second = single_threaded_blas(), single_threaded_blas()\n"
        "first.__enter__(); second.__enter__()\n"
        "inside = threads()\n"
        "first.__exit__(None, None, None)\n"
        "one_left = threads()\n"
        "second.__exit__(None, None, None)\n"
        "print([before, inside, one_left, threads()])\n"
    )
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment, check=True)
    before, inside, one_left, after = eval(shown.stdout)
    assert before == [2]
    assert inside == one_left == [1]  # held while either hold lasts
    assert after == before


def test_kpcas_threads_are_the_environments_share_and_not_its_own_blas_limit(monkeypatch):
    """OMP_NUM_THREADS bounds kpca's own threads, as it bounds scikit-learn's and as joblib sets
    it in each worker (a grid search's two workers each took every core), and the BLAS
    variables bound the threads of kpca's large BLAS calls; the limits kpca sets to hold BLAS
    to one thread bound nothing else, in its process or those it starts."""
    from kpcacli.utils.blas import hold_blas_to_one_thread
    from kpcacli.utils.cores import available_cores, environment_blas_limit, environment_thread_limit

    for variable in THREAD_VARIABLES:
        monkeypatch.setenv(variable, "")  # recorded as it was, so that what the hold sets is undone
        monkeypatch.delenv(variable)
    cores = available_cores()
    assert environment_thread_limit() is None and environment_blas_limit() is None
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert environment_thread_limit() == 1 and available_cores() == 1 and environment_blas_limit() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "not a number")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert environment_thread_limit() is None and available_cores() == cores and environment_blas_limit() == 2
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    hold_blas_to_one_thread()  # no limit before: BLAS held, kpca's threads not
    assert [os.environ[variable] for variable in BLAS_THREAD_VARIABLES] == ["1"] * 3
    assert environment_thread_limit() is None and environment_blas_limit() is None and available_cores() == cores
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setenv("MKL_NUM_THREADS", "2")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    monkeypatch.delenv("KPCA_THREAD_LIMITS")
    hold_blas_to_one_thread()  # limits before: kept for kpca's threads and large BLAS calls
    assert os.environ["OMP_NUM_THREADS"] == "1" and environment_thread_limit() == 3
    assert environment_blas_limit() == 2 and available_cores() == min(cores, 3)
    hold_blas_to_one_thread()  # again, as a process kpca starts does: what it held stays held
    assert environment_thread_limit() == 3 and environment_blas_limit() == 2


# For a script run in a fresh process: the most threads any BLAS loaded runs now.
BLAS_THREADS = (
    "import threadpoolctl\n"
    "def blas_threads():\n"
    "    return max(i['num_threads'] for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas')\n"
)


def environment_without_thread_variables() -> dict:
    """This process's environment less every variable that sets threads, for a fresh process."""
    return {key: value for key, value in os.environ.items() if key not in THREAD_VARIABLES}


@pytest.mark.slow  # fresh Python processes, as the other real-process tests
def test_only_a_large_blas_call_runs_on_blas_threads():
    """Many short BLAS calls on a threaded pool beside other work on the cores were many times
    slower than on one thread; one long call is faster on the pool, beside such work too
    (measured in kpcacli.utils.parallel). Below THREADED_BLAS_FROM multiply-adds, one thread;
    from it, the cores available, at most the environment's BLAS limit. In a fresh process
    whose BLAS starts on one thread, held as the command line holds it, and whose environment
    allows two."""
    environment = environment_without_thread_variables()
    script = (
        "from kpcacli.utils.blas import hold_blas_to_one_thread\n"
        "hold_blas_to_one_thread()\n"
        + BLAS_THREADS
        + "from kpcacli.utils.blas import THREADED_BLAS_FROM, threads_for_blas\n"
        "from kpcacli.utils.cores import available_cores\n"
        "import scipy.linalg\n"
        "threadpoolctl.threadpool_limits(1)\n"
        "shown = []\n"
        "for work in (THREADED_BLAS_FROM / 2, THREADED_BLAS_FROM):\n"
        "    with threads_for_blas(work):\n"
        "        shown.append(blas_threads())\n"
        "print([available_cores(), *shown, blas_threads()])\n"
    )
    for limit in ("2", "1"):
        shown = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            env={**environment, "OPENBLAS_NUM_THREADS": limit},
            check=True,
        )
        cores, small, large, after = eval(shown.stdout)
        assert small == 1 and after == 1
        assert large == min(cores, int(limit))


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a limit below the cores needs two")
def test_a_limit_the_caller_sets_in_the_process_bounds_kpcas_threads_and_blas():
    """threadpoolctl's threadpool_limits(1), as joblib sets it in a grid search's workers: no
    large BLAS call of kpca's runs more than one thread, and neither do kpca's own passes
    (OpenMP's limit, as OMP_NUM_THREADS); a limit on BLAS alone bounds BLAS alone. While kpca
    holds BLAS to one thread, the caller's limit is what BLAS had before the hold. In a fresh
    process that set no thread variable, as a library's caller's."""
    environment = environment_without_thread_variables()
    script = BLAS_THREADS + (
        "import scipy.linalg, sklearn\n"
        "from kpcacli.utils.blas import THREADED_BLAS_FROM, single_threaded_blas, threads_for_blas\n"
        "from kpcacli.utils.cores import available_cores, caller_limit\n"
        "def large():\n"
        "    with threads_for_blas(THREADED_BLAS_FROM):\n"
        "        return blas_threads()\n"
        "shown = {'free': (available_cores(), large())}\n"
        "with single_threaded_blas():\n"
        "    shown['held'] = (blas_threads(), caller_limit('blas'), large())\n"
        "with threadpoolctl.threadpool_limits(1):\n"
        "    shown['limited'] = (available_cores(), large())\n"
        "with threadpoolctl.threadpool_limits(1, user_api='blas'):\n"
        "    shown['blas'] = (available_cores(), large())\n"
        "print(shown)\n"
    )
    shown = eval(
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=environment, check=True
        ).stdout
    )
    cores = shown["free"][0]
    assert cores >= 2 and shown["free"][1] == cores
    assert shown["held"] == (1, cores, cores)  # held to one thread; a large call still gets what the caller allows
    assert shown["limited"] == (1, 1)
    assert shown["blas"] == (cores, 1)


@pytest.mark.skipif(os.cpu_count() < 2, reason="side by side needs two cores")
def test_map_as_cores_allow_runs_jobs_side_by_side_within_the_budget_in_order():
    """Results in the items' order; at most as many jobs at once as the budget allows, asked as
    each starts (one core while job 0 runs, as while work runs beside; two after); each job on
    one core; a job's failure is raised. Jobs 1 and 2 meet at a barrier, which only two jobs
    running at once pass."""
    import threading

    from kpcacli.utils.cores import available_cores
    from kpcacli.utils.parallel import map_as_cores_allow, thread_budget

    lock, running, most, budgets, finished = threading.Lock(), [0], [0], [], []
    both = threading.Barrier(2, timeout=30)

    def job(item):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            budgets.append(available_cores())
        if item in (1, 2):
            both.wait()
        with lock:
            running[0] -= 1
            finished.append(item)
        return item * item

    with thread_budget(lambda: 2 if finished else 1):
        assert map_as_cores_allow(job, range(6)) == [i * i for i in range(6)]
    assert budgets == [1] * 6 and most[0] == 2 and finished[0] == 0
    with thread_budget(1):
        most[0] = 0
        assert map_as_cores_allow(job, [0, 3, 4]) == [0, 9, 16] and most[0] == 1

    def failing(item):
        if item == 2:
            raise ValueError("job 2 failed")
        return item

    with pytest.raises(ValueError, match="job 2 failed"):
        map_as_cores_allow(failing, range(5))
