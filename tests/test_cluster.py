"""TF_CONFIG checks, the local launcher, and real multi-worker training on 127.0.0.1.

The launcher tests run plain Python tasks (no TensorFlow), so they are fast; the `slow` tests
run the worker script of notebook 07, taken from the notebook itself.
"""

from __future__ import annotations

import _thread
import json
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import nbformat
import pytest

from tpuhelpers import cluster
from tpuhelpers.cluster import TFConfigError

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = {"worker": ["127.0.0.1:20001", "127.0.0.1:20002"], "ps": ["127.0.0.1:20003"]}


# Processes: is anything left? -------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return text[text.rindex(")") + 2 :].split()  # fields after "pid (name) "


def is_running(pid: int) -> bool:
    """True if the process exists and is not a zombie (a zombie has finished running)."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def group_members(pgid: int) -> list[int]:
    """Running processes whose process group is `pgid`."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields and fields[0] != "Z" and int(fields[2]) == pgid:
                members.append(int(entry.name))
    return members


def assert_gone(pids, wait: float = 5.0) -> None:
    """Every pid, and every process of their process groups, has stopped running."""
    deadline = time.monotonic() + wait
    while True:
        left = [pid for pid in pids if is_running(pid)]
        left += [p for pid in pids for p in group_members(pid) if p not in left]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not left, f"processes still running: {left}"


def pids_in(lines, word: str) -> list[int]:
    """The numbers printed as `<word> <pid>` by the tasks."""
    return [int(m.group(1)) for line in lines for m in [re.search(rf"\b{word} (\d+)", line)] if m]


# A task with no TensorFlow: prints its pid and TF_CONFIG task, then behaves as told.
TASK = textwrap.dedent(
    """
    import json, os, socket, subprocess, sys, time

    config = json.loads(os.environ["TF_CONFIG"])
    role, index = config["task"]["type"], config["task"]["index"]
    print(f"pid {os.getpid()} is {role} {index} of {len(config['cluster']['worker'])} workers")
    mode = sys.argv[1]
    if mode == "ok":
        print("threads", os.environ.get("TF_NUM_INTRAOP_THREADS"))
    elif mode == "fail":
        if index == 1:
            sys.exit(3)
        time.sleep(600)
    elif mode == "child":  # leaves a grandchild behind, in the task's process group
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        print(f"child {child.pid}", flush=True)
        time.sleep(600)
    elif mode == "sleep":
        time.sleep(600)
    elif mode == "noisy":  # TensorFlow's start-up lines, then a line of its own
        print("WARNING: All log messages before absl::InitializeLog() is called are "
              "written to STDERR")
        print("I0000 00:00:1795425471.528449   28113 port.cc:153] oneDNN custom operations are on.")
        print("trained", flush=True)
    elif mode == "listen":
        host, port = config["cluster"][role][index].rsplit(":", 1)
        server = socket.create_server((host, int(port)))
        print("listening", flush=True)
        time.sleep(600)
    """
)


@pytest.fixture
def task_script(tmp_path: Path) -> Path:
    path = tmp_path / "task.py"
    path.write_text(TASK)
    return path


# TF_CONFIG ----------------------------------------------------------------------------------


def test_make_tf_config_round_trips() -> None:
    config = cluster.make_tf_config(CLUSTER, "worker", 1, strategy="ParameterServerStrategy")
    assert config == {"cluster": CLUSTER, "task": {"type": "worker", "index": 1}}
    assert cluster.parse_tf_config(json.dumps(config)) == config


def test_not_json_is_named() -> None:
    with pytest.raises(TFConfigError, match=r"TF_CONFIG is not valid JSON \(Expecting"):
        cluster.parse_tf_config("{'cluster': {}}")


@pytest.mark.parametrize("missing", ["cluster", "task"])
def test_missing_cluster_or_task_is_named(missing: str) -> None:
    config = {"cluster": CLUSTER, "task": {"type": "worker", "index": 0}}
    del config[missing]
    with pytest.raises(TFConfigError, match=f"TF_CONFIG has no '{missing}'"):
        cluster.parse_tf_config(json.dumps(config))


