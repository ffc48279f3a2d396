"""A launcher for local TensorFlow clusters: a process per task, none outliving the launcher."""

import contextlib
import dataclasses
import json
import os
import queue
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from typing import IO, NamedTuple

from tpuhelpers import checks

ROLES = ("chief", "worker", "ps", "evaluator")
_LOOPBACK = r"localhost|127(\.\d+){3}|\[::1\]"

NOISE = re.compile(  # TensorFlow's start-up notices, which TF_CPP_MIN_LOG_LEVEL cannot hide
    r"WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR$"
    r"|I\d{4} [\d:.]+ +\d+ (port|cpu_feature_guard|cudart_stub)\.cc:\d+\] "
    r"|To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler"
)

# A task's process leads its group, forks the script, then kills what it left; if the launcher dies
# (SIGKILL too: PDEATHSIG), all the script started (a CHILD_SUBREAPER gets orphans), then its group.
_WATCHDOG = """\
import os, runpy, signal, sys
def kill_all(*_):
    parents = {}
    for pid in filter(str.isdigit, os.listdir("/proc") if sys.platform == "linux" else ()):
        try: parents[int(pid)] = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError): pass
    found = [os.getpid()]
    for pid in found: found += [child for child, parent in parents.items() if parent == pid]
    for pid in found[1:]:
        try: os.kill(pid, signal.SIGKILL)
        except OSError: pass
signal.signal(signal.SIGTERM, lambda *_: (kill_all(), os.killpg(0, signal.SIGKILL)))
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36  # prctl(2): parent's death, orphans adopted
libc = sys.platform == "linux" and __import__("ctypes").CDLL(None)
libc and (libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM), libc.prctl(PR_SET_CHILD_SUBREAPER, 1))
os.getppid() == int(sys.argv[1]) or os.killpg(0, signal.SIGKILL)
if (script := os.fork()) == 0:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.argv = sys.argv[2:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
    runpy.run_path(sys.argv[0], run_name="__main__")
    sys.exit()
code = os.waitstatus_to_exitcode(os.waitpid(script, 0)[1])
kill_all()
os.kill(os.getpid(), -code) if code < 0 else sys.exit(code)
"""

_POPEN = {"start_new_session": True, "text": True, "errors": "replace", "stdin": subprocess.DEVNULL}
_POPEN |= {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}  # its own group, one text stream


class LaunchError(RuntimeError):
    """A task failed, or a wait timed out; every task was stopped. `job`: what they left."""


class Task(NamedTuple):
    """One task of a cluster: its role, its index among that role's tasks, and its address."""

    role: str
    index: int
    address: str

    def __str__(self) -> str:
        return f"{self.role} {self.index}"


def tasks(cluster: Mapping[str, list[str]]) -> list[Task]:
    """The tasks of a cluster, in role order: chief, workers, parameter servers, evaluator."""
    return [Task(r, i, a) for r in ROLES for i, a in enumerate(cluster.get(r, ()))]


def local_cluster(workers: int = 2, *, ps: int = 0, chief: int = 0) -> dict[str, list[str]]:
    """A cluster on 127.0.0.1, e.g. `{"worker": ["127.0.0.1:PORT", ...]}`, with free ports."""
    counts = {"chief": checks.one_of(chief, (0, 1), "chief count"), "worker": workers, "ps": ps}
    checks.integer(workers, "workers", hint="A cluster needs workers.")
    if ps != 0:
        checks.integer(ps, "ps", hint="Or 0 for no parameter servers.")
    ports: list[int] = []  # below the system's own range, so that no other program takes one
    with contextlib.ExitStack() as stack:  # each socket stays bound until all are chosen
        for port in random.sample(range(10_000, 32_768), 1000):
            with contextlib.suppress(OSError):
                stack.enter_context(socket.socket()).bind(("127.0.0.1", port))
                ports.append(port)
            if len(ports) == sum(counts.values()):
                break
    return {r: [f"127.0.0.1:{ports.pop()}" for _ in range(n)] for r, n in counts.items() if n}


@dataclasses.dataclass(frozen=True)
class Options:
    """How `start` and `launch` run a cluster's tasks."""

    args: tuple[str, ...] = ()  # the script's command-line arguments
    cwd: str | os.PathLike | None = None  # the tasks' working directory, where the script is
    roles: tuple[str, ...] = ROLES  # e.g. ("worker", "ps") when this process is the chief
    timeout: float = 600.0  # seconds `launch` waits for every task to exit
    allow_remote: bool = False  # addresses other than loopback: only on a network you trust

    def __post_init__(self) -> None:
        checks.of_type(self.args, (list, tuple), "args")
        for role in checks.of_type(self.roles, tuple, "roles"):
            checks.one_of(role, ROLES, "role")
        checks.number(self.timeout, "timeout", minimum=0.1)


