"""Reading and writing notebooks: the canonical form of a notebook file.

`read` and `read_text` read a notebook (NotebookFileError names the file and what is wrong),
`normalize` puts it in the canonical form of CONTRIBUTING.md (metadata, cell ids, no outputs, the
badges to its own path, the install cell of its stack), `dumps` writes it as Jupyter does. The
notebook lint (`tools.ci.nbcheck`), the runner, the translations and the site read notebooks
through this module.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from tools.paths import (  # one home for them; re-exported for the other tools
    BADGE_IMAGE,
    KAGGLE_BADGE_IMAGE,
    badges,
    colab_url,
    kaggle_url,
    project_settings,
    stack,
)

# Cells whose outputs CI compares with `tests/references/<notebook>.json`.
REFERENCE_TAG = "reference-output"
NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}
BADGE_RE = re.compile(r"\[!\[Open In Colab\]\(([^)]*)\)\]\(([^)]*)\)")
KAGGLE_BADGE_RE = re.compile(r"\[!\[Open In Kaggle\]\(([^)]*)\)\]\(([^)]*)\)")
# The badge line of a title cell: the Colab badge, and the Kaggle badge after it if there is one
# (`normalize` writes both, on one line).
BADGES_RE = re.compile(rf"{BADGE_RE.pattern}(?:\s*{KAGGLE_BADGE_RE.pattern})?")
# Each kind of badge: what finds it, its image, its URL for a notebook.
BADGE_KINDS = {
    "Colab": (BADGE_RE, BADGE_IMAGE, colab_url),
    "Kaggle": (KAGGLE_BADGE_RE, KAGGLE_BADGE_IMAGE, kaggle_url),
}

INSTALL_CELL = """\
# Where this curriculum's packages are missing (Colab, Kaggle, a new TPU VM), install the stack
# pinned for this hardware: README, "Where readers run the notebooks". Elsewhere it does nothing.
import importlib.util
import os
import urllib.request

if importlib.util.find_spec("tpuhelpers") is None:
    RELEASE = "{release}"  # the commit of the curriculum whose pins and helper to install
    url = f"https://raw.githubusercontent.com/{repository}/{{RELEASE}}/stacks/install.py"
    if os.environ.get("TPU_CURRICULUM_SOURCE"):  # a local checkout instead (CI's runtime tests)
        url = f"file://{{os.environ['TPU_CURRICULUM_SOURCE']}}/stacks/install.py"
    urllib.request.urlretrieve(url, "install_stack.py")
    import install_stack

    install_stack.install(release=RELEASE, stack="{stack}")\
"""


def release() -> str:
    """Returns the commit the install cells install from: `[tool.tpuhelpers] release`."""
    return project_settings()["release"]


def install_cell(path: Path) -> str:
    """Returns the source of the install cell a notebook starts with (its stack's)."""
    return INSTALL_CELL.format(
        repository=project_settings()["repository"], release=release(), stack=stack(path)
    )


def is_reference_cell(cell: dict) -> bool:
    """True for code cells whose outputs CI compares with the stored reference."""
    return cell["cell_type"] == "code" and REFERENCE_TAG in cell.get("metadata", {}).get("tags", [])


def normalize(nb: nbformat.NotebookNode, path: Path) -> nbformat.NotebookNode:
    """Returns `nb` in canonical form (see the module docstring)."""
    nb.metadata = nbformat.from_dict(NOTEBOOK_METADATA)
    nb.nbformat, nb.nbformat_minor = 4, 5
    for index, cell in enumerate(nb.cells):
        cell.id = f"cell-{index:03d}"
        tags = cell.get("metadata", {}).get("tags", [])
        cell.metadata = nbformat.from_dict({"tags": tags} if tags else {})
        if not cell.get("attachments"):
            cell.pop("attachments", None)
        if isinstance(cell.source, list):
            cell.source = "".join(cell.source)
        if cell.cell_type == "code":  # outputs come from a run with the reader's parameters
            cell.outputs = []
            cell.execution_count = None
    if nb.cells and nb.cells[0].cell_type == "markdown":
        nb.cells[0].source = BADGES_RE.sub(lambda _: badges(path), nb.cells[0].source)
    if len(nb.cells) > 1 and nb.cells[1].cell_type == "code":
        nb.cells[1].source = install_cell(path)
    return nb


def dumps(nb: nbformat.NotebookNode) -> str:
    """Serializes like Jupyter does (indent 1, sorted keys), with a final newline."""
    return nbformat.writes(nb) + "\n"


class NotebookFileError(ValueError):
    """A path that should be a notebook is missing, a folder, not UTF-8 or not notebook JSON."""


def read_text(path: Path) -> str:
    """A notebook's text; NotebookFileError names the file and what is wrong with it."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except IsADirectoryError:
        raise NotebookFileError(
            f"{path} is a folder, not a notebook: remove or rename it."
        ) from None
    except UnicodeDecodeError as error:
        raise NotebookFileError(
            f"{path} is not UTF-8 text ({error.reason} at byte {error.start})."
        ) from None
    except OSError as error:
        raise NotebookFileError(f"{path} cannot be read: {error.strerror or error}.") from None


def read(path: Path, text: str | None = None) -> nbformat.NotebookNode:
    """Reads a notebook (version 4); NotebookFileError names the file and what is wrong."""
    text = read_text(path) if text is None else text
    try:
        return nbformat.reads(text, as_version=4)
    except Exception as error:  # noqa: BLE001 - nbformat raises several kinds, all shown
        why = (
            str(error).strip().splitlines()[0][:200] if str(error).strip() else type(error).__name__
        )
        fix = "restore it with `git checkout -- FILE` or re-save it from Jupyter"
        raise NotebookFileError(f"{path} is not a Jupyter notebook ({why}): {fix}.") from None


if __name__ == "__main__":
    raise SystemExit("tools.notebook has no command line: the other tools import it.")
