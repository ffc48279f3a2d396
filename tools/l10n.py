"""Localized notebooks, built from the English ones and gettext PO catalogs.

The English notebooks in `notebooks/en/` are the single source of truth. Translators edit one PO
catalog per language and notebook, `notebooks/<lang>/po/<notebook>.po`, whose messages are the
blocks of the English markdown cells (split at blank lines; a table is one block; the Colab badge
and fenced code blocks are left out). The build copies each English notebook and replaces those
blocks only, so code cells, code in markdown fences, their tags and metadata, and reference outputs
are identical in every language, by construction.

    python -m tools.l10n extract [--lang de] [--prune] [--add LANG]
    python -m tools.l10n build [--lang de]
    python -m tools.l10n check [--lang de]
    python -m tools.l10n report [--lang de] [--require-complete]

`extract` updates the catalogs from English: new messages come untranslated, a changed message
keeps its old translation marked fuzzy (the old English in `#| msgid`), removed ones become
obsolete (`#~`). `build` writes `notebooks/<lang>/<notebook>.ipynb`; untranslated, fuzzy and
invalid translations fall back to English. `check` fails when a catalog is unreadable or out of
date, a translation breaks a code span, a link or the markdown structure or goes against the
checked terms of its glossary (`tools.glossary`), or a committed localized notebook differs from
what `build` writes; it also runs the badge and link checks of `links`.
`report` counts translated, fuzzy and untranslated messages per language and notebook.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import nbformat
import polib

from tools import glossary, links, nbcheck

ROOT = nbcheck.ROOT
SOURCE = links.SOURCE_LANGUAGE
# No wrapping (msgmerge --no-wrap): one PO line per markdown line, so msgid and msgstr line up with
# the notebook source and a diff shows the lines that changed. (A CJK paragraph is one line.)
WRAP_WIDTH = 0
FUZZY = "fuzzy"
# How alike (difflib ratio) an old message must be to lend its translation to a changed one:
# at the same place (cell and block), or anywhere in the catalog.
SAME_PLACE_SIMILARITY = 0.3
ANYWHERE_SIMILARITY = 0.6
PLURAL_FORMS = {
    "de": "nplurals=2; plural=(n != 1);",
    "es-419": "nplurals=2; plural=(n != 1);",
    "fr": "nplurals=2; plural=(n > 1);",
    "it": "nplurals=2; plural=(n != 1);",
    "ja": "nplurals=1; plural=0;",
    "ko": "nplurals=1; plural=0;",
    "pt-br": "nplurals=2; plural=(n > 1);",
    "zh-cn": "nplurals=1; plural=0;",
}
LANGUAGE_CODE_RE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})?$")
HEADER = """\
{language} ({lang}) translation of notebooks/{source}/{stem}.ipynb (TPU curriculum).
Edit the msgstr lines only; keep `code spans`, link targets and the markdown
structure (headings, list items, table cells) as in the English.
Glossary: notebooks/{lang}/po/GLOSSARY.md. Workflow: CONTRIBUTING.md, "Translations"."""
HINTS = {
    "table": "A table: keep every row, and as many cells ('|') per row as the English.",
}
HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:\s|$)")
LIST_ITEM_RE = re.compile(r"^\s*(?:[*+-]|\d{1,9}[.)])\s+\S")
LETTER_RE = re.compile(r"[^\W\d_]")


class L10nError(Exception):
    """Bad input (catalog, language code, tree); the message says what is wrong and the fix."""


# ----------------------------------------------------------------------------- the tree


@dataclass(frozen=True)
class Tree:
    """The notebooks and catalogs of one checkout: the repository, or a copy in a test.

    Attributes:
        root: The checkout's root folder (the one holding `notebooks/`).
    """

    root: Path = ROOT

    @property
    def notebooks(self) -> Path:
        """The folder holding one folder per language."""
        return self.root / "notebooks"

    def english(self) -> list[Path]:
        """The English notebooks, sorted."""
        return sorted((self.notebooks / SOURCE).glob("*.ipynb"))

    def languages(self) -> list[str]:
        """The languages that have catalogs (`notebooks/<lang>/po/`), sorted."""
        folders = self.notebooks.glob("*/po")
        return sorted(p.parent.name for p in folders if p.is_dir() and p.parent.name != SOURCE)

    def catalogs(self, lang: str) -> list[Path]:
        """The catalogs of one language, sorted."""
        return sorted((self.notebooks / lang / "po").glob("*.po"))

    def catalog(self, lang: str, stem: str) -> Path:
        """The catalog of one notebook in one language."""
        return self.notebooks / lang / "po" / f"{stem}.po"

    def localized(self, lang: str, stem: str) -> Path:
        """The built notebook of one language."""
        return self.notebooks / lang / f"{stem}.ipynb"

    def rel(self, path: Path) -> str:
        """`path` relative to the root, for messages."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def select(self, requested: list[str] | None) -> list[str]:
        """Returns the requested languages (default: all that have catalogs).

        Raises:
            L10nError: A requested language has no catalogs; the message lists those that do.
        """
        available = self.languages()
        if not requested:
            return available
        for lang in requested:
            if lang not in available:
                raise L10nError(
                    f"no catalogs for language {lang!r} (there is no "
                    f"{self.rel(self.notebooks / lang / 'po')}/); available: "
                    f"{', '.join(available) or 'none'}. To start a new language, run "
                    f"`python -m tools.l10n extract --add {lang}`"
                )
        return list(dict.fromkeys(requested))

    def orphans(self, lang: str) -> list[Path]:
        """Catalogs and built notebooks of `lang` whose English notebook does not exist."""
        stems = {path.stem for path in self.english()}
        found = [*self.catalogs(lang), *sorted((self.notebooks / lang).glob("*.ipynb"))]
        return [path for path in found if path.stem not in stems]

    def orphan_error(self, orphans: list[Path]) -> L10nError:
        """The error for catalogs or notebooks whose English notebook is gone."""
        names = ", ".join(self.rel(path) for path in orphans)
        return L10nError(
            f"no English notebook in notebooks/{SOURCE}/ for: {names}. If the notebook was "
            "renamed, rename its catalogs the same way (git mv) and run extract again; if it was "
            "deleted, run `python -m tools.l10n extract --prune`"
        )


