"""The pages of the site, as `tools.site` writes them into its Sphinx projects.

A notebook page (`make_page`) is the executed English notebook with its markdown translated
(`tools.l10n.translation.translate_markdown`), its streams shown as Jupyter shows them
(`merge_streams`), the Colab and Kaggle badges of its language with the site's local badge images,
and a header first (`page_header`: the language switcher, the papermill parameters, the machine and
software of the run). Each language has an index page (`language_index`); the landing page
(`landing_page`) is the curriculum table. `SITE_CSS`, `COLAB_BADGE_SVG` and `KAGGLE_BADGE_SVG` are
the site's own static files."""

from __future__ import annotations

import copy
import html
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools import languages, paths, phrases
from tools import notebook as notebook_file
from tools.l10n import catalogs, translation

SOURCE = paths.SOURCE


def text(lang: str, key: str, **values: object) -> str:
    """The site's sentence `key` (`tools/site/sentences.toml`) in `lang`, filled in."""
    return phrases.site().text(lang, key, **values)


TITLE = text(SOURCE, "title")  # each language has its own: tools/site/sentences.toml
# Where `tools.runs.notebooks.execute` records the run in an executed copy (RUN_METADATA there).
RUN_METADATA = "tpu_curriculum"
BADGE_IMAGE = "/_static/colab-badge.svg"  # from the project's source folder (Sphinx rule)
KAGGLE_BADGE_IMAGE = "/_static/kaggle-badge.svg"


@dataclass(frozen=True)
class Page:
    """One notebook page of one language.

    Attributes:
        lang: The language folder code ("en", "de", ...).
        stem: The notebook's file stem, the same in every language.
        title: The page title (the notebook's translated `# Title`).
        notebook: The executed notebook with translated markdown and the page header.
    """

    lang: str
    stem: str
    title: str
    notebook: nbformat.NotebookNode


# ----------------------------------------------------------------------------- page header


def _code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


def parameters_line(nb: nbformat.NotebookNode, lang: str = SOURCE) -> str:
    """The papermill parameters of an executed copy, as HTML, in `lang`."""
    papermill = nb.metadata.get("papermill", {})
    values = papermill.get("parameters") or {}
    if not values:
        return text(lang, "parameters_none")
    shown = ", ".join(_code(f"{name} = {value!r}") for name, value in values.items())
    return text(lang, "parameters", values=shown)


def _accelerator(lang: str, recorded: object) -> str:
    """The accelerator as recorded, "none" in the page's language."""
    return text(lang, "no_accelerator") if recorded == "none" else html.escape(str(recorded))


def run_line(nb: nbformat.NotebookNode, lang: str = SOURCE) -> str:
    """The date, machine and software of the run that produced an executed copy, as HTML, in
    `lang` (the values themselves, such as the platform and the package names, as recorded)."""
    run = nb.metadata.get(RUN_METADATA, {}).get("run")
    started = str(nb.metadata.get("papermill", {}).get("start_time") or "")[:16].replace("T", " ")
    if not run:
        when = f"{started} UTC" if started else text(lang, "unknown_date")
        return text(lang, "not_recorded", when=when)
    machine = run.get("machine", {})
    packages = ", ".join(f"{name} {version}" for name, version in run.get("packages", {}).items())
    environment = ", ".join(f"{k}={v}" for k, v in run.get("environment", {}).items())
    parts = [
        text(
            lang, "run_on", date=html.escape(str(run.get("date", started))[:16].replace("T", " "))
        ),
        text(
            lang,
            "hardware",
            platform=html.escape(str(machine.get("platform", "?"))),
            cpus=machine.get("cpus", "?"),
            accelerator=_accelerator(lang, machine.get("accelerator", "?")),
        ),
        text(
            lang,
            "software",
            python=html.escape(str(run.get("python", "?"))),
            packages=html.escape(packages),
        ),
    ]
    if environment:
        parts.append(text(lang, "environment", environment=_code(environment)))
    return text(lang, "separator").join(parts) + text(lang, "end")


