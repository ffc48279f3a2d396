"""Installs the curriculum's pinned stack for this machine's hardware, and the helper package.

Every notebook's first cell downloads this file from a release of the repository and runs it
where the helper package is missing (Colab, Kaggle, a fresh TPU VM)::

    import install_stack
    install_stack.install(release="v0.2.0", stack="tensorflow")    # what the cell runs

    python stacks/install.py --source . --hardware tpu --dry-run    # resolve only, print pins

It picks the hardware the way `tpuhelpers.hardware.find_tpu` does (TPU device files, then
NVIDIA device files, else the CPU), keeps a TensorFlow that the runtime already has when it can
use this hardware, refuses one that cannot (and says what to uninstall), installs only the
versions pinned in `stacks/<name>.txt` (used as pip constraints, so the helper package can never
upgrade what the TensorFlow wheel pinned), and prints what it installed. It uses only the
standard library: it runs before anything else is installed.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import importlib.metadata
import json
import subprocess
import sys
from collections.abc import Callable, Mapping

PIP_TIMEOUT = 1800  # seconds for the one pip call that installs the stack
REPOSITORY = "tpu-curriculum/tpu-curriculum"
HARDWARE = ("tpu", "gpu", "cpu")
# The distributions that provide the `tensorflow` module.
TENSORFLOW_DISTRIBUTIONS = ("tensorflow-tpu", "tensorflow", "tensorflow-cpu")
# (stack, hardware) -> what to install when missing, and the constraints file that pins it.
STACKS: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("tensorflow", "tpu"): (("tensorflow-tpu",), "tpu.txt"),
    ("tensorflow", "gpu"): (("tensorflow[and-cuda]",), "gpu.txt"),
    ("tensorflow", "cpu"): (("tensorflow-cpu",), "cpu.txt"),
    ("jax", "tpu"): (("jax[tpu]", "tensorflow-cpu"), "jax.txt"),
    ("jax", "gpu"): (("jax[cuda12]", "tensorflow-cpu"), "jax.txt"),
    ("jax", "cpu"): (("jax", "tensorflow-cpu"), "jax.txt"),
    # PyTorch/XLA (notebook 15): libtpu on a TPU; elsewhere its XLA CPU devices (no CUDA plugin).
    ("pytorch", "tpu"): (("torch", "torch-xla[tpu]", "lightning", "accelerate"), "pytorch_xla.txt"),
    ("pytorch", "gpu"): (("torch", "torch-xla", "lightning", "accelerate"), "pytorch_xla.txt"),
    ("pytorch", "cpu"): (("torch", "torch-xla", "lightning", "accelerate"), "pytorch_xla.txt"),
}
STACK_NAMES = ("tensorflow", "jax", "pytorch")


class StackError(RuntimeError):
    """The runtime has something that cannot work on this hardware; the message says the fix."""


def detect_hardware(files: Callable[[str], list[str]] = glob.glob) -> str:
    """Returns `"tpu"`, `"gpu"` or `"cpu"` from the device files this machine has."""
    if files("/dev/accel*") or files("/dev/vfio/[0-9]*"):
        return "tpu"
    return "gpu" if files("/dev/nvidia[0-9]*") else "cpu"


def installed_versions(names: tuple[str, ...] = TENSORFLOW_DISTRIBUTIONS + ("jax",)) -> dict:
    """Returns {distribution: version} for those of `names` that are installed."""
    found = {}
    for name in names:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found[name] = importlib.metadata.version(name)
    return found


def plan(stack: str, hardware: str, installed: Mapping[str, str]) -> tuple[list[str], str]:
    """Decides what to install.

    Args:
        stack: `"tensorflow"` (notebooks 01-09), `"jax"` (Keras on JAX, notebook 10) or
            `"pytorch"` (PyTorch/XLA, notebook 15).
        hardware: `"tpu"`, `"gpu"` or `"cpu"`.
        installed: The relevant distributions already installed, {name: version}.

    Returns:
        The requirements to install (before the helper package), and the constraints file name.

    Raises:
        StackError: An installed TensorFlow cannot use this hardware, or a name is unknown.
    """
    if (stack, hardware) not in STACKS:
        raise StackError(
            f"Unknown stack {stack!r} or hardware {hardware!r}: stacks are "
            f"{', '.join(STACK_NAMES)}, "
            f"hardware is one of {', '.join(HARDWARE)}."
        )
    wanted, constraints = STACKS[stack, hardware]
    tensorflow = {n: v for n, v in installed.items() if n in TENSORFLOW_DISTRIBUTIONS}
    if (
        stack == "tensorflow"
        and hardware == "tpu"
        and tensorflow
        and "tensorflow-tpu" not in tensorflow
    ):
        name, version = next(iter(tensorflow.items()))
        raise StackError(
            f"This runtime has {name} {version}, a TensorFlow build that cannot use the TPU. "
            f"Uninstall it (`%pip uninstall -y {name}`), restart the runtime (Colab: Runtime "
            "> Restart session), and run this cell again: it then installs tensorflow-tpu."
        )
    keep = [r for r in wanted if tensorflow and r.startswith("tensorflow")]
    keep += [r for r in wanted if "jax" in installed and r.startswith("jax")]
    return [r for r in wanted if r not in keep], constraints


def pip_command(
    requirements: list[str], constraints: str, source: str, helper: str, dry_run: bool
) -> list[str]:
    """The pip command line: the stack's requirements and the helper, under the constraints."""
    command = [sys.executable, "-m", "pip", "install", "--quiet", "-c", f"{source}/{constraints}"]
    if dry_run:
        command += ["--dry-run", "--ignore-installed", "--report", "-"]
    return command + requirements + [helper]


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