# ----------------------------------------------------------------------------- markdown blocks


def split_blocks(markdown: str) -> list[tuple[bool, str]]:
    """Splits markdown at blank lines, keeping fenced code blocks whole.

    Args:
        markdown: The source of a markdown cell.

    Returns:
        `(is_block, text)` pairs, blocks alternating with runs of blank lines; joining the texts
        with newlines gives `markdown` back exactly.
    """
    lines = markdown.split("\n")
    groups: list[tuple[bool, list[str]]] = []
    for line, inside_fence in zip(lines, links.fenced(lines), strict=True):
        is_block = inside_fence or bool(line.strip())
        if groups and groups[-1][0] == is_block:
            groups[-1][1].append(line)
        else:
            groups.append((is_block, [line]))
    return [(is_block, "\n".join(group)) for is_block, group in groups]


def translatable(block: str) -> bool:
    """True unless the block is the Colab badge (regenerated per language), a fenced code block
    (code is the same in every language, in markdown as in code cells) or has no words."""
    if nbcheck.BADGE_RE.fullmatch(block.strip()) or kind(block) == "fence":
        return False
    return bool(LETTER_RE.search(block))


def kind(block: str) -> str:
    """Returns "fence", "table" or "text"."""
    lines = block.split("\n")
    if all(links.fenced(lines)):
        return "fence"
    if all(line.lstrip().startswith("|") for line in lines):
        return "table"
    return "text"


@dataclass(frozen=True)
class Message:
    """One translatable block of an English notebook.

    Attributes:
        msgid: The block's English markdown.
        occurrence: `(<notebook>.ipynb:<cell id>, <block index in the cell>)`, as PO stores it.
        hint: An extracted comment for translators, or "".
    """

    msgid: str
    occurrence: tuple[str, str]
    hint: str = ""


def messages(notebook: Path) -> list[Message]:
    """Returns the translatable blocks of a notebook's markdown cells, in order.

    Raises:
        L10nError: The notebook cannot be read.
    """
    try:
        nb = nbcheck.read(notebook)
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