def switcher(lang: str, langs: list[str], target: str, landing: str) -> str:
    """The language switcher: links to `target` in every other language, as one HTML line.

    Args:
        lang: The language of the page that shows it.
        langs: Every language of the site.
        target: The file name in each language folder ("03_keras_fit.html", "index.html").
        landing: The relative link to the landing page.
    """
    items = []
    for other in langs:
        name = html.escape(languages.get(other).name)
        if other == lang:
            items.append(f'<strong lang="{other}">{name}</strong>')
        else:
            href = f"../{other}/{target}"
            items.append(f'<a href="{href}" hreflang="{other}" lang="{other}">{name}</a>')
    return (
        f'<nav class="tpu-languages" aria-label="{text(lang, "languages")}">'
        + " · ".join(items)
        + f' · <a class="tpu-all" href="{landing}">{text(lang, "all_languages")}</a></nav>'
    )


def command_for(english: Path) -> str:
    """The command that writes a notebook's executed copy."""
    if paths.stack(english) == "pytorch":
        return "nox -s pytorch_xla -- --site"
    return f"nox -s notebooks -- notebooks/{SOURCE}/{english.name}"


def page_header(nb: nbformat.NotebookNode, lang: str, langs: list[str], stem: str) -> str:
    """The header of a notebook page: switcher, parameters, machine and software, as HTML.

    One HTML block without blank lines (so markdown leaves it as it is).
    """
    if lang == SOURCE:
        origin = text(lang, "origin_source", notebook=_code(f"{stem}.ipynb"))
    else:
        origin = text(lang, "origin_translated", catalog=_code(f"notebooks/{lang}/po/{stem}.po"))
    lines = [
        '<div class="tpu-run admonition note">',
        switcher(lang, langs, f"{stem}.html", "../index.html"),
        f"<p>{origin}</p>",
        f"<p>{parameters_line(nb, lang)}</p>",
        f"<p>{run_line(nb, lang)}</p>",
        "</div>",
    ]
    if "papermill" not in nb.metadata:  # shown as committed: not executed for this build
        command = _code(command_for(Path(f"{stem}.ipynb")))
        lines[2:5] = [f"<p>{text(lang, 'not_executed', command=command)}</p>"]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- pages


def terminal_text(text: str) -> str:
    """Applies backspaces and carriage returns the way Jupyter shows a stream.

    A progress bar (Keras' `fit`, tqdm) redraws its line with `\b` or `\r`: Jupyter shows the
    last state of the line, not every redraw. A carriage return moves to the line's start, and
    what follows overwrites what was there.
    """
    while True:
        shorter = re.sub(r"[^\n\b]\x08", "", text)
        if shorter == text:
            break
        text = shorter
    text = re.sub(r"(^|\n)\x08+", r"\1", text)
    lines = []
    for line in text.replace("\r\n", "\n").split("\n"):
        shown = ""
        for part in line.split("\r"):
            shown = part + shown[len(part) :]
        lines.append(shown)
    return "\n".join(lines)


def merge_streams(cell: nbformat.NotebookNode) -> None:
    """Joins consecutive outputs of one stream and applies `terminal_text`, as Jupyter shows
    them; the order of stdout, stderr and the other outputs is kept."""
    merged: list[nbformat.NotebookNode] = []
    for output in cell.get("outputs", []):
        previous = merged[-1] if merged else None
        if (
            output.output_type == "stream"
            and previous is not None
            and previous.output_type == "stream"
            and previous.name == output.name
        ):
            previous.text += output.text
        else:
            merged.append(copy.deepcopy(output))
    for output in merged:
        if output.output_type == "stream":
            output.text = terminal_text(output.text)
    cell.outputs = merged


def colab_badge(tree: catalogs.Tree, lang: str, stem: str) -> str:
    """The Colab badge of a notebook in one language, with the site's local badge image."""
    return paths.badge(tree.localized(lang, stem), tree.root, BADGE_IMAGE)


def kaggle_badge(tree: catalogs.Tree, lang: str, stem: str) -> str:
    """The Kaggle badge of a notebook in one language, with the site's local badge image."""
    return paths.kaggle_badge(tree.localized(lang, stem), tree.root, KAGGLE_BADGE_IMAGE)


