"""The watchdog each cluster task runs under (`command`): nothing the task starts outlives it."""

import argparse
import contextlib
import ctypes
import os
import runpy
import signal
import sys

PR_SET_PDEATHSIG = 1  # prctl(2) option: the signal this process gets when its parent dies
PR_SET_CHILD_SUBREAPER = 36  # prctl(2) option: its descendants' orphans become its children
STOP_SIGNAL = signal.SIGTERM  # sent when the launcher dies (SIGKILL too), and by `cluster`


def command(script: str, *args: str) -> list[str]:
    """The command running `script` under a watchdog of this process: this file, by its path."""
    return [sys.executable, "-u", os.path.abspath(__file__), str(os.getpid()), "--", script, *args]


def kill_descendants() -> None:
    """Kills (SIGKILL) all this process started, and all they started, in any process group."""
    parents: dict[int, int] = {}  # pid: its parent's, from /proc (Linux only)
    for pid in filter(str.isdigit, os.listdir("/proc") if sys.platform == "linux" else ()):
        with contextlib.suppress(OSError, IndexError, ValueError), open(f"/proc/{pid}/stat") as f:
            parents[int(pid)] = int(f.read().rsplit(")", 1)[1].split()[1])  # pid (name) S ppid
    found = [os.getpid()]
    for pid in found:  # each process after its parent
        found += [child for child, parent in parents.items() if parent == pid]
    for pid in found[1:]:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> None:
    """Runs SCRIPT in a child, kills all it left, ends as it did (exit code or signal); kills all
    SCRIPT started (orphans come here), then its group, on `STOP_SIGNAL` or if PARENT is gone."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("parent", type=int, help="the launcher's pid: all ends when it does")
    parser.add_argument("script", help="the Python script to run, as `python SCRIPT ARG ...`")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    options = parser.parse_args(argv)
    signal.signal(STOP_SIGNAL, lambda *_: (kill_descendants(), os.killpg(0, signal.SIGKILL)))
    if sys.platform == "linux":
        libc = ctypes.CDLL(None)
        libc.prctl(PR_SET_PDEATHSIG, STOP_SIGNAL)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != options.parent:  # it died before PR_SET_PDEATHSIG: this one was adopted
        os.killpg(0, signal.SIGKILL)
    if (child := os.fork()) == 0:
        signal.signal(STOP_SIGNAL, signal.SIG_DFL)
        sys.argv = [options.script, *options.args]  # sys.path: its folder, the working directory
        sys.path[:1] = [os.path.dirname(os.path.abspath(options.script)), ""]
        runpy.run_path(options.script, run_name="__main__")
        sys.exit()
    code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    kill_descendants()
    os.kill(os.getpid(), -code) if code < 0 else sys.exit(code)  # its signal, or its exit code


if __name__ == "__main__":
    main()
