"""Multi-worker plumbing: `TF_CONFIG`, built and checked, and a launcher for local clusters.

Every process of a TensorFlow cluster reads the same cluster description and its own task from
the `TF_CONFIG` environment variable::

    {"cluster": {"worker": ["127.0.0.1:20001", "127.0.0.1:20002"]},
     "task": {"type": "worker", "index": 1}}

`make_tf_config` builds one and `parse_tf_config` / `read_tf_config` check one, with errors that
name the field that is wrong (`task.index`, `cluster.worker[1]`, ...).

`launch` runs a script once per task of a cluster on this machine, each process with its own
`TF_CONFIG`, streams every line the processes print with the task's name in front
(`[worker 0] ...`), enforces a timeout, and always cleans up: each task runs in its own process
group, which is killed on success, failure, timeout and interrupt. `start` does the same in the
background, for servers that run while the notebook works (parameter-server training)::

    result = cluster.launch("worker.py", workers=2, timeout=300)

TensorFlow is not imported here.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROLES = ("chief", "worker", "ps", "evaluator")
SINGLE_TASK_ROLES = ("chief", "evaluator")  # TensorFlow allows at most one of each
LOCAL_HOSTS = ("127.0.0.1", "localhost")
EXAMPLE = (
    '{"cluster": {"worker": ["127.0.0.1:20001", "127.0.0.1:20002"]}, '
    '"task": {"type": "worker", "index": 0}}'
)


class TFConfigError(ValueError):
    """A `TF_CONFIG` (or cluster description) is malformed; the message names the field."""


class LaunchError(RuntimeError):
    """Base class of the errors of a local cluster job.

    Attributes:
        result: What the job left (exit codes and every line printed), when it had started.
    """

    result: JobResult | None = None


class PortInUseError(LaunchError):
    """A task's address is already taken by another process."""


class TaskFailedError(LaunchError):
    """A task exited with an error, or was killed; the other tasks were stopped."""


class LaunchTimeoutError(LaunchError):
    """The job ran longer than its timeout; every task was stopped."""


# TF_CONFIG ------------------------------------------------------------------------------------


def _strategy_name(strategy: Any) -> str:
    """Returns the class name of a strategy given as an object, a class or a name."""
    if isinstance(strategy, str):
        return strategy
    return strategy.__name__ if isinstance(strategy, type) else type(strategy).__name__


def _is_parameter_server(strategy: Any) -> bool:
    # tf.distribute.experimental.ParameterServerStrategy is the class ParameterServerStrategyV2.
    return _strategy_name(strategy).startswith("ParameterServerStrategy")


def _check_address(address: object, where: str) -> str:
    host, _, port = str(address).rpartition(":") if isinstance(address, str) else ("", "", "")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise TFConfigError(
            f"{where} must be a 'host:port' string with a port from 1 to 65535, got {address!r}."
        )
    return address


def validate_cluster(cluster: object) -> dict[str, list[str]]:
    """Checks a cluster description: known roles, 'host:port' addresses, each used once.

    Args:
        cluster: A mapping from role (`chief`, `worker`, `ps`, `evaluator`) to a list of
            addresses.

    Returns:
        The cluster as a plain dict of lists.

    Raises:
        TFConfigError: The message names the field that is wrong (e.g. `cluster.worker[1]`).
    """
    if not isinstance(cluster, Mapping) or not cluster:
        raise TFConfigError(
            "cluster must be a non-empty JSON object mapping roles to lists of 'host:port' "
            f"addresses, got {cluster!r}. Example: {EXAMPLE}"
        )
    checked: dict[str, list[str]] = {}
    seen: dict[str, str] = {}
    for role, addresses in cluster.items():
        if role not in ROLES:
            raise TFConfigError(
                f"cluster.{role}: unknown role {role!r}. The roles are {', '.join(ROLES)} "
                "(TensorFlow 1's 'master' is 'chief' today)."
            )
        if isinstance(addresses, str) or not isinstance(addresses, Sequence) or not addresses:
            raise TFConfigError(
                f"cluster.{role} must be a non-empty list of 'host:port' strings, "
                f"got {addresses!r}."
            )
        if role in SINGLE_TASK_ROLES and len(addresses) > 1:
            raise TFConfigError(
                f"cluster.{role} has {len(addresses)} addresses; a cluster has at most one "
                f"{role}. Make the others workers."
            )
        for index, address in enumerate(addresses):
            where = f"cluster.{role}[{index}]"
            _check_address(address, where)
            if address in seen:
                raise TFConfigError(
                    f"{where} and {seen[address]} are the same address {address!r}: every task "
                    "needs its own port. Use cluster.local_cluster() to pick free ports."
                )
            seen[address] = where
        checked[role] = list(addresses)
    return checked