def _table_shape(block: str) -> list[int]:
    """Cells per row of a table: unescaped '|' outside code spans, per line."""
    text = links.prose(block)
    return [len(re.findall(r"(?<!\\)\|", line)) for line in text.split("\n") if line.strip()]


def _structure(block: str) -> dict[str, object]:
    """The markdown structure a translation must keep."""
    lines = block.split("\n")
    text = links.prose(block).split("\n")
    shape: dict[str, object] = {
        "indentation": len(lines[0]) - len(lines[0].lstrip()),
        "headings": [m.group(1) for line in text if (m := HEADING_RE.match(line))],
        "list items": sum(bool(LIST_ITEM_RE.match(line)) for line in text),
        "blank lines": sum(not line.strip() for line in lines),
    }
    if kind(block) == "table":
        shape["table cells per row"] = _table_shape(block)
    if kind(block) == "fence":
        shape["fence lines"] = (lines[0].strip(), lines[-1].strip())
    return shape


def _difference(name: str, english: Counter, translated: Counter) -> str | None:
    missing, extra = english - translated, translated - english
    if not missing and not extra:
        return None
    parts = [f"missing {', '.join(missing.elements())}"] if missing else []
    parts += [f"not in the English {', '.join(extra.elements())}"] if extra else []
    return f"{name} differ from the English: {'; '.join(parts)}"


_HTML_TAG = re.compile(r"<\s*(/?[A-Za-z][\w:-]*)[^>]*>")


def _html_tags(text: str) -> Counter:
    """Raw HTML tags (`<script>`, `<img ...>`) outside code spans and fences, by name."""
    prose = re.sub(r"```.*?```|`[^`\n]*`", "", text, flags=re.DOTALL)
    return Counter(tag.lower() for tag in _HTML_TAG.findall(prose))


def translation_problems(msgid: str, msgstr: str) -> list[str]:
    """Returns what a translation breaks: code spans, links, or markdown structure.

    Code spans and link targets must be the same as in the English, as many times each (their
    order may change); headings, list items, indentation, table cells and fences must match.
    """
    found = []
    spans = _difference(
        "code spans", Counter(links.code_spans(msgid)), Counter(links.code_spans(msgstr))
    )
    targets = _difference(
        "link targets", Counter(links.link_targets(msgid)), Counter(links.link_targets(msgstr))
    )
    html = _difference("HTML tags", _html_tags(msgid), _html_tags(msgstr))
    found += [problem for problem in (spans, targets, html) if problem]
    english, translated = _structure(msgid), _structure(msgstr)
    for key, value in english.items():
        if translated.get(key) != value:
            found.append(f"markdown structure: {key} {translated.get(key)!r}, English {value!r}")
    return found


# ----------------------------------------------------------------------------- catalogs


def po_language(lang: str) -> str:
    """The PO `Language` of a folder code: "zh-cn" -> "zh_CN", "de" -> "de"."""
    language, _, region = lang.partition("-")
    return f"{language}_{region.upper()}" if region else language


def read_catalog(path: Path, tree: Tree) -> polib.POFile:
    """Reads a PO catalog.

    Raises:
        L10nError: The file has a syntax error or duplicate messages; the message names the file
            and, for syntax errors, the line.
    """
    try:
        Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        where = f"byte {error.start}: {error.reason}"
        raise L10nError(f"{tree.rel(path)}: not UTF-8 text ({where}); save it as UTF-8") from None
    except OSError as error:
        raise L10nError(f"{tree.rel(path)}: cannot be read ({error.strerror})") from None
    try:
        catalog = polib.pofile(
            str(path), wrapwidth=WRAP_WIDTH, encoding="utf-8", check_for_duplicates=True
        )
        if problems := po_syntax_problems(Path(path).read_text(encoding="utf-8")):
            raise OSError(f"{path} (line {problems[0][0]}): {problems[0][1]}")
        msgfmt_check(path, tree)
        return catalog
    except (OSError, ValueError) as error:  # polib raises OSError("... (line N): why")
        text = str(error)
        line = re.search(r"\(line (\d+)\)", text)
        why = text.split("):", 1)[1].strip() if "):" in text else text
        if line:
            raise L10nError(
                f"{tree.rel(path)}:{line.group(1)}: PO syntax error"
                f"{': ' + why if why != text else ''} (check quotes and escapes on that line; "
                f"`msgfmt --check -o /dev/null {tree.rel(path)}` tells the same)"
            ) from None
        raise L10nError(f"{tree.rel(path)}: not a valid PO catalog: {text}") from None


