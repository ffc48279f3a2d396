"""Stamps cover what their sessions run or read: in a clone, editing each kind of input makes
exactly the sessions that read it stale (tools/ci/stamps.py)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tools.ci import stamps

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = "runtime-colab-cpu"


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A clone of this repository's HEAD, with the working tree's stamp inputs copied over it."""
    path = tmp_path_factory.mktemp("clone") / "repo"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(path)], check=True)
    return path


def stamp_all(root: Path) -> None:
    for name in stamps.sessions(root):
        started = stamps.current(name, root)
        stamps.write(name, dict.fromkeys(started, "test"), started, root)
        assert stamps.is_fresh(name, root)


def stale_units(root: Path, relative: str, change=lambda text: text + "\n# edited\n") -> set:
    """Stamps every session, edits one file, returns the (session, unit) pairs that became
    stale; restores the file."""
    stamp_all(root)
    path = root / relative
    before = path.read_bytes()
    path.write_text(change(before.decode("utf-8")), encoding="utf-8")
    try:
        return {(name, unit) for name in stamps.sessions(root) for unit in stamps.stale(name, root)}
    finally:
        path.write_bytes(before)


def stale_after(root: Path, relative: str, change=lambda text: text + "\n# edited\n") -> set:
    """The sessions with a stale unit after editing one file."""
    return {name for name, _ in stale_units(root, relative, change)}


def test_every_stamped_session_is_known(clone):
    names = set(stamps.sessions(clone))
    assert {"tpu_stack", "stacks_index", "pytorch_xla", RUNTIME, "runtime-kaggle-tpu"} <= names
    assert "runtime-colab-gpu" not in names  # no session: it says why in runtimes.toml
    units = stamps.sessions(clone)[RUNTIME].units
    assert "03_keras_fit" in units and "15_pytorch_xla" not in units  # 15: its own session


EVERY = {"tpu_stack", "stacks_index", "pytorch_xla", RUNTIME}


@pytest.mark.parametrize(
    ("relative", "stale", "fresh"),
    [
        # Inputs of every session: the helper, the pins, the install script, the session code.
        ("tpuhelpers/training.py", EVERY, set()),
        ("stacks/tpu.txt", EVERY, set()),
        ("stacks/tools.txt", EVERY, set()),
        ("stacks/install.py", EVERY, set()),
        ("noxfile.py", EVERY, set()),
        # The CI parameters and the runner: where notebooks run.
        ("tests/notebook_parameters.yaml", {"pytorch_xla", RUNTIME}, {"tpu_stack"}),
        ("tools/runs/notebooks.py", {"pytorch_xla", RUNTIME}, {"tpu_stack", "stacks_index"}),
        ("tools/ci/runtimes.py", {RUNTIME}, {"tpu_stack", "pytorch_xla"}),
        ("tools/pins.py", {RUNTIME}, {"tpu_stack", "pytorch_xla"}),
        # A module imported by the runner and by a test on the wheel.
        ("tools/paths.py", {"tpu_stack", "pytorch_xla", RUNTIME}, set()),
        # pytest's settings: where pytest runs; nbval's: where nbval compares.
        ("conftest.py", {"tpu_stack", "pytorch_xla"}, {RUNTIME}),
        ("tests/reference_sanitize.cfg", {"pytorch_xla"}, {RUNTIME, "tpu_stack"}),
        # A TensorFlow notebook: the runtimes run it; PyTorch/XLA and the unit tests do not.
        ("notebooks/en/03_keras_fit.ipynb", {RUNTIME}, {"pytorch_xla", "tpu_stack"}),
        ("notebooks/en/15_pytorch_xla.ipynb", {"pytorch_xla"}, {RUNTIME, "tpu_stack"}),
        # One runtime's list: that runtime only.
        ("stacks/runtimes/colab-cpu.txt", {RUNTIME}, {"tpu_stack", "runtime-kaggle-tpu"}),
        # A unit test on the wheel, and the tool it tests.
        ("tests/test_checks.py", {"tpu_stack"}, {RUNTIME, "pytorch_xla"}),
        ("tools/runs/support_cases.py", {"tpu_stack"}, {RUNTIME, "pytorch_xla"}),
        ("tests/test_stacks.py", {"stacks_index"}, {"tpu_stack", RUNTIME}),
    ],
)
def test_editing_an_input_makes_its_sessions_stale(clone, relative, stale, fresh):
    became = stale_after(clone, relative)
    assert stale <= became, f"{relative}: {sorted(stale - became)} stayed fresh"
    assert not fresh & became, f"{relative}: {sorted(fresh & became)} became stale"


