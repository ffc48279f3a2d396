"""Sentences kept as data and translated with gettext: a TOML file of `key = "English sentence"`
(under `[sentences]`, with `english_only = [keys]` that are never translated), and one PO
catalog of them per language, `notebooks/<lang>/po/<catalog>.po`, whose msgids are the English
sentences.

`Phrases.text(lang, key, **values)` is a sentence in a language, filled in: the catalog's
translation where it has one (translated, not fuzzy, not obsolete, and adding no `{placeholder}`
the English lacks), else the English. `site()` is the site's sentences (`tools/site/sentences.toml`,
catalog `_site`): the site's pages and the language indexes say them, `python -m tools.l10n`
keeps their catalogs.
"""

from __future__ import annotations

import functools
import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import polib

from tools import paths

SITE_FILE = paths.ROOT / "tools" / "site" / "sentences.toml"
SITE_CATALOG = "_site"  # the stem of each language's catalog of the site's sentences


class PhraseError(ValueError):
    """A sentences file or a catalog of it that cannot be used; the message says the fix."""


def placeholders(template: str) -> set[str]:
    """The `{names}` a template fills in."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def placeholder_problems(msgid: str, msgstr: str) -> list[str]:
    """A translation may drop a `{placeholder}` (naming its language itself), never add one."""
    extra = placeholders(msgstr) - placeholders(msgid)
    return [f"placeholders the English does not fill: {sorted(extra)}"] if extra else []


def _shown(path: Path) -> str:
    path = Path(path)
    return path.relative_to(paths.ROOT).as_posix() if path.is_relative_to(paths.ROOT) else str(path)


def read_sentences(path: Path) -> tuple[dict[str, str], frozenset[str]]:
    """Reads a sentences file: its sentences by key, in order, and its English-only keys.

    Raises:
        PhraseError: The file cannot be read, is not TOML, or is not of that form.
    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise PhraseError(f"{_shown(path)}: cannot be read as TOML ({error})") from None
    sentences, only = data.get("sentences"), data.get("english_only", [])
    if not isinstance(sentences, dict) or not all(isinstance(v, str) for v in sentences.values()):
        raise PhraseError(f'{_shown(path)}: needs a [sentences] table of key = "sentence"')
    if not isinstance(only, list) or not set(only) <= set(sentences):
        raise PhraseError(f"{_shown(path)}: english_only must list keys of [sentences]")
    return dict(sentences), frozenset(only)


def read_translations(path: Path) -> dict[str, str]:
    """The usable translations of a catalog, English -> translation (none if it is missing).

    Raises:
        PhraseError: The catalog is not a readable PO file.
    """
    if not Path(path).is_file():
        return {}
    try:
        catalog = polib.pofile(str(path), encoding="utf-8")
    except (OSError, ValueError) as error:
        raise PhraseError(
            f"{_shown(path)}: not a valid PO catalog ({error}); `python -m tools.l10n check` "
            "says where"
        ) from None
    return {
        entry.msgid: entry.msgstr
        for entry in catalog
        if entry.translated() and not entry.obsolete
        if not placeholder_problems(entry.msgid, entry.msgstr)
    }


@dataclass(frozen=True)
class Phrases:
    """The sentences of one file and their catalogs.

    Attributes:
        file: The sentences file.
        catalog: The stem of each language's catalog of them.
        root: The checkout whose `notebooks/<lang>/po/` holds the catalogs.
        english: The sentences by key, as `read_sentences` reads them.
        english_only: The keys shown in English in every language.
    """

    file: Path
    catalog: str
    root: Path = paths.ROOT
    english: dict[str, str] = field(default_factory=dict)
    english_only: frozenset[str] = frozenset()

    @classmethod
    def load(cls, file: Path, catalog: str, root: Path = paths.ROOT) -> Phrases:
        """Reads `file` (PhraseError if it cannot be used)."""
        english, only = read_sentences(file)
        return cls(Path(file), catalog, Path(root), english, only)

    def translated(self) -> dict[str, str]:
        """The sentences the catalogs translate, by key (all but the English-only ones)."""
        return {k: v for k, v in self.english.items() if k not in self.english_only}

    def translations(self, lang: str) -> dict[str, str]:
        """The usable translations of `lang`'s catalog, English -> translation."""
        return _translations(self.root / "notebooks" / lang / "po" / f"{self.catalog}.po")

    def text(self, lang: str, key: str, **values: object) -> str:
        """Sentence `key` in `lang` (English where `lang` has no usable translation), filled in."""
        english = self.english[key]
        template = english
        if key not in self.english_only and lang != paths.SOURCE:
            template = self.translations(lang).get(english, english)
        return template.format(**values) if values else template


@functools.cache
def _translations(path: Path) -> dict[str, str]:
    return read_translations(path)


@functools.cache
def site() -> Phrases:
    """The site's sentences, `tools/site/sentences.toml`, and their `_site` catalogs."""
    return Phrases.load(SITE_FILE, SITE_CATALOG)


if __name__ == "__main__":
    raise SystemExit("tools.phrases has no command line: the other tools import it.")
