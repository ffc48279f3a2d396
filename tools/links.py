"""Colab badges and links: every notebook opens in Colab from its own path, nothing dangles.

Checks, for a checkout of the repository:

- every notebook in every language folder has, in its title cell, the "Open in Colab" badge to
  its own path (`paths.colab_url`);
- every relative link in the notebooks' markdown, in README.md, CONTRIBUTING.md and the
  translation glossaries resolves to an existing file, and so does every Colab or GitHub URL that
  points into this repository;
- README.md has an Open-in-Colab badge for every notebook of every language; between the markers
  `<!-- notebooks:start -->` and `<!-- notebooks:end -->` it holds exactly `readme_table()`.

    python -m tools.links            # report problems, exit 1 if any
    python -m tools.links --table    # print the README table (notebooks x languages)
    python -m tools.links --fix      # rewrite the table between the README markers

Markdown parsing (fences, code spans, link targets) lives in `tools.markdown`, which `l10n` and
`glossary` share.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from urllib.parse import unquote

from tools import nbcheck, paths
from tools.markdown import link_targets

ROOT = paths.ROOT

TABLE_START = "<!-- notebooks:start -->"
TABLE_END = "<!-- notebooks:end -->"
MARKDOWN_FILES = ("README.md", "CONTRIBUTING.md")
# Column headings of the README table; a language not listed here shows its code.
LANGUAGE_NAMES = {
    "en": "English",
    "de": "Deutsch",
    "es-419": "Español",
    "fr": "Français",
    "it": "Italiano",
    "ja": "日本語",
    "ko": "한국어",
    "pt-br": "Português",
    "zh-cn": "简体中文",
}

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
    """Returns the repository path a Colab or GitHub URL of this repository points at, or None."""
    settings = paths.project_settings()
    repository = re.escape(settings["repository"])
    match = re.match(
        rf"https://(?:colab\.research\.google\.com/github|github\.com)/{repository}/"
        rf"(?:blob|tree)/[^/]+/([^?#]+)",
        url,
    )
    return unquote(match.group(1)) if match else None


def languages(root: Path = ROOT) -> list[str]:
    """Returns the language folders holding notebooks: English first, then by code."""
    found = {path.parent.name for path in paths.all_notebooks(root=root)}
    return sorted(found, key=lambda code: (code != paths.SOURCE, code))


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
    """Checks one notebook: the badge to its own path, and every link in its markdown cells."""
    name = _relative(path, root)
    try:
        nb = nbcheck.read(path)
    except Exception as error:  # nbformat raises several kinds; the message says which
        return [f"{name}: not a readable notebook: {error}"]
    found = []
    expected = paths.colab_url(path, root)
    title = nb.cells[0].source if nb.cells and nb.cells[0].cell_type == "markdown" else ""
    badges = nbcheck.BADGE_RE.findall(title)
    if not badges:
        found.append(f"{name}: cell-000 has no Open in Colab badge; expected {expected}")
    elif badges[0] != (paths.BADGE_IMAGE, expected):
        found.append(f"{name}: cell-000: the Colab badge points to {badges[0][1]}, not {expected}")
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            where = f"{name}: cell-{index:03d}"
            found.extend(link_problems(cell.source, path.parent, root, where))
    return found


def readme_table(root: Path = ROOT) -> str:
    """Returns the README's table of notebooks x languages, with Open-in-Colab badges.

    One row per notebook (English title, linked to the English file), one column per language
    folder (English first); a language that lacks a notebook shows a dash.
    """
    codes = languages(root)
    stems = sorted({path.stem for path in paths.all_notebooks(root=root)})
    header = ["#", "notebook", *(LANGUAGE_NAMES.get(code, code) for code in codes)]
    rows = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    for stem in stems:
        english = root / "notebooks" / paths.SOURCE / f"{stem}.ipynb"
        title = stem
        if english.exists():
            nb = nbcheck.read(english)
            if nb.cells and nb.cells[0].source.startswith("# "):
                title = nb.cells[0].source.splitlines()[0][2:].strip()
            title = f"[{title.replace('|', '&#124;')}](notebooks/{paths.SOURCE}/{stem}.ipynb)"
        number = stem.split("_", 1)[0]
        cells = [str(int(number)) if number.isdigit() else "", title]
        for code in codes:
            path = root / "notebooks" / code / f"{stem}.ipynb"
            cells.append(paths.badge(path, root) if path.exists() else "—")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _table_bounds(text: str) -> tuple[int, int] | None:
    """Returns where the table between the README markers starts and ends, or None."""
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start:
        return None
    return start + len(TABLE_START), end


def readme_problems(root: Path = ROOT) -> list[str]:
    """Checks README.md: a badge for every notebook of every language, and an up-to-date table."""
    readme = root / "README.md"
    if not readme.exists():
        return ["README.md is missing"]
    text = readme.read_text(encoding="utf-8")
    urls = {url for image, url in nbcheck.BADGE_RE.findall(text) if image == paths.BADGE_IMAGE}
    fix = "run `python -m tools.links --fix` (or paste `--table`)"
    found = [
        f"README.md has no Open in Colab badge for {_relative(path, root)}; {fix}"
        for path in paths.all_notebooks(root=root)
        if paths.colab_url(path, root) not in urls
    ]
    bounds = _table_bounds(text)
    if bounds and text[bounds[0] : bounds[1]].strip() != readme_table(root):
        found.append(
            f"README.md: the notebooks table between {TABLE_START} and {TABLE_END} "
            f"is out of date; {fix}"
        )
    return found


def fix_readme(root: Path = ROOT) -> bool:
    """Rewrites the table between the README markers; returns whether the file changed.

    Raises:
        LinkError: README.md lacks the markers.
    """
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    bounds = _table_bounds(text)
    if bounds is None:
        raise LinkError(
            f"README.md has no {TABLE_START} ... {TABLE_END} markers: put them on their own lines "
            "around the notebooks table, then run --fix again"
        )
    new = text[: bounds[0]] + "\n" + readme_table(root) + "\n" + text[bounds[1] :]
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text


def problems(root: Path = ROOT) -> list[str]:
    """Runs every check of this module on the checkout at `root`; one line per problem."""
    found = []
    for path in paths.all_notebooks(root=root):
        found.extend(notebook_problems(path, root))
    found.extend(readme_problems(root))
    documents = [root / name for name in MARKDOWN_FILES] + sorted(root.glob("notebooks/*/po/*.md"))
    for document in documents:
        if document.exists():
            text = document.read_text(encoding="utf-8")
            found.extend(link_problems(text, document.parent, root, _relative(document, root)))
    return found


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fix", action="store_true", help="rewrite the README notebooks table")
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
        print("README.md: table rewritten" if changed else "README.md: table up to date")
    try:
        found = problems(args.root)
    except nbcheck.NotebookFileError as error:
        found = [str(error)]
    print("\n".join(found) if found else "badges and links OK")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
