"""The site's own sentences as one more catalog per language, `notebooks/<lang>/po/_site.po`.

Their English is `tools/site/sentences.toml` (read with `tools.phrases`, as the site reads it).
`python -m tools.l10n extract` puts every sentence but the English-only ones into each language's
`_site.po` (the key is the message's comment and occurrence); `check` reports a stale catalog, a
broken translation, a glossary term not followed and a `{placeholder}` the English sentence
lacks; `report` counts them as the notebook `_site`. A sentence without a usable translation is
shown in English.
"""

from __future__ import annotations

from tools import phrases
from tools.l10n import glossary
from tools.l10n.catalogs import (
    SITE_SENTENCES,
    L10nError,
    Message,
    Tree,
    active_entries,
    places,
    read_catalog,
    serialize,
    update_catalog,
)
from tools.l10n.translation import translation_problems

CATALOG = phrases.SITE_CATALOG


def messages() -> list[Message]:
    """The sentences to translate, as catalog messages (occurrence and comment: the key)."""
    return [
        Message(sentence, (f"{CATALOG}:{key}", "0"), f"site sentence {key!r}")
        for key, sentence in phrases.site().translated().items()
    ]


def problems(tree: Tree, lang: str, terms: list[glossary.Term]) -> list[str]:
    """What is wrong with a language's catalog of the site's sentences (`SITE_SENTENCES`)."""
    path = tree.catalog(lang, CATALOG)
    if not path.exists():
        return [f"{tree.rel(path)} is missing; run `python -m tools.l10n extract`"]
    try:
        catalog = read_catalog(path, tree)
    except L10nError as error:
        return [str(error)]
    found = []
    fresh = update_catalog(catalog, messages(), lang, CATALOG).catalog
    if serialize(fresh) != serialize(catalog):
        found.append(
            f"{tree.rel(path)} is out of date with {SITE_SENTENCES}: run `python -m tools.l10n "
            "extract`, then translate"
        )
    for entry in active_entries(catalog):
        if entry.msgstr:
            wrong = translation_problems(entry.msgid, entry.msgstr)
            wrong += phrases.placeholder_problems(entry.msgid, entry.msgstr)
            wrong += [] if entry.fuzzy else glossary.problems(terms, entry.msgid, entry.msgstr)
            found += [f"{tree.rel(path)}:{entry.linenum} ({places(entry)}): {w}" for w in wrong]
    return found


if __name__ == "__main__":
    raise SystemExit("tools.l10n.sentences has no command line: `python -m tools.l10n` uses it.")