@pytest.mark.parametrize(
    "relative",
    [
        "README.md",
        "stacks/site.txt",
        "notebooks/de/po/03_keras_fit.po",
        "notebooks/de/03_keras_fit.ipynb",
        "tools/l10n/cli.py",  # translation tooling and its tests run in the default CI
        "tests/test_l10n.py",
        "tests/test_notebooks.py",
    ],
)
def test_what_no_session_reads_leaves_every_stamp_fresh(clone, relative):
    assert stale_units(clone, relative) == set()


def _edit_cell(kind: str):
    """An edit of the first cell of `kind` in a notebook's JSON."""

    def change(text: str) -> str:
        notebook = json.loads(text)
        cell = next(c for c in notebook["cells"] if c["cell_type"] == kind)
        cell["source"] = "".join(cell["source"]) + "\n# edited"
        return json.dumps(notebook, indent=1)

    return change


def test_a_notebook_text_or_translation_edit_leaves_every_stamp_fresh(clone):
    for relative in ("notebooks/en/03_keras_fit.ipynb", "notebooks/de/03_keras_fit.ipynb"):
        assert stale_units(clone, relative, _edit_cell("markdown")) == set(), relative


def test_a_code_edit_in_one_notebook_stales_that_notebook_in_each_runtime_and_nothing_else(clone):
    became = stale_units(clone, "notebooks/en/03_keras_fit.ipynb", _edit_cell("code"))
    runs_it = {n for n, s in stamps.sessions(clone).items() if "03_keras_fit" in s.units}
    assert {RUNTIME, "runtime-kaggle-tpu"} <= runs_it
    assert became == {(name, "03_keras_fit") for name in runs_it}


def test_a_stamp_and_a_cache_are_not_inputs(clone):
    stamp_all(clone)
    (clone / "tpuhelpers" / "__pycache__").mkdir(exist_ok=True)
    (clone / "tpuhelpers" / "__pycache__" / "x.pyc").write_bytes(b"cache")
    stamps.write("tpu_stack", {"tpu_stack": "again"}, stamps.current("tpu_stack", clone), clone)
    assert all(stamps.is_fresh(name, clone) for name in stamps.sessions(clone))


def test_a_runtime_report_stamps_the_notebooks_that_passed_only(clone, tmp_path):
    stamp_all(clone)
    stamp = stamps.sessions(clone)[RUNTIME].stamp
    stamp.unlink()
    started = stamps.current(RUNTIME, clone)
    records = [
        {"notebook": "01_tpu_initialization", "outcome": "ok", "seconds": 9.5},
        {"notebook": "03_keras_fit", "outcome": "FAILED: cell 7 raised", "seconds": 60.0},
    ]
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"notebooks": records}), encoding="utf-8")
    failed = stamps.write_report(RUNTIME, report, started, clone)
    assert failed == ["03_keras_fit: FAILED: cell 7 raised"]
    left = stamps.stale(RUNTIME, clone)
    assert "03_keras_fit" in left and "01_tpu_initialization" not in left
    assert "01_tpu_initialization  passed: ok in 9.5 s" in stamp.read_text()


def test_an_unknown_session_is_named():
    with pytest.raises(SystemExit, match="No stamped session 'nope'"):
        stamps.current("nope")


def test_inputs_edited_while_a_session_ran_are_not_stamped(clone):
    stamp_all(clone)
    notebook = clone / "notebooks/en/03_keras_fit.ipynb"
    before = notebook.read_bytes()
    started = stamps.current(RUNTIME, clone)
    stamp = stamps.sessions(clone)[RUNTIME].stamp
    stamp.unlink()
    notebook.write_text(_edit_cell("code")(before.decode()), encoding="utf-8")
    passed = {"01_tpu_initialization": "ok", "03_keras_fit": "ok"}
    try:
        with pytest.raises(RuntimeError, match=f"{RUNTIME}: the inputs of 03_keras_fit changed"):
            stamps.write(RUNTIME, passed, started, clone)
        # The unchanged notebook is stamped; the edited one is not.
        left = stamps.stale(RUNTIME, clone)
        assert "03_keras_fit" in left and "01_tpu_initialization" not in left
        assert "03_keras_fit" not in stamp.read_text()
    finally:
        notebook.write_bytes(before)


