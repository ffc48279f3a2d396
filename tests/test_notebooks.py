"""Every notebook runs headless with its CI parameters (papermill, a real Jupyter kernel).

By default the English notebooks run; `TPUHELPERS_NOTEBOOK_LANGS=all` (or `de,it`) runs the
localized ones too (`nox -s notebooks_l10n`). Their code cells are identical to English by
construction (`python -m tpuhelpers.tools.l10n check`), so the default CI runs English only.
"""

import os
from pathlib import Path

import pytest

from tpuhelpers.tools import nbcheck
from tpuhelpers.tools.notebooks import ROOT, execute

LANGUAGES = os.environ.get("TPUHELPERS_NOTEBOOK_LANGS", "en")
NOTEBOOKS = [
    path
    for path in nbcheck.all_notebooks()
    if LANGUAGES == "all" or path.parent.name in LANGUAGES.split(",")
]


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
    stems = {p.stem for p in nbcheck.all_notebooks()}
    assert not set(table) - stems, (
        f"parameters for notebooks that do not exist: {set(table) - stems}"
    )