def test_unknown_role_in_cluster_is_named() -> None:
    with pytest.raises(TFConfigError, match=r"cluster\.master: unknown role 'master'.*chief"):
        cluster.validate_cluster({"master": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]})


def test_unknown_task_type_is_named() -> None:
    with pytest.raises(TFConfigError, match=r"task\.type: unknown role 'workers'"):
        cluster.make_tf_config(CLUSTER, "workers", 0)


def test_task_type_missing_from_cluster_is_named() -> None:
    with pytest.raises(TFConfigError, match=r"task\.type is 'chief'.*no 'chief' tasks"):
        cluster.make_tf_config(CLUSTER, "chief", 0)


@pytest.mark.parametrize("index", [2, -1, "0", True])
def test_task_index_out_of_range_is_named(index: object) -> None:
    with pytest.raises(TFConfigError, match=r"task\.index .* cluster\.worker has 2 addresses"):
        cluster.make_tf_config(CLUSTER, "worker", index)


def test_same_address_twice_names_both_fields() -> None:
    doubled = {"worker": ["127.0.0.1:20001", "127.0.0.1:20002"], "ps": ["127.0.0.1:20001"]}
    with pytest.raises(TFConfigError, match=r"cluster\.ps\[0\] and cluster\.worker\[0\]"):
        cluster.validate_cluster(doubled)


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.1:http", ":2222", "h:70000", 2222])
def test_malformed_address_is_named(address: object) -> None:
    with pytest.raises(TFConfigError, match=r"cluster\.worker\[1\] must be a 'host:port'"):
        cluster.validate_cluster({"worker": ["127.0.0.1:1", address]})


def test_two_chiefs_are_refused() -> None:
    with pytest.raises(TFConfigError, match=r"cluster\.chief has 2 addresses"):
        cluster.validate_cluster({"chief": ["a:1", "a:2"], "worker": ["a:3"]})


@pytest.mark.parametrize(
    "strategy", ["MultiWorkerMirroredStrategy", "MirroredStrategy", "CentralStorageStrategy"]
)
def test_ps_role_needs_parameter_server_strategy(strategy: str) -> None:
    with pytest.raises(TFConfigError, match=rf"cluster\.ps: .* the strategy is {strategy}"):
        cluster.make_tf_config(CLUSTER, "worker", 0, strategy=strategy)


def test_parameter_server_strategy_needs_ps_tasks() -> None:
    workers_only = {"worker": CLUSTER["worker"]}
    with pytest.raises(TFConfigError, match=r"cluster\.ps / cluster\.worker: .* needs"):
        cluster.make_tf_config(workers_only, "worker", 0, strategy="ParameterServerStrategyV2")
    cluster.make_tf_config(workers_only, "worker", 0, strategy="MultiWorkerMirroredStrategy")


def test_read_tf_config_says_when_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(TFConfigError, match="TF_CONFIG is not set"):
        cluster.read_tf_config()
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": CLUSTER, "task": {"type": "ps"}}))
    with pytest.raises(TFConfigError, match="task must be a JSON object with 'type' and 'index'"):
        cluster.read_tf_config()


def test_local_cluster_picks_distinct_free_ports() -> None:
    spec = cluster.local_cluster(workers=3, ps=2, chief=1)
    assert [len(spec[role]) for role in ("chief", "worker", "ps")] == [1, 3, 2]
    addresses = [address for role in spec for address in spec[role]]
    assert len(set(addresses)) == 6
    cluster.validate_cluster(spec)
    assert cluster.task_names(spec) == [
        "chief 0", "worker 0", "worker 1", "worker 2", "ps 0", "ps 1"
    ]  # fmt: skip


# The launcher -------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [0, -1, 1.5, True])
def test_zero_workers_is_an_error(task_script: Path, workers: object) -> None:
    with pytest.raises(ValueError, match=r"workers must be a positive integer"):
        cluster.launch(task_script, workers, args=["ok"])
    with pytest.raises(ValueError, match=r"workers must be at least 1"):
        cluster.local_cluster(workers=0, ps=1)