def make_page(
    tree: catalogs.Tree, executed: nbformat.NotebookNode, lang: str, langs: list[str], stem: str
) -> Page:
    """One page: the executed copy, translated, its badges for `lang`; its title, then the header.

    Raises:
        L10nError: The language's catalog of this notebook cannot be read.
    """
    path = tree.catalog(lang, stem)
    catalog = catalogs.read_catalog(path, tree) if lang != SOURCE and path.exists() else None
    nb = translation.translate_markdown(copy.deepcopy(executed), catalog)
    for cell in nb.cells:
        if cell.cell_type == "code":
            merge_streams(cell)
    first = nb.cells[0]
    title = stem
    if first.cell_type == "markdown":
        badges = f"{colab_badge(tree, lang, stem)} {kaggle_badge(tree, lang, stem)}"
        first.source = notebook_file.BADGES_RE.sub(lambda _: badges, first.source)
        heading = first.source.split("\n", 1)[0]
        title = heading[2:].strip() if heading.startswith("# ") else stem
    header = nbformat.v4.new_markdown_cell(page_header(executed, lang, langs, stem))
    header.id, header.metadata = "tpu-site-header", {"tags": ["tpu-site-header"]}
    if title != stem:  # the title first, then the run's record, then the badges and the intro
        rest = first.source.split("\n", 1)[1].lstrip("\n") if "\n" in first.source else ""
        first.source = first.source.split("\n", 1)[0]
        intro = nbformat.v4.new_markdown_cell(rest)
        intro.id = "tpu-site-intro"
        nb.cells[1:1] = [header, intro] if rest else [header]
    else:
        nb.cells.insert(0, header)
    return Page(lang, stem, title, nb)


def _number(stem: str) -> int | str:
    """A notebook's number as the tables show it ("03_keras_fit" -> 3), or ""."""
    return int(stem[:2]) if stem[:2].isdigit() else ""


def _table_cell(markdown: str) -> str:
    return markdown.replace("|", "\\|")


def language_index(tree: catalogs.Tree, lang: str, langs: list[str], pages: list[Page]) -> str:
    """The index page of one language (markdown): its notebooks, their badges, the switcher."""
    name = languages.get(lang).name
    rows = [
        f"| {_number(p.stem)} | "
        f"[{_table_cell(p.title)}]({p.stem}.ipynb) | {colab_badge(tree, lang, p.stem)} | "
        f"{kaggle_badge(tree, lang, p.stem)} |"
        for p in pages
    ]
    toctree = "\n".join(p.stem for p in pages)
    return f"""# {text(lang, "title")} ({name})

{switcher(lang, langs, "index.html", "../index.html")}

{text(lang, "index_intro", language=name)}

| # | {text(lang, "column_notebook")} | Colab | Kaggle |
| --- | --- | --- | --- |
{chr(10).join(rows)}

```{{toctree}}
:hidden:
:maxdepth: 1

{toctree}
```
"""


def _inline(markdown: str) -> str:
    """A title's markdown as HTML: escaped, `code spans` as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(markdown))


def landing_page(tree: catalogs.Tree, langs: list[str], pages: dict[str, list[Page]]) -> str:
    """The landing page (markdown with an HTML table): one row per notebook, its pages in every
    language in one cell and its Colab and Kaggle links in another, so the table stays narrow
    (1024 px)."""
    names = {lang: html.escape(languages.get(lang).name) for lang in langs}
    rows = []
    for index, page in enumerate(pages[SOURCE]):
        read = " · ".join(
            f'<a href="{lang}/{page.stem}.html" hreflang="{lang}" lang="{lang}" '
            f'title="{html.escape(pages[lang][index].title)}">{names[lang]}</a>'
            for lang in langs
        )
        opens = []
        for url_of, image, alt in (
            (paths.colab_url, "colab-badge.svg", "Open In Colab"),
            (paths.kaggle_url, "kaggle-badge.svg", "Open In Kaggle"),
        ):
            urls = " · ".join(
                f'<a href="{html.escape(url_of(tree.localized(lang, page.stem), tree.root))}"'
                f' hreflang="{lang}" title="{names[lang]}">{lang}</a>'
                for lang in langs
            )
            opens.append(f'<img src="_static/{image}" alt="{alt}"><br>{urls}')
        title = f'<a href="{SOURCE}/{page.stem}.html">{_inline(page.title)}</a>'
        cells = [str(_number(page.stem)), title, read, "<br>".join(opens)]
        rows.append("<tr><td>" + "</td><td>".join(cells) + "</td></tr>")
    indexes = " · ".join(
        f'<a href="{lang}/index.html" hreflang="{lang}" lang="{lang}">{names[lang]}</a>'
        for lang in langs
    )
    return f"""# {TITLE}: the executed curriculum

