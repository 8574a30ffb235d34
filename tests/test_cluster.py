"""Dask as the engine beyond one process (kpcacli.engines.cluster): what a cluster computes equals what
one process computes, and every way it can go wrong is one line.

The quick tests use an in-process ``LocalCluster`` (two workers of one thread); the slow ones
start a real ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 and drive them
through the ``kpca`` command, as a user would.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import HAND, ok, one_line_error, run
from PIL import Image
from test_video import textured_frames, write_clip

from kpcacli.engines.cluster import Cluster
from kpcacli.io.request import FrameRequest
from kpcacli.io.sources import iter_frames
from kpcacli.numerics.gram import linear_gram

# Real Dask clusters in processes of their own: the slow suite (`make test-slow`).
pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def scheduler():
    """The address of an in-process cluster: two workers, one thread each."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    """41 textured frames, H.264 with a keyframe every 8 frames and B-frames: several ranges."""
    path = tmp_path_factory.mktemp("clip") / "clip.mp4"
    write_clip(path, textured_frames(41), gop=8)
    return path


def fit_both(tmp_path, sources, scheduler, *options):
    """Fit in-process and on the cluster; the two model files' bytes and the two codes files."""
    outputs = []
    for name, extra in (("local", []), ("cluster", ["--scheduler", scheduler])):
        model, codes = tmp_path / f"{name}.npz", tmp_path / f"{name}-codes.npy"
        ok(run(["fit", *sources, "-m", model, "--codes", codes, "-q", *options, *extra]))
        outputs.append((model.read_bytes(), np.load(codes)))
    return outputs


@pytest.mark.parametrize("source", ["hand", "video"])
def test_a_cluster_fits_the_same_model_file_as_one_process(tmp_path, scheduler, clip, source):
    sources = [HAND] if source == "hand" else [clip]
    (local_model, local_codes), (cluster_model, cluster_codes) = fit_both(tmp_path, sources, scheduler, "-k", "3")
    assert cluster_model == local_model  # exact integer Gram: the same file, byte for byte
    assert np.array_equal(cluster_codes, local_codes)


@pytest.mark.parametrize("method", ["uniform", "farthest"])
@pytest.mark.parametrize("source", ["hand", "video"])
def test_landmarks_and_codes_on_a_cluster_equal_one_process(tmp_path, scheduler, clip, source, method):
    """Uniform landmark fits stream the clip twice (landmarks, then codes); farthest ones keep
    every frame on the workers and ask each piece for its distances at every step. Either way
    the same frames are chosen and nothing else may change."""
    sources, count = ([HAND], 70) if source == "hand" else ([clip], 41)
    (local_model, local_codes), (cluster_model, cluster_codes) = fit_both(
        tmp_path, sources, scheduler, "-k", "4", "--landmarks", "12", "--landmark-method", method
    )
    assert cluster_model == local_model
    assert local_codes.shape == (count, 4) and np.array_equal(cluster_codes, local_codes)


@pytest.mark.parametrize(
    "source, frames, landmarks",
    [
        ("video", "3:30:2", []),
        ("video", "9:", ["--landmarks", "10"]),
        ("hand", "::7", []),
        ("colour", "::9", ["--colour"]),
    ],
)
def test_frame_selections_on_a_cluster_equal_one_process(tmp_path, scheduler, clip, source, frames, landmarks):
    """--frames cuts the pieces (a video's ranges decode only from the first chosen frame);
    a colour model's pieces load RGB frames, for the fit and for encode."""
    sources = {"hand": [HAND], "video": [clip], "colour": [HAND.parent / "hand_colour.mp4"]}[source]
    (local_model, local_codes), (cluster_model, cluster_codes) = fit_both(
        tmp_path, sources, scheduler, "-k", "3", "--frames", frames, *landmarks
    )
    assert cluster_model == local_model and np.array_equal(cluster_codes, local_codes)
    encode = ["encode", *sources, "--frames", frames, "-m", tmp_path / "local.npz", "-o", tmp_path / "c.npy", "-q"]
    ok(run([*encode, "--scheduler", scheduler]))
    assert np.array_equal(np.load(tmp_path / "c.npy"), local_codes)


