"""TF_CONFIG checks, the local launcher, and real multi-worker training on 127.0.0.1.

The launcher tests run plain Python tasks (no TensorFlow), so they are fast; the `slow` tests
run the worker script of notebook 07, taken from the notebook itself.
"""

from __future__ import annotations

import _thread
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import nbformat
import pytest

from tpuhelpers import cluster

ROOT = Path(__file__).resolve().parents[1]


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


# Cluster descriptions -------------------------------------------------------------------------


def test_local_cluster_picks_distinct_free_ports() -> None:
    spec = cluster.local_cluster(workers=3, ps=2, chief=1)
    assert [len(spec[role]) for role in ("chief", "worker", "ps")] == [1, 3, 2]
    addresses = [task.address for task in cluster.tasks(spec)]
    assert len(set(addresses)) == 6 and all(a.startswith("127.0.0.1:") for a in addresses)
    assert [str(task) for task in cluster.tasks(spec)] == [
        "chief 0", "worker 0", "worker 1", "worker 2", "ps 0", "ps 1"
    ]  # fmt: skip
    assert cluster.tasks(spec)[2] == cluster.Task("worker", 1, spec["worker"][1])


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ({"workers": 0}, "workers must be a positive integer"),
        ({"workers": 1.5}, "workers must be a positive integer"),
        ({"workers": True}, "workers must be a positive integer"),
        ({"workers": 2, "ps": -1}, r"ps must be a positive integer.*Or 0 for no parameter"),
        ({"workers": 2, "chief": 2}, r"Unknown chief count 2: choose one of 0, 1"),
    ],
)
def test_local_cluster_refuses_bad_counts(counts: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cluster.local_cluster(**counts)


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        (["127.0.0.1:20001"], TypeError, "cluster must be a Mapping, got list"),
        ({"master": ["127.0.0.1:20001"]}, ValueError, r"role in cluster .*'master'"),
        ({"worker": "127.0.0.1:20001"}, TypeError, r"cluster\.worker must be a list, got str"),
        ({"worker": ["127.0.0.1:1", "127.0.0.1"]}, ValueError, r"worker\[1\] must be host:port"),
        ({"worker": ["127.0.0.1:http"]}, ValueError, r"cluster\.worker\[0\] must be host:port"),
        ({"worker": ["127.0.0.1:70000"]}, ValueError, r"cluster\.worker\[0\] must be host:port"),
        ({"worker": [2222]}, ValueError, r"cluster\.worker\[0\] must be host:port .*, got 2222"),
        ({"worker": ["127.0.0.1:2"], "ps": ["127.0.0.1:2"]}, ValueError, r"is also cluster\.work"),
        ({}, ValueError, "The cluster needs tasks"),
    ],
)  # fmt: skip
def test_a_wrong_cluster_is_named(
    task_script: Path, spec: object, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        cluster.start(task_script, spec)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"args": "ok"}, TypeError, "args must be a list or tuple, got str"),
        ({"roles": "worker"}, TypeError, "roles must be a tuple"),
        ({"roles": ("workers",)}, ValueError, "Unknown role 'workers'"),
        ({"timeout": float("inf")}, ValueError, "timeout must be a finite number"),
        ({"timeout": 0}, ValueError, "timeout must be at least 0.1"),
    ],
)
def test_wrong_options_are_named(options: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        cluster.Options(**options)


@pytest.mark.parametrize("host", ["10.0.0.5", "0.0.0.0", "example.com", "127.evil.com"])
def test_addresses_that_are_not_loopback_need_an_explicit_opt_in(
    task_script: Path, host: str
) -> None:
    with pytest.raises(
        ValueError, match=rf"worker 0: {host}:20001 is not loopback.*no authentication"
    ):
        cluster.start(task_script, {"worker": [f"{host}:20001"]})


def test_allow_remote_lets_a_task_listen_on_every_interface(task_script: Path) -> None:
    port = cluster.local_cluster(1)["worker"][0].rsplit(":", 1)[1]
    options = cluster.Options(args=["listen"], allow_remote=True)
    with cluster.start(task_script, {"worker": [f"0.0.0.0:{port}"]}, options) as job:
        job.wait_listening(timeout=30)
    assert_gone([p.pid for p in job.processes.values()])


# The launcher -------------------------------------------------------------------------------


def test_success_streams_named_lines_and_leaves_nothing(
    task_script: Path, capsys: pytest.CaptureFixture
) -> None:
    job = cluster.launch(task_script, 2, cluster.Options(args=["ok"], timeout=60))
    out = capsys.readouterr().out
    assert list(job.returncodes.values()) == [0, 0]
    for index in (0, 1):  # each task got its own TF_CONFIG; its lines carry its name
        assert re.search(rf"^\[worker {index}\] pid \d+ is worker {index} of 2 workers$", out, re.M)
        assert f"[worker {index}] threads 1" in out
    assert_gone(pids_in(out.splitlines(), "pid"))


def test_a_missing_script_fails_with_pythons_own_error(tmp_path: Path) -> None:
    with pytest.raises(cluster.LaunchError, match=r"worker 0 exited with code 1(.|\n)*nowhere\.py"):
        cluster.launch(tmp_path / "nowhere.py", 1, cluster.Options(timeout=60))


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
    assert bool(cluster.NOISE.match(line)) is noise


def test_startup_noise_is_kept_out_of_the_output(
    task_script: Path, capsys: pytest.CaptureFixture
) -> None:
    job = cluster.launch(task_script, 1, cluster.Options(args=["noisy"], timeout=60))
    out = capsys.readouterr().out
    assert "[worker 0] trained" in out and "oneDNN" not in out and "absl" not in out
    [lines] = job.lines.values()
    assert len(lines) == 2 and lines[1] == "trained"  # the pid line, and no notice


def test_failure_names_the_task_and_stops_the_others(task_script: Path) -> None:
    job = cluster.start(task_script, 2, cluster.Options(args=["fail"]))
    with pytest.raises(
        cluster.LaunchError, match=r"worker 1 exited with code 3\.(.|\n)*Stopped: worker 0\."
    ):
        job.wait(timeout=60)
    assert_gone([p.pid for p in job.processes.values()])


def _children(job: cluster.Job, count: int = 2) -> list[int]:
    """The pids of the children the tasks started (task mode "child"), once they all did."""
    deadline = time.monotonic() + 30
    while len(pids_in(sum(job.lines.values(), []), "child")) < count:
        assert time.monotonic() < deadline, job.lines
        job.output.pump(0.1)
    return pids_in(sum(job.lines.values(), []), "child")


def test_failure_kills_what_a_task_left_behind(task_script: Path) -> None:
    job = cluster.start(task_script, cluster.local_cluster(2), cluster.Options(args=["child"]))
    children = _children(job)
    assert all(is_running(pid) for pid in children)
    job.kill(cluster.tasks(job.cluster)[0])
    with pytest.raises(
        cluster.LaunchError, match=r"worker 0 was killed by SIGKILL \(killed on purpose\)"
    ):
        job.wait(timeout=30)
    assert_gone([*(p.pid for p in job.processes.values()), *children])


def test_timeout_names_the_tasks_still_running_and_stops_them(task_script: Path) -> None:
    job = cluster.start(task_script, 2, cluster.Options(args=["child"]))
    children, start = _children(job), time.monotonic()
    with pytest.raises(
        cluster.LaunchError, match=r"Timed out after 3 s: worker 0, worker 1 still running"
    ):
        job.wait(timeout=3)
    assert time.monotonic() - start < 10
    assert_gone([*(p.pid for p in job.processes.values()), *children])


def test_start_up_timeout_names_the_tasks_not_listening(task_script: Path) -> None:
    spec = cluster.local_cluster(workers=2, ps=1)
    job = cluster.start(task_script, spec, cluster.Options(args=["sleep"]))
    with pytest.raises(
        cluster.LaunchError,
        match=r"Timed out after 2 s: worker 0, worker 1, ps 0 not listening yet",
    ):
        job.wait_listening(timeout=2)
    assert_gone([p.pid for p in job.processes.values()])


def test_keyboard_interrupt_stops_every_task(task_script: Path) -> None:
    """What a notebook interrupt does: KeyboardInterrupt in the main thread while waiting."""
    job = cluster.start(task_script, 2, cluster.Options(args=["child"]))
    children = _children(job)
    threading.Timer(0.5, _thread.interrupt_main).start()  # as SIGINT from Jupyter's button
    # A Jupyter kernel always handles SIGINT; this test process may have inherited it ignored
    # (a background job of a non-interactive shell), and then interrupt_main() does nothing.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            job.wait(timeout=60)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert_gone([*(p.pid for p in job.processes.values()), *children])


def _driver(task_script: Path) -> tuple[subprocess.Popen, list[int], list[int]]:
    """A separate process that launches 2 tasks, each of which starts a child of its own;
    returns it with the tasks' and their children's pids."""
    # Python keeps SIGINT ignored if it inherited it so (nohup, a background job): the driver
    # handles it as an interactive launching process does, whatever this test inherited.
    code = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from tpuhelpers import cluster\n"
        f"cluster.launch({str(task_script)!r}, 2, cluster.Options(args=['child']))"
    )
    driver = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    lines: list[str] = []
    deadline = time.monotonic() + 30
    while len(pids_in(lines, "pid")) + len(pids_in(lines, "child")) < 4:
        assert time.monotonic() < deadline, lines
        lines.append(driver.stdout.readline())
    return driver, pids_in(lines, "pid"), pids_in(lines, "child")