def validate_tf_config(config: object, *, strategy: Any = None) -> dict[str, Any]:
    """Checks a parsed `TF_CONFIG`: its cluster, its task, and that they fit the strategy.

    Args:
        config: The parsed JSON object, with `cluster` and `task`.
        strategy: Optionally, the strategy (object, class or class name) that will read it: a
            cluster with `ps` tasks is only valid for ParameterServerStrategy.

    Returns:
        The config as a plain dict.

    Raises:
        TFConfigError: The message names the field that is wrong (e.g. `task.index`).
    """
    if not isinstance(config, Mapping):
        raise TFConfigError(
            f"TF_CONFIG must be a JSON object with 'cluster' and 'task', got a "
            f"{type(config).__name__}. Example: {EXAMPLE}"
        )
    for key in ("cluster", "task"):
        if key not in config:
            raise TFConfigError(
                f"TF_CONFIG has no '{key}' (it has {sorted(config) or 'no keys'}): it needs "
                f"'cluster' (every task's address) and 'task' (this process). Example: {EXAMPLE}"
            )
    cluster = validate_cluster(config["cluster"])
    task = config["task"]
    if not isinstance(task, Mapping) or "type" not in task or "index" not in task:
        raise TFConfigError(
            "task must be a JSON object with 'type' and 'index', e.g. "
            f'{{"type": "worker", "index": 0}}, got {task!r}.'
        )
    role, index = task["type"], task["index"]
    if role not in ROLES:
        raise TFConfigError(f"task.type: unknown role {role!r}; the roles are {', '.join(ROLES)}.")
    if role not in cluster:
        raise TFConfigError(
            f"task.type is {role!r}, but the cluster has no {role!r} tasks "
            f"(it has {', '.join(cluster)})."
        )
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(cluster[role]):
        raise TFConfigError(
            f"task.index {index!r} is out of range: cluster.{role} has {len(cluster[role])} "
            f"address{'es' if len(cluster[role]) > 1 else ''}, so the index must be an integer "
            f"from 0 to {len(cluster[role]) - 1}."
        )
    if strategy is not None:
        name = _strategy_name(strategy)
        if "ps" in cluster and not _is_parameter_server(strategy):
            raise TFConfigError(
                f"cluster.ps: the cluster has parameter servers, but the strategy is {name}. "
                "Only ParameterServerStrategy uses 'ps' tasks: remove cluster.ps (all-reduce "
                "strategies keep variables on the workers) or use ParameterServerStrategy."
            )
        if _is_parameter_server(strategy) and not {"ps", "worker"} <= set(cluster):
            raise TFConfigError(
                f"cluster.ps / cluster.worker: {name} needs at least one 'ps' and one 'worker' "
                f"task, the cluster has {', '.join(cluster)}."
            )
    extra = {key: value for key, value in config.items() if key not in ("cluster", "task")}
    return {"cluster": cluster, "task": {"type": role, "index": index}, **extra}


def parse_tf_config(text: str, *, strategy: Any = None) -> dict[str, Any]:
    """Parses and checks the JSON text of a `TF_CONFIG`.

    Args:
        text: The JSON text.
        strategy: Optionally, the strategy that will read it (see `validate_tf_config`).

    Raises:
        TFConfigError: The text is not JSON, or a field is wrong (the message names it).
    """
    try:
        config = json.loads(text)
    except (json.JSONDecodeError, TypeError) as error:
        detail = f"{error.msg} at position {error.pos}" if hasattr(error, "msg") else error
        raise TFConfigError(
            f"TF_CONFIG is not valid JSON ({detail}): {text!r}. Example: {EXAMPLE}"
        ) from None
    return validate_tf_config(config, strategy=strategy)


def read_tf_config(*, strategy: Any = None) -> dict[str, Any]:
    """Reads and checks this process's `TF_CONFIG` environment variable.

    Raises:
        TFConfigError: The variable is not set, not JSON, or wrong (the message names the field).
    """
    text = os.environ.get("TF_CONFIG")
    if not text:
        raise TFConfigError(
            "TF_CONFIG is not set: a multi-worker process learns the cluster and its own task "
            f"from it. Example: {EXAMPLE}"
        )
    return parse_tf_config(text, strategy=strategy)


