"""The supported stacks: the install cell's decisions, and every pin resolved against the index.

The resolution tests ask the package index (`pip install --dry-run`), without installing: a pin
that does not exist, or pins that conflict, fail here instead of in a reader's first cell.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STACKS_DIR = ROOT / "stacks"
spec = importlib.util.spec_from_file_location("install_stack", STACKS_DIR / "install.py")
install_stack = importlib.util.module_from_spec(spec)
spec.loader.exec_module(install_stack)

# Colab runs Python 3.12, CI 3.11 (Keras 3.15 needs 3.11 or later).
PYTHONS = ("3.11", "3.12")
LINUX = ["manylinux2014_x86_64"] + [f"manylinux_2_{n}_x86_64" for n in (17, 27, 28, 31, 34, 35)]


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(constraints: str) -> dict[str, str]:
    """{name: version} of the `==` pins in a constraints file."""
    found = {}
    for line in (STACKS_DIR / constraints).read_text().splitlines():
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^\s#]+)\s*(#.*)?", line.strip())
        if match:
            found[normalize(match[1])] = match[2]
    return found


TRAINERS = ["lightning", "accelerate"]  # the PyTorch stack's two training libraries
PT = "pytorch_xla.txt"

# Decisions --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"/dev/accel*": ["/dev/accel0"]}, "tpu"),
        ({"/dev/vfio/[0-9]*": ["/dev/vfio/0"]}, "tpu"),  # v5e and later TPU VMs
        ({"/dev/nvidia[0-9]*": ["/dev/nvidia0"]}, "gpu"),
        ({"/dev/accel*": ["/dev/accel0"], "/dev/nvidia[0-9]*": ["/dev/nvidia0"]}, "tpu"),
        ({}, "cpu"),
    ],
)
def test_detect_hardware(files, expected):
    assert install_stack.detect_hardware(lambda pattern: files.get(pattern, [])) == expected


@pytest.mark.parametrize(
    ("stack", "hardware", "installed", "expected"),
    [
        ("tensorflow", "tpu", {}, (["tensorflow-tpu"], "tpu.txt")),
        ("tensorflow", "tpu", {"tensorflow-tpu": "2.18.0"}, ([], "tpu.txt")),  # a TPU VM image
        ("tensorflow", "gpu", {}, (["tensorflow[and-cuda]"], "gpu.txt")),
        ("tensorflow", "gpu", {"tensorflow": "2.19.0"}, ([], "gpu.txt")),  # Colab's own
        ("tensorflow", "cpu", {}, (["tensorflow-cpu"], "cpu.txt")),
        ("tensorflow", "cpu", {"tensorflow": "2.19.0"}, ([], "cpu.txt")),
        ("jax", "tpu", {}, (["jax[tpu]", "tensorflow-cpu"], "jax.txt")),
        ("jax", "tpu", {"jax": "0.10.2"}, (["tensorflow-cpu"], "jax.txt")),
        ("jax", "gpu", {"tensorflow": "2.19.0"}, (["jax[cuda12]"], "jax.txt")),
        ("jax", "cpu", {"jax": "0.10.2", "tensorflow-cpu": "2.21.0"}, ([], "jax.txt")),
        ("pytorch", "tpu", {}, (["torch", "torch-xla[tpu]", *TRAINERS], "pytorch_xla.txt")),
        ("pytorch", "cpu", {"torch": "2.9.0"}, (["torch", "torch-xla", *TRAINERS], PT)),
    ],
)
def test_plan(stack, hardware, installed, expected):
    assert install_stack.plan(stack, hardware, installed) == expected


@pytest.mark.parametrize("name", ["tensorflow", "tensorflow-cpu"])
def test_a_tensorflow_without_tpu_support_on_a_tpu_is_refused_with_the_fix(name):
    with pytest.raises(install_stack.StackError) as error:
        install_stack.plan("tensorflow", "tpu", {name: "2.21.0"})
    message = str(error.value)
    assert f"has {name} 2.21.0" in message
    assert f"%pip uninstall -y {name}" in message
    assert "Restart session" in message


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"stack": "mxnet", "hardware": "cpu", "installed": {}}, "Unknown stack 'mxnet'"),
        ({"release": "v1", "source": "."}, "exactly one of release="),
        ({}, "exactly one of release="),
        ({"source": ".", "hardware": "ipu"}, "Unknown hardware 'ipu'"),
    ],
)
def test_bad_arguments_say_what_is_allowed(kwargs, match):
    call = install_stack.plan if "stack" in kwargs else install_stack.install
    with pytest.raises(install_stack.StackError, match=match):
        call(**kwargs)


def test_the_command_line_reports_a_stack_error_and_exits_2():
    result = subprocess.run(
        [sys.executable, str(STACKS_DIR / "install.py"), "--source", str(ROOT), "--release", "v1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "StackError: Give exactly one of release=" in result.stderr


def test_a_pip_call_that_does_not_finish_in_time_is_a_stack_error(monkeypatch):
    # The real pip, with a time bound it cannot meet.
    monkeypatch.setattr(install_stack, "PIP_TIMEOUT", 0.01)
    with pytest.raises(install_stack.StackError, match=r"pip did not finish within 0\.01 s"):
        install_stack.install(source=str(ROOT), hardware="cpu", dry_run=True)


def test_every_stack_has_a_constraints_file_that_pins_its_framework():
    for (stack, _hardware), (_requirements, constraints) in install_stack.STACKS.items():
        framework = {"pytorch": "torch"}.get(stack, "keras")
        assert framework in pins(constraints), constraints


def test_requirements_txt_installs_the_cpu_stack():
    requirements = (ROOT / "requirements.txt").read_text().splitlines()
    assert "-c stacks/cpu.txt" in requirements
    assert "tensorflow-cpu" in requirements  # the version comes from the constraints


def test_the_install_cell_installs_the_projects_release():
    sys.path.insert(0, str(ROOT))
    from tools import nbcheck

    cell = nbcheck.install_cell(ROOT / "notebooks/en/03_keras_fit.ipynb")
    assert f'RELEASE = "{nbcheck.release()}"' in cell
    assert "/{RELEASE}/stacks/install.py" in cell
    assert 'stack="tensorflow"' in cell
    jax_cell = nbcheck.install_cell(ROOT / "notebooks/en/10_keras_on_jax.ipynb")
    assert 'stack="jax"' in jax_cell
    torch_cell = nbcheck.install_cell(ROOT / "notebooks/en/15_pytorch_xla.ipynb")
    assert 'stack="pytorch"' in torch_cell
    import tpuhelpers

    assert nbcheck.release() == f"v{tpuhelpers.__version__}"


# Resolution against the package index ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("stack", "hardware"), sorted(install_stack.STACKS))
def test_each_branch_resolves_with_every_pin(stack, hardware):
    """What the install cell would install here resolves, and every pin is what gets installed."""
    resolved = install_stack.install(source=str(ROOT), stack=stack, hardware=hardware, dry_run=True)
    resolved = {normalize(name): version for name, version in resolved.items()}
    requirements, constraints = install_stack.STACKS[stack, hardware]
    for requirement in requirements:
        assert normalize(requirement.split("[")[0]) in resolved, requirement
    tpu_only = {"libtpu"} if hardware != "tpu" and stack == "pytorch" else set()  # torch-xla[tpu]
    for name, version in pins(constraints).items():
        if name not in tpu_only:
            assert resolved.get(name) == version, f"{constraints}: {name}=={version} -> {resolved}"
    assert resolved["tpuhelpers"] == nbcheck_version()


def nbcheck_version() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


@pytest.mark.slow
@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize(
    "constraints", ["tpu.txt", "gpu.txt", "cpu.txt", "jax.txt", "pytorch_xla.txt"]
)
def test_pinned_wheels_exist_for_the_pythons_readers_run(constraints, python):
    platforms = [arg for platform in LINUX for arg in ("--platform", platform)]
    wanted = [f"{name}=={version}" for name, version in pins(constraints).items()]
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed"]
        + ["--only-binary=:all:", "--python-version", python, *platforms, "--report", "-", "-q"]
        + wanted,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = {normalize(i["metadata"]["name"]) for i in json.loads(result.stdout)["install"]}
    assert found == set(pins(constraints)), found
