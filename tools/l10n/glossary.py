"""The checked part of each language's glossary: one translation per term, and forms to avoid.

Every `notebooks/<lang>/po/GLOSSARY.md` may hold a section `## Checked terms` with a table:

    | English | accepted | avoid |
    | --- | --- | --- |
    | worker | Worker | Arbeiter |
    | machine | Maschine | Rechner |

`python -m tools.l10n check` enforces it on every translated, non-fuzzy message:

- where the English prose (outside code spans and link targets) contains the term as a word
  (case-insensitive, plural -s/-es included), the translation's prose must contain one of the
  accepted forms (separated by " / "; matched case-insensitively as substrings, so a stem such as
  "Replikat" covers "Replikate"; a line break counts as a space);
- no translation may contain an avoided form (separated by " / ") anywhere in its prose.

Leave "accepted" empty for a term whose translation varies with the sentence and only the forms to
avoid are fixed; leave "avoid" empty when any other wording is simply wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tools.l10n import markdown

SECTION = "## Checked terms"
FORM_SEPARATOR = " / "


@dataclass(frozen=True)
class Term:
    """One row of the checked table.

    Attributes:
        english: The English term, as a word or words.
        accepted: Forms of which a translation must contain one where the English has the term.
        avoid: Forms no translation may contain.
        line: The row's line number in GLOSSARY.md (for messages).
    """

    english: str
    accepted: tuple[str, ...]
    avoid: tuple[str, ...]
    line: int

    def in_english(self, prose: str) -> bool:
        """True if the English prose uses the term as a word (or its plural)."""
        words = r"\s+".join(re.escape(word) for word in self.english.split())
        return re.search(rf"(?<![\w-]){words}(?:e?s)?(?![\w-])", prose, re.IGNORECASE) is not None


class GlossaryError(Exception):
    """A checked table that cannot be read; the message names the file, the line and the fix."""


def _forms(cell: str) -> tuple[str, ...]:
    return tuple(" ".join(form.split()) for form in cell.split(FORM_SEPARATOR) if form.strip())


def read_terms(path: Path, shown: str = "") -> list[Term]:
    """Reads the checked table of a glossary; a glossary without the section checks nothing.

    Args:
        path: The GLOSSARY.md file.
        shown: How messages name it (default: `path`).

    Raises:
        GlossaryError: The file is not UTF-8 text or cannot be read; a row without three
            cells, without an English term, or with neither accepted nor avoided forms.
    """
    if not path.exists():
        return []
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError as error:
        raise GlossaryError(
            f"{shown or path}: not UTF-8 text (byte {error.start}: {error.reason}); save it as "
            "UTF-8"
        ) from None
    except OSError as error:
        raise GlossaryError(f"{shown or path}: cannot be read ({error.strerror})") from None
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == SECTION)
    except StopIteration:
        return []
    terms = []
    for number, line in enumerate(lines[start + 1 :], start + 2):
        if line.startswith("## "):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|") or cells[0] == "English" or not cells[0].strip("-: "):
            continue
        if len(cells) != 3 or not cells[0] or not (cells[1] or cells[2]):
            raise GlossaryError(
                f"{shown or path}:{number}: a checked term needs three cells "
                f"(| English | accepted | avoid |), an English term and at least one accepted or "
                f"avoided form: {line!r}"
            )
        terms.append(Term(cells[0], _forms(cells[1]), _forms(cells[2]), number))
    return terms


def problems(terms: list[Term], msgid: str, msgstr: str) -> list[str]:
    """What one translation does against the checked terms (empty when nothing)."""
    english, translated = _plain(msgid), _folded(_plain(msgstr))
    found = []
    for term in terms:
        missing = not any(_folded(form) in translated for form in term.accepted)
        if term.accepted and missing and term.in_english(english):
            wanted = " or ".join(f"“{form}”" for form in term.accepted)
            found.append(
                f"glossary: the English says “{term.english}”, the translation has none of "
                f"{wanted} (GLOSSARY.md:{term.line})"
            )
        for form in term.avoid:
            if _folded(form) in translated:
                instead = " or ".join(f"“{f}”" for f in term.accepted) or "another wording"
                found.append(
                    f"glossary: “{form}” is a form to avoid for “{term.english}”; use {instead} "
                    f"(GLOSSARY.md:{term.line})"
                )
    return found


def _folded(text: str) -> str:
    """Case-folded, with every run of whitespace (line breaks too) as one space."""
    return " ".join(text.split()).casefold()


def _plain(message: str) -> str:
    """The prose of a message (`markdown.read`): without code, markup or link targets (a bare URL
    in the text included)."""
    reading = markdown.read(message)
    text = reading.prose
    for target in reading.targets:
        text = text.replace(target, " ")
    return text


if __name__ == "__main__":
    raise SystemExit("tools.l10n.glossary has no command line: the other tools import it.")