_PO_STRING = re.compile(r'"(?:[^"\\]|\\[\\"abfnrtv]|\\[0-7]{1,3}|\\x[0-9a-fA-F]+)*"')
_PO_LINE = re.compile(r'(?:#~ )?(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)?\s*(".*)')


def po_syntax_problems(text: str) -> list[tuple[int, str]]:
    """(line, problem) for each string line that is unterminated or has an escape that
    `msgfmt --check` refuses; polib accepts both and would corrupt the text."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        found = _PO_LINE.fullmatch(line.strip())
        if found and not _PO_STRING.fullmatch(found.group(1).rstrip()):
            problems.append((number, "unterminated string or invalid escape sequence"))
    return problems


def msgfmt_check(path: Path, tree: Tree) -> None:
    """Runs GNU `msgfmt --check` on a catalog where gettext is installed (60 s bound)."""
    if not (msgfmt := shutil.which("msgfmt")):
        return
    run = subprocess.run(
        [msgfmt, "--check", "-o", os.devnull, str(path)], capture_output=True, text=True, timeout=60
    )
    if run.returncode:
        first = run.stderr.strip().splitlines()[0] if run.stderr.strip() else "failed"
        raise L10nError(f"{tree.rel(path)}: msgfmt --check: {first.split(': ', 1)[-1]}")


def serialize(catalog: polib.POFile) -> str:
    """The canonical text of a catalog, as extract writes it."""
    catalog.wrapwidth = WRAP_WIDTH
    return str(catalog)


def validate_language(lang: str) -> None:
    """Checks that a new language can get catalogs.

    Raises:
        L10nError: `lang` is not a language code, or its plural forms are not known.
    """
    if not LANGUAGE_CODE_RE.match(lang) or lang == SOURCE:
        raise L10nError(f"{lang!r} is not a language code like 'de', 'it' or 'zh-cn'")
    if lang not in PLURAL_FORMS:
        raise L10nError(
            f"no Plural-Forms known for {lang!r}: add its gettext Plural-Forms line to "
            "PLURAL_FORMS in tools/l10n.py"
        )


def new_catalog(lang: str, stem: str) -> polib.POFile:
    """Returns an empty catalog with the header and metadata for `lang`."""
    catalog = polib.POFile(wrapwidth=WRAP_WIDTH, encoding="utf-8")
    name = links.LANGUAGE_NAMES.get(lang, lang)
    catalog.header = HEADER.format(language=name, source=SOURCE, stem=stem, lang=lang)
    catalog.metadata = {"Project-Id-Version": f"tpu-curriculum {stem}"}
    return catalog


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


@dataclass
class Update:
    """The result of updating one catalog: the catalog and what changed.

    Attributes:
        catalog: The updated catalog.
        new: Messages new in English, untranslated.
        fuzzy: Changed messages that got an old translation, marked fuzzy.
        obsolete: Translated messages no longer in English, kept as obsolete.
    """

    catalog: polib.POFile
    new: int = 0
    fuzzy: int = 0
    obsolete: int = 0


def update_catalog(old: polib.POFile, found: list[Message], lang: str, stem: str) -> Update:
    """Merges the messages of the English notebook into a catalog (like msgmerge).

    A message whose English is unchanged keeps its translation and flags. A changed message takes
    the translation of the old message at the same place (cell and block) if the texts are still
    alike, else of the most alike translated message that left English; it is marked fuzzy and
    keeps the English the translation was made for as `previous_msgid`. Translated messages that
    left English become obsolete, untranslated ones are dropped.

    Args:
        old: The catalog as it is (or `new_catalog()`).
        found: The messages of the English notebook, in order.
        lang: The catalog's language code.
        stem: The notebook's file stem.

    Returns:
        The updated catalog and counts of what changed.
    """
    template = new_catalog(lang, stem)
    catalog = polib.POFile(wrapwidth=WRAP_WIDTH, encoding="utf-8")
    catalog.header = old.header or template.header
    catalog.metadata_is_fuzzy = old.metadata_is_fuzzy
    catalog.metadata = {
        **template.metadata,
        **old.metadata,
        "Language": po_language(lang),
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    catalog.metadata.setdefault("Plural-Forms", PLURAL_FORMS.get(lang, ""))
    grouped: dict[str, list[Message]] = {}
    for message in found:
        grouped.setdefault(message.msgid, []).append(message)
    by_msgid: dict[str, polib.POEntry] = {}
    for entry in [*active_entries(old), *old.obsolete_entries()]:  # active ones win
        by_msgid.setdefault(entry.msgid, entry)
    donors = [entry for entry in by_msgid.values() if entry.msgstr]
    used: set[str] = set()
    result = Update(catalog)
    for msgid, places in grouped.items():
        entry = polib.POEntry(
            msgid=msgid,
            occurrences=[message.occurrence for message in places],
            comment=places[0].hint,
        )
        previous = by_msgid.get(msgid)
        if previous is not None:
            entry.msgstr, entry.tcomment = previous.msgstr, previous.tcomment
            if previous.fuzzy:
                entry.flags = [FUZZY]
                entry.previous_msgid = previous.previous_msgid
        else:
            donor = _donor(entry, donors, set(grouped))
            if donor is None:
                result.new += 1
            else:
                used.add(donor.msgid)
                entry.msgstr, entry.tcomment = donor.msgstr, donor.tcomment
                entry.flags = [FUZZY]
                # A fuzzy donor's translation was made for its own previous English.
                entry.previous_msgid = (donor.fuzzy and donor.previous_msgid) or donor.msgid
                result.fuzzy += 1
        catalog.append(entry)
    for entry in by_msgid.values():
        if entry.msgid in grouped or entry.msgid in used or not entry.msgstr:
            continue
        result.obsolete += not entry.obsolete
        catalog.append(
            polib.POEntry(
                msgid=entry.msgid,
                msgstr=entry.msgstr,
                tcomment=entry.tcomment,
                flags=list(entry.flags),
                obsolete=True,
            )
        )
    return result


def _donor(
    entry: polib.POEntry, donors: list[polib.POEntry], current: set[str]
) -> polib.POEntry | None:
    """Picks the old translated entry whose translation a changed message inherits, if any."""
    places = set(entry.occurrences)
    scored = [(_similarity(entry.msgid, d.msgid), d) for d in donors if places & set(d.occurrences)]
    here = [(score, d) for score, d in scored if score >= SAME_PLACE_SIMILARITY]
    if here:
        return max(here, key=lambda pair: pair[0])[1]
    elsewhere = [
        (score, d)
        for d in donors
        if d.msgid not in current
        and (score := _similarity(entry.msgid, d.msgid)) >= ANYWHERE_SIMILARITY
    ]
    return max(elsewhere, key=lambda pair: pair[0])[1] if elsewhere else None


def active_entries(catalog: polib.POFile) -> list[polib.POEntry]:
    """The entries of a catalog that are not obsolete (a POFile lists both)."""
    return [entry for entry in catalog if not entry.obsolete]


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
    are. Blocks without a usable translation (`usable_translations`), the Colab badge and fenced
    code stay English. The localized notebooks (`build_notebook`) and the site's pages
    (`tools.site`, on executed copies) are translated by this one function.

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
    nb = translate_markdown(nbcheck.read(english), catalog)
    target = tree.localized(lang, english.stem)
    # nbcheck computes badge URLs for paths in the repository: the same path there.
    return nbcheck.dumps(nbcheck.normalize(nb, nbcheck.ROOT / target.relative_to(tree.root)))


# ----------------------------------------------------------------------------- commands


def extract(
    tree: Tree, langs: list[str] | None = None, prune: bool = False, add: str | None = None
) -> list[str]:
    """Updates (or creates) every catalog of the given languages from the English notebooks.

    Args:
        tree: The checkout.
        langs: Language codes; default: every language with catalogs.
        prune: Delete catalogs and built notebooks whose English notebook is gone.
        add: A new language code: create its folder and catalogs.

    Returns:
        One line per catalog: what changed.

    Raises:
        L10nError: An unknown language, an unreadable catalog, or (without `prune`) a catalog
            whose English notebook is gone.
    """
    if add:
        validate_language(add)
        (tree.notebooks / add / "po").mkdir(parents=True, exist_ok=True)
    selected = list(dict.fromkeys([*tree.select(langs), *([add] if add else [])]))
    log = []
    orphans = [path for lang in selected for path in tree.orphans(lang)]
    if orphans and not prune:
        raise tree.orphan_error(orphans)
    for path in orphans:
        path.unlink()
        log.append(f"{tree.rel(path)}: removed (no English notebook)")
    english = {path: messages(path) for path in tree.english()}
    for lang in selected:
        for source, found in english.items():
            path = tree.catalog(lang, source.stem)
            existed = path.exists()
            old = read_catalog(path, tree) if existed else new_catalog(lang, source.stem)
            update = update_catalog(old, found, lang, source.stem)
            text = serialize(update.catalog)
            if existed and path.read_text(encoding="utf-8") == text:
                continue
            path.write_text(text, encoding="utf-8")
            what = "updated" if existed else "created"
            log.append(
                f"{tree.rel(path)}: {what}: {update.new} new, {update.fuzzy} fuzzy, "
                f"{update.obsolete} obsolete, {len(active_entries(update.catalog))} messages"
            )
    return log or ["catalogs up to date"]


def build(tree: Tree, langs: list[str] | None = None) -> list[str]:
    """Writes `notebooks/<lang>/<notebook>.ipynb` for every English notebook and language.

    Returns:
        One line per notebook written, and warnings (translations left out, stale catalogs).

    Raises:
        L10nError: An unknown language, an unreadable catalog, or catalogs or notebooks whose
            English notebook is gone.
    """
    selected = tree.select(langs)
    orphans = [path for lang in selected for path in tree.orphans(lang)]
    if orphans:
        raise tree.orphan_error(orphans)
    log = []
    for lang in selected:
        terms, problems = glossary_terms(tree, lang)
        log.extend(f"warning: {line}" for line in problems)
        for english in tree.english():
            path = tree.catalog(lang, english.stem)
            catalog = read_catalog(path, tree) if path.exists() else None
            if catalog is None:
                log.append(f"warning: {tree.rel(path)} is missing (English text); run extract")
            else:
                wrong = catalog_problems(tree, path, catalog, terms)
                log.extend(f"warning: {line}" for line in wrong)
            text = build_notebook(tree, lang, english, catalog)
            target = tree.localized(lang, english.stem)
            if target.exists() and target.read_text(encoding="utf-8") == text:
                continue
            target.write_text(text, encoding="utf-8")
            log.append(f"{tree.rel(target)}: written")
    return log or ["localized notebooks up to date"]


def glossary_terms(tree: Tree, lang: str) -> tuple[list[glossary.Term], list[str]]:
    """The checked terms of a language's glossary, and what is wrong with its table (if any)."""
    path = tree.notebooks / lang / "po" / "GLOSSARY.md"
    try:
        return glossary.read_terms(path, tree.rel(path)), []
    except glossary.GlossaryError as error:
        return [], [str(error)]