def make_tf_config(
    cluster: Mapping[str, Sequence[str]],
    task_type: str,
    task_index: int = 0,
    *,
    strategy: Any = None,
) -> dict[str, Any]:
    """Builds the `TF_CONFIG` of one task, checked (`json.dumps` it into the environment).

    Args:
        cluster: Role to addresses, the same for every task.
        task_type: This task's role: `chief`, `worker`, `ps` or `evaluator`.
        task_index: This task's index among the tasks of its role.
        strategy: Optionally, the strategy that will read it (see `validate_tf_config`).

    Raises:
        TFConfigError: The message names the field that is wrong.
    """
    config = {"cluster": cluster, "task": {"type": task_type, "index": task_index}}
    return validate_tf_config(config, strategy=strategy)


def _ephemeral_ports() -> tuple[int, int]:
    """The range the system picks ports from for port 0 and for outgoing connections."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 49152, 65535  # the IANA range, which macOS and Windows use


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """Returns `count` distinct TCP ports that are free on `host` right now.

    The ports come from below the system's ephemeral range: a port the system hands out for
    "any free port" (a Jupyter kernel's, say) could otherwise be taken by another program in the
    seconds between this choice and the moment a task, once TensorFlow is imported, listens on
    it.
    """
    low, _ = _ephemeral_ports()
    candidates = list(range(10_000, low)) if low > 11_000 else []
    random.shuffle(candidates)
    ports: list[int] = []
    with contextlib.ExitStack() as stack:  # keep each socket until all are chosen: no duplicates
        for port in [*candidates, *[0] * count]:  # port 0: the system's choice, as a fallback
            if len(ports) == count:
                break
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError:
                continue
            ports.append(sock.getsockname()[1])
    return ports


def local_cluster(
    workers: int = 2, *, ps: int = 0, chief: int = 0, host: str = "127.0.0.1"
) -> dict[str, list[str]]:
    """Returns a cluster on this machine with free ports: `{"worker": ["127.0.0.1:PORT", ...]}`.

    Args:
        workers: How many workers (at least 1).
        ps: How many parameter servers.
        chief: 1 to add a chief (the coordinator of parameter-server training), else 0.
        host: The address every task listens on.

    Raises:
        ValueError: A count is negative, or there are no workers.
    """
    counts = {"chief": chief, "worker": workers, "ps": ps}
    for role, count in counts.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"{role} must be a non-negative integer, got {count!r}.")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers!r}: a cluster needs workers.")
    ports = iter(free_ports(sum(counts.values()), host))
    return {
        role: [f"{host}:{next(ports)}" for _ in range(count)]
        for role, count in counts.items()
        if count
    }


def task_names(cluster: Mapping[str, Sequence[str]]) -> list[str]:
    """Returns the tasks of a cluster as names, `"worker 0"`, `"ps 0"`, in role order."""
    return [f"{role} {index}" for role in ROLES for index in range(len(cluster.get(role, ())))]


# The launcher ---------------------------------------------------------------------------------

# Runs the task's script as __main__, after asking Linux to kill the process if the launcher
# dies (a crashed kernel cannot clean up; this is the safety net behind the process groups).
_BOOTSTRAP = """\
import os, runpy, sys
parent = int(sys.argv.pop(1))
if sys.platform.startswith("linux"):
    import ctypes, signal
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() != parent:
    sys.exit("the launcher exited before this task started")
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
runpy.run_path(sys.argv[0], run_name="__main__")
"""

_LIVE_JOBS: set[Job] = set()

# Lines TensorFlow's C++ runtime prints at start-up, before its logging is set up, so that
# TF_CPP_MIN_LOG_LEVEL cannot hide them: the oneDNN notice, the CPU-instructions notice and the
# GPU-library probe of the full `tensorflow` wheel on a machine without a GPU. Informational
# (I) lines of these files only: warnings and errors always show.
STARTUP_NOISE = re.compile(
    r"WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR$"
    r"|I\d{4} [\d:.]+ +\d+ (port|cpu_feature_guard|cudart_stub)\.cc:\d+\] "
    r"|To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler"
)


def is_startup_noise(line: str) -> bool:
    """True for a TensorFlow start-up line that `quiet=True` keeps out of a job's output."""
    return STARTUP_NOISE.match(line) is not None


@atexit.register
def _stop_live_jobs() -> None:
    for job in list(_LIVE_JOBS):
        job.stop()


def describe_exit(code: int) -> str:
    """An exit status in words: `exited with code 1`, `was killed by SIGKILL`."""
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _port_is_free(address: str) -> bool:
    host, _, port = address.rpartition(":")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As servers do: a port that a finished task left in TIME_WAIT is free to use again.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, int(port)))
        except OSError:
            return False
    return True