def test_port_in_use_is_named(task_script: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        spec = {"worker": [f"127.0.0.1:{cluster.free_ports(1)[0]}", f"127.0.0.1:{port}"]}
        with pytest.raises(cluster.PortInUseError, match=rf"cluster\.worker\[1\]: port .*:{port}"):
            cluster.launch(task_script, spec, args=["ok"])


def test_missing_script_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nowhere.py"):
        cluster.launch(tmp_path / "nowhere.py", 1)


def test_success_streams_named_lines_and_leaves_nothing(
    task_script: Path, capsys: pytest.CaptureFixture
) -> None:
    result = cluster.launch(task_script, 2, args=["ok"], timeout=60)
    out = capsys.readouterr().out
    assert result.ok and result.returncodes == {"worker 0": 0, "worker 1": 0}
    for index in (0, 1):  # each task got its own TF_CONFIG; its lines carry its name
        assert re.search(rf"^\[worker {index}\] pid \d+ is worker {index} of 2 workers$", out, re.M)
        assert f"[worker {index}] threads 1" in out
    assert_gone(pids_in(out.splitlines(), "pid"))


@pytest.mark.parametrize(
    ("line", "noise"),
    [
        (
            "WARNING: All log messages before absl::InitializeLog() is called are written to "
            "STDERR",
            True,
        ),
        (
            "I0000 00:00:1795422697.204325   15167 port.cc:153] oneDNN custom operations are on. "
            "You may see slightly different numerical results due to floating-point round-off "
            "errors from different computation orders.",
            True,
        ),
        (
            "I0000 00:00:1795422697.205010   15167 cudart_stub.cc:31] Could not find cuda drivers "
            "on your machine, GPU will not be used.",
            True,
        ),
        (
            "I0000 00:00:1795422660.949017   14935 cpu_feature_guard.cc:227] This TensorFlow "
            "binary is optimized to use available CPU instructions in performance-critical "
            "operations.",
            True,
        ),
        (
            "To enable the following instructions: AVX2 AVX512F FMA, in other operations, "
            "rebuild TensorFlow with the appropriate compiler flags.",
            True,
        ),
        # Warnings and errors always show, from any file.
        (
            "E0000 00:00:1795422698.130581   15167 cuda_platform.cc:52] failed call to cuInit: "
            "INTERNAL: CUDA error",
            False,
        ),
        ("W0000 00:00:1795422698.130581   15167 port.cc:153] something to know", False),
        ("I0000 00:00:1795422698.130581   15167 grpc_server_lib.cc:467] Started server", False),
        ("step 20 loss 1.9203", False),
        ("mentions port.cc:153] in the middle", False),
    ],
)
def test_startup_noise_is_only_tensorflows_informational_startup_lines(line, noise) -> None:
    assert cluster.is_startup_noise(line) is noise


def test_startup_noise_is_kept_out_of_the_output_unless_asked_for(
    task_script: Path, capsys: pytest.CaptureFixture
) -> None:
    quiet = cluster.launch(task_script, 1, args=["noisy"], timeout=60)
    out = capsys.readouterr().out
    assert "[worker 0] trained" in out and "oneDNN" not in out and "absl" not in out
    assert quiet.lines["worker 0"][-1] == "trained"
    assert not any("oneDNN" in line for line in quiet.lines["worker 0"])
    assert len(quiet.hidden["worker 0"]) == 2  # kept, not lost

    loud = cluster.launch(task_script, 1, args=["noisy"], timeout=60, quiet=False)
    out = capsys.readouterr().out
    assert "[worker 0] I0000" in out and "oneDNN" in out
    assert loud.hidden["worker 0"] == []


def test_failure_names_the_task_and_stops_the_others(task_script: Path) -> None:
    job = cluster.start(task_script, 2, args=["fail"], echo=False)
    with pytest.raises(
        cluster.TaskFailedError, match=r"worker 1 exited with code 3 .*stopped worker 0"
    ):
        job.wait(timeout=60)
    assert_gone(job.pids.values())


def test_failure_kills_what_a_task_left_behind(task_script: Path) -> None:
    spec = cluster.local_cluster(2)
    job = cluster.start(task_script, spec, args=["child"], echo=False)
    deadline = time.monotonic() + 30
    while len(pids_in(sum(job.lines.values(), []), "child")) < 2 and time.monotonic() < deadline:
        job.print_output(timeout=0.1)
    children = pids_in(sum(job.lines.values(), []), "child")
    assert len(children) == 2 and all(is_running(pid) for pid in children)
    job.kill("worker 0")
    with pytest.raises(cluster.TaskFailedError, match=r"worker 0 was killed by SIGKILL"):
        job.wait(timeout=30)
    assert_gone([*job.pids.values(), *children])


def test_timeout_stops_every_task(task_script: Path) -> None:
    job = cluster.start(task_script, 2, args=["child"], echo=False)
    start = time.monotonic()
    with pytest.raises(
        cluster.LaunchTimeoutError, match=r"timed out after 3 s: worker 0, worker 1"
    ):
        job.wait(timeout=3)
    assert time.monotonic() - start < 10
    assert_gone([*job.pids.values(), *pids_in(sum(job.lines.values(), []), "child")])


def test_kill_on_simulates_a_machine_failure(task_script: Path) -> None:
    with pytest.raises(cluster.TaskFailedError) as caught:
        cluster.launch(task_script, 2, args=["sleep"], kill_on=("worker 1", "is worker 1"))
    message = str(caught.value)
    assert "worker 1 was killed by SIGKILL (killed on purpose" in message
    assert re.search(r"Its last lines:\n +pid \d+ is worker 1 of 2 workers", message)


def test_keyboard_interrupt_stops_every_task(task_script: Path) -> None:
    """What a notebook interrupt does: KeyboardInterrupt in the main thread while waiting."""
    job = cluster.start(task_script, 2, args=["child"], echo=False)

    def interrupt_once_started() -> None:
        deadline = time.monotonic() + 30
        while len(pids_in(sum(job.lines.values(), []), "child")) < 2:
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        _thread.interrupt_main()  # as SIGINT from Jupyter's interrupt button

    # A Jupyter kernel always handles SIGINT; this test process may have inherited it ignored
    # (a background job of a non-interactive shell), and then interrupt_main() does nothing.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt_once_started, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            job.wait(timeout=60)
    finally:
        signal.signal(signal.SIGINT, previous)
    children = pids_in(sum(job.lines.values(), []), "child")
    assert len(children) == 2
    assert_gone([*job.pids.values(), *children])


def _driver(task_script: Path, mode: str) -> tuple[subprocess.Popen, list[int], list[int]]:
    """A separate process that launches 2 tasks; returns it with the tasks' and children's pids."""
    # Python keeps SIGINT ignored if it inherited it so (nohup, a background job): the driver
    # handles it as an interactive launching process does, whatever this test inherited.
    code = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        f"from tpuhelpers import cluster; cluster.launch({str(task_script)!r}, 2, args=[{mode!r}])"
    )
    driver = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    lines: list[str] = []
    wanted = 2 if mode == "sleep" else 4
    deadline = time.monotonic() + 30
    while len(pids_in(lines, "pid")) + len(pids_in(lines, "child")) < wanted:
        assert time.monotonic() < deadline, lines
        lines.append(driver.stdout.readline())
    return driver, pids_in(lines, "pid"), pids_in(lines, "child")


