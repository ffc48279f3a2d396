"""Notebook hygiene, in the spirit of tensorflow_docs' nbfmt.

Checks every notebook against the conventions in CONTRIBUTING.md: normalized JSON, no stray
metadata, no outputs (reference outputs live in `tests/references/`), a title cell with the "Open
in Colab" and "Open in Kaggle" badges to the notebook's own path, the install cell, a `parameters`
cell, and a closing summary.

    python -m tools.nbcheck            # report problems, exit 1 if any
    python -m tools.nbcheck --fix      # normalize JSON, metadata, install cell, badges
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import re
import sys
from pathlib import Path

import nbformat

from tools.paths import (  # one home for them; re-exported for the other tools
    BADGE_IMAGE,
    KAGGLE_BADGE_IMAGE,
    ROOT,
    all_notebooks,
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


WRITEFILE_RE = re.compile(r"%%writefile(?P<append> -a)? (?P<path>\S+)")


EXERCISES, SOLUTIONS = "## Exercises", "## Solutions"  # the headings of every English notebook


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


def problems(path: Path) -> list[str]:
    """Returns what is wrong with one notebook, one line each."""
    try:
        text = read_text(path)
        nb = read(path, text)
    except NotebookFileError as error:
        return [str(error)]
    found = []
    cells = nb.cells
    if len(cells) < 4:
        return [f"{path}: too few cells ({len(cells)}): title, install, parameters, summary"]
    title = cells[0]
    if title.cell_type != "markdown" or not title.source.startswith("# "):
        found.append(f"{path}: cell 0 must be markdown starting with '# Title'")
    for kind, (image, url), expected in badge_mismatches(title.source, path):
        if not url:
            found.append(f"{path}: cell 0 has no Open in {kind} badge")
        elif url != expected:
            found.append(f"{path}: the {kind} badge points to {url}, expected {expected}")
        else:
            found.append(f"{path}: the {kind} badge shows {image}, expected {BADGE_KINDS[kind][1]}")
    if cells[1].cell_type != "code" or cells[1].source != install_cell(path):
        found.append(f"{path}: cell 1 is not the Colab install cell (run nbcheck --fix)")
    tagged = [i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", [])]
    if len(tagged) != 1 or cells[tagged[0]].cell_type != "code":
        found.append(f"{path}: needs exactly one code cell tagged 'parameters', found {tagged}")
    found += unchecked_parameters(path, cells)
    if cells[-1].cell_type != "markdown" or not cells[-1].source.startswith("## "):
        found.append(f"{path}: the last cell must be the '## Summary' markdown cell")
    found += missing_exercises(path, cells)
    for index, cell in enumerate(cells):
        if cell.cell_type == "code" and cell.outputs:
            found.append(f"{path}: cell {index} has outputs (run nbcheck --fix)")
        if cell.cell_type == "code" and cell.source.lstrip().startswith("# NBVAL"):
            found.append(f"{path}: cell {index} starts with a test marker: tag it {REFERENCE_TAG}")
    if text != dumps(normalize(read(path, text), path)):
        found.append(f"{path}: not normalized (metadata, ids, counts or format; run --fix)")
    return found


def badge_mismatches(
    markdown: str, path: Path, root: Path = ROOT
) -> list[tuple[str, tuple[str, str], str]]:
    """Compares the first badge of each kind (Colab, Kaggle) in a title cell with the right one.

    Args:
        markdown: The title cell's source.
        path: The notebook.
        root: The checkout it is in (default: this repository).

    Returns:
        `(kind, (image, url), expected url)` for each kind whose badge is missing (image and url
        then empty) or differs from the badge to `path`.
    """
    found = []
    for kind, (pattern, image, url_of) in BADGE_KINDS.items():
        expected = url_of(path, root)
        first = next(iter(pattern.findall(markdown)), ("", ""))
        if first != (image, expected):
            found.append((kind, first, expected))
    return found


def missing_exercises(path: Path, cells: list) -> list[str]:
    """An English notebook ends with exercises, their solutions (code CI runs), then a summary."""
    if path.parent.name != "en":  # the other languages are built from the English cells
        return []
    headings = [
        {line.strip() for line in c.source.splitlines() if line.startswith("## ")}
        if c.cell_type == "markdown"
        else set()
        for c in cells
    ]
    where = {h: i for i, found in enumerate(headings) for h in found}
    if EXERCISES not in where or SOLUTIONS not in where:
        return [f"{path}: needs a '{EXERCISES}' and a '{SOLUTIONS}' markdown cell (CONTRIBUTING)"]
    exercises, solutions = where[EXERCISES], where[SOLUTIONS]
    code = [c for c in cells[solutions + 1 : -1] if c.cell_type == "code"]
    if not exercises < solutions < len(cells) - 1 or not code:
        return [
            f"{path}: '{SOLUTIONS}' must follow '{EXERCISES}', with code cells before the summary"
        ]
    return []


def parameter_names(source: str) -> list[str]:
    """The names a parameters cell assigns, in order."""
    tree = ast.parse(source)
    return [
        t.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    ]


def unchecked_parameters(path: Path, cells: list) -> list[str]:
    """The cell after the parameters cell must check each parameter, naming it ("NAME")."""
    tagged = [i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", [])]
    if len(tagged) != 1 or tagged[0] + 1 >= len(cells):
        return []
    following = cells[tagged[0] + 1]
    names = parameter_names(cells[tagged[0]].source)
    missing = [
        n for n in names if following.cell_type != "code" or f'"{n}"' not in following.source
    ]
    if missing:
        return [f"{path}: the cell after the parameters cell does not check {', '.join(missing)}"]
    return []


def writefile_scripts(path: Path) -> dict[str, str]:
    """The scripts a notebook writes with `%%writefile [-a] PATH` cells, by file name, as the
    reader's run leaves them (`-a` appends), so that ruff can check what readers run."""
    scripts: dict[str, str] = {}
    for cell in read(path).cells:
        first, _, body = cell.source.partition("\n")
        if cell.cell_type == "code" and (found := WRITEFILE_RE.fullmatch(first.strip())):
            name = Path(found["path"]).name
            scripts[name] = (scripts.get(name, "") if found["append"] else "") + body + "\n"
    return scripts


def extract_scripts(paths: list[Path], out: Path) -> list[Path]:
    """Writes every notebook's `%%writefile` scripts to `out/<notebook>/<file>`."""
    written = []
    for path in paths:
        for name, text in writefile_scripts(path).items():
            target = out / path.stem / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: all)")
    parser.add_argument("--fix", action="store_true", help="rewrite notebooks in canonical form")
    parser.add_argument("--scripts", type=Path, help="write the %%%%writefile scripts here, only")
    args = parser.parse_args(argv)
    paths = args.paths or all_notebooks()
    if args.scripts:
        try:
            written = extract_scripts(paths, args.scripts)
        except NotebookFileError as error:
            parser.error(str(error))
        print(f"{len(written)} scripts written to {args.scripts}")
        return 0
    for path in paths if args.fix else ():
        with contextlib.suppress(NotebookFileError):  # reported below, with the others
            path.write_text(dumps(normalize(read(path), path)), encoding="utf-8")
    found = [line for path in paths for line in problems(path)]
    print("\n".join(found) if found else f"{len(paths)} notebooks OK")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
