"""The runtimes as data (stacks/runtimes/), their refresh from git checkouts, and the plan,
checks and messages of a runtime session (tools/ci/runtimes.py). The sessions themselves run in
`nox -s runtime-<name>`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tools import outputs
from tools.ci import runtime_files, runtimes

ROOT = Path(__file__).resolve().parents[1]


def test_every_runtime_has_a_sourced_list_and_a_python():
    for runtime in runtimes.load():
        header = runtime.header
        assert header["commit"] and len(header["commit"]) == 40, runtime.name
        assert header["date"] and header["source"].split()[0] in (
            "googlecolab/backend-info",
            "Kaggle/docker-python",
        )
        assert runtime.python in ("3.12", "3.13"), runtime.name
        assert runtime.lines, runtime.name
        assert runtime.session or runtime.why, (
            f"{runtime.name}: a runtime without a session says why"
        )


def test_colab_latest_is_python_313_without_tensorflow_on_the_tpu():
    cpu, tpu = runtimes.load("colab-cpu")[0], runtimes.load("colab-tpu")[0]
    assert cpu.python == tpu.python == "3.13"
    assert "tensorflow==2.20.0" in cpu.lines and "protobuf==5.29.6" in cpu.lines
    assert not [line for line in tpu.lines if runtimes.requirement_name(line) == "tensorflow"]
    assert tpu.stops == ("tensorflow",)


def test_the_plan_installs_the_runtimes_versions_and_skips_what_the_index_lacks():
    steps = runtimes.plan(runtimes.load("colab-cpu")[0])
    assert "tensorflow==2.20.0" in steps.requirements
    assert "tensorflow-metadata==1.21.0" in steps.requirements  # the broken pair, as shipped
    assert "papermill==2.7.0" in steps.requirements  # the runner: Colab has none
    assert "ipykernel==6.17.1" in steps.requirements  # Colab's own kernel runs the notebooks
    skipped = dict((line.split()[0], why) for line, why in steps.skipped)
    assert "google-colab" in skipped and "torch" in skipped
    assert all(" @ " not in line and "+" not in line for line in steps.constraints)


def test_kaggles_unpinned_requirements_keep_their_form():
    steps = runtimes.plan(runtimes.load("kaggle-tpu")[0])
    assert "tensorflow-cpu==2.20.0" in steps.requirements  # config.txt's TENSORFLOW_VERSION
    assert "jax[tpu]" in steps.requirements and "papermill" in steps.requirements
    assert any("git+" in line for line, _ in steps.skipped)


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("torch @ https://download.pytorch.org/whl/cpu/torch-2.11.0%2Bcpu-cp313.whl", "url"),
        ("google-colab @ file:///colabtools/dist/google_colab-1.0.0.tar.gz", "url"),
        ("git+https://github.com/google/tunix", "url"),
        ("torch==2.11.0+cu128", "local_version"),
        ("numpy==2.1.3", None),
    ],
)
def test_skip_rules(line, rule):
    rules = runtimes.settings()["skip"]
    assert runtimes.skip_reason(line, rules) == (rules[rule] if rule else None)


def test_the_session_refuses_another_python_with_the_command_to_use():
    runtime = runtimes.load("colab-cpu")[0]
    with pytest.raises(
        runtimes.RuntimeListError,
        match=r"runs Python 3\.13, this interpreter is 3\.11: run `nox -s runtime-colab-cpu`",
    ):
        runtimes.check_python(runtime)


def test_unknown_runtime_and_missing_list_say_what_to_do(tmp_path):
    with pytest.raises(runtimes.RuntimeListError, match="No runtime 'colab-v2'.*colab-cpu"):
        runtimes.load("colab-v2")
    config = tmp_path / "runtimes.toml"
    config.write_text((runtimes.CONFIG).read_text(encoding="utf-8"), encoding="utf-8")
    (runtime,) = runtimes.load("colab-cpu", config)
    with pytest.raises(
        runtimes.RuntimeListError,
        match="missing or empty: run `python -m tools.ci.runtimes refresh`",
    ):
        runtimes.plan(runtime, config)
    config.write_text("[[runtime]\n", encoding="utf-8")
    with pytest.raises(runtimes.RuntimeListError, match="runtimes.toml: cannot be read"):
        runtimes.load(config=config)


@pytest.mark.slow
def test_a_list_that_names_a_package_the_index_lacks_is_named_with_the_fix(tmp_path, monkeypatch):
    runtime = runtimes.load("colab-cpu")[0]
    here = "{}.{}".format(*sys.version_info[:2])
    lacking = runtimes.Runtime(
        name="colab-cpu",
        title="test",
        hardware="cpu",
        stacks=("tensorflow",),
        header={**runtime.header, "python": here},
        lines=("tqdm==4.67.3", "tpu-curriculum-no-such-package==1.0"),
    )
    settings = runtimes.settings()
    settings["install"]["packages"] = ["tpu-curriculum-no-such-package"]
    settings["install"]["runner"] = []
    monkeypatch.setattr(runtimes, "settings", lambda config=None: settings)
    folder = tmp_path / "lists"
    folder.mkdir()
    (folder / "colab-cpu.txt").write_text("# python: x\n" + "\n".join(lacking.lines) + "\n")
    monkeypatch.setattr(runtime_files, "FOLDER", folder)
    with pytest.raises(runtimes.RuntimeListError) as caught:
        runtimes.install(lacking, tmp_path / "out")
    message = str(caught.value)
    where = f"{folder / 'colab-cpu.txt'} line 3 has 'tpu-curriculum-no-such-package==1.0'"
    assert message.startswith(f"{where}, which pip could not install for Python {here}")
    assert "under [skip] in stacks/runtimes/runtimes.toml" in message
    assert "\npip: pip found no tpu-curriculum-no-such-package" in message


def test_a_list_line_behind_an_unreachable_index_is_named_with_its_line(tmp_path, monkeypatch):
    (tmp_path / "colab-tpu.txt").write_text("# python: 3.12.11\n\nnumpy==2.1.3\njax==0.7.2\n")
    monkeypatch.setattr(runtime_files, "FOLDER", tmp_path)
    runtime = runtimes.Runtime(
        name="colab-tpu",
        title="t",
        hardware="tpu",
        stacks=("jax",),
        lines=("numpy==2.1.3", "jax==0.7.2"),
    )
    cause = "pip could not reach the package index for jax==0.7.2: check the network"
    message = runtimes._list_problem(runtime, f"{cause}\nCommand: pip install jax==0.7.2")
    assert message.startswith(f"{tmp_path / 'colab-tpu.txt'} line 4 has 'jax==0.7.2'")
    assert "check the network and run the session again" in message and "[skip]" not in message
    assert f"pip: {cause}" in message
    assert runtimes._list_problem(runtime, "pip failed: its last lines are below") is None


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def make_colab_repo(repo: Path) -> tuple[str, str]:
    """A small googlecolab/backend-info: an old commit named by the README, and a newer HEAD."""
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    for name in ("pip-freeze.txt", "pip-freeze.tpu.txt", "pip-freeze.gpu.txt"):
        (repo / name).write_text("# generated\nnumpy==2.0.2\ntensorflow==2.20.0\n")
    for name in ("os-info.txt", "os-info-tpu.txt", "os-info-gpu.txt"):
        (repo / name).write_text("Ubuntu 22.04.5 LTS\nPython 3.12.13\n")
    (repo / "README.md").write_text("# Backend Information\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "old")
    old = git(repo, "rev-parse", "HEAD")
    for name in ("os-info.txt", "os-info-tpu.txt", "os-info-gpu.txt"):
        (repo / name).write_text("Ubuntu 22.04.5 LTS\nPython 3.13.15\n")
    readme = f"# Backend Information\n\n### 2026.07\n\n*   Python 3.12.13\n[GitHub commit](https://github.com/googlecolab/backend-info/tree/{old}).\n"
    (repo / "README.md").write_text(readme)
    git(repo, "commit", "-q", "-am", "Upgrade to Python 3.13")
    return old, git(repo, "rev-parse", "HEAD")


def make_kaggle_repo(repo: Path) -> str:
    repo.mkdir()
    (repo / "tpu").mkdir()
    (repo / "tpu/config.txt").write_text("BASE_IMAGE=python:3.12\nTENSORFLOW_VERSION=2.20.0\n")
    (repo / "tpu/requirements.in").write_text(
        "# TF\ntensorflow-cpu==${TENSORFLOW_VERSION}\njax[tpu]\n"
    )
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "tpu")
    return git(repo, "rev-parse", "HEAD")


def test_refresh_writes_each_list_from_its_commit_with_its_source(tmp_path):
    old, head = make_colab_repo(tmp_path / "colab")
    kaggle = make_kaggle_repo(tmp_path / "kaggle")
    config = tmp_path / "lists" / "runtimes.toml"
    config.parent.mkdir()
    config.write_text(runtimes.CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    repos = {
        "googlecolab/backend-info": tmp_path / "colab",
        "Kaggle/docker-python": tmp_path / "kaggle",
    }
    written = runtimes.refresh(repos, config)
    assert len(written) == len(runtimes.settings(config)["runtime"])
    latest = {r.name: r for r in runtimes.load(config=config)}
    assert latest["colab-cpu"].header["commit"] == head and latest["colab-cpu"].python == "3.13"
    assert latest["colab-2026.07-tpu"].header["commit"] == old
    assert latest["colab-2026.07-tpu"].python == "3.12"
    assert latest["kaggle-tpu"].header["commit"] == kaggle
    assert latest["kaggle-tpu"].lines == ("tensorflow-cpu==2.20.0", "jax[tpu]")
    assert not list(config.parent.glob("*.tmp"))


@pytest.mark.parametrize(
    ("page", "line"),
    [
        ("<!DOCTYPE html>\n<html><title>404 Not Found</title></html>\n", "line 1"),
        ("404: Not Found", "line 1"),
        ("# only comments\n", "no package lines"),
        ("numpy==2.1.0\nthis is not a requirement\n", "line 2"),
    ],
)
def test_refresh_refuses_a_page_that_is_not_a_package_list_and_writes_no_list(tmp_path, page, line):
    # Before: an HTML "404" page became a list of three "packages", after three lists had
    # been rewritten; `runtimes plan` then exited 0 with nothing of the runtime to install.
    make_colab_repo(tmp_path / "colab")
    make_kaggle_repo(tmp_path / "kaggle")
    kaggle = tmp_path / "kaggle"
    (kaggle / "tpu/requirements.in").write_text(page)
    git(kaggle, "commit", "-q", "-am", "a page")
    config = tmp_path / "lists" / "runtimes.toml"
    config.parent.mkdir()
    config.write_text(runtimes.CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    before = {"colab-cpu.txt": "# kept\nnumpy==1.0\n"}
    (config.parent / "colab-cpu.txt").write_text(before["colab-cpu.txt"])
    repos = {"googlecolab/backend-info": tmp_path / "colab", "Kaggle/docker-python": kaggle}
    with pytest.raises(runtimes.RuntimeListError) as error:
        runtimes.refresh(repos, config)
    message = str(error.value)
    assert "tpu/requirements.in" in message and "(kaggle-tpu)" in message and line in message
    assert "No list was written" in message
    assert sorted(p.name for p in config.parent.iterdir()) == ["colab-cpu.txt", "runtimes.toml"]
    assert (config.parent / "colab-cpu.txt").read_text() == before["colab-cpu.txt"]


def test_a_list_that_is_not_a_package_list_is_named_where_it_is_read(tmp_path):
    config = tmp_path / "runtimes.toml"
    config.write_text(runtimes.CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "colab-cpu.txt").write_text("# python: 3.13\n<html>\n<body>404</body>\n")
    with pytest.raises(runtimes.RuntimeListError, match=r"colab-cpu.txt, line 2: '<html>'"):
        runtimes.load("colab-cpu", config)
    for runtime in runtimes.load():  # the committed lists are package lists
        assert runtime.lines


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda t: t.replace('stacks = ["tensorflow", "jax"]', 'stacks = "tensorflow"', 1),
            r"number 1 \(colab-cpu\): stacks must be a list of strings, not 'tensorflow'",
        ),
        (
            lambda t: t.replace('name = "colab-cpu"\n', "", 1),
            r"\[\[runtime\]\] number 1 has no key 'name'",
        ),
        (lambda t: t.replace("[skip]", "[skipped]"), "unknown key 'skipped'|no \\[skip\\] table"),
        (lambda t: t.replace("[[runtime]]", "[[runtimes]]"), r"no \[\[runtime\]\] tables"),
        (lambda t: t.replace('hardware = "cpu"', 'hardware = "CPU"', 1), "hardware 'CPU': use one"),
        (
            lambda t: t.replace('stacks = ["tensorflow", "jax"]', 'stacks = ["tensorflw"]', 1),
            "stacks names 'tensorflw'",
        ),
        (lambda t: t.replace("runner = [", "runner = 3\nx = [", 1), "runner must be a list"),
        (lambda t: t.replace("session = false", 'session = "no"', 1), "session must be true or"),
    ],
)
def test_a_settings_file_of_the_wrong_shape_names_the_file_and_key(tmp_path, edit, message):
    # Before: a string where a list belongs ran no notebook, without an error; a missing key or
    # table was a raw KeyError.
    config = tmp_path / "runtimes.toml"
    config.write_text(edit(runtimes.CONFIG.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(runtimes.RuntimeListError, match=message) as error:
        runtimes.load(config=config)
    assert str(error.value).startswith(f"{config}: ")


def test_refresh_names_a_checkout_that_is_not_one(tmp_path):
    config = tmp_path / "runtimes.toml"
    config.write_text(runtimes.CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "empty").mkdir()
    repos = {
        "googlecolab/backend-info": tmp_path / "empty",
        "Kaggle/docker-python": tmp_path / "empty",
    }
    with pytest.raises(runtimes.RuntimeListError, match="is not a git checkout"):
        runtimes.refresh(repos, config)
    with pytest.raises(
        runtimes.RuntimeListError, match="needs a checkout of googlecolab/backend-info"
    ):
        runtimes.refresh({}, config)


def test_what_each_session_runs_and_leaves_out_is_named():
    runs, left_out = runtimes.notebooks_of(runtimes.load("kaggle-tpu")[0])
    names = {path.stem for path, _ in runs}
    assert "03_keras_fit" in names and "10_keras_on_jax" in names
    why = {path.stem: reason for path, reason in left_out}
    assert set(runtimes.HOST_XLA_NOTEBOOKS) <= set(why)
    assert "pytorch" in why["15_pytorch_xla"]
    cpu_runs, _ = runtimes.notebooks_of(runtimes.load("colab-cpu")[0])
    assert {"11_how_a_tpu_computes", "14_gradient_accumulation"} <= {p.stem for p, _ in cpu_runs}


@pytest.mark.parametrize(
    ("name", "stack", "error", "text", "expected"),
    [
        (
            "colab-tpu",
            "tensorflow",
            "x: cell 1 (execution 1, ...) raised StackError: ... 2026.07 ...",
            "",
            "stopped at cell 1 as expected",
        ),
        ("colab-tpu", "tensorflow", None, "", "FAILED: expected cell 1 to stop (it ran)"),
        ("kaggle-tpu", "tensorflow", None, "no chip note here", "FAILED: no CPU fallback note"),
        ("kaggle-tpu", "tensorflow", None, f"tensorflow-tpu 2.19.1 {runtimes.NO_CHIP}", "ok"),
        (
            "colab-cpu",
            "tensorflow",
            "cell 5 raised ValueError",
            "",
            "FAILED: cell 5 raised ValueError",
        ),
    ],
)
def test_outcomes(name, stack, error, text, expected):
    result = runtimes.outcome(runtimes.load(name)[0], stack, error, text)
    assert result.startswith(expected)


def test_the_command_line_needs_a_name_and_reports_errors():
    run = [sys.executable, "-m", "tools.ci.runtimes"]
    result = subprocess.run(run + ["plan"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and "plan needs a runtime name" in result.stderr
    result = subprocess.run(run + ["plan", "nope"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and "error: No runtime 'nope'" in result.stderr
    result = subprocess.run(run + ["list"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0 and "colab-cpu" in result.stdout


def test_the_release_copy_holds_what_cell_1_installs_and_replaces_only_its_own(tmp_path):
    copy = runtimes.release_copy(tmp_path / "release")
    assert (copy / "stacks/install.py").read_bytes() == (ROOT / "stacks/install.py").read_bytes()
    assert (copy / "tpuhelpers/__init__.py").is_file() and (copy / "pyproject.toml").is_file()
    assert not (copy / "stacks/runtimes").exists()
    assert runtimes.release_copy(tmp_path / "release") == copy  # again: its own copy
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(outputs.NotOwnedError, match="was not made by tools.ci.runtimes"):
        runtimes.release_copy(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


@pytest.mark.parametrize("command", ["install", "run"])
def test_install_and_run_write_only_into_a_folder_they_made(tmp_path, capsys, command):
    # Before: `--out` took any folder: the executed copies, constraints.txt and report.json went
    # over the files there.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.json").write_text("keep me")
    assert runtimes.main([command, "colab-cpu", "--out", str(mine)]) == 2
    assert f"error: {mine} was not made by tools.ci.runtimes" in capsys.readouterr().err
    assert (mine / "report.json").read_text() == "keep me"
    assert runtimes.main([command, "colab-cpu", "--out", str(ROOT / "notebooks")]) == 2
    assert "holds the input" in capsys.readouterr().err
