"""Stamps cover what their sessions run or read: in a clone, editing each kind of input makes
exactly the sessions that read it stale (tools/ci/stamps.py)."""

from __future__ import annotations

import json
import subprocess
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
        stamps.write(name, "test", stamps.current(name, root), root)
        assert stamps.is_fresh(name, root)


def stale_after(root: Path, relative: str, change=lambda text: text + "\n# edited\n") -> set[str]:
    """Stamps every session, edits one file, returns the sessions that became stale; restores."""
    stamp_all(root)
    path = root / relative
    before = path.read_bytes()
    path.write_text(change(before.decode("utf-8")), encoding="utf-8")
    try:
        return {name for name in stamps.sessions(root) if not stamps.is_fresh(name, root)}
    finally:
        path.write_bytes(before)


def test_every_stamped_session_is_known(clone):
    names = set(stamps.sessions(clone))
    assert {"tpu_stack", "pytorch_xla", RUNTIME, "runtime-kaggle-tpu"} <= names
    assert "runtime-colab-gpu" not in names  # no session: it says why in runtimes.toml


@pytest.mark.parametrize(
    ("relative", "stale", "fresh"),
    [
        # Inputs of every session: the helper, the pins, the install script, the session code,
        # the CI parameters, the runner.
        ("tpuhelpers/training.py", {"tpu_stack", "pytorch_xla", RUNTIME}, set()),
        ("stacks/tpu.txt", {"tpu_stack", "pytorch_xla", RUNTIME}, set()),
        ("stacks/install.py", {"tpu_stack", RUNTIME}, set()),
        ("noxfile.py", {"tpu_stack", "pytorch_xla", RUNTIME}, set()),
        ("tests/notebook_parameters.yaml", {"tpu_stack", "pytorch_xla", RUNTIME}, set()),
        ("tools/runs/notebooks.py", {"tpu_stack", RUNTIME}, set()),
        ("tools/paths.py", {"tpu_stack", "pytorch_xla", RUNTIME}, set()),
        # nbval's settings: where pytest runs a notebook or the unit tests.
        ("conftest.py", {"tpu_stack", "pytorch_xla"}, {RUNTIME}),
        ("tests/reference_sanitize.cfg", {"tpu_stack", "pytorch_xla"}, {RUNTIME}),
        # A TensorFlow notebook: the runtimes run it, PyTorch/XLA does not.
        ("notebooks/en/03_keras_fit.ipynb", {RUNTIME, "tpu_stack"}, {"pytorch_xla"}),
        ("notebooks/en/15_pytorch_xla.ipynb", {"pytorch_xla", RUNTIME}, set()),
        # One runtime's list: that runtime only.
        ("stacks/runtimes/colab-cpu.txt", {RUNTIME}, {"tpu_stack", "runtime-kaggle-tpu"}),
        ("tools/ci/runtimes.py", {RUNTIME, "tpu_stack"}, {"pytorch_xla"}),
        # The tests: the unit-test session.
        ("tests/test_checks.py", {"tpu_stack"}, {RUNTIME, "pytorch_xla"}),
    ],
)
def test_editing_an_input_makes_its_sessions_stale(clone, relative, stale, fresh):
    became = stale_after(clone, relative)
    assert stale <= became, f"{relative}: {sorted(stale - became)} stayed fresh"
    assert not fresh & became, f"{relative}: {sorted(fresh & became)} became stale"


def test_what_no_session_reads_leaves_every_stamp_fresh(clone):
    for relative in ("README.md", "stacks/site.txt", "notebooks/de/po/03_keras_fit.po"):
        if (clone / relative).exists():
            assert stale_after(clone, relative) - {"tpu_stack"} == set(), relative


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
        assert stale_after(clone, relative, _edit_cell("markdown")) == set(), relative


def test_a_code_edit_in_one_notebook_stales_the_sessions_that_run_it(clone):
    became = stale_after(clone, "notebooks/en/03_keras_fit.ipynb", _edit_cell("code"))
    assert {RUNTIME, "runtime-kaggle-tpu", "tpu_stack"} <= became
    assert "pytorch_xla" not in became


def test_a_stamp_and_a_cache_are_not_inputs(clone):
    stamp_all(clone)
    (clone / "tpuhelpers" / "__pycache__").mkdir(exist_ok=True)
    (clone / "tpuhelpers" / "__pycache__" / "x.pyc").write_bytes(b"cache")
    stamps.write("tpu_stack", "again", stamps.current("tpu_stack", clone), clone)
    assert all(stamps.is_fresh(name, clone) for name in stamps.sessions(clone))


def test_an_unknown_session_is_named():
    with pytest.raises(SystemExit, match="No stamped session 'nope'"):
        stamps.current("nope")


def test_inputs_edited_while_a_session_ran_are_not_stamped(clone):
    stamp_all(clone)
    before = (clone / "tools/ci/stamps.py").read_bytes()
    started = stamps.current("tpu_stack", clone)
    stamp = stamps.sessions(clone)["tpu_stack"][1]
    recorded = stamp.read_text()
    (clone / "tools/ci/stamps.py").write_text(before.decode() + "\n# edited\n")
    try:
        with pytest.raises(RuntimeError, match="tpu_stack: its inputs changed while it ran"):
            stamps.write("tpu_stack", "passed?", started, clone)
        assert stamp.read_text() == recorded
    finally:
        (clone / "tools/ci/stamps.py").write_bytes(before)


@pytest.mark.parametrize(
    "damaged",
    [
        b"",  # emptied
        b"ce6128ed294dc481ed271d15e14",  # truncated in the digest
        None,  # the right digest, cut before its summary and newline
        b"\xff\xfe not UTF-8",
        b"<html>404</html>\n",
    ],
)
def test_a_damaged_stamp_is_named_and_counts_as_stale(clone, capsys, damaged):
    # Before: an empty file raised IndexError, bytes that are not UTF-8 UnicodeDecodeError.
    stamp_all(clone)
    stamp = stamps.sessions(clone)["tpu_stack"][1]
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
    stamp = stamps.sessions(clone)["tpu_stack"][1]
    before = stamp.read_text()
    write_text = Path.write_text

    def full_disk(self, text, *args, **kwargs):
        write_text(self, text[:20], *args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(OSError, match="No space left"):
        stamps.write("tpu_stack", "again", stamps.current("tpu_stack", clone), clone)
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