@pytest.mark.parametrize("frames, landmarks", [(None, []), ("9:", ["--landmarks", "10"])])
def test_parameters_on_a_cluster_equal_one_process(tmp_path, scheduler, clip, frames, landmarks):
    """fit --params on a cluster: the rows of the frames it keeps (all, or the landmarks among
    the chosen ones), and the same model file."""
    count = 41 if frames is None else 32
    table = tmp_path / "times.csv"
    table.write_text("time\n" + "".join(f"{i}\n" for i in range(count)))
    options = ["-k", "3", "--params", table, *landmarks, *([] if frames is None else ["--frames", frames])]
    (local_model, _), (cluster_model, _) = fit_both(tmp_path, [clip], scheduler, *options)
    assert cluster_model == local_model


def test_encode_and_decode_on_a_cluster_equal_one_process(tmp_path, scheduler, clip):
    model = tmp_path / "model.npz"
    ok(run(["fit", clip, "-m", model, "-k", "3", "-q", "--landmarks", "20"]))
    ok(run(["encode", clip, "-m", model, "-o", tmp_path / "local.npy", "-q"]))
    ok(run(["encode", clip, "-m", model, "-o", tmp_path / "cluster.npy", "-q", "--scheduler", scheduler]))
    codes = np.load(tmp_path / "local.npy")
    assert codes.shape == (41, 3) and np.array_equal(np.load(tmp_path / "cluster.npy"), codes)
    ok(run(["decode", tmp_path / "local.npy", "-m", model, "-o", f"{tmp_path}/local/"]))
    ok(run(["decode", tmp_path / "local.npy", "-m", model, "-o", f"{tmp_path}/cluster/", "--scheduler", scheduler]))
    names = sorted(os.listdir(tmp_path / "local"))
    assert len(names) == 41 and names == sorted(os.listdir(tmp_path / "cluster"))
    for name in names:
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "cluster" / name).read_bytes()


def test_a_transport_decode_on_a_cluster_equals_one_process(tmp_path, scheduler, clip):
    """The transport pre-image computes its optical flows where it runs: on the workers, the
    same bytes as in one process."""
    model = tmp_path / "model.npz"
    ok(run(["fit", clip, "-m", model, "-k", "3", "-q", "--frames", "::2"]))
    ok(run(["encode", clip, "-m", model, "-o", tmp_path / "codes.npy", "-q", "--frames", "1::2"]))
    for where, extra in (("local", []), ("cluster", ["--scheduler", scheduler])):
        command = ["decode", tmp_path / "codes.npy", "-m", model, "-o", f"{tmp_path / where}/", "--solver", "transport"]
        ok(run([*command, "-q", *extra]))
    names = sorted(os.listdir(tmp_path / "local"))
    assert len(names) == 20 and names == sorted(os.listdir(tmp_path / "cluster"))
    for name in names:
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "cluster" / name).read_bytes()


def test_denoise_on_a_cluster_equals_one_process(tmp_path, scheduler, clip):
    """The denoise workflow goes through the engine: on a cluster, a batch of frames per task,
    the same frames byte for byte, the training frames without their own copies alike."""
    model = tmp_path / "model.npz"
    ok(run(["fit", clip, "-m", model, "-k", "3", "-q", "--frames", "::2"]))
    ok(run(["denoise", clip, "-m", model, "-o", f"{tmp_path}/local/", "-q"]))
    ok(run(["denoise", clip, "-m", model, "-o", f"{tmp_path}/cluster/", "-q", "--scheduler", scheduler]))
    names = sorted(os.listdir(tmp_path / "local"))
    assert len(names) == 41 and names == sorted(os.listdir(tmp_path / "cluster"))
    for name in names:
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "cluster" / name).read_bytes()


def test_reconstruct_on_a_cluster_equals_one_process(tmp_path, scheduler, monkeypatch):
    """kpca reconstruct goes through the engine: on a cluster a batch of frames per task (the
    batches made small here, so that several tasks are in flight), the same frames byte for
    byte and the same error estimates."""
    from kpcacli.utils.budgets import BUDGETS

    monkeypatch.setattr(BUDGETS, "reconstruct_batch", 6 * 8 * 180 * 320 * 3)  # three frames a task
    model, mask = tmp_path / "model.npz", tmp_path / "mask.png"
    ok(run(["fit", HAND, "-m", model, "-k", "6", "-q", "--frames", "::2"]))
    observed = np.full((180, 320), 255, np.uint8)
    observed[30:120, 60:200] = 0
    Image.fromarray(observed).save(mask)
    reports = []
    for name, extra in (("local", []), ("cluster", ["--scheduler", scheduler])):
        command = ["reconstruct", HAND, "--frames", "1::4", "--mask", mask, "-m", model, "-o", f"{tmp_path}/{name}/"]
        reports.append(json.loads(ok(run([*command, "-q", "--json", *extra])).stdout))
    assert reports[0] == reports[1] and len(reports[0]["frames"]) == 18
    names = sorted(os.listdir(tmp_path / "local"))
    assert len(names) == 18 and names == sorted(os.listdir(tmp_path / "cluster"))
    for name in names:
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "cluster" / name).read_bytes()