def describe_exit(code: int) -> str:
    """An exit status in words: `exited with code 1`, `was killed by SIGKILL`."""
    return f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"


def _kill_group(process: subprocess.Popen) -> None:
    """Stops a task: SIGTERM (its watchdog kills all it started), then SIGKILL to its group."""
    with contextlib.suppress(ProcessLookupError, PermissionError, subprocess.TimeoutExpired):
        process.poll() is None and os.kill(process.pid, signal.SIGTERM)
        process.wait(timeout=5)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # exited or not: it may have left children
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


class Output:
    """The tasks' output, read in threads; `pump` shows it as `[task] line` without `NOISE`."""

    def __init__(self) -> None:
        self.lines: dict[Task, list[str]] = {}
        self.readers: list[threading.Thread] = []
        self._queue: queue.Queue[tuple[Task, str]] = queue.Queue()

    def follow(self, task: Task, stream: IO[str]) -> None:
        """Starts reading a task's output, in a thread of its own."""
        self.lines.setdefault(task, [])
        self.readers.append(threading.Thread(target=self._read, args=(task, stream), daemon=True))
        self.readers[-1].start()

    def _read(self, task: Task, stream: IO[str]) -> None:
        for line in stream:
            self._queue.put((task, line.rstrip("\n")))
        stream.close()

    def pump(self, timeout: float) -> None:
        """Shows and records the lines received so far, waiting up to `timeout` for more."""
        with contextlib.suppress(queue.Empty):
            while True:
                task, line = self._queue.get(timeout=timeout)
                timeout = 0.0
                if not NOISE.match(line):
                    self.lines[task].append(line)
                    print(f"[{task}] {line}", flush=True)


class Job(contextlib.AbstractContextManager):
    """The tasks of a local cluster, one process each, from `start`; nothing outlives `stop`."""

    def __init__(self, script: str, cluster: dict[str, list[str]], options: Options) -> None:
        self.script, self.cluster, self.options = script, cluster, options
        self.processes: dict[Task, subprocess.Popen] = {}
        self.killed: list[Task] = []
        self.output = Output()
        self.lines = self.output.lines  # each task's lines, without TensorFlow's start-up notices
        try:
            for task in [task for task in tasks(cluster) if task.role in options.roles]:
                self._spawn(task)
        except BaseException:
            self.stop()
            raise

    def _spawn(self, task: Task) -> None:
        config = {"cluster": self.cluster, "task": {"type": task.role, "index": task.index}}
        env = {**os.environ, "TF_CONFIG": json.dumps(config), "PYTHONUNBUFFERED": "1"}
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env.setdefault("TF_NUM_INTRAOP_THREADS", "1")  # the tasks share this machine's cores
        env.setdefault("TF_NUM_INTEROP_THREADS", "2")  # collectives need 2
        command = [sys.executable, "-u", "-c", _WATCHDOG, str(os.getpid()), self.script]
        self.processes[task] = process = subprocess.Popen(
            [*command, *self.options.args], cwd=self.options.cwd, env=env, **_POPEN
        )
        self.output.follow(task, process.stdout)

    def kill(self, task: Task) -> None:
        """Kills a task and all it started at once (SIGKILL), as a machine failure would."""
        self.killed.append(checks.one_of(task, self.processes, "task"))
        _kill_group(self.processes[task])

    def restart(self, task: Task) -> None:
        """Starts a killed task again: the same script, address and `TF_CONFIG`."""
        if self.processes[checks.one_of(task, self.processes, "task")].poll() is None:
            raise LaunchError(f"{task} is still running: kill it before restarting it.")
        self.killed = [other for other in self.killed if other != task]
        self._spawn(task)

    def _check(self, waiting: list[Task], what: str, timeout: float, deadline: float) -> None:
        self.output.pump(0.1)
        codes = self.returncodes
        failed = {task: code for task, code in codes.items() if code not in (None, 0)}
        if failed:  # the likely cause first: a task killed on purpose, then by a signal
            task = min(failed, key=lambda t: (t not in self.killed, failed[t] > 0))
            self.output.pump(0.3)  # its last words, and its partners'
            cause = " (killed on purpose)" if task in self.killed else ""
            last = "".join(f"\n    {line}" for line in self.output.lines[task][-5:])
            message = f"{task} {describe_exit(failed[task])}{cause}. Its last lines:{last}"
        elif time.monotonic() > deadline:
            message = f"Timed out after {timeout:g} s: {', '.join(map(str, waiting))} {what}."
        else:
            return
        running = [str(task) for task, code in codes.items() if code is None]
        self.stop()
        error = LaunchError(f"{message}\nStopped: {', '.join(running) or 'none was running'}.")
        error.job = self
        raise error

    def wait_listening(self, timeout: float = 120.0) -> None:
        """Waits until every task accepts connections; a LaunchError if one exits or times out."""
        deadline, waiting = time.monotonic() + timeout, list(self.processes)
        while waiting:
            self._check(waiting, "not listening yet", timeout, deadline)
            for task in waiting[:]:  # a task listens once it accepts a connection
                host, port = task.address.rsplit(":", 1)
                with contextlib.suppress(OSError), socket.create_connection((host, port)):
                    waiting.remove(task)

    def wait(self, timeout: float | None = None) -> "Job":
        """Shows the output until all tasks exit; a LaunchError on a failure or after `timeout`."""
        timeout = timeout or self.options.timeout
        deadline = time.monotonic() + timeout
        try:
            while running := [task for task, code in self.returncodes.items() if code is None]:
                self._check(running, "still running", timeout, deadline)
            self._check([], "", timeout, float("inf"))  # a failure among the last to end
        finally:
            self.stop()  # on success, failure, timeout and KeyboardInterrupt alike
        for reader in self.output.readers:  # the lines still on their way
            reader.join(timeout=2)
        self.output.pump(0)
        return self

    @property
    def returncodes(self) -> dict[Task, int | None]:
        """Each task's exit code; None while it runs."""
        return {task: process.poll() for task, process in self.processes.items()}

    def stop(self, *_exc_info: object) -> None:
        """Kills every task's process group and reaps the processes. Safe to call twice."""
        for process in self.processes.values():
            _kill_group(process)

    __exit__ = stop


