"""Claim training on a Ray cluster (an embedded local one): the same numbers, and faults survived or reported.

Marked ``ray`` (deselected by default, ~2 minutes on 2 cores): ``pytest tests -m ray``. CI installs
``claimcheck[ray]`` and runs them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from claimcheck.errors import ConfigError
from claimcheck.pytest.executor import ClusterError, RayExecutor
from claimcheck.store.cache import ResultCache
from qin2025.data import make_synthetic
from qin2025.engine.batched import Run, train_batch
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig, train
from qin2025.engine.trainer import Trainer, engine_identity, trajectory_to_entry

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[2]
CFG = ModelConfig(d=16, d_qk=4, d_out=1)
TCFG = TrainConfig(steps=30)


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayExecutor]:
    """An embedded local Ray for this module's in-process tests, one torch thread per task.

    This process computes on one thread too while the module runs: the engine's identity names the
    thread count (it rounds), so a worker on another count than its controller is refused.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    executor = RayExecutor(threads=1, identity=engine_identity)
    try:
        yield executor
    finally:
        executor.close()
        torch.set_num_threads(before)


def _runs(seeds: range) -> list[Run]:
    return [Run(CFG, TCFG, make_synthetic(2, 4, 16, 1, s), s) for s in seeds]


def test_tasks_run_in_ray_workers_and_come_back_in_order(cluster: RayExecutor) -> None:
    pids = cluster.map([os.getpid for _ in range(4)])
    assert os.getpid() not in pids
    assert cluster.map([(lambda k=k: k * k) for k in range(5)]) == [0, 1, 4, 9, 16]
    assert cluster.slots == os.cpu_count()
    assert "embedded local Ray" in cluster.describe() and "1 torch thread and 1 CPU per task" in cluster.describe()


def test_a_batch_spread_over_the_cluster_gives_the_bits_of_one_local_batch(cluster: RayExecutor) -> None:
    runs = _runs(range(5))
    got = Trainer(ResultCache(None), executor=cluster).batch(runs)
    for a, b in zip(got, train_batch(runs), strict=True):
        assert a.loss.tobytes() == b.loss.tobytes()
        assert a.sigma_min.tobytes() == b.sigma_min.tobytes() and a.lambda_max == b.lambda_max
    assert Trainer(ResultCache(None), executor=cluster).lambda_maxes(runs) == [t.lambda_max for t in got]


def _killing(marker: Path, always: bool = False) -> Any:
    """Return a task body that SIGKILLs its own worker (the first time, or every time), else trains seed 3."""

    def compute() -> Any:
        if always or not marker.exists():
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return trajectory_to_entry(train(CFG, TCFG, make_synthetic(2, 4, 16, 1, 3), 3))

    return compute


def test_a_worker_killed_mid_task_is_retried_and_the_run_gives_the_same_numbers(
    cluster: RayExecutor, tmp_path: Path
) -> None:
    cache = ResultCache(tmp_path / "cache")
    trainer = Trainer(cache, executor=cluster)
    killed = _killing(tmp_path / "killed")
    arrays, meta = trainer.memo({"kind": "killed once"}, killed)
    assert (tmp_path / "killed").exists()  # the first attempt died
    want, want_meta = trajectory_to_entry(train(CFG, TCFG, make_synthetic(2, 4, 16, 1, 3), 3))
    assert arrays["loss"].tobytes() == want["loss"].tobytes() and meta == want_meta
    assert trainer.counts.computed == 1 and cache.path(trainer.key({"kind": "killed once"}, killed).digest).exists()


def test_a_task_whose_worker_keeps_dying_is_a_cluster_error_and_stores_nothing(tmp_path: Path) -> None:
    patient = RayExecutor(threads=1, max_retries=1)  # joins the module's cluster
    cache = ResultCache(tmp_path / "cache")
    trainer = Trainer(cache, executor=patient)
    killed = _killing(tmp_path / "m", always=True)
    with pytest.raises(ClusterError, match=r"Ray task 'always killed' failed .* retried up to 1 times"):
        trainer.memo({"kind": "always killed"}, killed)
    assert not cache.path(trainer.key({"kind": "always killed"}, killed).digest).exists()


def test_a_tasks_own_error_comes_back_as_it_was_raised(cluster: RayExecutor) -> None:
    def bad() -> None:
        raise ConfigError("TrainConfig.steps must be >= 1, got 0")

    with pytest.raises(ConfigError, match="steps must be >= 1") as info:
        cluster.run(bad, "bad config")
    assert any("raised in Ray task 'bad config'" in note for note in info.value.__notes__)


def test_a_worker_on_another_thread_count_than_its_controller_refuses(cluster: RayExecutor) -> None:
    """The engine's identity names the thread count (it rounds): a worker told to use 1 thread while
    the controller keys its results under 2 would store 1-thread numbers under 2-thread keys."""
    import torch

    torch.set_num_threads(2)
    try:
        two = RayExecutor(threads=1, identity=engine_identity)  # joins the module's cluster
        with pytest.raises(ClusterError, match=r"numerics: controller .*; 2 threads, worker .*; 1 thread\b"):
            two.run(lambda: 1)
    finally:
        torch.set_num_threads(1)


def test_a_worker_that_runs_other_code_refuses_to_compute(cluster: RayExecutor) -> None:
    here = os.getpid()
    other = RayExecutor(threads=1, identity=lambda: {"code": str(os.getpid() == here)})
    with pytest.raises(
        ClusterError, match=r"runs other code than the controller \(code: controller True, worker False"
    ):
        other.run(lambda: 1)


# --- whole claim runs -----------------------------------------------------------------------------------