def test_eval_on_a_cluster_gives_the_same_scores(scheduler):
    tables = []
    for extra in ([], ["--scheduler", scheduler]):
        result = ok(run(["eval", HAND, "-k", "3", "--solver", "log", "--json", "-q", *extra]))
        scores = json.loads(result.stdout)["results"]
        tables.append([(s["method"], s["psnr"]) for s in scores])
    assert tables[0] == tables[1] and len(tables[0]) == 3


def test_dask_scheduler_address_variable_selects_the_cluster(tmp_path, scheduler, monkeypatch):
    monkeypatch.setattr("kpcacli.engines.connection.CONNECT_SECONDS", 1)
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:1")  # would fail if used...
    one_line_error(run(["fit", HAND, "-m", tmp_path / "m.npz", "-k", "3", "-q"]), 1, "tcp://127.0.0.1:1")
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", scheduler)  # ...and is used:
    before = scheduler_transitions(scheduler)
    ok(run(["fit", HAND, "-m", tmp_path / "m.npz", "-k", "3", "-q"]))
    assert scheduler_transitions(scheduler) > before  # the scheduler ran the fit's tasks


def scheduler_transitions(address: str) -> int:
    """How many task transitions the scheduler at `address` has made: it grows only when
    tasks run there."""
    from distributed import Client

    with Client(address, set_as_default=False) as client:
        return client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.transition_counter)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_the_cluster_gram_is_the_in_process_gram(scheduler, tmp_path, dtype):
    rng = np.random.default_rng(3)
    frames = (rng.random((30, 24, 40)) * 255).astype(dtype)
    np.save(tmp_path / "frames.npy", frames)
    chosen = np.array([0, 3, 4, 9, 17, 22, 29])
    with Cluster(scheduler) as cluster:
        loaded = cluster.load(FrameRequest.of([str(tmp_path / "frames.npy")]))
        assert loaded.n == 30 and loaded.frame_shape == (24, 40) and loaded.dtype == dtype
        gram = cluster.linear_gram(loaded, chosen)
    expected = linear_gram(frames.reshape(30, -1)[chosen])
    if dtype == np.uint8:  # exact integer arithmetic: equal bit for bit
        assert np.array_equal(gram.shifted, expected.shifted) and np.array_equal(gram.origin, expected.origin)
        assert np.array_equal(gram.origin_dots, expected.origin_dots) and gram.origin_norm2 == expected.origin_norm2
    else:
        np.testing.assert_allclose(gram.dots(), expected.dots(), rtol=1e-12)


# -- failures: one line each ------------------------------------------------------------------
def test_without_dask_installed_scheduler_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises ImportError
    result = run(["fit", HAND, "-m", tmp_path / "m.npz", "--scheduler", "tcp://127.0.0.1:8786"])
    one_line_error(result, 1, "pip install 'kpcacli[cluster]'")
    assert not (tmp_path / "m.npz").exists()


def test_an_unreachable_scheduler_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr("kpcacli.engines.connection.CONNECT_SECONDS", 1)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{probe.getsockname()[1]}"
    result = run(["encode", HAND / "hand_001.png", "-m", tmp_path / "any.npz", "--scheduler", address])
    one_line_error(result, 1, "any.npz", "does not exist")  # the model is read before the scheduler is reached
    model = tmp_path / "m.npz"
    ok(run(["fit", HAND, "-m", model, "-k", "3", "-q"]))
    one_line_error(run(["encode", HAND / "hand_001.png", "-m", model, "--scheduler", address]), 1, "cannot reach")


def test_standard_input_is_refused_on_a_cluster(tmp_path, scheduler):
    png = (HAND / "hand_001.png").read_bytes()
    model = tmp_path / "m.npz"
    one_line_error(run(["fit", "-", "-m", model, "--scheduler", scheduler], input=png), 2, "standard input")
    assert not model.exists()


