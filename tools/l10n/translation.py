"""The translatable messages of the English notebooks, and the notebooks translated from them.

`messages` finds the blocks of an English notebook's markdown cells that translators see
(`split_blocks`: the Colab and Kaggle badges, fenced code and blocks without words are left out);
`translation_problems` says what a translation breaks (code spans, link targets, HTML tags,
markdown structure: `structure`); `translate_markdown` puts the usable translations of a
catalog (`tools.l10n.catalogs`) into a notebook, and `build_notebook` writes a localized notebook
with it. `tools.l10n.cli` is the command line.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from pathlib import Path

import nbformat
import polib
from markdown_it.rules_block.table import escapedSplit

from tools import paths
from tools.l10n import markdown
from tools.l10n.catalogs import L10nError, Message, Tree, active_entries
from tools.notebook import BADGE_RE, KAGGLE_BADGE_RE, dumps, normalize, read

HINTS = {
    "table": "A table: keep every row, and as many cells ('|') per row as the English.",
}
LETTER_RE = re.compile(r"[^\W\d_]")


# ----------------------------------------------------------------------------- blocks


def _lines_of(block: str, kinds: tuple[str, ...]) -> set[int]:
    """The lines of `block` in tokens of `kinds`, at any depth (read like `markdown.read`)."""
    tokens = markdown.PARSER.parse(textwrap.dedent(block))
    return {
        line for token in tokens if token.type in kinds and token.map for line in range(*token.map)
    }


def split_blocks(source: str) -> list[tuple[bool, str]]:
    """Splits markdown at blank lines, keeping fenced code blocks whole.

    Args:
        source: The source of a markdown cell.

    Returns:
        `(is_block, text)` pairs, blocks alternating with runs of blank lines; joining the texts
        with newlines gives `source` back exactly.
    """
    fenced = _lines_of(source, ("fence",))
    groups: list[tuple[bool, list[str]]] = []
    for number, line in enumerate(source.split("\n")):
        is_block = number in fenced or bool(line.strip())
        if groups and groups[-1][0] == is_block:
            groups[-1][1].append(line)
        else:
            groups.append((is_block, [line]))
    return [(is_block, "\n".join(group)) for is_block, group in groups]


def kind(block: str) -> str:
    """Returns "fence" (fenced code only), "table" (a table only) or "text"."""
    lines = set(range(len(block.split("\n"))))
    if lines <= _lines_of(block, ("fence",)):
        return "fence"
    if lines <= _lines_of(block, ("table_open",)):
        return "table"
    return "text"


def structure(block: str) -> dict[str, object]:
    """The markdown structure a translation must keep.

    Args:
        block: One block of markdown (`split_blocks`).

    Returns:
        Its indentation, heading levels, list items and blank lines; for a table, its cells per
        row (its unescaped '|' per line); for a fenced code block, its fence lines.
    """
    lines = block.split("\n")
    tokens = markdown.PARSER.parse(textwrap.dedent(block))
    shape: dict[str, object] = {
        "indentation": len(lines[0]) - len(lines[0].lstrip()),
        "headings": [token.markup for token in tokens if token.type == "heading_open"],
        "list items": sum(token.type == "list_item_open" for token in tokens),
        "blank lines": sum(not line.strip() for line in lines),
    }
    if kind(block) == "table":
        rows = [line for line in lines if line.strip()]
        shape["table cells per row"] = [len(escapedSplit(row)) - 1 for row in rows]
    if kind(block) == "fence":
        shape["fence lines"] = (lines[0].strip(), lines[-1].strip())
    return shape


# ----------------------------------------------------------------------------- messages


def is_badges(block: str) -> bool:
    """True for a block of badges only: the Colab badge, the Kaggle badge or both."""
    rest = KAGGLE_BADGE_RE.sub("", BADGE_RE.sub("", block))
    return rest.strip() == "" and rest != block


def translatable(block: str) -> bool:
    """True unless the block is the badges (regenerated per language: `is_badges`), a fenced
    code block (code is the same in every language, in markdown as in code cells) or has no
    words."""
    if is_badges(block) or kind(block) == "fence":
        return False
    return bool(LETTER_RE.search(block))


def messages(notebook: Path) -> list[Message]:
    """Returns the translatable blocks of a notebook's markdown cells, in order.

    Raises:
        L10nError: The notebook cannot be read.
    """
    try:
        nb = read(notebook)
    except Exception as error:  # nbformat raises several kinds; the message says which
        raise L10nError(f"{notebook}: not a readable notebook: {error}") from None
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        blocks = [text for is_block, text in split_blocks(cell.source) if is_block]
        for number, block in enumerate(blocks):
            if translatable(block):
                place = (f"{notebook.name}:cell-{index:03d}", str(number))
                found.append(Message(block, place, HINTS.get(kind(block), "")))
    return found


# ----------------------------------------------------------------------------- validation


def _difference(name: str, english: Counter, translated: Counter) -> str | None:
    missing, extra = english - translated, translated - english
    if not missing and not extra:
        return None
    parts = [f"missing {', '.join(missing.elements())}"] if missing else []
    parts += [f"not in the English {', '.join(extra.elements())}"] if extra else []
    return f"{name} differ from the English: {'; '.join(parts)}"


def translation_problems(msgid: str, msgstr: str) -> list[str]:
    """Returns what a translation breaks: code spans, links, or markdown structure.

    Code spans and link targets must be the same as in the English, as many times each (their
    order may change); headings, list items, indentation, table cells and fences must match.
    """
    found = []
    english, translated = markdown.read(msgid), markdown.read(msgstr)
    spans = _difference("code spans", Counter(english.code_spans), Counter(translated.code_spans))
    targets = _difference("link targets", Counter(english.targets), Counter(translated.targets))
    html = _difference("HTML tags", english.tags, translated.tags)
    found += [problem for problem in (spans, targets, html) if problem]
    shape, translated_shape = structure(msgid), structure(msgstr)
    for key, value in shape.items():
        if translated_shape.get(key) != value:
            found.append(
                f"markdown structure: {key} {translated_shape.get(key)!r}, English {value!r}"
            )
    return found


def usable_translations(catalog: polib.POFile | None) -> dict[str, str]:
    """The translations a build uses: translated, not fuzzy, nothing broken."""
    if catalog is None:
        return {}
    return {
        entry.msgid: entry.msgstr
        for entry in active_entries(catalog)
        if entry.msgstr and not entry.fuzzy and not translation_problems(entry.msgid, entry.msgstr)
    }


# ----------------------------------------------------------------------------- build


def translate_markdown(
    nb: nbformat.NotebookNode, catalog: polib.POFile | None
) -> nbformat.NotebookNode:
    """Replaces the translatable blocks of `nb`'s markdown cells with their usable translations.

    Only markdown cells change, in place: code cells, their outputs and all metadata stay as they
    are. Blocks without a usable translation (`usable_translations`), the badges and fenced code
    stay English (`tools.notebook.normalize` then points the badges at the localized file). The
    localized notebooks (`build_notebook`) and the site's pages (`tools.site`, on executed
    copies) are translated by this one function.

    Args:
        nb: An English notebook (as written, or an executed copy).
        catalog: Its catalog in one language, or None (everything stays English).

    Returns:
        `nb`, translated.
    """
    table = usable_translations(catalog)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            parts = split_blocks(cell.source)
            cell.source = "\n".join(
                table.get(text, text) if block and translatable(text) else text
                for block, text in parts
            )
    return nb


def build_notebook(tree: Tree, lang: str, english: Path, catalog: polib.POFile | None) -> str:
    """Returns the text of one localized notebook, normalized like `nbcheck --fix` does.

    Args:
        tree: The checkout.
        lang: The language code.
        english: The English notebook.
        catalog: Its catalog in `lang`, or None (everything stays English).
    """
    nb = translate_markdown(read(english), catalog)
    target = tree.localized(lang, english.stem)
    # nbcheck computes badge URLs for paths in the repository: the same path there.
    return dumps(normalize(nb, paths.ROOT / target.relative_to(tree.root)))


if __name__ == "__main__":
    raise SystemExit("tools.l10n.translation has no command line: the other tools import it.")