def catalog_problems(
    tree: Tree, path: Path, catalog: polib.POFile, terms: list[glossary.Term]
) -> list[str]:
    """What is wrong with one readable catalog: out of date with English, broken translations,
    checked glossary `terms` not followed."""
    english = tree.notebooks / SOURCE / f"{path.stem}.ipynb"
    lang = path.parent.parent.name
    found = []
    fresh = update_catalog(catalog, messages(english), lang, path.stem).catalog
    if serialize(fresh) != serialize(catalog):
        found.append(_staleness(tree, path, english, catalog, fresh))
    for entry in active_entries(catalog):
        if entry.msgstr:
            where = f"{tree.rel(path)}:{entry.linenum} ({_places(entry)})"
            wrong = translation_problems(entry.msgid, entry.msgstr)
            if not entry.fuzzy:
                wrong += glossary.problems(terms, entry.msgid, entry.msgstr)
            found += [f"{where}: {problem}" for problem in wrong]
    return found


def _places(entry: polib.POEntry) -> str:
    return ", ".join(f"{file}:{block}" for file, block in entry.occurrences) or "obsolete"


def _staleness(
    tree: Tree, path: Path, english: Path, catalog: polib.POFile, fresh: polib.POFile
) -> str:
    """Explains how a catalog differs from what extract would write."""
    active = {entry.msgid: entry for entry in active_entries(catalog)}
    current = {entry.msgid: entry for entry in active_entries(fresh)}
    new = [entry for msgid, entry in current.items() if msgid not in active]
    gone = [msgid for msgid in active if msgid not in current]
    moved = [
        entry
        for msgid, entry in current.items()
        if msgid in active and sorted(active[msgid].occurrences) != sorted(entry.occurrences)
    ]
    details = []
    if new:
        details.append(f"{len(new)} new or changed in English (first at {_places(new[0])})")
    if gone:
        details.append(f"{len(gone)} no longer in English")
    if moved:
        details.append(f"{len(moved)} moved (first to {_places(moved[0])})")
    summary = "; ".join(details) or "not in the form extract writes (order, comments or flags)"
    return (
        f"{tree.rel(path)} is out of date with {tree.rel(english)}: {summary}. "
        "Run `python -m tools.l10n extract`, translate, then build"
    )