@dataclass
class JobResult:
    """What a finished job left: each task's exit code and the lines it printed."""

    returncodes: dict[str, int | None]
    lines: dict[str, list[str]]
    seconds: float
    pids: dict[str, int] = field(default_factory=dict)
    killed: list[str] = field(default_factory=list)
    hidden: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True if every task exited with code 0."""
        return all(code == 0 for code in self.returncodes.values())


class Job:
    """The processes of a local cluster, one per task, each in its own process group.

    Create it with `start`. Use it as a context manager (or call `stop`) so that no process
    outlives it.
    """

    def __init__(
        self,
        script: str | os.PathLike,
        cluster: Mapping[str, Sequence[str]],
        tasks: Sequence[str],
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike | None = None,
        threads: int | None = 1,
        echo: bool = True,
        kill_on: tuple[str, str] | None = None,
        quiet: bool = True,
    ) -> None:
        self.cluster = {role: list(addresses) for role, addresses in cluster.items()}
        self.tasks = list(tasks)
        self.echo = echo
        self.kill_on = kill_on
        self.quiet = quiet
        self.lines: dict[str, list[str]] = {name: [] for name in self.tasks}
        self.hidden: dict[str, list[str]] = {name: [] for name in self.tasks}
        self.killed: list[str] = []
        self.processes: dict[str, subprocess.Popen] = {}
        self._queue: queue.Queue[tuple[str, str | None]] = queue.Queue()
        self._open_streams = set(self.tasks)
        self._start = time.monotonic()
        self._lock = threading.Lock()
        self._how = (script, args, env, cwd, threads)
        _LIVE_JOBS.add(self)
        try:
            for name in self.tasks:
                self._spawn(name)
        except BaseException:
            self.stop()
            raise

    def _spawn(self, name: str) -> None:
        script, args, env, cwd, threads = self._how
        role, index = name.split()
        environ = dict(os.environ if env is None else env)
        tf_config = {"cluster": self.cluster, "task": {"type": role, "index": int(index)}}
        environ["TF_CONFIG"] = json.dumps(tf_config)
        environ.setdefault("PYTHONUNBUFFERED", "1")
        environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        if threads:
            environ["TF_NUM_INTRAOP_THREADS"] = str(threads)
            environ["TF_NUM_INTEROP_THREADS"] = str(max(2, threads))  # collectives need 2
        command = [sys.executable, "-u", "-c", _BOOTSTRAP, str(os.getpid()), str(script), *args]
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=environ,
            start_new_session=True,  # its own process group: killed with everything it started
            text=True,
            errors="replace",
        )
        self.processes[name] = process
        threading.Thread(target=self._read, args=(name, process), daemon=True).start()

    @property
    def pids(self) -> dict[str, int]:
        """Each task's process id (also its process group id)."""
        return {name: process.pid for name, process in self.processes.items()}

    def _read(self, name: str, process: subprocess.Popen) -> None:
        for line in process.stdout:
            line = line.rstrip("\n")
            if self.kill_on and self.kill_on[0] == name and self.kill_on[1] in line:
                self.kill(name)  # right here, not in the waiting thread: no extra delay
            self._queue.put((name, line))
        process.stdout.close()
        self._queue.put((name, None))

    def _emit(self, name: str, line: str) -> None:
        if self.quiet and is_startup_noise(line):
            self.hidden[name].append(line)  # kept, not shown
            return
        self.lines[name].append(line)
        if self.echo:
            print(f"[{name}] {line}", flush=True)

    def print_output(self, timeout: float = 0.0) -> None:
        """Prints (and records) the lines received so far; waits up to `timeout` for more."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                name, line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return
            if line is None:
                self._open_streams.discard(name)
            else:
                self._emit(name, line)

    def kill(self, name: str) -> None:
        """Kills one task (and every process it started) at once, as a machine failure would.

        Raises:
            KeyError: No task has that name.
        """
        if name not in self.processes:
            raise KeyError(f"no task {name!r}; the tasks are {', '.join(self.processes)}")
        with self._lock:
            if name not in self.killed:
                self.killed.append(name)
        _kill_group(self.processes[name])

    def restart(self, name: str) -> None:
        """Starts a killed task again: same script, address and `TF_CONFIG`, as a replacement
        machine would.

        Raises:
            LaunchError: The task is still running.
        """
        if self.processes[name].poll() is None:
            raise LaunchError(f"{name} is still running: kill it before restarting it.")
        self.print_output(timeout=0.2)
        with self._lock:
            if name in self.killed:
                self.killed.remove(name)
        self._open_streams.add(name)
        self._spawn(name)

    def wait_until_listening(self, timeout: float = 60.0) -> None:
        """Waits until every task accepts connections on its address (servers are up).

        Raises:
            TaskFailedError: A task exited first.
            LaunchTimeoutError: Not every task listened within `timeout` seconds.
        """
        addresses = {}
        for name in self.processes:
            role, index = name.split()
            addresses[name] = self.cluster[role][int(index)]
        deadline = time.monotonic() + timeout
        waiting = dict(addresses)
        while waiting:
            self.print_output(timeout=0.05)
            self._raise_if_failed()
            for name, address in list(waiting.items()):
                host, _, port = address.rpartition(":")
                with contextlib.suppress(OSError), socket.create_connection((host, int(port)), 0.2):
                    del waiting[name]
            if waiting and time.monotonic() > deadline:
                self.stop()
                raise LaunchTimeoutError(
                    f"{', '.join(waiting)} did not listen on {', '.join(waiting.values())} "
                    f"within {timeout:g} s; every task was stopped."
                )

    def _failed(self) -> tuple[str, int] | None:
        """The failed task most likely to be the cause: killed on purpose, then by a signal."""
        failed = {n: p.poll() for n, p in self.processes.items() if p.poll() not in (None, 0)}
        if not failed:
            return None
        name = min(failed, key=lambda n: (n not in self.killed, failed[n] > 0))
        return name, failed[name]

    def _raise_if_failed(self) -> None:
        failed = self._failed()
        if failed is None:
            return
        name, code = failed
        self.print_output(timeout=0.3)  # the failed task's last words, and its partners'
        seconds = time.monotonic() - self._start
        others = []
        for other, process in self.processes.items():
            if other != name:
                state = process.poll()
                others.append(
                    f"stopped {other}" if state is None else f"{other} {describe_exit(state)}"
                )
        self.stop()
        cause = " (killed on purpose, as a machine failure would)" if name in self.killed else ""
        tail = "\n".join(f"    {line}" for line in self.lines[name][-5:])
        error = TaskFailedError(
            f"{name} {describe_exit(code)}{cause} after {seconds:.1f} s"
            + "".join(f"; {text}" for text in others)
            + "."
            + (f" Its last lines:\n{tail}" if tail else "")
        )
        error.result = self.result()
        raise error

    def wait(self, timeout: float | None = None) -> JobResult:
        """Streams the tasks' output until all of them exit, then returns their results.

        Args:
            timeout: Seconds to wait; None waits for ever.

        Raises:
            TaskFailedError: A task exited with an error or was killed; the others were stopped.
            LaunchTimeoutError: The timeout passed; every task was stopped.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        all_exited_at = None
        try:
            while True:
                self.print_output(timeout=0.1)
                self._raise_if_failed()
                if all(p.poll() is not None for p in self.processes.values()):
                    all_exited_at = all_exited_at or time.monotonic()
                    # Done once every stream is closed; a stream held open by a process the
                    # task left behind closes when stop() kills the group.
                    if not self._open_streams or time.monotonic() - all_exited_at > 2:
                        break
                if deadline is not None and time.monotonic() > deadline:
                    running = [n for n, p in self.processes.items() if p.poll() is None]
                    self.stop()
                    error = LaunchTimeoutError(
                        f"timed out after {timeout:g} s: {', '.join(running) or 'no task'} still "
                        "running; every task was stopped. Raise the timeout, or look at the "
                        "output above for a task that waits for a partner."
                    )
                    error.result = self.result()
                    raise error
        finally:
            self.stop()  # on success, failure, timeout and KeyboardInterrupt alike
        return self.result()

    def result(self) -> JobResult:
        """The exit codes (None while running) and lines so far."""
        return JobResult(
            returncodes={name: p.poll() for name, p in self.processes.items()},
            lines=self.lines,
            seconds=time.monotonic() - self._start,
            pids=self.pids,
            killed=list(self.killed),
            hidden=self.hidden,
        )

    def stop(self) -> None:
        """Kills every task's process group and reaps the processes. Safe to call twice."""
        for process in self.processes.values():
            _kill_group(process)
        for process in self.processes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
        _LIVE_JOBS.discard(self)

    def __enter__(self) -> Job:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _kill_group(process: subprocess.Popen) -> None:
    # The group is killed even after its leader exited: a task may have left children behind.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _check_workers(workers: object) -> int:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(
            f"workers must be a positive integer (the number of worker processes), got "
            f"{workers!r}. Pass a cluster dict instead to choose the roles and addresses."
        )
    return workers


