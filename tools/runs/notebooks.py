"""Run the curriculum headless: papermill with CI parameters; nbval compares the references.

    python -m tools.runs.notebooks run [--lang en] [--out build/executed]
    python -m tools.runs.notebooks prepare [--lang en] [--out build/nbval]
    python -m tools.runs.notebooks refs [NOTEBOOK ...]

`run` executes each notebook once with the parameters from `tests/notebook_parameters.yaml` and
keeps the executed copies (with their plots), for the site. `prepare` writes the copies that
`nox -s tests` hands to nbval (`pytest --nbval-lax`): the CI parameters injected, and in each cell
tagged `reference-output` the outputs stored in `tests/references/<notebook>.json` (made on the
default CPU stack, so other stacks, which print other versions, run without them). nbval then
executes each copy once and compares those cells, masking what `tests/reference_sanitize.cfg`
names. `refs` executes the English notebooks and stores those cells' outputs there. The notebooks
themselves carry no outputs: what a reader sees comes from a run with the reader's own parameters.

Each command writes only into an `--out` folder it made and marked (tools/outputs.py), never into
one that holds a notebook it reads; `prepare` reads every reference file before it clears its
folder, so that a damaged one (named) leaves last time's copies in place.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import papermill
import yaml

from tools import notebook as notebook_file
from tools import outputs, paths
from tpuhelpers import tpu

ROOT = paths.ROOT
PARAMETERS_FILE = ROOT / "tests" / "notebook_parameters.yaml"
REFERENCES = ROOT / "tests" / "references"
SANITIZE_FILE = ROOT / "tests" / "reference_sanitize.cfg"  # nbval's format: regex/replace pairs
# The tag nbval's `--nbval-lax` compares; `prepare` adds it to the reference cells.
NBVAL_CHECK = "nbval-check-output"
PREPARED_BY = "tools.runs.notebooks prepare"  # the mark on the folder of nbval's copies
# The mark each command puts on its --out (tools/outputs.py): it writes only into its own folder.
WRITTEN_BY = {
    "run": "tools.runs.notebooks run",
    "prepare": PREPARED_BY,
    "refs": "tools.runs.notebooks refs",
}


# Variables a process sets for itself (`jax_setup.use_keras_backend` sets KERAS_BACKEND), which a
# kernel would inherit: each notebook chooses its own backend, so a kernel starts without them,
# as it would from a user's shell. Left in, a test that called `get_strategy()` in this process
# made notebook 10 (Keras on JAX) fail or pass depending on which test ran before it.
PROCESS_CHOICES = ("KERAS_BACKEND",)


# What produced an executed copy's outputs: `execute` writes `run_record()` into the copy's
# metadata as `metadata["tpu_curriculum"]["run"]`; each page of the site shows it.
# tools/site/pages.py has the same name: it runs where papermill is not installed, and this
# module runs where the site's packages are not (a test executes a notebook and reads the record
# through tools.site).
RUN_METADATA = "tpu_curriculum"
RECORDED_PACKAGES = (
    "tensorflow",
    "tensorflow-cpu",
    "tensorflow-tpu",
    "keras",
    "tf-keras",
    "jax",
    "jaxlib",
    "torch",
    "torch-xla",
    "numpy",
)
# Variables that change what a run does or shows, recorded when set.
RECORDED_VARIABLES = ("TF_USE_LEGACY_KERAS", "PJRT_DEVICE", "CPU_NUM_DEVICES", "TPU_SKIP_MDS_QUERY")


class NotebookFailed(RuntimeError):
    """A notebook raised an error, or its reference cells differ; the message says where."""


class OutputError(NotebookFailed):
    """A copy could not be written (a full disk, a read-only folder); the rest would fail too."""


@contextlib.contextmanager
def _writing(output: Path):
    """Turns an OSError while `output` is written into an OutputError that names it and the
    fix, after deleting the incomplete copy (the runner made it; the notebook is untouched)."""
    try:
        yield
    except OSError as error:
        with contextlib.suppress(OSError):
            output.unlink(missing_ok=True)
        raise OutputError(
            f"{output}: could not be written ({error.strerror or error}): free space on that "
            "disk, or name another --out. The incomplete copy was deleted; the notebook itself "
            "is unchanged."
        ) from None


def find_notebooks(languages: list[str] | None = None) -> list[Path]:
    """Returns the notebooks of the given languages (default: every language), sorted, without
    those that need an environment of their own (`paths.OWN_ENVIRONMENT`: name them)."""
    found = [p for p in paths.all_notebooks() if paths.stack(p) not in paths.OWN_ENVIRONMENT]
    return [p for p in found if languages is None or p.parent.name in languages]


def ci_parameters(notebook: Path) -> dict:
    """Returns the CI parameters of a notebook (keyed by file stem, the same in every language)."""
    table = yaml.safe_load(PARAMETERS_FILE.read_text(encoding="utf-8")) or {}
    return dict(table.get(notebook.stem) or {})


def execute(
    notebook: Path,
    output_dir: Path,
    parameters: dict | None = None,
    timeout: int = 900,
) -> Path:
    """Executes a notebook with papermill; returns the executed copy's path.

    Args:
        notebook: The notebook to run.
        output_dir: Where the executed copy goes (`<output_dir>/<lang>/<name>.ipynb`).
        parameters: Overrides for the `parameters` cell; default: its CI parameters.
        timeout: Seconds one cell may run.

    Raises:
        NotebookFailed: A cell raised; the message names the notebook, the cell and the error.
        NotebookFileError: `notebook` is not a readable notebook.
    """
    notebook_file.read(notebook)  # a broken file is named before a kernel starts
    output = _output(notebook, output_dir)
    output.parent.mkdir(parents=True, exist_ok=True)
    params = ci_parameters(notebook) if parameters is None else parameters
    record = run_record()
    try:
        with _kernel_environment(), _writing(output):
            papermill.execute_notebook(
                str(notebook),
                str(output),
                parameters=params,
                kernel_name="python3",
                cwd=str(output.parent),
                execution_timeout=timeout,
                progress_bar=False,
            )
    except papermill.PapermillExecutionError as error:
        first_line = error.source.strip().splitlines()[0] if error.source.strip() else ""
        raise NotebookFailed(
            f"{_shown(notebook)}: cell {error.cell_index} "
            f"(execution {error.exec_count}, starting {first_line!r}) raised "
            f"{error.ename}: {error.evalue}. Executed copy: {output}"
        ) from None
    executed = notebook_file.read(output)
    executed.metadata.setdefault(RUN_METADATA, {})["run"] = record
    with _writing(output):
        nbformat.write(executed, output)
    return output


def run_record(environ: Mapping[str, str] | None = None) -> dict:
    """What this machine runs notebooks with: the date, the machine, Python and package versions.

    Cheap: it reads the environment, /dev and the installed packages' metadata, and imports no
    framework (a kernel would start its own anyway).

    Args:
        environ: The environment variables; default: this process's.

    Returns:
        `{"date", "machine": {"platform", "cpus", "accelerator"}, "python", "packages",
        "environment"}`: JSON-serializable, for the executed copy's metadata.
    """
    environ = os.environ if environ is None else environ
    packages = {}
    for name in RECORDED_PACKAGES:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            packages[name] = importlib.metadata.version(name)
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "accelerator": accelerator(environ),
        },
        "python": platform.python_version(),
        "packages": packages,
        "environment": {name: environ[name] for name in RECORDED_VARIABLES if name in environ},
    }


def accelerator(
    environ: Mapping[str, str],
    tpu_files: Callable[[], list[str]] = tpu.tpu_device_files,
    dev: Path = Path("/dev"),
) -> str:
    """The accelerator a run could use, found without importing a framework.

    A TPU where `tpuhelpers` would look for one (`tpu.find_tpu`: TPU_CONFIG, COLAB_TPU_ADDR,
    TPU_NAME, the chips' device files), else NVIDIA GPUs (`/dev/nvidia<n>`), else "none".
    """
    try:
        target = tpu.find_tpu(platform=tpu.Platform(environ=environ, tpu_device_files=tpu_files))
    except ValueError as error:  # a TPU setting that cannot be read
        return f"a TPU setting that cannot be read ({error})"
    if target:
        return f"TPU ({target.source})"
    gpus = list(dev.glob("nvidia[0-9]*"))
    return f"{len(gpus)} NVIDIA GPU(s)" if gpus else "none"


def _output(notebook: Path, output_dir: Path) -> Path:
    """Where the copy of `notebook` goes; NotebookFailed if that is the notebook itself."""
    output = Path(output_dir) / notebook.parent.name / notebook.name
    if output.resolve() == notebook.resolve():
        raise NotebookFailed(
            f"{_shown(notebook)}: its copy would go to {output}, over the notebook itself: "
            "name another output folder (nothing was written)."
        )
    return output


def _shown(path: Path) -> Path:
    """A path as messages show it: relative to the repository where it is inside it."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


@contextlib.contextmanager
def _kernel_environment():
    """Leaves PROCESS_CHOICES out of the environment while a kernel starts; restores them after."""
    saved = {name: os.environ.pop(name) for name in PROCESS_CHOICES if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def output_text(cell: dict) -> str:
    """What is compared of a cell's outputs: stdout and plain-text results, in order.

    stderr is left out: it carries TensorFlow's log lines, which differ between runs.
    """
    parts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream" and output["name"] == "stdout":
            parts.append(output["text"])
        elif output["output_type"] in ("execute_result", "display_data"):
            parts.append(output.get("data", {}).get("text/plain", "") + "\n")
        elif output["output_type"] == "error":
            parts.append(f"{output['ename']}: {output['evalue']}\n")
    return "".join(parts)


def reference_file(notebook: Path) -> Path:
    """Where a notebook's reference outputs are stored (the same for every language)."""
    return REFERENCES / f"{notebook.stem}.json"


def reference_outputs(cell: dict) -> list[dict]:
    """A cell's outputs as its reference stores them: without stderr (TensorFlow's log lines,
    which differ between runs, and which nbval is told to skip) and without metadata."""
    kept = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream" and output["name"] == "stderr":
            continue
        output = {key: value for key, value in output.items() if key != "metadata"}
        if "execution_count" in output:
            output["execution_count"] = 1
        kept.append({"metadata": {}, **output} if "data" in output else output)
    return kept


def references(notebook: Path) -> dict[str, list[dict]]:
    """The stored reference outputs of a notebook: {cell id: [output, ...]}.

    Raises:
        NotebookFailed: The file is missing, or is not such a JSON object; the message names it.
    """
    path = reference_file(notebook)
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotebookFailed(
            f"{_shown(notebook)}: no reference file {_shown(path)}: run `nox -s refs`."
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise NotebookFailed(
            f"{_shown(path)} cannot be read ({error}): restore it (`git checkout -- "
            f"{_shown(path)}`) or write it again with `nox -s refs`."
        ) from None
    if not isinstance(stored, dict) or not all(
        isinstance(value, list) and all(isinstance(o, dict) for o in value)
        for value in stored.values()
    ):
        raise NotebookFailed(
            f"{_shown(path)} is not a reference file ({{cell id: [output, ...]}}): restore it "
            f"(`git checkout -- {_shown(path)}`) or write it again with `nox -s refs`."
        )
    return stored


def prepare(notebook: Path, output_dir: Path) -> Path:
    """Writes the copy of a notebook that nbval runs: CI parameters injected (papermill
    `--prepare-only`), and the stored outputs in its reference cells, tagged for nbval's
    `--nbval-lax` (`nbval-check-output`); returns the copy's path.

    Raises:
        NotebookFailed: A reference cell has no stored output (run `nox -s refs`), or the
            reference file cannot be read (the message names it).
        NotebookFileError: `notebook` is not a readable notebook.
    """
    notebook_file.read(notebook)
    stored = references(notebook)
    output = _output(notebook, output_dir)
    output.parent.mkdir(parents=True, exist_ok=True)
    with _writing(output):
        papermill.execute_notebook(
            str(notebook),
            str(output),
            parameters=ci_parameters(notebook),
            prepare_only=True,
            language="python",
            kernel_name="python3",
            progress_bar=False,
        )
    prepared = notebook_file.read(output)
    for cell in prepared.cells:
        if not notebook_file.is_reference_cell(cell):
            continue
        if cell.id not in stored:
            raise NotebookFailed(
                f"{_shown(notebook)}: cell {cell.id} has no stored reference in "
                f"{_shown(reference_file(notebook))}: run `nox -s refs`"
            )
        cell.outputs = [nbformat.from_dict(o) for o in stored[cell.id]]
        cell.execution_count = 1  # nbval compares only cells that ran in the reference
        cell.metadata.setdefault("tags", []).append(NBVAL_CHECK)
    with _writing(output):
        nbformat.write(prepared, output)
    return output


def store_references(notebook: Path, executed: Path) -> int:
    """Writes the reference cells' outputs of an executed copy to `tests/references/`.

    Returns:
        How many reference cells were stored.
    """
    cells = [c for c in notebook_file.read(executed).cells if notebook_file.is_reference_cell(c)]
    outputs = {cell.id: reference_outputs(cell) for cell in cells}
    REFERENCES.mkdir(parents=True, exist_ok=True)
    reference_file(notebook).write_text(
        json.dumps(outputs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return len(outputs)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["run", "prepare", "refs"])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: all of --lang")
    parser.add_argument("--lang", action="append", help="language folder(s); default: all")
    parser.add_argument("--out", type=Path, help="output folder")
    args = parser.parse_intermixed_args(argv)
    # References come from the English notebooks; the localized ones have the same code.
    languages = args.lang or (["en"] if args.command == "refs" else None)
    notebooks = [p.resolve() for p in args.notebooks] or find_notebooks(languages)
    missing = [str(p) for p in notebooks if not p.is_file() or p.suffix != ".ipynb"]
    if not notebooks or missing:
        known = sorted({p.parent.name for p in paths.all_notebooks()})
        parser.error(
            f"no such notebook: {', '.join(missing)}"
            if missing
            else f"no notebooks for --lang {','.join(languages or [])}: languages are {known}"
        )
    out = (
        args.out
        or ROOT / "build" / {"run": "executed", "prepare": "nbval", "refs": "refs"}[args.command]
    )
    if out.exists() and not out.is_dir():
        parser.error(f"--out {out} is a file: name a folder for the executed notebooks")
    try:
        outputs.refuse_inputs(out, notebooks)
        if args.command == "prepare":
            for notebook in notebooks:  # every reference readable before anything is cleared
                references(notebook)
            # Last time's copies go (a renamed notebook leaves none behind): only if it made them.
            outputs.clear(out, PREPARED_BY)
        outputs.claim(out, WRITTEN_BY[args.command])
    except (outputs.NotOwnedError, NotebookFailed) as error:
        parser.error(str(error))
    failures = []
    for index, notebook in enumerate(notebooks):
        start = time.perf_counter()
        try:
            if args.command == "refs":
                executed = execute(notebook, out)
                note = f", {store_references(notebook, executed)} reference cells stored"
            elif args.command == "prepare":
                prepare(notebook, out)
                note = ", prepared for nbval"
            else:
                execute(notebook, out)
                note = ""
        except (NotebookFailed, notebook_file.NotebookFileError) as error:
            failures.append(str(error))
            print(f"FAILED {error}", flush=True)
            if isinstance(error, OutputError):
                left = len(notebooks) - index - 1
                print(f"Stopped: {left} more notebook{'s' * (left != 1)} not run.", flush=True)
                return 1
            continue
        seconds = time.perf_counter() - start
        print(f"ok     {_shown(notebook)} ({seconds:.1f} s{note})", flush=True)
    print(f"{len(notebooks) - len(failures)} notebooks ran, {len(failures)} failed")
    return 1 if failures or not notebooks else 0


if __name__ == "__main__":
    sys.exit(main())
