"""The index of each translated language, `notebooks/<lang>/README.md`: its notebooks' titles
in that language (each localized notebook's `# ` heading) with their Colab and Kaggle badges, and
a line linking the other languages. `python -m tools.l10n build` writes it, `tools.ci.links`
checks it. Its heading and column name are the site's sentences (`tools.phrases`), in the
language where its `_site.po` translates them; the languages' names are `tools.languages`'.
"""

from __future__ import annotations

from pathlib import Path

from tools import languages, paths, phrases
from tools import notebook as notebook_file

ROOT = paths.ROOT
INDEX = "README.md"  # each translated language's index: notebooks/<lang>/README.md


def language_folders(root: Path = ROOT) -> list[str]:
    """Returns the language folders holding notebooks: English first, then by code."""
    found = {path.parent.name for path in paths.all_notebooks(root=root)}
    return sorted(found, key=lambda code: (code != paths.SOURCE, code))


def title(path: Path) -> str:
    """A notebook's title (its first cell's `# ` heading, else its stem), for a table cell."""
    nb = notebook_file.read(path)
    found = path.stem
    if nb.cells and nb.cells[0].source.startswith("# "):
        found = nb.cells[0].source.splitlines()[0][2:].strip()
    return found.replace("|", "&#124;")


def number(stem: str) -> str:
    """A notebook's number as the tables show it ("03_keras_fit" -> "3"), or ""."""
    digits = stem.split("_", 1)[0]
    return str(int(digits)) if digits.isdigit() else ""


def language_index(root: Path, lang: str) -> str:
    """Returns `notebooks/<lang>/README.md`: the language's notebooks, their titles in that
    language (each localized notebook's `# ` heading) and their Colab and Kaggle badges.

    The heading and the column name are the site's sentences "title" and "column_notebook"
    (`tools.phrases`), in `lang` where its `_site.po` translates them.
    """
    text = phrases.site().text  # the repository's sentences and catalogs, as today
    name = languages.get(lang).name
    switch = []
    for code in language_folders(root):
        other = languages.get(code).name
        if code == lang:
            switch.append(f"**{other}**")
        else:
            switch.append(
                f"[{other}](../../README.md)"
                if code == paths.SOURCE
                else f"[{other}](../{code}/{INDEX})"
            )
    rows = [
        f"| {number(path.stem)} | [{title(path)}]({path.name}) | "
        f"{paths.badge(path, root)} | {paths.kaggle_badge(path, root)} |"
        for path in paths.all_notebooks(lang, root)
    ]
    written = "`python -m tools.ci.links --fix` and `python -m tools.l10n build`"
    return f"""<!-- Written by {written} from the notebooks' titles: edit those, not this file. -->

# {text(lang, "title")} ({name})

{" · ".join(switch)}

| # | {text(lang, "column_notebook")} | Colab | Kaggle |
| --- | --- | --- | --- |
{chr(10).join(rows)}
"""


def write_language_index(root: Path, lang: str) -> bool:
    """Writes `notebooks/<lang>/README.md` (`language_index`); returns whether it changed."""
    index = root / "notebooks" / lang / INDEX
    new = language_index(root, lang)
    if index.exists() and index.read_text(encoding="utf-8") == new:
        return False
    index.write_text(new, encoding="utf-8")
    return True


if __name__ == "__main__":
    raise SystemExit(
        "tools.l10n.index has no command line: `python -m tools.l10n build` writes it."
    )