def test_sigint_to_the_launching_process_stops_every_task(task_script: Path) -> None:
    driver, tasks, children = _driver(task_script)
    driver.send_signal(signal.SIGINT)
    assert driver.wait(timeout=30) != 0
    assert_gone([*tasks, *children])


def test_sigkill_of_the_launching_process_leaves_no_task_nor_their_children(
    task_script: Path,
) -> None:
    """A crashed kernel cannot clean up: every task, and every child a task started, dies."""
    driver, tasks, children = _driver(task_script)
    assert all(is_running(pid) for pid in [*tasks, *children])
    driver.kill()
    driver.wait(timeout=30)
    assert_gone([*tasks, *children])


def test_background_servers_kill_and_restart(task_script: Path) -> None:
    spec = cluster.local_cluster(workers=2, ps=1, chief=1)
    options = cluster.Options(args=["listen"], roles=("worker", "ps"))
    chief, worker_0, worker_1, ps_0 = cluster.tasks(spec)
    with cluster.start(task_script, spec, options) as job:
        assert list(job.processes) == [worker_0, worker_1, ps_0]  # not the chief
        job.wait_listening(timeout=30)
        first = job.processes[worker_1].pid
        job.kill(worker_1)
        assert_gone([first])
        with pytest.raises(cluster.LaunchError, match="worker 0 is still running"):
            job.restart(worker_0)
        job.restart(worker_1)
        job.wait_listening(timeout=30)
        assert job.processes[worker_1].pid != first
        pids = [p.pid for p in job.processes.values()]
    assert_gone(pids)
    with pytest.raises(ValueError, match=r"Unknown task Task\(role='worker', index=7"):
        job.kill(cluster.Task("worker", 7, "127.0.0.1:1"))


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


