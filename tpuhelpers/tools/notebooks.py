"""Run the curriculum headless: papermill with CI parameters, nbval references.

    python -m tpuhelpers.tools.notebooks run [--lang en] [--out build/executed]
    python -m tpuhelpers.tools.notebooks prepare-nbval [--out build/nbval]
    python -m tpuhelpers.tools.notebooks refs [NOTEBOOK ...]

`run` executes each notebook with the parameters from `tests/notebook_parameters.yaml` and keeps
the executed copies. `prepare-nbval` writes copies with those parameters injected and the
committed reference outputs kept, for `pytest --nbval-lax`. `refs` executes the English notebooks
and stores the outputs of their reference cells (`# NBVAL_CHECK_OUTPUT`) back into them.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import nbformat
import papermill
import yaml

from tpuhelpers.tools import nbcheck

ROOT = nbcheck.ROOT
PARAMETERS_FILE = ROOT / "tests" / "notebook_parameters.yaml"
NBVAL_CONFTEST = ROOT / "tests" / "nbval_conftest.py"


class NotebookFailed(RuntimeError):
    """A notebook raised an error; the message names the notebook and the cell."""


def find_notebooks(languages: list[str] | None = None) -> list[Path]:
    """Returns the notebooks of the given languages (default: every language), sorted."""
    paths = nbcheck.all_notebooks()
    return [p for p in paths if languages is None or p.parent.name in languages]


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
    """
    output = output_dir / notebook.parent.name / notebook.name
    output.parent.mkdir(parents=True, exist_ok=True)
    params = ci_parameters(notebook) if parameters is None else parameters
    try:
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
            f"{notebook.relative_to(ROOT)}: cell {error.cell_index} "
            f"(execution {error.exec_count}, starting {first_line!r}) raised "
            f"{error.ename}: {error.evalue}. Executed copy: {output}"
        ) from None
    return output


def prepare_for_nbval(notebooks: list[Path], output_dir: Path) -> list[Path]:
    """Writes copies with CI parameters injected and reference outputs kept, for nbval."""
    prepared = []
    for notebook in notebooks:
        output = output_dir / notebook.parent.name / notebook.name
        output.parent.mkdir(parents=True, exist_ok=True)
        papermill.execute_notebook(
            str(notebook), str(output), parameters=ci_parameters(notebook), prepare_only=True
        )
        # papermill may drop outputs when preparing: put the committed references back.
        source, copy = nbformat.read(notebook, 4), nbformat.read(output, 4)
        references = {cell.id: cell for cell in source.cells if cell.cell_type == "code"}
        for cell in copy.cells:
            if cell.cell_type == "code" and cell.get("id") in references:
                cell.outputs = references[cell.id].outputs
                cell.execution_count = references[cell.id].execution_count
        nbformat.write(copy, output)
        prepared.append(output)
    shutil.copy(NBVAL_CONFTEST, output_dir / "conftest.py")
    return prepared


def store_references(notebook: Path, executed: Path) -> int:
    """Copies the reference cells' outputs from an executed copy into the notebook.

    Returns:
        How many reference cells were updated.
    """
    source, result = nbformat.read(notebook, 4), nbformat.read(executed, 4)
    executed = {cell.get("id"): cell for cell in result.cells if cell.cell_type == "code"}
    updated = 0
    for cell in source.cells:
        if nbcheck.is_reference_cell(cell) and cell.id in executed:
            cell.outputs = nbcheck.clean_outputs(executed[cell.id].outputs)
            cell.execution_count = executed[cell.id].execution_count
            updated += 1
    notebook.write_text(nbcheck.dumps(nbcheck.normalize(source, notebook)), encoding="utf-8")
    return updated


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["run", "prepare-nbval", "refs"])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: all of --lang")
    parser.add_argument("--lang", action="append", help="language folder(s); default: all")
    parser.add_argument("--out", type=Path, help="output folder")
    args = parser.parse_intermixed_args(argv)
    # References live in the English notebooks; the localized ones copy them when built.
    languages = args.lang or (["en"] if args.command in ("refs", "prepare-nbval") else None)
    notebooks = [p.resolve() for p in args.notebooks] or find_notebooks(languages)
    if args.command == "prepare-nbval":
        prepared = prepare_for_nbval(notebooks, args.out or ROOT / "build" / "nbval")
        print(f"prepared {len(prepared)} notebooks for nbval")
        return 0
    out = args.out or ROOT / "build" / ("refs" if args.command == "refs" else "executed")
    failures = []
    for notebook in notebooks:
        start = time.perf_counter()
        try:
            executed = execute(notebook, out)
        except NotebookFailed as error:
            failures.append(str(error))
            print(f"FAILED {notebook.relative_to(ROOT)}: {error}", flush=True)
            continue
        seconds = time.perf_counter() - start
        note = ""
        if args.command == "refs":
            note = f", {store_references(notebook, executed)} reference cells stored"
        print(f"ok     {notebook.relative_to(ROOT)} ({seconds:.1f} s{note})", flush=True)
    print(f"{len(notebooks) - len(failures)} notebooks ran, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