def test_sigint_to_the_launching_process_stops_every_task(task_script: Path) -> None:
    driver, tasks, children = _driver(task_script, "child")
    driver.send_signal(signal.SIGINT)
    assert driver.wait(timeout=30) != 0
    assert_gone([*tasks, *children])


def test_tasks_die_with_a_killed_launcher(task_script: Path) -> None:
    """The safety net: a kernel killed with SIGKILL cannot clean up; its tasks die with it."""
    driver, tasks, _ = _driver(task_script, "sleep")
    driver.kill()
    driver.wait(timeout=30)
    assert_gone(tasks)


def test_background_servers_kill_and_restart(task_script: Path) -> None:
    spec = cluster.local_cluster(workers=2, ps=1)
    with cluster.start(task_script, spec, args=["listen"], echo=False) as job:
        job.wait_until_listening(timeout=30)
        first = job.pids["worker 1"]
        job.kill("worker 1")
        assert_gone([first])
        with pytest.raises(cluster.LaunchError, match="still running"):
            job.restart("worker 0")
        job.restart("worker 1")
        job.wait_until_listening(timeout=30)
        assert job.pids["worker 1"] != first
        pids = list(job.pids.values())
    assert_gone(pids)
    with pytest.raises(KeyError, match="no task 'worker 7'"):
        job.kill("worker 7")


