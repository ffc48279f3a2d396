"""Notebook hygiene, in the spirit of tensorflow_docs' nbfmt.

Checks every notebook against the conventions in CONTRIBUTING.md: normalized JSON, no stray
metadata, no outputs (reference outputs live in `tests/references/`), a title cell with the "Open
in Colab" and "Open in Kaggle" badges to the notebook's own path, the install cell, a `parameters`
cell, and a closing summary.

Each convention is a rule (`RULES`): a function of the notebook's path and cells that returns
one line per problem. Reading and writing notebooks is `tools.notebook`'s.

    python -m tools.ci.nbcheck            # report problems, exit 1 if any
    python -m tools.ci.nbcheck --fix      # normalize JSON, metadata, install cell, badges
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import re
import sys
from pathlib import Path

from tools.notebook import (
    BADGE_KINDS,
    REFERENCE_TAG,
    NotebookFileError,
    dumps,
    install_cell,
    normalize,
    read,
    read_text,
)
from tools.paths import ROOT, all_notebooks

WRITEFILE_RE = re.compile(r"%%writefile(?P<append> -a)? (?P<path>\S+)")


EXERCISES, SOLUTIONS = "## Exercises", "## Solutions"  # the headings of every English notebook


def title_cell(path: Path, cells: list) -> list[str]:
    """Cell 0 is the '# Title' markdown cell with the Colab and Kaggle badges to `path`."""
    found = []
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
    return found


def install(path: Path, cells: list) -> list[str]:
    """Cell 1 is the install cell of the notebook's stack."""
    if cells[1].cell_type != "code" or cells[1].source != install_cell(path):
        return [f"{path}: cell 1 is not the Colab install cell (run nbcheck --fix)"]
    return []


def parameters(path: Path, cells: list) -> list[str]:
    """Exactly one code cell is tagged 'parameters'."""
    tagged = [i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", [])]
    if len(tagged) != 1 or cells[tagged[0]].cell_type != "code":
        return [f"{path}: needs exactly one code cell tagged 'parameters', found {tagged}"]
    return []


def summary(path: Path, cells: list) -> list[str]:
    """The last cell is the '## Summary' markdown cell."""
    if cells[-1].cell_type != "markdown" or not cells[-1].source.startswith("## "):
        return [f"{path}: the last cell must be the '## Summary' markdown cell"]
    return []


def no_outputs(path: Path, cells: list) -> list[str]:
    """No code cell has outputs or starts with a test marker instead of the reference tag."""
    found = []
    for index, cell in enumerate(cells):
        if cell.cell_type == "code" and cell.outputs:
            found.append(f"{path}: cell {index} has outputs (run nbcheck --fix)")
        if cell.cell_type == "code" and cell.source.lstrip().startswith("# NBVAL"):
            found.append(f"{path}: cell {index} starts with a test marker: tag it {REFERENCE_TAG}")
    return found


def problems(path: Path) -> list[str]:
    """Returns what is wrong with one notebook, one line each (every rule of `RULES`)."""
    try:
        text = read_text(path)
        nb = read(path, text)
    except NotebookFileError as error:
        return [str(error)]
    cells = nb.cells
    if len(cells) < 4:
        return [f"{path}: too few cells ({len(cells)}): title, install, parameters, summary"]
    found = [line for rule in RULES for line in rule(path, cells)]
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


# The conventions, in the order their problems are reported.
RULES = (
    title_cell,
    install,
    parameters,
    unchecked_parameters,
    summary,
    missing_exercises,
    no_outputs,
)


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
    if not args.paths:  # the whole checkout: its badges and links too
        from tools.ci import links  # it reads the notebooks with this module's rules

        found += links.problems()
    what = f"{len(paths)} notebooks" + ("" if args.paths else ", badges and links")
    print("\n".join(found) if found else f"{what} OK")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