def final_states(job: cluster.Job) -> dict[str, tuple[int, int, str]]:
    """Each worker's (replicas in sync, steps, weights fingerprint), from its output."""
    states = {}
    for task, lines in job.lines.items():
        text = "\n".join(lines)
        replicas = re.search(r"(\d+) replicas in sync", text)
        done = re.search(r"done: (\d+) steps, weights (\w+)", text)
        assert replicas and done, f"{task} did not finish:\n{text}"
        states[str(task)] = (int(replicas.group(1)), int(done.group(1)), done.group(2))
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

    def run(model_dir: str, *more: str) -> cluster.Job:
        args = [*common, f"--model-dir={model_dir}", *more]
        return cluster.launch("worker.py", spec, cluster.Options(args, tmp_path, timeout=240))

    uninterrupted = run("uninterrupted")
    assert_gone([p.pid for p in uninterrupted.processes.values()])
    states = final_states(uninterrupted)
    assert states["worker 0"] == states["worker 1"]  # same replicas, steps and weights, bit for bit
    assert states["worker 0"][:2] == (2, 40)

    with pytest.raises(cluster.LaunchError, match=r"worker 1 was killed by SIGKILL") as caught:
        run("resumed", "--crash-at-step=25")
    assert_gone([p.pid for p in caught.value.job.processes.values()])
    checkpoints = sorted(p.name for p in (tmp_path / "resumed" / "checkpoints").glob("*.index"))
    assert checkpoints == ["ckpt-20.index"]  # killed at step 25: the next one would be at 40

    resumed = run("resumed")
    assert_gone([p.pid for p in resumed.processes.values()])
    assert "resuming from the checkpoint of step 20" in resumed.lines[cluster.tasks(spec)[1]]
    assert final_states(resumed) == states  # the same step count, and even the same weights