CLAIMS = ["claims/test_c1_linear_rate.py", "claims/test_c2_monotone.py"]


def _command(report: Path, *options: str) -> list[str]:
    """Return the command that runs C1 and C2 at ci without the cache, writing ``report``.

    Every run takes one torch thread: a float64 matmul on two threads rounds differently from one on
    one (C1's per-step losses differ by about 1e-15, its late-rate statistics by up to 2e-5), so
    bit identity across executors holds at equal thread counts, and an xdist worker gets one.
    """
    cmd = [sys.executable, "-m", "pytest", *CLAIMS, "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    fixed = ["--claim-budget=ci", "--claim-cache=off", "--claim-figures=off", "--claim-threads=1"]
    return [*cmd, *fixed, f"--claim-report={report}", *options]


def _sidecar(report: Path, done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return dict(json.loads(report.with_suffix(".json").read_text()))


def _claims(report: Path, *options: str) -> dict[str, Any]:
    """Run C1 and C2 at ci without the cache; return the JSON sidecar."""
    done = subprocess.run(_command(report, *options), cwd=ROOT, capture_output=True, text=True, timeout=600)
    return _sidecar(report, done)


def _per_unit(run: dict[str, Any]) -> dict[tuple[str, ...], Any]:
    """Return every recorded value by (test, statistic, label, part, control, unit), and the verdicts."""
    out: dict[tuple[str, ...], Any] = {}
    for test in run["tests"]:
        for c in test["record"]["checks"]:
            key = (test["nodeid"], c["statistic"], c["label"], c["part"], str(c["control"]), c["unit"])
            out[key] = c["value"]
        for curve in test["record"]["curves"]:
            out[(test["nodeid"], "curve", curve["name"], curve["group"])] = (curve["x"], curve["y"])
    out[("verdicts",)] = [(c["id"], c["verdict"], c["reason"]) for c in run["claims"]]
    return out


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, ...], Any]:
    """C1 and C2 at ci, run serially in one process: the numbers every other way must give."""
    return _per_unit(_claims(tmp_path_factory.mktemp("serial") / "serial.md"))


def test_c1_and_c2_through_local_ray_and_xdist_give_the_serial_runs_numbers(
    serial: dict[tuple[str, ...], Any], tmp_path: Path
) -> None:
    ray = _claims(tmp_path / "ray.md", "--claim-executor=ray")
    both = _per_unit(_claims(tmp_path / "xdist.md", "-n", "2", "--claim-executor=ray"))
    assert len([k for k in serial if len(k) == 6]) >= 4 * 29  # every unit of C1, C2 and their controls
    assert _per_unit(ray) == serial  # bit for bit: JSON floats round-trip exactly
    assert both == serial
    assert ray["env"]["executor"].startswith("ray: embedded local Ray")
    assert ray["counters"]["training results computed"] > 0


def _descendants(root: int) -> list[int]:
    """Return the ids of every process below ``root`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def _kill_first_busy_worker(root: int, title: str, killed: list[int], stop: threading.Event) -> None:
    """SIGKILL the first process below ``root`` whose title starts with ``title`` (a Ray worker mid-task)."""
    while not stop.is_set():
        for pid in _descendants(root):
            try:
                busy = Path(f"/proc/{pid}/cmdline").read_bytes().startswith(title.encode())
            except OSError:
                continue
            if busy:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
        time.sleep(0.02)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the Ray workers through /proc")
def test_a_worker_killed_from_outside_mid_run_changes_no_number(
    serial: dict[tuple[str, ...], Any], tmp_path: Path
) -> None:
    report = tmp_path / "killed.md"
    proc = subprocess.Popen(
        _command(report, "--claim-executor=ray"), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=_kill_first_busy_worker, args=(proc.pid, "ray::train_batch", killed, stop))
    killer.start()
    try:
        out, err = proc.communicate(timeout=600)
    finally:
        stop.set()
        killer.join()
    assert killed, "no Ray worker was seen training, so none was killed"
    run = _sidecar(report, subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    assert _per_unit(run) == serial


TASK_FAILS = """
import pytest

@pytest.mark.claim("T1", "a toy run trains", "toy")
def test_value(claim_record, claim_seed, claim_train):
    def compute():
        raise FloatingPointError("the loss went NaN on the worker at step 7")

    claim_train.memo({"kind": "toy"}, compute)
    claim_record.check("value", 0.5, "<=", 1.0, label="toy")
"""


def test_a_failing_task_makes_its_claim_error_with_the_tasks_error(cluster: RayExecutor, tmp_path: Path) -> None:
    (tmp_path / "test_toy.py").write_text(TASK_FAILS)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "test_toy.py",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        "-p",
        "qin2025.plugin",
    ]
    cmd += ["--claim-report=r.md", "--claim-executor=ray", f"--claim-ray-address={cluster.address}"]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    run = json.loads((tmp_path / "r.json").read_text())
    assert [(c["id"], c["verdict"]) for c in run["claims"]] == [("T1", "ERROR")], done.stdout[-3000:]
    assert "FloatingPointError: the loss went NaN on the worker at step 7" in run["tests"][0]["message"]
    assert done.returncode == pytest.ExitCode.TESTS_FAILED
    assert f"at {cluster.address}" in run["env"]["executor"]  # it joined the running cluster


def test_an_address_with_no_cluster_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "test_toy.py").write_text(TASK_FAILS)
    cmd = [sys.executable, "-m", "pytest", "test_toy.py", "--claim-executor=ray", "--claim-ray-address=127.0.0.1:1"]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout[-2000:] + done.stderr[-2000:]
    assert "--claim-ray-address 127.0.0.1:1: cannot join the Ray cluster there" in done.stderr