def test_frames_of_different_sizes_on_different_workers_are_one_line(tmp_path, scheduler):
    for i in range(12):
        size = (40, 30) if i < 6 else (30, 40)
        Image.fromarray(np.full(size, 10 * i, dtype=np.uint8)).save(tmp_path / f"f{i:02d}.png")
    result = run(["fit", tmp_path, "-m", tmp_path / "m.npz", "-q", "--scheduler", scheduler])
    one_line_error(result, 1, "f06.png", "f00.png", "--resize")


def test_frames_of_two_bit_depths_are_refused_on_a_cluster(tmp_path, scheduler):
    from test_errors import mixed_depth_folder

    frames = np.stack([frame.pixels[::4, ::4] for frame in iter_frames([HAND])][:5])
    folder = mixed_depth_folder(frames, tmp_path / "mixed")
    ok(run(["fit", HAND, "--frames", "::10", "-m", tmp_path / "m.npz", "-k", "2", "-q", "--resize", "80x45"]))
    for args in (["fit", folder, "-m", tmp_path / "n.npz"], ["encode", folder / "f4.png", "-m", tmp_path / "m.npz"]):
        one_line_error(run([*args, "-q", "--scheduler", scheduler]), 1, "f4.png", "16-bit")


def test_a_damaged_frame_read_by_a_worker_is_one_line(tmp_path, scheduler):
    for i in range(4):
        shutil.copy(HAND / f"hand_{i + 1:03d}.png", tmp_path / f"h{i}.png")
    (tmp_path / "h2.png").write_bytes((HAND / "hand_003.png").read_bytes()[:200])
    result = run(["fit", tmp_path, "-m", tmp_path / "m.npz", "-q", "--scheduler", scheduler])
    one_line_error(result, 1, "h2.png")


# -- real processes -----------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def process_cluster(tmp_path_factory):
    """A real ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 (a free port),
    each worker one thread; all three are stopped afterwards."""
    from distributed import Client

    logs = tmp_path_factory.mktemp("dask-logs")
    address = f"tcp://127.0.0.1:{free_port()}"
    commands = [
        [BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1], "--no-dashboard"],
        *[[BIN / "dask", "worker", address, "--nthreads", "1", "--no-dashboard", "--name", f"w{i}"] for i in (1, 2)],
    ]
    processes = []
    try:
        for index, command in enumerate(commands):
            log = open(logs / f"{index}.log", "wb")  # noqa: SIM115 (closed with the process)
            # The workers run in a folder of their own, as on other machines: relative paths
            # given to the client mean nothing there.
            started = subprocess.Popen([str(part) for part in command], stdout=log, stderr=log, cwd=logs)
            processes.append((started, log))
            if index == 0:
                time.sleep(1.0)
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for process, _log in processes:
            process.send_signal(signal.SIGINT)
        for process, log in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()


def kpca(*args, cwd=None, status: int = 0) -> subprocess.CompletedProcess:
    command = [str(BIN / "kpca"), *map(str, args)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd)
    assert result.returncode == status, result.stderr
    return result


@pytest.mark.slow
@pytest.mark.parametrize("source", ["hand", "video"])
def test_fit_and_encode_through_scheduler_and_worker_processes_equal_one_process(
    tmp_path, process_cluster, clip, source
):
    sources = [HAND] if source == "hand" else [clip]
    results = {}
    for name, extra in (("local", []), ("cluster", ["--scheduler", process_cluster])):
        model = tmp_path / f"{name}.npz"
        kpca("fit", *sources, "-m", model, "-k", "3", "--codes", tmp_path / f"{name}-fit.npy", "-q", *extra)
        kpca("encode", *sources, "-m", model, "-o", tmp_path / f"{name}-encode.npy", "-q", *extra)
        results[name] = (
            model.read_bytes(),
            np.load(tmp_path / f"{name}-fit.npy"),
            np.load(tmp_path / f"{name}-encode.npy"),
        )
    local, cluster = results["local"], results["cluster"]
    assert cluster[0] == local[0]
    assert np.array_equal(cluster[1], local[1]) and np.array_equal(cluster[2], local[2])
    assert np.array_equal(local[1], local[2])  # fit --codes is encode


