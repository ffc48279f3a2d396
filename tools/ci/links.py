"""Badges and links: every notebook opens in Colab and in Kaggle from its own path, nothing
dangles, and the notebook tables of the README and of each language folder are up to date.

Checks, for a checkout of the repository:

- every notebook in every language folder has, in its title cell, the "Open in Colab" and the
  "Open in Kaggle" badges to its own path (`paths.colab_url`, `paths.kaggle_url`);
- every relative link in the notebooks' markdown, in README.md, CONTRIBUTING.md,
  stacks/README.md, the language indexes and the translation glossaries resolves to an existing
  file, and so does every Colab, Kaggle or GitHub URL that points into this repository;
- README.md holds, between the markers `<!-- notebooks:start -->` and `<!-- notebooks:end -->`,
  exactly `readme_table()`: one row per English notebook (number, title, what it teaches, its
  Colab and Kaggle badges), then a line linking each language's index. The "what it teaches"
  words are written by hand in the README's table; `--fix` keeps them and reports a row without;
- each translated language has its index, `notebooks/<lang>/README.md`, exactly
  `language_index()`: its notebooks' translated titles with their Colab and Kaggle badges
  (`python -m tools.l10n build` rewrites it too).

    python -m tools.ci.links            # report problems, exit 1 if any
    python -m tools.ci.links --table    # print the README table and the line of language indexes
    python -m tools.ci.links --fix      # rewrite them and the language indexes

Markdown is read with markdown-it-py through `tools.l10n.markdown` (link targets, code spans, raw
HTML), which `l10n` and `glossary` share.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from urllib.parse import unquote

from tools import languages, paths
from tools import notebook as notebook_file
from tools.ci import nbcheck
from tools.l10n import index as indexes
from tools.l10n.index import INDEX
from tools.l10n.markdown import link_targets

ROOT = paths.ROOT

TABLE_START = "<!-- notebooks:start -->"
TABLE_END = "<!-- notebooks:end -->"
MARKDOWN_FILES = ("README.md", "CONTRIBUTING.md", "stacks/README.md")
TEACHES = "what it teaches"  # the README table's column written by hand
FIX = "run `python -m tools.ci.links --fix`"

SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class LinkError(Exception):
    """A request that cannot be carried out; the message says why and what to do."""


# ----------------------------------------------------------------------------- link targets


def is_relative(target: str) -> bool:
    """True for a link target inside this repository: no scheme, not a bare `#anchor`."""
    return bool(target) and not (
        SCHEME_RE.match(target) or target.startswith("#") or target.startswith("//")
    )


# ----------------------------------------------------------------------------- repository paths


def repository_path(url: str) -> str | None:
    """Returns the repository path a Colab, Kaggle or GitHub URL of this repository points at,
    or None."""
    settings = paths.project_settings()
    repository = re.escape(settings["repository"])
    match = re.match(
        rf"https://(?:colab\.research\.google\.com/github|github\.com|"
        rf"kaggle\.com/kernels/welcome\?src=https://github\.com)/{repository}/"
        rf"(?:blob|tree)/[^/]+/([^?#]+)",
        url,
    )
    return unquote(match.group(1)) if match else None


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


# ----------------------------------------------------------------------------- checks


def link_problems(markdown: str, base: Path, root: Path, where: str) -> list[str]:
    """Checks the links of one markdown text.

    Args:
        markdown: The text.
        base: The folder relative links start from (the file's folder).
        root: The checkout's root: links may not leave it; `/path` starts there.
        where: How problems name the text (file, cell).

    Returns:
        One line per dangling link.
    """
    found = []
    for target in link_targets(markdown):
        in_repository = repository_path(target)
        if in_repository is not None:
            resolved = root / in_repository
        elif is_relative(target):
            path = unquote(re.split(r"[?#]", target, maxsplit=1)[0])
            if not path:
                continue
            resolved = root / path.lstrip("/") if path.startswith("/") else base / path
        else:
            continue
        resolved = resolved.resolve()
        if not resolved.is_relative_to(root.resolve()):
            found.append(f"{where}: link {target!r} points outside the repository")
        elif not resolved.exists():
            found.append(
                f"{where}: link {target!r} does not resolve: there is no "
                f"{_relative(resolved, root)}"
            )
    return found


def notebook_problems(path: Path, root: Path = ROOT) -> list[str]:
    """Checks one notebook: its badges to its own path, and every link in its markdown cells."""
    name = _relative(path, root)
    try:
        nb = notebook_file.read(path)
    except Exception as error:  # nbformat raises several kinds; the message says which
        return [f"{name}: not a readable notebook: {error}"]
    found = []
    title = nb.cells[0].source if nb.cells and nb.cells[0].cell_type == "markdown" else ""
    for kind, (image, url), expected in nbcheck.badge_mismatches(title, path, root):
        if not url:
            found.append(f"{name}: cell-000 has no Open in {kind} badge; expected {expected}")
        elif url != expected:
            found.append(f"{name}: cell-000: the {kind} badge points to {url}, not {expected}")
        else:
            right = notebook_file.BADGE_KINDS[kind][1]
            found.append(f"{name}: cell-000: the {kind} badge shows {image}, not {right}")
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            where = f"{name}: cell-{index:03d}"
            found.extend(link_problems(cell.source, path.parent, root, where))
    return found


# ----------------------------------------------------------------------------- the tables


def _cells(line: str) -> list[str]:
    """The cells of a markdown table row (split at unescaped pipes), stripped."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _table_bounds(text: str) -> tuple[int, int] | None:
    """Returns where the table between the README markers starts and ends, or None."""
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start:
        return None
    return start + len(TABLE_START), end


def descriptions(text: str) -> dict[str, str]:
    """The "what it teaches" words of each row of the README table, by notebook stem.

    Args:
        text: The README.

    Returns:
        For each row whose second cell links an English notebook, its third cell (maybe "").
    """
    bounds = _table_bounds(text)
    found = {}
    for line in text[bounds[0] : bounds[1]].splitlines() if bounds else []:
        cells = _cells(line)
        if len(cells) < 3 or notebook_file.BADGE_RE.search(cells[2]):
            continue
        link = re.search(rf"\(notebooks/{paths.SOURCE}/([^)/]+)\.ipynb\)", cells[1])
        if link:
            found[link.group(1)] = cells[2]
    return found


def readme_table(root: Path = ROOT) -> str:
    """Returns what README.md holds between its markers: the notebooks table and the languages.

    One row per English notebook: its number, its title (linked to the file), what it teaches
    (the words the README's table has for it: `descriptions`), its Colab and Kaggle badges. Then
    one line linking the index of every other language (`tools.l10n.index`).
    """
    readme = root / "README.md"
    words = descriptions(readme.read_text(encoding="utf-8")) if readme.exists() else {}
    header = ["#", "notebook", TEACHES, "Colab", "Kaggle"]
    rows = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    for path in paths.all_notebooks(paths.SOURCE, root):
        link = f"[{indexes.title(path)}](notebooks/{paths.SOURCE}/{path.name})"
        cells = [indexes.number(path.stem), link, words.get(path.stem, "")]
        cells += [paths.badge(path, root), paths.kaggle_badge(path, root)]
        rows.append("| " + " | ".join(cells) + " |")
    others = [
        f"[{languages.get(code).name}](notebooks/{code}/{INDEX})"
        for code in indexes.language_folders(root)
        if code != paths.SOURCE
    ]
    if others:
        rows += ["", "The notebooks in other languages: " + " · ".join(others)]
    return "\n".join(rows)


def _missing_badges(
    text: str, where: str, notebooks: list[Path], root: Path, fix: str = FIX
) -> list[str]:
    """One line per badge (Colab, Kaggle) of a notebook of `notebooks` that `text` lacks."""
    shown = {
        kind: {url for found, url in pattern.findall(text) if found == image}
        for kind, (pattern, image, _) in notebook_file.BADGE_KINDS.items()
    }
    return [
        f"{where} has no Open in {kind} badge for {_relative(path, root)}; {fix}"
        for path in notebooks
        for kind, (_, _, url_of) in notebook_file.BADGE_KINDS.items()
        if url_of(path, root) not in shown[kind]
    ]


def readme_problems(root: Path = ROOT) -> list[str]:
    """Checks README.md and the language indexes: the badges of every notebook of every
    language, up-to-date tables, and words on what each notebook teaches."""
    readme = root / "README.md"
    if not readme.exists():
        return ["README.md is missing"]
    text = readme.read_text(encoding="utf-8")
    english = paths.all_notebooks(paths.SOURCE, root)
    fix = f"{FIX} (or paste `--table`)"
    found = _missing_badges(text, "README.md", english, root, fix)
    bounds = _table_bounds(text)
    if bounds and text[bounds[0] : bounds[1]].strip() != readme_table(root):
        found.append(
            f"README.md: the notebooks table between {TABLE_START} and {TABLE_END} "
            f"is out of date; {fix}"
        )
    words = descriptions(text)
    found += [
        f"README.md: the notebooks table says nothing under {TEACHES!r} for "
        f"{_relative(path, root)}: write a few words in its row (`--fix` keeps them)"
        for path in english
        if bounds and not words.get(path.stem)
    ]
    for lang in indexes.language_folders(root):
        if lang == paths.SOURCE:
            continue
        written = root / "notebooks" / lang / INDEX
        where = _relative(written, root)
        if not written.exists():
            found.append(f"{where} is missing; {FIX}")
            continue
        text = written.read_text(encoding="utf-8")
        found += _missing_badges(text, where, paths.all_notebooks(lang, root), root)
        if text != indexes.language_index(root, lang):
            found.append(f"{where} is out of date; {FIX}")
    return found


def fix_readme(root: Path = ROOT) -> list[str]:
    """Rewrites the README between its markers and every language index.

    Returns:
        The files that changed, relative to `root`.

    Raises:
        LinkError: README.md lacks the markers (nothing is written).
    """
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    bounds = _table_bounds(text)
    if bounds is None:
        raise LinkError(
            f"README.md has no {TABLE_START} ... {TABLE_END} markers: put them on their own lines "
            "around the notebooks table, then run --fix again"
        )
    changed = []
    new = text[: bounds[0]] + "\n" + readme_table(root) + "\n" + text[bounds[1] :]
    if new != text:
        readme.write_text(new, encoding="utf-8")
        changed.append("README.md")
    for lang in indexes.language_folders(root):
        if lang != paths.SOURCE and indexes.write_language_index(root, lang):
            changed.append(f"notebooks/{lang}/{INDEX}")
    return changed


def problems(root: Path = ROOT) -> list[str]:
    """Runs every check of this module on the checkout at `root`; one line per problem."""
    found = []
    for path in paths.all_notebooks(root=root):
        found.extend(notebook_problems(path, root))
    found.extend(readme_problems(root))
    documents = [root / name for name in MARKDOWN_FILES] + sorted(root.glob("notebooks/*/po/*.md"))
    documents += sorted(root.glob(f"notebooks/*/{INDEX}"))
    for document in documents:
        if document.exists():
            text = document.read_text(encoding="utf-8")
            found.extend(link_problems(text, document.parent, root, _relative(document, root)))
    return found


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fix", action="store_true", help="rewrite the README notebooks table and language indexes"
    )
    parser.add_argument("--table", action="store_true", help="print the README notebooks table")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.table:
        print(readme_table(args.root))
        return 0
    if args.fix:
        try:
            changed = fix_readme(args.root)
        except LinkError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        print(
            "README.md: table rewritten"
            if "README.md" in changed
            else "README.md: table up to date"
        )
        print("".join(f"{name}: rewritten\n" for name in changed if name != "README.md"), end="")
    try:
        found = problems(args.root)
    except notebook_file.NotebookFileError as error:
        found = [str(error)]
    print("\n".join(found) if found else "badges and links OK")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