def _cell_differences(
    tree: Tree, expected: str, target: Path, english: Path, catalog_path: Path
) -> list[str]:
    """Names the cells in which a committed localized notebook differs from the build."""
    name = tree.rel(target)
    try:
        actual = nbformat.reads(target.read_text(encoding="utf-8"), as_version=4)
    except Exception as error:  # nbformat raises several kinds; the message says which
        return [f"{name}: not a readable notebook ({error}); run build"]
    wanted = nbformat.reads(expected, as_version=4)
    found = []
    if len(actual.cells) != len(wanted.cells):
        found.append(
            f"{name}: {len(actual.cells)} cells, the build gives {len(wanted.cells)} "
            f"(from {tree.rel(english)})"
        )
    for index, (have, want) in enumerate(zip(actual.cells, wanted.cells, strict=False)):
        if have == want:
            continue
        cell = f"cell-{index:03d}"
        if want.cell_type == "markdown" and have.cell_type == "markdown":
            found.append(
                f"{name}: {cell} (markdown) differs from the build: change the translation in "
                f"{tree.rel(catalog_path)} (or the English), not the localized notebook"
            )
        else:
            found.append(
                f"{name}: {cell} ({want.cell_type}) differs from {tree.rel(english)}: code, tags, "
                f"metadata and outputs are copied from English; edit the English notebook"
            )
    if not found:
        found.append(f"{name}: notebook metadata or format differs from the build")
    hint = "run `python -m tools.l10n build` to rewrite it"
    return [f"{line}; {hint}" for line in found]