@pytest.mark.slow
def test_reconstruct_through_scheduler_and_worker_processes_equals_one_process(tmp_path, process_cluster):
    """kpca reconstruct with --scheduler on real worker processes: the frames completed there
    (a model and masks pickled to other processes) are one process's, byte for byte."""
    model, mask = tmp_path / "model.npz", tmp_path / "mask.png"
    kpca("fit", HAND, "--frames", "::2", "-m", model, "-k", "6", "-q")
    observed = np.full((180, 320), 255, np.uint8)
    observed[40:130, 100:220] = 0
    Image.fromarray(observed).save(mask)
    for name, extra in (("local", []), ("cluster", ["--scheduler", process_cluster])):
        kpca(
            "reconstruct",
            HAND,
            "--frames",
            "1::2",
            "--mask",
            mask,
            "-m",
            model,
            "-o",
            f"{tmp_path}/{name}/",
            "-q",
            *extra,
        )
    names = sorted(os.listdir(tmp_path / "local"))
    assert len(names) == 35 and names == sorted(os.listdir(tmp_path / "cluster"))
    for name in names:
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "cluster" / name).read_bytes()


@pytest.mark.slow
def test_workers_in_another_folder_take_the_clients_relative_paths(tmp_path, process_cluster, clip):
    """`kpca fit clip.mp4 --frames ::2` and a folder source, named relative to the client's
    working directory, give the model one process gives (the frames keep the names given)."""
    shutil.copy(clip, tmp_path / "clip.mp4")
    shutil.copytree(HAND, tmp_path / "frames")
    for sources in (["clip.mp4"], ["frames"]):
        models = []
        for name, extra in (("local", []), ("cluster", ["--scheduler", process_cluster])):
            kpca("fit", *sources, "--frames", "::2", "-m", f"{name}.npz", "-k", "3", "-q", *extra, cwd=tmp_path)
            models.append((tmp_path / f"{name}.npz").read_bytes())
            kpca("encode", *sources, "--frames", "1::2", "-m", f"{name}.npz", "-o", f"{name}.npy", *extra, cwd=tmp_path)
        assert models[0] == models[1]
        np.testing.assert_array_equal(np.load(tmp_path / "local.npy"), np.load(tmp_path / "cluster.npy"))


@pytest.mark.slow
def test_an_input_error_on_a_worker_arrives_as_itself(process_cluster, tmp_path):
    """PyAV's exceptions do not unpickle: an InputError raised while one was handled came back
    as "Exception: InputError(...)", an internal error. It arrives as an InputError now."""
    from distributed import Client

    from kpcacli.engines.tasks import Piece, load
    from kpcacli.io.video import FrameTable
    from kpcacli.utils.errors import InputError

    piece = Piece((str(tmp_path / "missing.mp4"),), FrameTable(np.array([0]), np.array([True])), 0, 1, 0)
    with Client(process_cluster, timeout=30, set_as_default=False) as client:
        future = client.submit(load, piece, None, pure=False)
        with pytest.raises(InputError, match="cannot decode video .*missing.mp4"):
            future.result()


def test_a_worker_that_cannot_read_a_source_is_named(tmp_path, scheduler, monkeypatch):
    monkeypatch.setattr("kpcacli.engines.tasks.unreadable", lambda paths: paths[:1])
    result = run(["fit", HAND, "-m", tmp_path / "m.npz", "-k", "3", "-q", "--scheduler", scheduler])
    one_line_error(result, 1, "worker ", "cannot read", "hand_000.png", "share")
    assert not (tmp_path / "m.npz").exists()


def test_a_scheduler_address_that_is_not_one_is_a_usage_error_at_once(tmp_path):
    """One line, exit 2, no traceback when the process ends (a real process: the traceback came
    from Client.__del__ at exit), and no attempt to connect: the message is the parser's, not
    the connection's (which waited 30 s)."""
    result = kpca("fit", HAND, "-m", tmp_path / "m.npz", "-q", "--scheduler", "nonsense", status=2)
    assert "cannot reach" not in result.stderr
    assert result.stderr.splitlines() == [result.stderr.strip()] and "not a scheduler's address" in result.stderr


@pytest.mark.slow
def test_an_unreachable_scheduler_is_one_line_from_a_real_process(tmp_path):
    """One line and exit 1 (kpca gives up after CONNECT_SECONDS; how soon a loaded machine gets
    there is a benchmark's business, not a test's)."""
    address = f"tcp://127.0.0.1:{free_port()}"
    result = kpca("fit", HAND, "-m", tmp_path / "m.npz", "-q", "--scheduler", address, status=1)
    assert (
        result.stderr.strip().splitlines() == [f"Error: {result.stderr.strip()[7:]}"]
        and "cannot reach" in result.stderr
    )