def start(
    script: str | os.PathLike,
    workers: int | Mapping[str, Sequence[str]] = 2,
    *,
    roles: Iterable[str] | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike | None = None,
    threads: int | None = 1,
    echo: bool = True,
    kill_on: tuple[str, str] | None = None,
    quiet: bool = True,
) -> Job:
    """Starts one process per task of a local cluster, in the background.

    Args:
        script: The Python script every task runs (it reads its task from `TF_CONFIG`).
        workers: How many worker processes (on free ports), or a whole cluster dict such as
            `local_cluster(workers=2, ps=1, chief=1)`.
        roles: Which roles to start (default: all); e.g. `("worker", "ps")` when this process
            is the chief, the coordinator of parameter-server training.
        args: Command-line arguments for the script.
        env: The tasks' environment (default: this process's), plus `TF_CONFIG`.
        cwd: The tasks' working directory.
        threads: TensorFlow threads per task (`TF_NUM_INTRAOP_THREADS`), so that tasks sharing
            a machine do not fight over its cores; None leaves TensorFlow's default.
        echo: Print each line as `[worker 0] line`.
        kill_on: `(task, text)`: kill that task when it prints a line containing `text`, to
            simulate a machine failure at a known point.
        quiet: Keep TensorFlow's informational start-up lines (`is_startup_noise`), which
            TF_CPP_MIN_LOG_LEVEL cannot hide, out of the output and `lines`; they are kept in
            `hidden`. Warnings and errors always show.

    Raises:
        ValueError: No workers, or an unknown role in `roles`.
        TFConfigError: The cluster dict is malformed (the message names the field).
        PortInUseError: Another process listens on a task's address.
        FileNotFoundError: The script does not exist.
    """
    if isinstance(workers, Mapping):
        cluster = validate_cluster(workers)
    else:
        cluster = local_cluster(_check_workers(workers))
    if "worker" not in cluster:
        raise ValueError(f"the cluster has no workers (roles: {', '.join(cluster)}).")
    roles = list(cluster) if roles is None else list(roles)
    for role in roles:
        if role not in cluster:
            raise ValueError(f"roles: {role!r} is not in the cluster ({', '.join(cluster)}).")
    tasks = [name for name in task_names(cluster) if name.split()[0] in roles]
    for name in task_names(cluster):
        role, index = name.split()
        address = cluster[role][int(index)]
        if address.rpartition(":")[0] in LOCAL_HOSTS and not _port_is_free(address):
            raise PortInUseError(
                f"cluster.{role}[{index}]: port {address} is already in use by another process. "
                "Pick free ports with cluster.local_cluster(), or stop what listens there."
            )
    if not Path(cwd or ".", script).is_file():
        raise FileNotFoundError(f"script {script!r} not found (in {Path(cwd or '.').resolve()}).")
    return Job(
        script,
        cluster,
        tasks,
        args=args,
        env=env,
        cwd=cwd,
        threads=threads,
        echo=echo,
        kill_on=kill_on,
        quiet=quiet,
    )


def launch(
    script: str | os.PathLike,
    workers: int | Mapping[str, Sequence[str]] = 2,
    *,
    timeout: float | None = 600.0,
    **options: Any,
) -> JobResult:
    """Runs a script once per task of a local cluster, streams the output, and waits.

    Takes the arguments of `start`, plus `timeout` in seconds. Every process is gone when it
    returns or raises, whatever happened (including a KeyboardInterrupt).

    Raises:
        TaskFailedError: A task failed or was killed; the others were stopped.
        LaunchTimeoutError: The job took longer than `timeout`; every task was stopped.
        And the errors of `start`.
    """
    with start(script, workers, **options) as job:
        return job.wait(timeout)