Every notebook of the curriculum, in every language, with the outputs of its headless CI run:
plots, training logs, printed devices. Each page says which parameters, machine and software
produced its outputs; a translated page shows the English run's outputs (the code is the same)
with the text from the language's catalog. The badges open a notebook in Colab or Kaggle, to run
it on a TPU with the full parameters.

<p class="tpu-language-list">By language: {indexes}</p>

<div class="pst-scrollable-table-container"><table class="table tpu-curriculum">
<thead><tr><th>#</th><th>notebook</th><th>read it in</th><th>open it in Colab or Kaggle</th>
</tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table></div>

```{{toctree}}
:hidden:

{SOURCE}/index
```
"""


# ----------------------------------------------------------------------------- static files


SITE_CSS = """\
/* Written by tools/site/pages.py. */
.tpu-run p, .tpu-run nav { margin: 0.3em 0; font-size: 0.9em; }
.tpu-languages strong, .tpu-languages a { white-space: nowrap; }
/* The landing page's table: as wide as the window, each badge under its page's link. */
.bd-content:has(table.tpu-curriculum) .bd-article-container { max-width: none !important; }
.bd-content:has(table.tpu-curriculum) .bd-sidebar-secondary { display: none; }
table.tpu-curriculum { width: auto; }
table.tpu-curriculum th, table.tpu-curriculum td { vertical-align: middle; padding: 0.3em; }
table.tpu-curriculum td:nth-child(2) { min-width: 14em; }
table.tpu-curriculum td:nth-child(3), table.tpu-curriculum td:nth-child(4) { max-width: 22em; }
table.tpu-curriculum img { min-width: 117px; }
"""
# A local "Open in Colab" badge: the site shows it without reaching colab.research.google.com.
COLAB_BADGE_SVG = """\
<svg xmlns="http://www.w3.org/2000/svg" width="117" height="20" role="img" \
aria-label="Open in Colab">
<title>Open in Colab</title>
<rect width="117" height="20" rx="3" fill="#555"/>
<rect x="26" width="91" height="20" rx="3" fill="#555"/>
<rect width="26" height="20" rx="3" fill="#444"/>
<circle cx="9.5" cy="10" r="4.5" fill="none" stroke="#f9ab00" stroke-width="2.4"/>
<circle cx="16.5" cy="10" r="4.5" fill="none" stroke="#e8710a" stroke-width="2.4"/>
<text x="71" y="14" fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" \
text-anchor="middle">Open in Colab</text>
</svg>
"""
# A local "Open in Kaggle" badge, for the same reason.
KAGGLE_BADGE_SVG = """\
<svg xmlns="http://www.w3.org/2000/svg" width="124" height="20" role="img" \
aria-label="Open in Kaggle">
<title>Open in Kaggle</title>
<rect width="124" height="20" rx="3" fill="#555"/>
<rect width="26" height="20" rx="3" fill="#20beff"/>
<text x="13" y="15" fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="14" \
font-weight="bold" text-anchor="middle">k</text>
<text x="75" y="14" fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" \
text-anchor="middle">Open in Kaggle</text>
</svg>
"""


if __name__ == "__main__":
    raise SystemExit("tools.site.pages has no command line: the other tools import it.")