def run_script(
    script: str | os.PathLike, args=(), *, timeout: float, **popen
) -> subprocess.CompletedProcess:
    """`subprocess.run(..., capture_output=True, text=True)` under `start`'s watchdog: the script
    and its children end with this process, after `timeout` s (LaunchError), or on an interrupt."""
    command = [sys.executable, "-u", "-c", _WATCHDOG, str(os.getpid()), str(script), *args]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, **{**_POPEN, "stdout": out, "stderr": err, **popen})
        try:
            process.wait(timeout=checks.number(timeout, "timeout", 0.1))
        except subprocess.TimeoutExpired:
            stopped = f"{script} ran over {timeout:g} s: it and its children were stopped."
            raise LaunchError(stopped) from None
        finally:
            _kill_group(process)  # and whatever it left running
        out.seek(0), err.seek(0)
        return subprocess.CompletedProcess(command, process.returncode, out.read(), err.read())


def start(script: str | os.PathLike, cluster: dict | int, options: Options = Options()) -> Job:
    """Starts a process per task of `cluster` (or of that many workers); ValueError if it is bad."""
    spec = local_cluster(cluster) if isinstance(cluster, int) else cluster
    found: dict[str, str] = {}  # normalised address -> where it was given
    for role, addresses in checks.of_type(spec, Mapping, "cluster").items():
        checks.one_of(role, ROLES, "role in cluster (TensorFlow 1's 'master' is 'chief')")
        for index, given in enumerate(checks.of_type(addresses, list, f"cluster.{role}")):
            address = checks.address(given, where := f"cluster.{role}[{index}]")
            if address in found:
                raise ValueError(f"{where} ({given!r}) is also {found[address]}: one port a task")
            found[address] = where
            if not (options.allow_remote or re.fullmatch(_LOOPBACK, address.rpartition(":")[0])):
                raise ValueError(
                    f"{Task(role, index, given)}: {given} is not loopback; TensorFlow's gRPC "
                    "servers have no authentication: use 127.0.0.1, or Options(allow_remote=True) "
                    "on a trusted network."
                )
    if not found:
        raise ValueError(f"The cluster needs tasks, each with its own address: {spec}.")
    return Job(str(script), dict(spec), options)


def launch(script: str | os.PathLike, cluster: dict | int, options: Options = Options()) -> Job:
    """Runs a script once per task (see `start`) and waits for the end (see `Job.wait`)."""
    return start(script, cluster, options).wait()  # wait() stops every task, whatever happens