@pytest.mark.slow
def test_workers_lost_during_decode_are_reported_as_lost_workers(tmp_path):
    """Every worker killed while decode runs: one line that says so (it blamed libx264 and
    named a temporary file), exit 1, and no video written."""
    address = f"tcp://127.0.0.1:{free_port()}"
    log = open(tmp_path / "dask.log", "wb")  # noqa: SIM115 (closed below)
    scheduler = subprocess.Popen(
        [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1], "--no-dashboard"],
        stdout=log,
        stderr=log,
    )
    worker = subprocess.Popen(
        [str(BIN / "dask"), "worker", address, "--nthreads", "1", "--no-dashboard"],
        stdout=log,
        stderr=log,
        start_new_session=True,  # its own process group: the nanny and the worker die together
    )
    try:
        from distributed import Client

        with Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(1, timeout=60)
        kpca("fit", HAND, "-m", tmp_path / "m.npz", "-k", "3", "-q")
        from kpcacli import FrameModel

        np.save(tmp_path / "codes.npy", np.repeat(FrameModel.load(tmp_path / "m.npz").state_.codes, 100, axis=0))
        command = [str(BIN / "kpca"), "decode", tmp_path / "codes.npy", "-m", tmp_path / "m.npz"]
        decoding = subprocess.Popen(
            [*map(str, command), "-o", str(tmp_path / "out.mp4"), "--scheduler", address],
            stderr=subprocess.PIPE,
            text=True,
        )
        # Kill the worker once it is decoding (not after a fixed time: a loaded machine may
        # not have started the decode by then).
        with Client(address, timeout=30, set_as_default=False) as client:
            for _ in range(1200):
                if any(client.processing().values()) or decoding.poll() is not None:
                    break
                time.sleep(0.1)
        assert decoding.poll() is None, "the decode ended before its worker was killed"
        os.killpg(worker.pid, signal.SIGKILL)
        _, stderr = decoding.communicate(timeout=120)
        assert decoding.returncode == 1, stderr
        assert stderr.strip().splitlines() == [stderr.strip()] and "lost the workers" in stderr, stderr
        assert "libx264" not in stderr and ".tmp" not in stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["codes.npy", "dask.log", "m.npz"]
    finally:
        for process in (worker, scheduler):
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            process.wait(timeout=30)
        log.close()


def test_frames_read_at_absolute_paths_keep_the_names_given():
    from kpcacli.engines.tasks import _relabel

    labels = {"/data/clip[1].mp4": "clip[1].mp4", "/data/f/x.png": "f/x.png"}
    assert _relabel("/data/clip[1].mp4[5]", labels) == "clip[1].mp4[5]"
    assert _relabel("/data/f/x.png", labels) == "f/x.png"
    assert _relabel("/elsewhere/y.png", labels) == "/elsewhere/y.png"


def test_a_cluster_decode_prepares_the_solver_once_per_worker(tmp_path, scheduler, monkeypatch):
    """The distance solver's calibration (up to 400 decodes) is kept with the fitted state: it
    ran once per task, it runs once per worker now."""
    from kpcacli.preimage import distance

    calibrations = []
    prepare = distance.DistanceSolver.prepare

    def counted(self, state, count):
        calibrations.append(id(state))
        return prepare(self, state, count)

    monkeypatch.setattr(distance.DistanceSolver, "prepare", counted)
    model = tmp_path / "m.npz"
    ok(run(["fit", HAND, "--frames", "::2", "-m", model, "-k", "3", "-q"]))
    ok(run(["encode", HAND, "-m", model, "-o", tmp_path / "codes.npy", "-q"]))
    calibrations.clear()
    back = f"{tmp_path / 'back'}/"
    ok(
        run(
            [
                "decode",
                tmp_path / "codes.npy",
                "-m",
                model,
                "-o",
                back,
                "--solver",
                "distance",
                "--scheduler",
                scheduler,
            ]
        )
    )
    assert len(list((tmp_path / "back").iterdir())) == 70
    assert 1 <= len(calibrations) <= 2, calibrations  # two workers, eight tasks