def install(
    release: str | None = None,
    source: str | None = None,
    stack: str = "tensorflow",
    hardware: str = "auto",
    dry_run: bool = False,
) -> dict[str, str]:
    """Installs (or, with `dry_run`, only resolves) the stack and the helper package.

    Args:
        release: A tag or commit of the repository: the helper and `stacks/` come from it.
        source: A local checkout instead of `release` (tests and development).
        stack: One of STACK_NAMES: `"tensorflow"`, `"jax"` or `"pytorch"`.
        hardware: `"auto"` (detect), `"tpu"`, `"gpu"` or `"cpu"`.
        dry_run: Resolve against the package index without installing.

    Returns:
        {distribution: version} of what was installed (or would be, with `dry_run`).

    Raises:
        StackError: Bad arguments, a TensorFlow that cannot use this hardware, or pip failed.
    """
    if bool(release) == bool(source):
        raise StackError("Give exactly one of release= (a tag or commit) or source= (a checkout).")
    if hardware not in ("auto",) + HARDWARE:
        raise StackError(f"Unknown hardware {hardware!r}: use auto, {', '.join(HARDWARE)}.")
    hardware = detect_hardware() if hardware == "auto" else hardware
    installed = {} if dry_run else installed_versions()
    requirements, constraints = plan(stack, hardware, installed)
    if source:
        stacks, helper = f"{source}/stacks", source
    else:
        raw = f"https://raw.githubusercontent.com/{REPOSITORY}/{release}"
        stacks = f"{raw}/stacks"
        helper = f"tpuhelpers @ git+https://github.com/{REPOSITORY}@{release}"
    kept = ", ".join(f"{n} {v}" for n, v in installed.items()) or "nothing relevant"
    print(f"Hardware: {hardware}. Already installed: {kept}.")
    print(f"Installing {', '.join(requirements + ['tpuhelpers'])} (pins: stacks/{constraints})")
    command = pip_command(requirements, constraints, stacks, helper, dry_run)
    try:  # pip retries a slow index itself; this bounds the whole install (a 255 MB TPU wheel)
        result = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise StackError(
            f"pip did not finish within {PIP_TIMEOUT} s: {' '.join(command[2:])}. Check the "
            "network (or the package index) and run this cell again; pip resumes from its cache."
        ) from None
    if result.returncode:
        raise StackError(
            f"pip failed (exit {result.returncode}): {' '.join(command[2:])}\n"
            + "\n".join(result.stderr.strip().splitlines()[-15:])
        )
    if dry_run:
        report = json.loads(result.stdout)
        return {i["metadata"]["name"]: i["metadata"]["version"] for i in report["install"]}
    shown = ("keras", "jax", "torch", "torch-xla", "tpuhelpers")
    now = installed_versions(TENSORFLOW_DISTRIBUTIONS + shown)
    print("Installed:", ", ".join(f"{n} {v}" for n, v in now.items()))
    changed = replaced_modules()
    if changed:
        print(
            "Restart the runtime (Colab: Runtime > Restart session), then run the notebook from "
            f"the top: pip replaced modules this kernel had loaded ({', '.join(changed)})."
        )
    return now


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
