"""The PO catalogs of the translations, and the tree that holds them (`l10n` is the command line).

A catalog is `notebooks/<lang>/po/<notebook>.po`: one message per translatable block of the English
notebook (`Message`). This module reads catalogs and refuses what GNU gettext's `msgfmt --check`
refuses, and the escapes gettext decodes and polib does not (`\\033`, `\\a`: `read_catalog`),
writes them in one canonical form (`serialize`), starts them for a language (`validate_language`,
`new_catalog`; a language's name, Plural-Forms and PO `Language` are `tools.languages`') and
merges the messages of the English notebook into them with GNU `msgmerge` (`update_catalog`,
from a POT of the English: `template`). gettext must be installed (`require_gettext`). `Tree` is
where the notebooks and catalogs of a checkout are.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import tempfile
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
    """Reads a PO catalog, which polib and `msgfmt --check --check-format` must both accept.

    Raises:
        L10nError: The file has a syntax error, duplicate messages, an escape polib would not
            decode, or msgfmt refuses it (or is missing); the message names the file and, where
            it can, the line.
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


# A line of a PO string: a keyword (or a continuation) and the quoted text.
_PO_LINE = re.compile(r'(?:#~ )?(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)?\s*(".*)')
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


GETTEXT = (
    "install GNU gettext (Debian/Ubuntu: apt-get install gettext; macOS: brew install gettext)"
)
# The bound on one run of msgmerge or msgfmt on one catalog, in seconds.
TIMEOUT_S = 60
# Keep the previous English of a fuzzy message (`#| msgid`), do not wrap (see WRAP_WIDTH), keep the
# order of the English notebook (no --sort-output) and msgmerge's fuzzy matching.
MSGMERGE_OPTIONS = ("--quiet", "--previous", "--no-wrap")
_MSGFMT_LINE = re.compile(r"(\d+)(?::\d+)?: (.*)")


def gettext_program(name: str) -> str:
    """The path of one of GNU gettext's programs (`msgmerge`, `msgfmt`).

    Raises:
        L10nError: It is not on PATH; the message says how to install gettext.
    """
    if found := shutil.which(name):
        return found
    raise L10nError(f"{name} not found: {GETTEXT}")


def require_gettext() -> None:
    """Checks that msgmerge and msgfmt are installed (the commands call it before any work).

    Raises:
        L10nError: One of them is missing; the message names it and how to install gettext.
    """
    for name in ("msgmerge", "msgfmt"):
        gettext_program(name)


def run_gettext(args: list[str], what: str) -> subprocess.CompletedProcess[str]:
    """Runs a gettext program, `args[0]` by name, for at most TIMEOUT_S seconds.

    Args:
        args: The program's name and its arguments.
        what: The file it works on, for messages.

    Raises:
        L10nError: The program is missing or did not finish in time.
    """
    command = [gettext_program(args[0]), *args[1:]]
    try:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise L10nError(f"{what}: {args[0]} did not finish in {TIMEOUT_S} s") from None


def msgfmt_check(path: Path, tree: Tree) -> None:
    """Runs `msgfmt --check --check-format` on a catalog: what gettext refuses is refused.

    Raises:
        L10nError: msgfmt refuses the catalog; the message names the file, the line and why.
    """
    args = ["msgfmt", "--check", "--check-format", "-o", os.devnull, str(path)]
    run = run_gettext(args, tree.rel(path))
    if not run.returncode:
        return
    lines = run.stderr.splitlines()
    for line in lines:
        found = _MSGFMT_LINE.fullmatch(line.removeprefix(f"{path}:"))
        if line.startswith(f"{path}:") and found and not found.group(2).startswith("warning:"):
            number, why = int(found.group(1)), found.group(2)
            # gettext reads the newline that ends a string left open before it reports it.
            number -= why == "end-of-line within string"
            raise L10nError(f"{tree.rel(path)}:{number}: {why} (`msgfmt --check` refuses it)")
    first = next((line for line in lines if line.strip()), f"exit status {run.returncode}")
    raise L10nError(f"{tree.rel(path)}: msgfmt --check fails: {first}")


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


@dataclass
class Update:
    """The result of updating one catalog: the catalog and what changed.

    Attributes:
        catalog: The updated catalog.
        text: The updated catalog as msgmerge wrote it.
        new: Messages new in English, untranslated.
        fuzzy: Changed messages that got an old translation, marked fuzzy.
        obsolete: Translated messages no longer in English, kept as obsolete.
    """

    catalog: polib.POFile
    text: str
    new: int = 0
    fuzzy: int = 0
    obsolete: int = 0