def test_one_port_under_two_names_is_refused(task_script: Path) -> None:
    spec = {"worker": ["localhost:20001", "127.0.0.1:20001"]}
    with pytest.raises(ValueError, match=r"cluster\.worker\[1\] .* is also cluster\.worker\[0\]"):
        cluster.start(task_script, spec)


# run_script: what notebooks 10 and 15 use for their one-off child processes.
SPAWNER = """\
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
print(child.pid, flush=True)
print("to stderr", file=sys.stderr, flush=True)
time.sleep(float(sys.argv[1]))
print("done", flush=True)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not any(_alive(pid) for pid in pids)


def test_run_script_returns_the_output_and_leaves_no_process(tmp_path: Path) -> None:
    (tmp_path / "spawner.py").write_text(SPAWNER)
    result = cluster.run_script(tmp_path / "spawner.py", ["0.1"], timeout=60)
    grandchild = int(result.stdout.split()[0])
    assert result.returncode == 0 and result.stdout.endswith("done\n")
    assert result.stderr == "to stderr\n"
    assert _gone_within([grandchild], 10)  # it held stdout open: a plain subprocess.run hangs


def test_run_script_stops_everything_after_its_timeout(tmp_path: Path) -> None:
    (tmp_path / "spawner.py").write_text(SPAWNER)
    start = time.monotonic()
    with pytest.raises(cluster.LaunchError, match=r"spawner\.py ran over 2 s: it and its child"):
        cluster.run_script(tmp_path / "spawner.py", ["100"], timeout=2)
    assert time.monotonic() - start < 15


def test_run_script_children_end_when_their_kernel_is_killed(tmp_path: Path) -> None:
    # A stand-in for a Jupyter kernel running notebook 10's cell, killed with SIGKILL.
    (tmp_path / "spawner.py").write_text(
        SPAWNER.replace(
            "print(child.pid, flush=True)",
            ('open(sys.argv[2], "w").write(f"{os.getpid()} {child.pid}")'),
        ).replace("import subprocess", "import os, subprocess")
    )
    pids = tmp_path / "pids"
    kernel = subprocess.Popen([
        sys.executable, "-c",
        "import sys; from tpuhelpers import cluster; "
        "cluster.run_script(sys.argv[1], ['300', sys.argv[2]], timeout=600)",
        str(tmp_path / "spawner.py"), str(pids),
    ])  # fmt: skip
    deadline = time.monotonic() + 60
    while not (pids.exists() and pids.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    script, grandchild = map(int, pids.read_text().split())
    kernel.kill()
    kernel.wait(timeout=10)
    assert _gone_within([script, grandchild], 15), "the script or its child outlived the kernel"


ESCAPER = """\
import subprocess, sys, time
child = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True
)  # in a session of its own: not in the task's process group
open(sys.argv[1], "w").write(str(child.pid))
time.sleep(float(sys.argv[2]))
"""


@pytest.mark.parametrize("how", ["stop", "end"])
def test_a_child_in_its_own_session_ends_with_its_task(tmp_path: Path, how: str) -> None:
    # Before: a child started with start_new_session survived the cluster's stop.
    (tmp_path / "escaper.py").write_text(ESCAPER)
    pid_file = tmp_path / "pid"
    seconds = "300" if how == "stop" else "0.5"
    options = cluster.Options(args=[str(pid_file), seconds], timeout=60)
    with cluster.start(tmp_path / "escaper.py", 1, options) as job:
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        if how == "end":
            job.wait()
    assert _gone_within([int(pid_file.read_text())], 15), f"the child outlived its task ({how})"
