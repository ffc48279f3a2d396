"""Localized notebooks, built from the English ones and gettext PO catalogs.

The English notebooks in `notebooks/en/` are the single source of truth. Translators edit one PO
catalog per language and notebook, `notebooks/<lang>/po/<notebook>.po`, whose messages are the
blocks of the English markdown cells (split at blank lines; a table is one block; the Colab and
Kaggle badges and fenced code blocks are left out). The build copies each English notebook and
replaces those blocks only, so code cells, code in markdown fences, their tags and metadata, and
reference outputs are identical in every language, by construction.

    python -m tools.l10n extract [--lang de] [--prune] [--add LANG]
    python -m tools.l10n build [--lang de]
    python -m tools.l10n check [--lang de]
    python -m tools.l10n report [--lang de] [--require-complete]

`extract` updates the catalogs from English: new messages come untranslated, a changed message
keeps its old translation marked fuzzy (the old English in `#| msgid`), removed ones become
obsolete (`#~`). `build` writes `notebooks/<lang>/<notebook>.ipynb`; untranslated, fuzzy and
invalid translations fall back to English; then the language's index of its notebooks,
`notebooks/<lang>/README.md` (`tools.l10n.index`). `check` fails when a catalog is
unreadable or out of date, a translation breaks a code span, a link or the markdown structure or
goes against the checked terms of its glossary (`tools.l10n.glossary`), or a committed localized
notebook differs from what `build` writes; it also runs the badge and link checks of
`tools.ci.links` (the language indexes included).
`report` counts translated, fuzzy and untranslated messages per language and notebook.

GNU gettext must be installed: `msgmerge` merges the catalogs and `msgfmt --check` checks them.
The site's own sentences (`tools/site/sentences.toml`, read with `tools.phrases`) are one more
catalog per language, `_site` (`tools.l10n.sentences`): extract, check and report treat it like a
notebook's.

The work is shared: `catalogs` reads, writes and merges the PO catalogs (and knows the tree),
`translation` finds the messages of the English notebooks and builds the localized ones,
`markdown` reads markdown with markdown-it-py, `index` writes the language indexes; this module
holds the four commands and re-exports the names the tests use (`Tree`, `read_catalog`,
`translate_markdown`).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import nbformat
import polib

from tools import languages, paths
from tools import notebook as notebook_file
from tools.l10n import glossary, sentences
from tools.l10n import index as indexes
from tools.l10n.catalogs import FUZZY as FUZZY
from tools.l10n.catalogs import (
    L10nError,
    Tree,
    active_entries,
    new_catalog,
    places,
    read_catalog,
    require_gettext,
    serialize,
    update_catalog,
    validate_language,
)
from tools.l10n.translation import build_notebook, messages, translation_problems
from tools.l10n.translation import kind as kind
from tools.l10n.translation import split_blocks as split_blocks
from tools.l10n.translation import translate_markdown as translate_markdown

ROOT = paths.ROOT
SOURCE = paths.SOURCE


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
        L10nError: gettext is not installed, an unknown language, an unreadable catalog, or
            (without `prune`) a catalog whose English notebook is gone.
    """
    require_gettext()  # before any file is touched
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
    english = {Path(path.stem): messages(path) for path in tree.english()}
    english[Path(sentences.CATALOG)] = sentences.messages()  # the site's own sentences
    for lang in selected:
        for source, found in english.items():
            path = tree.catalog(lang, source.stem)
            existed = path.exists()
            old = read_catalog(path, tree) if existed else new_catalog(lang, source.stem)
            update = update_catalog(old, found, lang, source.stem)
            if existed and path.read_text(encoding="utf-8") == update.text:
                continue
            path.write_text(update.text, encoding="utf-8")
            what = "updated" if existed else "created"
            log.append(
                f"{tree.rel(path)}: {what}: {update.new} new, {update.fuzzy} fuzzy, "
                f"{update.obsolete} obsolete, {len(active_entries(update.catalog))} messages"
            )
    return log or ["catalogs up to date"]


