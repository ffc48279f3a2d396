"""Every notebook runs headless with its CI parameters (papermill, a real Jupyter kernel)."""

from pathlib import Path

import pytest

from tpuhelpers.tools import nbcheck
from tpuhelpers.tools.notebooks import ROOT, execute

NOTEBOOKS = nbcheck.all_notebooks()


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_notebook_runs(notebook: Path) -> None:
    # NotebookFailed names the notebook, the cell and the error; the executed copy is kept.
    executed = execute(notebook, ROOT / "build" / "executed")
    assert executed.exists()


def test_every_notebook_has_ci_parameters_or_needs_none() -> None:
    import yaml

    from tpuhelpers.tools.notebooks import PARAMETERS_FILE

    table = yaml.safe_load(PARAMETERS_FILE.read_text()) or {}
    stems = {p.stem for p in NOTEBOOKS}
    assert not set(table) - stems, (
        f"parameters for notebooks that do not exist: {set(table) - stems}"
    )
