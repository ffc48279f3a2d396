"""The languages of the curriculum, from one file: `tools/languages.toml`.

Each language has its folder code (`notebooks/<code>/`), its name, the Plural-Forms and the PO
`Language` of its catalogs, the Sphinx language of its site and, if it has one, its translation
glossary. `get(code)` is one language, `all_languages()` every one; an unknown code or a malformed
entry raises LanguageError, which names the file and the fix.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

FILE = Path(__file__).with_name("languages.toml")
CODE_RE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})?$")
SHOWN = "tools/languages.toml"


class LanguageError(ValueError):
    """An unknown language, or a malformed `tools/languages.toml`; the message says the fix."""


@dataclass(frozen=True)
class Language:
    """One language of the curriculum.

    Attributes:
        code: Its folder code, e.g. "zh-cn" (`notebooks/zh-cn/`).
        name: How the README, the indexes and the site name it, e.g. "简体中文".
        plural_forms: The gettext Plural-Forms line of its catalogs.
        po: The PO `Language` of its catalogs, e.g. "zh_CN".
        sphinx: The Sphinx `language` of its site, e.g. "zh_CN".
        glossary: Its translation glossary, from the repository root, or None.
    """

    code: str
    name: str
    plural_forms: str
    po: str
    sphinx: str
    glossary: str | None = None


REQUIRED = ("name", "plural_forms", "po", "sphinx")
OPTIONAL = ("glossary",)


def _entry(code: str, table: object, shown: str) -> Language:
    """One `[language.CODE]` table as a Language; LanguageError says what is wrong with it."""
    where = f"{shown}, [language.{code}]"
    if not CODE_RE.match(code):
        raise LanguageError(f"{where}: {code!r} is not a folder code like 'de' or 'zh-cn'")
    if not isinstance(table, dict):
        raise LanguageError(f"{where}: must be a table of {', '.join(REQUIRED)}")
    unknown = sorted(set(table) - {*REQUIRED, *OPTIONAL})
    missing = [key for key in REQUIRED if key not in table]
    wrong = [key for key, value in table.items() if not isinstance(value, str) or not value]
    if unknown or missing or wrong:
        problems = [
            *([f"unknown keys {unknown}"] if unknown else []),
            *([f"missing keys {missing}"] if missing else []),
            *([f"keys that are not non-empty strings {wrong}"] if wrong else []),
        ]
        raise LanguageError(
            f"{where}: {'; '.join(problems)}. Each language needs {', '.join(REQUIRED)} (strings) "
            f"and may have {', '.join(OPTIONAL)}; see the comment at the top of {shown}"
        )
    return Language(code=code, **table)


def load(path: Path = FILE) -> dict[str, Language]:
    """Reads a languages file.

    Args:
        path: The file (default: `tools/languages.toml`).

    Returns:
        Every language, by code, in the file's order.

    Raises:
        LanguageError: The file cannot be read, is not TOML, or has a malformed entry.
    """
    shown = SHOWN if path == FILE else str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise LanguageError(f"{shown} cannot be read ({error}): restore it from git") from None
    except tomllib.TOMLDecodeError as error:
        raise LanguageError(f"{shown} is not valid TOML ({error}): fix that line") from None
    tables = data.get("language")
    if set(data) != {"language"} or not isinstance(tables, dict) or not tables:
        raise LanguageError(
            f"{shown}: expected only [language.CODE] tables, found {sorted(data) or 'nothing'}"
        )
    return {code: _entry(code, table, shown) for code, table in tables.items()}


@functools.cache
def all_languages() -> dict[str, Language]:
    """Every language of `tools/languages.toml`, by code (read once)."""
    return load()


def get(code: str) -> Language:
    """One language of `tools/languages.toml`.

    Raises:
        LanguageError: The file does not list `code`; the message names the file and the fix.
    """
    known = all_languages()
    if code not in known:
        raise LanguageError(
            f"the language {code!r} is not in {SHOWN}: add a [language.{code}] table with "
            f"{', '.join(REQUIRED)} (known: {', '.join(known)})"
        )
    return known[code]


if __name__ == "__main__":
    raise SystemExit("tools.languages has no command line: the other tools import it.")