def build(tree: Tree, langs: list[str] | None = None) -> list[str]:
    """Writes `notebooks/<lang>/<notebook>.ipynb` for every English notebook and language, and
    each language's index, `notebooks/<lang>/README.md` (the notebooks' titles changed with them).

    Returns:
        One line per file written, and warnings (translations left out, stale catalogs).

    Raises:
        L10nError: No English notebooks, no language, an unknown language, an unreadable
            catalog, or catalogs or notebooks whose English notebook is gone.
    """
    require_notebooks(tree)
    selected = tree.select(langs)
    if not selected:
        raise L10nError(
            f"no language has catalogs under {tree.notebooks}/<lang>/po/: nothing to build. "
            "`python -m tools.l10n extract --add LANG` starts a language."
        )
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
        if indexes.write_language_index(tree.root, lang):
            log.append(f"notebooks/{lang}/{indexes.INDEX}: written")
    return log or ["localized notebooks up to date"]


def require_notebooks(tree: Tree) -> None:
    """L10nError unless the tree has English notebooks: a wrong `--root` (or an empty checkout)
    would otherwise be "up to date" or "OK"."""
    if not tree.english():
        raise L10nError(
            f"no English notebooks in {tree.notebooks / SOURCE}: nothing to translate. Run from "
            "the repository's root (or give it as --root)."
        )


def glossary_terms(tree: Tree, lang: str) -> tuple[list[glossary.Term], list[str]]:
    """The checked terms of a language's glossary (`tools/languages.toml`), and what is wrong
    with its table or the language's entry (if anything)."""
    try:
        where = languages.get(lang).glossary
    except languages.LanguageError as error:
        return [], [str(error)]
    if where is None:
        return [], []
    path = tree.root / where
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
            where = f"{tree.rel(path)}:{entry.linenum} ({places(entry)})"
            wrong = translation_problems(entry.msgid, entry.msgstr)
            if not entry.fuzzy:
                wrong += glossary.problems(terms, entry.msgid, entry.msgstr)
            found += [f"{where}: {problem}" for problem in wrong]
    return found


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
        details.append(f"{len(new)} new or changed in English (first at {places(new[0])})")
    if gone:
        details.append(f"{len(gone)} no longer in English")
    if moved:
        details.append(f"{len(moved)} moved (first to {places(moved[0])})")
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


def check(tree: Tree, langs: list[str] | None = None) -> list[str]:
    """Checks catalogs and localized notebooks; returns one line per problem. (The badges and
    links of the whole checkout are `python -m tools.ci.nbcheck`'s.)

    Args:
        tree: The checkout.
        langs: Language codes; default: every language with catalogs.

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
        found.extend(sentences.problems(tree, lang, terms))
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
    sources = {path.stem: messages(path) for path in tree.english()}
    sources[sentences.CATALOG] = sentences.messages()
    for lang in tree.select(langs):
        for stem, found in sources.items():
            path = tree.catalog(lang, stem)
            catalog = read_catalog(path, tree) if path.exists() else None
            entries = {e.msgid: e for e in active_entries(catalog)} if catalog else {}
            status = Counter()
            for msgid in dict.fromkeys(m.msgid for m in found):
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
                    stem,
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
    parser = argparse.ArgumentParser(
        prog="python -m tools.l10n", description=__doc__.splitlines()[0]
    )
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
        require_gettext()
        require_notebooks(tree)
        if args.command == "extract":
            print("\n".join(extract(tree, args.lang, prune=args.prune, add=args.add)))
        elif args.command == "build":
            print("\n".join(build(tree, args.lang)))
        elif args.command == "check":
            found = check(tree, args.lang)
            print("\n".join(found) if found else "translations and localized notebooks OK")
            return 1 if found else 0
        else:
            rows = counts(tree, args.lang)
            print(report_table(rows))
            incomplete = [row for row in rows if row.translated != row.total]
            if args.require_complete and incomplete:
                names = ", ".join(f"{row.lang}/{row.notebook}" for row in incomplete)
                print(f"not complete: {names}", file=sys.stderr)
                return 1
    except (L10nError, notebook_file.NotebookFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
