"""The PO catalogs of the translations, and the tree that holds them (`l10n` is the command line).

A catalog is `notebooks/<lang>/po/<notebook>.po`: one message per translatable block of the English
notebook (`Message`). This module reads catalogs and refuses what `msgfmt --check` refuses, and
the escapes gettext decodes and polib does not (`\\033`, `\\a`: `read_catalog`), writes them in
one canonical form (`serialize`), starts them for a language (`validate_language`,
`new_catalog`; a language's name, Plural-Forms and PO `Language` are `tools.languages`') and
merges the messages of the English notebook into them, like msgmerge (`update_catalog`). `Tree`
is where the notebooks and catalogs of a checkout are.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import polib

from tools import languages, paths

ROOT = paths.ROOT
SOURCE = paths.SOURCE
# Where the English of the `_site` catalogs is: the site's sentences (`tools.phrases` reads them).
SITE_SENTENCES = "tools/site/sentences.toml"
# No wrapping (msgmerge --no-wrap): one PO line per markdown line, so msgid and msgstr line up with
# the notebook source and a diff shows the lines that changed. (A CJK paragraph is one line.)
WRAP_WIDTH = 0
FUZZY = "fuzzy"
# How alike (difflib ratio) an old message must be to lend its translation to a changed one:
# at the same place (cell and block), or anywhere in the catalog.
SAME_PLACE_SIMILARITY = 0.3
ANYWHERE_SIMILARITY = 0.6
HEADER = """\
{language} ({lang}) translation of {what} (TPU curriculum).
Edit the msgstr lines only; keep `code spans`, link targets and the markdown
structure (headings, list items, table cells) as in the English.
Glossary: notebooks/{lang}/po/GLOSSARY.md. Workflow: CONTRIBUTING.md, "Translations"."""


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
        """The notebooks' catalogs of one language, sorted (`_site.po`, the site's, apart)."""
        return sorted(p for p in (self.notebooks / lang / "po").glob("*.po") if p.stem[0] != "_")

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


# ----------------------------------------------------------------------------- catalogs


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
        text = Path(path).read_text(encoding="utf-8")
        if problems := po_syntax_problems(text):
            raise OSError(f"{path} (line {problems[0][0]}): {problems[0][1]}")
        if problems := po_escape_problems(text):
            number, escape = problems[0]
            raise L10nError(
                f"{tree.rel(path)}:{number}: the escape {escape} is one gettext decodes and the "
                "build (polib) does not: the notebook would show it as a backslash and text. "
                "Write the character itself (the catalog is UTF-8), or \\\\ for a backslash."
            )
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


# Escapes gettext decodes that polib leaves as they are (polib decodes \\ \" \n \t \r \v \b \f):
# the bell, octal and hexadecimal ones. A backslash pair (\\) is consumed first.
_ESCAPE = re.compile(r"\\(?:[0-7]{1,3}|x[0-9a-fA-F]+|.)")
_UNDECODED = re.compile(r"\\(?:a|[0-7]{1,3}|x[0-9a-fA-F]+)")


def po_escape_problems(text: str) -> list[tuple[int, str]]:
    """(line, escape) for each escape in a string that polib would leave undecoded (`\033`,
    `\a`, `\x1b`): gettext reads them as characters, the built notebooks would not."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if found := _PO_LINE.fullmatch(line.strip()):
            for escape in _ESCAPE.findall(found.group(1)):
                if _UNDECODED.fullmatch(escape):
                    problems.append((number, escape))
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
    if not languages.CODE_RE.match(lang) or lang == SOURCE:
        raise L10nError(f"{lang!r} is not a language code like 'de', 'it' or 'zh-cn'")
    if lang not in languages.all_languages():
        raise L10nError(
            f"no Plural-Forms known for {lang!r}: add a [language.{lang}] table (its name, "
            "gettext Plural-Forms line, PO and Sphinx language) to tools/languages.toml"
        )


def new_catalog(lang: str, stem: str) -> polib.POFile:
    """Returns an empty catalog with the header and metadata for `lang`."""
    catalog = polib.POFile(wrapwidth=WRAP_WIDTH, encoding="utf-8")
    name = languages.get(lang).name
    what = f"notebooks/{SOURCE}/{stem}.ipynb" if stem[0] != "_" else SITE_SENTENCES
    catalog.header = HEADER.format(language=name, what=what, lang=lang)
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
    catalog = _empty_like(old, lang, stem)
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
        catalog.append(_obsolete(entry))
    return result


def _empty_like(old: polib.POFile, lang: str, stem: str) -> polib.POFile:
    """An empty catalog with the header and metadata of `old`, completed for `lang`."""
    template = new_catalog(lang, stem)
    catalog = polib.POFile(wrapwidth=WRAP_WIDTH, encoding="utf-8")
    catalog.header = old.header or template.header
    catalog.metadata_is_fuzzy = old.metadata_is_fuzzy
    catalog.metadata = {
        **template.metadata,
        **old.metadata,
        "Language": languages.get(lang).po,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    catalog.metadata.setdefault("Plural-Forms", languages.get(lang).plural_forms)
    return catalog


def _obsolete(entry: polib.POEntry) -> polib.POEntry:
    """An obsolete copy of a translated entry that left English (`#~` in the catalog)."""
    return polib.POEntry(
        msgid=entry.msgid,
        msgstr=entry.msgstr,
        tcomment=entry.tcomment,
        flags=list(entry.flags),
        obsolete=True,
    )


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


def places(entry: polib.POEntry) -> str:
    """Where an entry's English is, for messages: "<file>:<block>, ..." (or "obsolete")."""
    return ", ".join(f"{file}:{block}" for file, block in entry.occurrences) or "obsolete"


def active_entries(catalog: polib.POFile) -> list[polib.POEntry]:
    """The entries of a catalog that are not obsolete (a POFile lists both)."""
    return [entry for entry in catalog if not entry.obsolete]


if __name__ == "__main__":
    raise SystemExit("tools.l10n.catalogs has no command line: the other tools import it.")