def check(tree: Tree, langs: list[str] | None = None, with_links: bool = True) -> list[str]:
    """Checks catalogs and localized notebooks; returns one line per problem.

    Args:
        tree: The checkout.
        langs: Language codes; default: every language with catalogs.
        with_links: Also run the badge and link checks of `links` (whole checkout).

    Raises:
        L10nError: A requested language has no catalogs.
    """
    selected = tree.select(langs)
    found = []
    if not langs:
        for folder in sorted(tree.notebooks.glob("*/")):
            lang = folder.name
            if lang != SOURCE and lang not in selected and any(folder.glob("*.ipynb")):
                found.append(
                    f"{tree.rel(folder)}/ holds notebooks but no po/ catalogs: localized notebooks "
                    "are built from catalogs (see CONTRIBUTING.md, Translations)"
                )
    for lang in selected:
        orphans = tree.orphans(lang)
        if orphans:
            found.append(str(tree.orphan_error(orphans)))
        terms, problems = glossary_terms(tree, lang)
        found.extend(problems)
        for english in tree.english():
            path = tree.catalog(lang, english.stem)
            if not path.exists():
                found.append(
                    f"{tree.rel(path)} is missing for {tree.rel(english)}; run "
                    "`python -m tools.l10n extract` then build"
                )
                continue
            try:
                catalog = read_catalog(path, tree)
            except L10nError as error:
                found.append(str(error))
                continue
            found.extend(catalog_problems(tree, path, catalog, terms))
            expected = build_notebook(tree, lang, english, catalog)
            target = tree.localized(lang, english.stem)
            if not target.exists():
                found.append(f"{tree.rel(target)} is missing; run `python -m tools.l10n build`")
            elif target.read_text(encoding="utf-8") != expected:
                found.extend(_cell_differences(tree, expected, target, english, path))
    if with_links:
        found.extend(links.problems(tree.root))
    return found