# Real training, with the notebooks' own scripts -------------------------------------------------


def notebook_script(notebook: str, writefile: str) -> str:
    """The script a notebook writes: its `%%writefile <writefile>` cell and the `-a` parts."""
    nb = nbformat.read(ROOT / "notebooks" / "en" / notebook, as_version=4)
    parts = [
        cell.source.split("\n", 1)[1] + "\n"
        for cell in nb.cells
        if cell.source.startswith((f"%%writefile {writefile}", f"%%writefile -a {writefile}"))
    ]
    assert parts, f"{notebook} has no cell `%%writefile {writefile}`"
    return "".join(parts)


def final_states(result: cluster.JobResult) -> dict[str, tuple[int, int, str]]:
    """Each worker's (replicas in sync, steps, weights fingerprint), from its output."""
    states = {}
    for name, lines in result.lines.items():
        text = "\n".join(lines)
        replicas = re.search(r"(\d+) replicas in sync", text)
        done = re.search(r"done: (\d+) steps, weights (\w+)", text)
        assert replicas and done, f"{name} did not finish:\n{text}"
        states[name] = (int(replicas.group(1)), int(done.group(1)), done.group(2))
    return states


@pytest.mark.slow
def test_two_workers_train_in_sync_and_resume_after_a_kill(tmp_path: Path) -> None:
    """Notebook 07's worker script: 2 real processes, a kill, a restart from the checkpoint."""
    from tpuhelpers import mnist

    mnist.ensure_mnist()
    (tmp_path / "worker.py").write_text(notebook_script("07_multi_worker_training.ipynb", "mwms"))
    common = ["--steps=40", "--batch=64", "--filters=8", "--checkpoint-every=20", "--log-every=5"]
    common.append("--test-examples=500")
    spec = cluster.local_cluster(2)

    def run(model_dir: str, **options) -> cluster.JobResult:
        args = [*common, f"--model-dir={model_dir}"]
        return cluster.launch("worker.py", spec, args=args, cwd=tmp_path, timeout=240, **options)

    uninterrupted = run("uninterrupted")
    assert_gone(uninterrupted.pids.values())
    states = final_states(uninterrupted)
    assert states["worker 0"] == states["worker 1"]  # same replicas, steps and weights, bit for bit
    assert states["worker 0"][:2] == (2, 40)

    with pytest.raises(cluster.TaskFailedError, match=r"worker 1 was killed by SIGKILL") as caught:
        run("resumed", kill_on=("worker 1", "step 25 loss"))
    assert_gone(caught.value.result.pids.values())
    checkpoints = sorted(p.name for p in (tmp_path / "resumed" / "checkpoints").glob("*.index"))
    assert checkpoints == ["ckpt-20.index"]  # killed at step 25: the next one would be at 40

    resumed = run("resumed")
    assert_gone(resumed.pids.values())
    assert "resuming from the checkpoint of step 20" in resumed.lines["worker 1"]
    assert final_states(resumed) == states  # the same step count, and even the same weights