def test_the_tests_on_the_wheel_are_every_test_that_imports_tensorflow_or_the_helper():
    # A test file that imports TensorFlow or tpuhelpers runs on the TPU wheel (`tpu_stack`),
    # except the resolution of the pins against the index (`stacks_index`).
    uses = set()
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        if {n.split(".")[0] for n in names} & {"tensorflow", "tpuhelpers", "keras", "jax"}:
            uses.add(f"tests/{path.name}")
    assert uses - {"tests/test_stacks.py"} <= set(stamps.TPU_STACK_TESTS)
    assert all((ROOT / test).is_file() for test in stamps.TPU_STACK_TESTS)


@pytest.mark.parametrize(
    "damaged",
    [
        b"",  # emptied
        b"ce6128ed294dc481ed271d15e14",  # truncated in the digest
        None,  # the right digest, cut before its summary and newline
        b"\xff\xfe not UTF-8",
        b"<html>404</html>\n",
        # The one-line shape stamps had before they had a line per unit.
        b"ce6128ed294dc481ed271d15e14ce6128ed294dc481ed271d15e14ce6128ed294d  passed: x\n",
    ],
)
def test_a_damaged_stamp_is_named_and_counts_as_stale(clone, capsys, damaged):
    # Before: an empty file raised IndexError, bytes that are not UTF-8 UnicodeDecodeError.
    stamp_all(clone)
    stamp = stamps.sessions(clone)["tpu_stack"].stamp
    before = stamp.read_bytes()
    stamp.write_bytes(before.split(b" ")[0] if damaged is None else damaged)
    try:
        assert not stamps.is_fresh("tpu_stack", clone)
        assert f"warning: {stamp} " in capsys.readouterr().err
    finally:
        stamp.write_bytes(before)


def test_an_interrupted_stamp_write_leaves_the_old_stamp_whole(clone, monkeypatch):
    # Before: the stamp was truncated, then written in place: a failure half-way (a full disk)
    # or a second writer left a part of a stamp.
    stamp_all(clone)
    stamp = stamps.sessions(clone)["tpu_stack"].stamp
    before = stamp.read_text()
    write_text = Path.write_text

    def full_disk(self, text, *args, **kwargs):
        write_text(self, text[:20], *args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(OSError, match="No space left"):
        stamps.write("tpu_stack", {"tpu_stack": "again"}, stamps.current("tpu_stack", clone), clone)
    monkeypatch.undo()
    assert stamp.read_text() == before and stamps.is_fresh("tpu_stack", clone)
    assert not [p for p in stamp.parent.iterdir() if p.name.startswith(".tpu_stack.")]


def test_a_runtimes_file_of_the_wrong_shape_is_named_not_a_key_error(tmp_path, capsys):
    # Before: a [[runtime]] without its name was a raw KeyError from `tools.ci.stamps status`.
    from tools.ci import runtimes

    config = tmp_path / "stacks" / "runtimes" / "runtimes.toml"
    config.parent.mkdir(parents=True)
    text = (ROOT / "stacks/runtimes/runtimes.toml").read_text(encoding="utf-8")
    config.write_text(text.replace('name = "colab-cpu"\n', "", 1), encoding="utf-8")
    with pytest.raises(runtimes.RuntimeListError, match=r"runtimes.toml: .* has no key 'name'"):
        stamps.sessions(tmp_path)


def test_two_writers_at_once_leave_a_whole_stamp(clone):
    # Two runs of one session stamping at the same time (each a read, a change, a rename): a
    # reader sees the old file or a new one, never a part; a lost update loses a line, and the
    # unit it named counts as stale, never as fresh by mistake.
    stamp_all(clone)
    stamp = stamps.sessions(clone)[RUNTIME].stamp
    code = (
        "import sys\nfrom pathlib import Path\nfrom tools.ci import stamps\n"
        "root, name, unit = Path(sys.argv[1]), sys.argv[2], sys.argv[3]\n"
        "started = stamps.current(name, root)\n"
        "for i in range(8):\n    stamps.write(name, {unit: f'run {i}'}, started, root)\n"
    )
    units = ("01_tpu_initialization", "02_device_placement")
    writers = [
        subprocess.Popen([sys.executable, "-c", code, str(clone), RUNTIME, unit], cwd=ROOT)
        for unit in units
    ]
    seen = set()
    while any(writer.poll() is None for writer in writers):
        seen.add(stamps.damage(stamp))
    assert [writer.wait(timeout=300) for writer in writers] == [0, 0]
    assert seen == {None} and stamps.damage(stamp) is None
    assert stamps.stale(RUNTIME, clone) == []  # both units were stamped before, with these inputs
    assert not [p for p in stamp.parent.iterdir() if p.name.startswith(f".{stamp.stem}.")]
