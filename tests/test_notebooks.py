"""The notebook runner: nbval runs every notebook headless with its CI parameters (papermill
`--prepare-only`, a real Jupyter kernel), once, and compares its cells tagged `reference-output`
with `tests/references/<notebook>.json` (`nox -s tests` passes build/nbval/en to pytest; this file
checks the copies it gets, and that the comparison fails when it should).

`nox -s notebooks_l10n` runs the localized notebooks too. Their code cells are identical to
English by construction (`python -m tools.l10n check`), so the default CI runs English only.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from tools import notebook as notebook_file
from tools import outputs, paths
from tools.runs import notebooks
from tools.runs.notebooks import ROOT


def _notebook(path: Path, *cells: nbformat.NotebookNode) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=list(cells)), path)
    return path


def _reference(code: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(code, id="cell-001")
    cell.metadata["tags"] = [notebook_file.REFERENCE_TAG]
    return cell


def _prepared(tmp_path, monkeypatch, code: str, stored_text: str) -> Path:
    """A one-cell notebook prepared for nbval, its reference storing `stored_text` on stdout."""
    parameters = nbformat.v4.new_code_cell("N = 1", id="cell-000")
    parameters.metadata["tags"] = ["parameters"]
    source = _notebook(tmp_path / "xx" / "probe.ipynb", parameters, _reference(code))
    monkeypatch.setattr(notebooks, "REFERENCES", tmp_path / "refs")
    monkeypatch.setattr(notebooks, "PARAMETERS_FILE", tmp_path / "parameters.yaml")
    (tmp_path / "parameters.yaml").write_text("probe:\n  N: 2\n")
    (tmp_path / "refs").mkdir()
    stream = {"name": "stdout", "output_type": "stream", "text": stored_text}
    (tmp_path / "refs" / "probe.json").write_text(json.dumps({"cell-001": [stream]}))
    return notebooks.prepare(source, tmp_path / "nbval")


def _nbval(copy: Path) -> subprocess.CompletedProcess:
    # The repository's conftest.py (stderr skipped) and sanitizer file, as `nox -s tests` uses.
    nbval = ("--nbval-lax", f"--nbval-sanitize-with={notebooks.SANITIZE_FILE}")
    command = [sys.executable, "-m", "pytest", "-p", "conftest", *nbval, str(copy)]
    command += [
        "--nbval-kernel-name=python3",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(copy.parent),
    ]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_a_prepared_copy_has_the_ci_parameters_and_the_stored_outputs(tmp_path, monkeypatch):
    copy = nbformat.read(_prepared(tmp_path, monkeypatch, "print(N)", "2\n"), 4)
    injected = [c for c in copy.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "N = 2" in injected[0].source
    reference = next(c for c in copy.cells if c.id == "cell-001")
    assert reference.outputs[0]["text"] == "2\n" and reference.execution_count == 1
    assert notebooks.NBVAL_CHECK in reference.metadata["tags"]


def test_a_reference_cell_without_a_stored_output_is_named(tmp_path, monkeypatch):
    source = _notebook(tmp_path / "xx" / "probe.ipynb", _reference("print(1)"))
    monkeypatch.setattr(notebooks, "REFERENCES", tmp_path)
    (tmp_path / "probe.json").write_text("{}")
    with pytest.raises(notebooks.NotebookFailed, match="cell-001 has no stored reference.*refs"):
        notebooks.prepare(source, tmp_path / "nbval")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "stored", "passes"),
    [
        ("print(N)", "2\n", True),  # the CI parameter, not the notebook's own N = 1
        ("print(N + 1)", "2\n", False),  # a changed output fails
        ("import sys\nprint(N); print('log line', file=sys.stderr)", "2\n", True),  # stderr
        ("print('at 127.0.0.1:4321')", "at 127.0.0.1:1234\n", True),  # sanitized: a port
    ],
)
def test_nbval_compares_the_reference_cells(tmp_path, monkeypatch, code, stored, passes):
    result = _nbval(_prepared(tmp_path, monkeypatch, code, stored))
    assert (result.returncode == 0) == passes, result.stdout[-3000:]
    if not passes:
        assert "Cell outputs differ" in result.stdout


def test_prepare_replaces_only_its_own_folder(tmp_path, capsys):
    mine = tmp_path / "mine"
    (mine / "en").mkdir(parents=True)
    (mine / "en" / "notes.txt").write_text("keep me")
    with pytest.raises(SystemExit):
        notebooks.main(["prepare", "notebooks/en/01_tpu_initialization.ipynb", "--out", str(mine)])
    assert "was not made by tools.runs.notebooks prepare" in capsys.readouterr().err
    assert (mine / "en" / "notes.txt").read_text() == "keep me"


def _fake_execute(notebook, output_dir, parameters=None, timeout=900):
    """Stands in for papermill: writes the copy where `execute` would (no kernel)."""
    output = Path(output_dir) / notebook.parent.name / notebook.name
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("executed")
    return output


def test_run_refuses_an_output_that_is_its_input(tmp_path, monkeypatch, capsys):
    # Before: `run nbs/en/x.ipynb --out nbs` replaced the notebook with its executed copy, exit 0.
    monkeypatch.setattr(notebooks, "execute", _fake_execute)
    source = _notebook(tmp_path / "nbs" / "en" / "probe.ipynb", _reference("print(1)"))
    before = source.read_text()
    with pytest.raises(SystemExit) as stop:
        notebooks.main(["run", str(source), "--out", str(tmp_path / "nbs")])
    assert stop.value.code == 2
    assert f"--out {tmp_path / 'nbs'} holds the input {source}" in capsys.readouterr().err
    assert source.read_text() == before
    assert not (tmp_path / "nbs" / ".written-by").exists()


def test_run_refuses_a_folder_it_did_not_make_and_writes_into_its_own(
    tmp_path, monkeypatch, capsys
):
    # Before: a reader's own build/x/en/probe.ipynb was replaced without a word.
    monkeypatch.setattr(notebooks, "execute", _fake_execute)
    source = _notebook(tmp_path / "nbs" / "en" / "probe.ipynb", _reference("print(1)"))
    theirs = tmp_path / "theirs" / "en" / "probe.ipynb"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("a reader's notebook")
    with pytest.raises(SystemExit):
        notebooks.main(["run", str(source), "--out", str(tmp_path / "theirs")])
    assert "was not made by tools.runs.notebooks run" in capsys.readouterr().err
    assert theirs.read_text() == "a reader's notebook"
    out = tmp_path / "mine"
    for _ in range(2):  # its own folder, made on the first run, is written again
        assert notebooks.main(["run", str(source), "--out", str(out)]) == 0
    assert (out / "en" / "probe.ipynb").read_text() == "executed"
    assert (out / ".written-by").read_text().strip() == "tools.runs.notebooks run"


def test_execute_refuses_to_write_over_the_notebook_itself(tmp_path):
    source = _notebook(tmp_path / "en" / "probe.ipynb", _reference("print(1)"))
    before = source.read_text()
    with pytest.raises(notebooks.NotebookFailed, match="over the notebook itself"):
        notebooks.execute(source, tmp_path)
    assert source.read_text() == before


def test_prepare_refuses_an_empty_folder_it_did_not_make(tmp_path, capsys):
    # Before: it adopted the empty folder, and the next run deleted what was put there since.
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SystemExit):
        notebooks.main(["prepare", "notebooks/en/01_tpu_initialization.ipynb", "--out", str(empty)])
    assert f"{empty} was not made by tools.runs.notebooks prepare" in capsys.readouterr().err
    assert empty.is_dir() and not any(empty.iterdir())


@pytest.mark.parametrize("text", ['{"cell-001": [', "<html>404</html>", '["a"]', "\xff\xfe"])
def test_a_corrupted_reference_is_named_and_nothing_is_prepared(
    tmp_path, monkeypatch, capsys, text
):
    # Before: a raw JSONDecodeError, and the notebooks after it were not prepared.
    monkeypatch.setattr(notebooks, "REFERENCES", tmp_path / "refs")
    (tmp_path / "refs").mkdir()
    good = _notebook(tmp_path / "nbs" / "en" / "good.ipynb", _reference("print(1)"))
    bad = _notebook(tmp_path / "nbs" / "en" / "bad.ipynb", _reference("print(1)"))
    stream = {"name": "stdout", "output_type": "stream", "text": "1\n"}
    (tmp_path / "refs" / "good.json").write_text(json.dumps({"cell-001": [stream]}))
    (tmp_path / "refs" / "bad.json").write_bytes(text.encode("latin-1"))
    out = tmp_path / "nbval"
    with pytest.raises(SystemExit) as stop:
        notebooks.main(["prepare", str(good), str(bad), "--out", str(out)])
    assert stop.value.code == 2
    assert "bad.json" in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(notebooks.NotebookFailed, match=r"bad\.json.*nox -s refs"):
        notebooks.prepare(bad, out)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("command", ["run", "prepare"])
def test_a_full_disk_is_named_and_leaves_no_incomplete_copy(tmp_path, monkeypatch, capsys, command):
    # Before: a raw OSError, and a truncated notebook left behind. /dev/full answers every write
    # with ENOSPC, as a full disk does.
    monkeypatch.setattr(notebooks, "REFERENCES", tmp_path / "refs")
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / "probe.json").write_text(json.dumps({"cell-001": []}))
    first = _notebook(tmp_path / "nbs" / "en" / "probe.ipynb", _reference("print(1)"))
    second = _notebook(tmp_path / "nbs" / "en" / "second.ipynb", _reference("print(2)"))
    (tmp_path / "refs" / "second.json").write_text(json.dumps({"cell-001": []}))
    out = tmp_path / "out"
    outputs.claim(out, notebooks.WRITTEN_BY[command])
    copy = out / "en" / "probe.ipynb"
    copy.parent.mkdir()
    copy.symlink_to("/dev/full")
    monkeypatch.setattr(outputs, "clear", lambda folder, tool: None)  # keep the full "disk"
    assert notebooks.main([command, str(first), str(second), "--out", str(out)]) == 1
    shown = capsys.readouterr().out
    assert f"{copy}: could not be written (No space left on device): free space" in shown
    assert "The incomplete copy was deleted; the notebook itself is unchanged." in shown
    assert "Stopped: 1 more notebook not run." in shown
    assert not copy.exists() and not copy.is_symlink()
    assert not (out / "en" / "second.ipynb").exists()


def test_notebooks_of_another_stack_stay_out_of_the_default_runs() -> None:
    # Notebook 15's kernel needs torch (`nox -s pytorch_xla`); this environment has none.
    own = {p for p in paths.all_notebooks() if paths.stack(p) == "pytorch"}
    assert Path(paths.NOTEBOOKS / "en" / "15_pytorch_xla.ipynb") in own
    assert not own & set(notebooks.find_notebooks())


def test_every_notebook_has_ci_parameters_or_needs_none() -> None:
    table = yaml.safe_load(notebooks.PARAMETERS_FILE.read_text()) or {}
    stems = {p.stem for p in paths.all_notebooks()}
    assert not set(table) - stems, (
        f"parameters for notebooks that do not exist: {set(table) - stems}"
    )


# What CI may set: what a reader would not (a path CI's folders need, a time bound), never a size.
CI_ONLY = {
    "KERAS_THROUGHPUT_FILE": "a path: where `nox -s notebooks` wrote notebook 03's figures",
    "THROUGHPUT_FILE": "a path",
    "TFRECORD_DIR": "a path",
    "TIMEOUT": "a time bound",
}


def test_ci_runs_the_defaults_and_sets_no_size() -> None:
    table = yaml.safe_load(notebooks.PARAMETERS_FILE.read_text()) or {}
    sizes = {f"{stem}: {name}" for stem, values in table.items() for name in values or {}}
    sizes -= {f"{stem}: {name}" for stem in table for name in CI_ONLY}
    assert not sizes, f"CI must run the defaults readers run; it sets {sorted(sizes)}"


def test_every_reference_cell_has_a_stored_reference() -> None:
    for path in paths.all_notebooks():
        stored = json.loads(notebooks.reference_file(path).read_text())
        cells = nbformat.read(path, 4).cells
        tagged = {cell.id for cell in cells if notebook_file.is_reference_cell(cell)}
        assert tagged == set(stored), f"{path}: run `nox -s refs` (tagged {tagged})"


def test_a_kernel_does_not_inherit_the_keras_backend_this_process_chose(tmp_path, monkeypatch):
    # get_strategy() sets KERAS_BACKEND=tensorflow in the test process; a kernel that inherited
    # it would make notebook 10 (Keras on JAX) fail whenever such a test ran before it.

    monkeypatch.setenv("KERAS_BACKEND", "tensorflow")
    notebook = tmp_path / "xx" / "probe.ipynb"
    notebook.parent.mkdir()
    code = "import os\nprint(repr(os.environ.get('KERAS_BACKEND')))"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), notebook)
    executed = nbformat.read(notebooks.execute(notebook, tmp_path / "out", parameters={}), 4)
    assert executed.cells[0].outputs[0]["text"].strip() == "None"
    assert os.environ["KERAS_BACKEND"] == "tensorflow"  # restored for this process


def _teaching_cells(path: Path) -> list[str]:
    cells = [c for c in nbformat.read(path, 4).cells if c.cell_type == "code"]
    return [
        c.source
        for c in cells
        if "parameters" not in c.metadata.get("tags", [])
        and 'find_spec("tpuhelpers")' not in c.source
    ]


def test_the_lessons_are_tensorflow_code_not_helper_calls() -> None:
    used = total = 0
    for path in paths.all_notebooks():
        if path.parent.name != "en":
            continue
        cells = _teaching_cells(path)
        imported = set()
        for source in cells:
            for names in re.findall(r"from tpuhelpers import ([\w, ]+)", source):
                imported |= {name.strip() for name in names.split(",")}
        pattern = "|".join(imported)
        helper = re.compile(rf"\b({pattern})\.") if imported else None
        uses = [s for s in cells if "tpuhelpers" in s or (helper and helper.search(s))]
        used, total = used + len(uses), total + len(cells)
    assert used / total <= 0.35, f"{used} of {total} teaching code cells call tpuhelpers"
    code = "\n".join(
        s for p in paths.all_notebooks() if p.parent.name == "en" for s in _teaching_cells(p)
    )
    for call in ("TPUStrategy(", "optimizer.build(", "TFConfigClusterResolver"):
        assert call in code, f"no English code cell calls {call}"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--lang", "xx"], "no notebooks for --lang xx: languages are ['de', 'en'"),
        (["run", "notebooks/en/99_missing.ipynb"], "no such notebook: "),
        (["run", "README.md"], "no such notebook: "),
    ],
)
def test_the_runner_refuses_to_run_nothing(argv, message, capsys):
    # Before: `--lang xx` printed "0 notebooks ran" and exited 0.
    with pytest.raises(SystemExit) as exit_info:
        notebooks.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_the_runner_checks_its_output_folder_before_running(tmp_path, capsys):
    target = tmp_path / "executed.txt"
    target.write_text("keep me")
    with pytest.raises(SystemExit):
        notebooks.main(["run", "--lang", "en", "--out", str(target)])
    assert "is a file: name a folder" in capsys.readouterr().err
    assert target.read_text() == "keep me"


def test_the_runner_keeps_going_past_a_broken_notebook_and_exits_1(tmp_path, capsys):
    paths = []
    for name, code in (("a_broken", "1 / 0"), ("b_fine", "print('fine')")):
        path = tmp_path / "xx" / f"{name}.ipynb"
        path.parent.mkdir(exist_ok=True)
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), path)
        paths.append(str(path))
    assert notebooks.main(["run", *paths, "--out", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert "a_broken.ipynb: cell 0" in out and "ZeroDivisionError" in out
    assert "ok     " in out and "b_fine.ipynb" in out
    assert "1 notebooks ran, 1 failed" in out


def test_no_code_cell_is_over_40_lines() -> None:
    long_cells = [
        f"{path.name} {cell.id}: {len(cell.source.splitlines())} lines"
        for path in paths.all_notebooks()
        if path.parent.name == "en"
        for cell in nbformat.read(path, 4).cells
        if cell.cell_type == "code" and len(cell.source.splitlines()) > 40
    ]
    assert not long_cells, long_cells


@pytest.mark.parametrize(
    ("environ", "files", "gpus", "shown"),
    [
        ({}, [], [], "none"),
        ({}, [], ["nvidia0", "nvidiactl"], "1 NVIDIA GPU(s)"),
        ({}, ["/dev/vfio/0"], ["nvidia0"], "TPU (TPU VM: TPUClusterResolver(tpu='local'))"),
        ({"TPU_NAME": "my-tpu"}, [], [], "TPU (TPU_NAME='my-tpu')"),
        ({"COLAB_TPU_ADDR": "10.0.0.2:8470"}, [], [], "TPU (legacy Colab TPU node at grpc://10."),
        ({"COLAB_TPU_ADDR": "not an address"}, [], [], "a TPU setting that cannot be read (COLAB"),
    ],
)
def test_the_run_record_names_the_accelerator_where_tpuhelpers_looks(
    tmp_path, environ, files, gpus, shown
):
    for name in gpus:
        (tmp_path / name).touch()
    assert notebooks.accelerator(environ, lambda: files, tmp_path).startswith(shown)


def test_the_run_record_names_date_machine_python_packages_and_variables():
    record = notebooks.run_record({"TF_USE_LEGACY_KERAS": "1", "HOME": "/root"})
    assert record["environment"] == {"TF_USE_LEGACY_KERAS": "1"}
    assert record["machine"]["cpus"] == os.cpu_count() and record["python"].count(".") == 2
    assert "tensorflow-cpu" in record["packages"] and "nbformat" not in record["packages"]
    assert record["date"].endswith("+00:00")
