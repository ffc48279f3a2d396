"""The site's own words (page header, language index, titles), in English here and translated
in one PO catalog per language, `notebooks/<lang>/po/_site.po`, beside the notebooks' catalogs.

`tools/site_pages.py` writes these sentences around the notebooks. `python -m tools.l10n extract`
puts every sentence of `ENGLISH` but `origin_source` (only English pages show the run's own
notebook) into each language's `_site.po` (the key is the message's comment and occurrence);
`check` reports a stale catalog, a broken translation, a glossary term not followed and a
`{placeholder}` the English sentence lacks; `report` counts them as the notebook `_site`. A
sentence without a usable translation is shown in English.
"""

from __future__ import annotations

import functools
import string
from pathlib import Path

from tools.catalogs import ROOT, SOURCE, Message, Tree, read_catalog
from tools.translation import usable_translations

ENGLISH = {
    "title": "Train TensorFlow models on TPUs",
    "languages": "Languages",
    "all_languages": "all notebooks, all languages",
    "origin_source": "These are the outputs of one headless run of {notebook}.",
    "origin_translated": (
        "The code cells are the English notebook's, so these are the outputs of its headless "
        "run; the text is translated from {catalog} (paragraphs not yet translated are shown in "
        "English)."
    ),
    "parameters_none": "Parameters: the notebook's defaults (papermill injected none).",
    "parameters": (
        "Parameters (injected by papermill; the rest are the notebook's defaults): {values}."
    ),
    "not_recorded": (
        "Hardware and software: not recorded (executed {when}, before the runner recorded them; "
        "running the notebook again records them)."
    ),
    "unknown_date": "at an unknown date",
    "not_executed": (
        "Not executed for this site: it was built without the environment that runs this "
        "notebook ({command}), so the code is shown without its outputs."
    ),
    "run_on": "Run on {date} UTC",
    "hardware": "hardware: {platform}, {cpus} CPUs, accelerator: {accelerator}",
    "no_accelerator": "none",
    "software": "software: Python {python}, {packages}",
    "environment": "environment: {environment}",
    "separator": "; ",
    "end": ".",
    "index_intro": (
        "Every notebook of the curriculum in {language}, with the outputs of its last headless "
        "run: each page says which parameters, machine and software produced them. The badges "
        "open the notebook in Colab."
    ),
    "column_notebook": "notebook",
}

CATALOG = "_site"  # the stem of each language's catalog of these sentences
ENGLISH_ONLY = {"origin_source"}


def messages() -> list[Message]:
    """The sentences to translate, as catalog messages (occurrence and comment: the key)."""
    return [
        Message(sentence, (f"{CATALOG}:{key}", "0"), f"site sentence {key!r}")
        for key, sentence in ENGLISH.items()
        if key not in ENGLISH_ONLY
    ]


def placeholder_problems(msgid: str, msgstr: str) -> list[str]:
    """A translation may drop a `{placeholder}` (naming its language itself), never add one."""
    extra = placeholders(msgstr) - placeholders(msgid)
    return [f"placeholders the English does not fill: {sorted(extra)}"] if extra else []


@functools.cache
def _translations(lang: str, root: Path = ROOT) -> dict[str, str]:
    path = Tree(root).catalog(lang, CATALOG)
    if lang == SOURCE or not path.is_file():
        return {}
    usable = usable_translations(read_catalog(path, Tree(root)))
    return {k: v for k, v in usable.items() if not placeholder_problems(k, v)}


def text(lang: str, key: str, **values: object) -> str:
    """The site's sentence `key` in `lang` (English where the language has no usable
    translation in its `_site.po`), filled in."""
    english = ENGLISH[key]
    template = _translations(lang).get(english, english) if key not in ENGLISH_ONLY else english
    return template.format(**values) if values else template


def placeholders(template: str) -> set[str]:
    """The `{names}` a template fills in."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


if __name__ == "__main__":
    raise SystemExit("tools.site_text has no command line: the other tools import it.")