@dataclass(frozen=True)
class Counts:
    """Translation status of one notebook in one language (as the build sees it)."""

    lang: str
    notebook: str
    translated: int
    fuzzy: int
    untranslated: int

    @property
    def total(self) -> int:
        """Messages in the English notebook."""
        return self.translated + self.fuzzy + self.untranslated

    @property
    def percent(self) -> float:
        """Translated messages, in percent of all."""
        return 100.0 * self.translated / self.total if self.total else 100.0


def counts(tree: Tree, langs: list[str] | None = None) -> list[Counts]:
    """Counts, per language and English notebook, translated / fuzzy / untranslated messages.

    A message counts as translated when the catalog has a non-fuzzy translation of its current
    English; messages missing from a stale catalog count as untranslated.
    """
    rows = []
    for lang in tree.select(langs):
        for english in tree.english():
            path = tree.catalog(lang, english.stem)
            catalog = read_catalog(path, tree) if path.exists() else None
            entries = {e.msgid: e for e in active_entries(catalog)} if catalog else {}
            status = Counter()
            for msgid in dict.fromkeys(m.msgid for m in messages(english)):
                entry = entries.get(msgid)
                if entry is None or not entry.msgstr:
                    status["untranslated"] += 1
                elif entry.fuzzy:
                    status["fuzzy"] += 1
                else:
                    status["translated"] += 1
            rows.append(
                Counts(
                    lang,
                    english.stem,
                    status["translated"],
                    status["fuzzy"],
                    status["untranslated"],
                )
            )
    return rows


def report_table(rows: list[Counts]) -> str:
    """Formats counts as a markdown table, with a total row per language."""
    lines = [
        "| language | notebook | translated | fuzzy | untranslated | total | done |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]

    def line(row: Counts) -> str:
        return (
            f"| {row.lang} | {row.notebook} | {row.translated} | {row.fuzzy} | "
            f"{row.untranslated} | {row.total} | {row.percent:.0f}% |"
        )

    for lang in dict.fromkeys(row.lang for row in rows):
        mine = [row for row in rows if row.lang == lang]
        lines += [line(row) for row in mine]
        total = Counts(
            lang,
            "**all**",
            sum(r.translated for r in mine),
            sum(r.fuzzy for r in mine),
            sum(r.untranslated for r in mine),
        )
        lines.append(line(total))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["extract", "build", "check", "report"])
    parser.add_argument("--lang", action="append", help="language code(s); default: all")
    parser.add_argument("--prune", action="store_true", help="extract: drop orphan catalogs")
    parser.add_argument("--add", metavar="LANG", help="extract: start catalogs for a language")
    parser.add_argument(
        "--require-complete",
        action="store_true",
        help="report: exit 1 unless everything is translated and nothing is fuzzy",
    )
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    tree = Tree(args.root.resolve())
    try:
        if args.command == "extract":
            print("\n".join(extract(tree, args.lang, prune=args.prune, add=args.add)))
        elif args.command == "build":
            print("\n".join(build(tree, args.lang)))
        elif args.command == "check":
            found = check(tree, args.lang)
            print("\n".join(found) if found else "translations, notebooks, badges and links OK")
            return 1 if found else 0
        else:
            rows = counts(tree, args.lang)
            print(report_table(rows))
            incomplete = [row for row in rows if row.translated != row.total]
            if args.require_complete and incomplete:
                names = ", ".join(f"{row.lang}/{row.notebook}" for row in incomplete)
                print(f"not complete: {names}", file=sys.stderr)
                return 1
    except (L10nError, nbcheck.NotebookFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