def template(found: list[Message]) -> polib.POFile:
    """The messages of an English notebook as a POT: one entry per text, in order, with every
    place it appears. No POT-Creation-Date: the catalogs would change on every extract."""
    pot = polib.POFile(wrapwidth=WRAP_WIDTH, encoding="utf-8")
    pot.metadata = {
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    entries: dict[str, polib.POEntry] = {}
    for message in found:
        if message.msgid in entries:
            entries[message.msgid].occurrences.append(message.occurrence)
            continue
        entry = polib.POEntry(msgid=message.msgid, occurrences=[message.occurrence])
        entry.comment = message.hint
        entries[message.msgid] = entry
        pot.append(entry)
    return pot


def update_catalog(old: polib.POFile, found: list[Message], lang: str, stem: str) -> Update:
    """Merges the messages of the English notebook into a catalog with GNU msgmerge.

    A message whose English is unchanged keeps its translation, comments and flags. A new message
    takes the translation of the most alike translated message (msgmerge's fuzzy matching), marked
    fuzzy, with the English that translation was made for as `previous_msgid`. Translated messages
    that left English become obsolete (`#~`), untranslated ones are dropped, and an obsolete one
    whose English comes back is active again. The order is the English notebook's.

    Args:
        old: The catalog as it is (or `new_catalog()`).
        found: The messages of the English notebook, in order.
        lang: The catalog's language code.
        stem: The notebook's file stem.

    Returns:
        The updated catalog and counts of what changed.

    Raises:
        L10nError: msgmerge is missing, failed or did not finish in time.
    """
    with tempfile.TemporaryDirectory(prefix="l10n-msgmerge-") as folder:
        definitions, pot, out = (Path(folder) / name for name in ("def.po", "ref.pot", "out.po"))
        definitions.write_text(serialize(_completed(old, lang, stem)), encoding="utf-8")
        pot.write_text(serialize(template(found)), encoding="utf-8")
        args = ["msgmerge", *MSGMERGE_OPTIONS, "-o", str(out), str(definitions), str(pot)]
        run = run_gettext(args, f"notebooks/{lang}/po/{stem}.po")
        if run.returncode:
            why = run.stderr.strip().replace(f"{folder}/", "") or f"exit status {run.returncode}"
            raise L10nError(f"notebooks/{lang}/po/{stem}.po: msgmerge fails: {why}")
        text = out.read_text(encoding="utf-8")
        catalog = polib.pofile(str(out), wrapwidth=WRAP_WIDTH, encoding="utf-8")
    return _counted(old, Update(catalog, text))


def _completed(old: polib.POFile, lang: str, stem: str) -> polib.POFile:
    """A copy of `old` whose header has what every catalog of `lang` has (msgmerge keeps the
    header of the catalog it updates)."""
    catalog = copy.deepcopy(old)
    catalog.header = old.header or new_catalog(lang, stem).header
    catalog.metadata = {
        **new_catalog(lang, stem).metadata,
        **old.metadata,
        "Language": languages.get(lang).po,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    catalog.metadata.setdefault("Plural-Forms", languages.get(lang).plural_forms)
    return catalog


def _counted(old: polib.POFile, update: Update) -> Update:
    """Counts the new, fuzzy and obsolete messages of an update of `old`."""
    known = {entry.msgid for entry in old}
    active = {entry.msgid for entry in active_entries(old)}
    for entry in update.catalog:
        if entry.obsolete:
            update.obsolete += entry.msgid in active
        elif entry.msgid not in known:
            update.fuzzy += entry.fuzzy
            update.new += not entry.fuzzy
    return update


def places(entry: polib.POEntry) -> str:
    """Where an entry's English is, for messages: "<file>:<block>, ..." (or "obsolete")."""
    return ", ".join(f"{file}:{block}" for file, block in entry.occurrences) or "obsolete"


def active_entries(catalog: polib.POFile) -> list[polib.POEntry]:
    """The entries of a catalog that are not obsolete (a POFile lists both)."""
    return [entry for entry in catalog if not entry.obsolete]


if __name__ == "__main__":
    raise SystemExit("tools.l10n.catalogs has no command line: the other tools import it.")
