"""The pages of the site, as `tools.site` writes them into its Sphinx projects.

A notebook page (`make_page`) is the executed English notebook with its markdown translated
(`tools.l10n.translation.translate_markdown`), its streams shown as Jupyter shows them
(`merge_streams`), the Colab and Kaggle badges of its language with the site's local badge images,
and a header first (`page_header`: the language switcher, the papermill parameters, the machine and
software of the run). Each language has an index page (`language_index`); the landing page
(`landing_page`) is the curriculum table.

The HTML and markdown around the sentences are Jinja2 templates in `tools/site/templates/`
(`render`): the `.html` ones are autoescaped with `html.escape`'s rules, the markdown ones are not;
the site's sentences (`tools/site/sentences.toml`, filled in here) are HTML and go in as they are.
The site's CSS and badge images are files in `tools/site/static/` (`STATIC`)."""

from __future__ import annotations

import copy
import html
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2
import nbformat
from markupsafe import Markup

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
# The site's CSS and its local badge images, copied into every project's `_static/`.
STATIC = Path(__file__).parent / "static"
TEMPLATES = Path(__file__).parent / "templates"


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


# ----------------------------------------------------------------------------- templates


@jinja2.pass_eval_context
def _escape(context: jinja2.nodes.EvalContext, value: object) -> object:
    """Escapes a value shown by an autoescaped template with `html.escape` (`&quot;`, `&#x27;`),
    as the pages always have; HTML (`Markup`: the sentences, other templates) goes in as it is."""
    if context.autoescape and not hasattr(value, "__html__"):
        return Markup(html.escape(str(value)))
    return value


def _inline(markdown: str) -> Markup:
    """A title's markdown as HTML: escaped, `code spans` as <code>."""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(markdown)))


def _table_cell(markdown: str) -> str:
    """Markdown for a table cell: its `|` escaped."""
    return markdown.replace("|", "\\|")


TEMPLATE_FILES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=jinja2.select_autoescape(["html"], default_for_string=False),
    finalize=_escape,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
TEMPLATE_FILES.filters.update(inline=_inline, table_cell=_table_cell)


def render(template: str, **values: object) -> str:
    """The template `tools/site/templates/<template>` filled in: an HTML fragment (`.html`) without
    the file's last newline, to go into other text; a markdown page as it is. A value that is
    HTML already goes in as `Markup`."""
    rendered = str(TEMPLATE_FILES.get_template(template).render(**values))
    return rendered.removesuffix("\n") if template.endswith(".html") else rendered


def sentence(lang: str, key: str, **values: object) -> Markup:
    """The site's sentence `key` in `lang` (`text`) as the HTML it is, for the templates."""
    return Markup(text(lang, key, **values))


def _languages(langs: list[str]) -> list[dict[str, str]]:
    """Each language's folder code and name, in the order of `langs`, for the templates."""
    return [{"code": lang, "name": languages.get(lang).name} for lang in langs]


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
    return render(
        "switcher.html",
        lang=lang,
        languages=_languages(langs),
        target=target,
        landing=landing,
        label=sentence(lang, "languages"),
        all_languages=sentence(lang, "all_languages"),
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
        origin = sentence(lang, "origin_source", notebook=_code(f"{stem}.ipynb"))
    else:
        catalog = _code(f"notebooks/{lang}/po/{stem}.po")
        origin = sentence(lang, "origin_translated", catalog=catalog)
    not_executed = ""
    if "papermill" not in nb.metadata:  # shown as committed: not executed for this build
        command = _code(command_for(Path(f"{stem}.ipynb")))
        not_executed = sentence(lang, "not_executed", command=command)
    return render(
        "header.html",
        switcher=Markup(switcher(lang, langs, f"{stem}.html", "../index.html")),
        origin=origin,
        parameters=Markup(parameters_line(nb, lang)),
        run=Markup(run_line(nb, lang)),
        not_executed=not_executed,
    )


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


def language_index(tree: catalogs.Tree, lang: str, langs: list[str], pages: list[Page]) -> str:
    """The index page of one language (markdown): its notebooks, their badges, the switcher."""
    rows = [
        {
            "number": _number(p.stem),
            "stem": p.stem,
            "title": p.title,
            "colab": colab_badge(tree, lang, p.stem),
            "kaggle": kaggle_badge(tree, lang, p.stem),
        }
        for p in pages
    ]
    name = languages.get(lang).name
    return render(
        "index.md",
        title=text(lang, "title"),
        name=name,
        switcher=switcher(lang, langs, "index.html", "../index.html"),
        intro=text(lang, "index_intro", language=name),
        column_notebook=text(lang, "column_notebook"),
        rows=rows,
    )


def landing_page(tree: catalogs.Tree, langs: list[str], pages: dict[str, list[Page]]) -> str:
    """The landing page (markdown with an HTML table): one row per notebook, its pages in every
    language in one cell and its Colab and Kaggle links in another, so the table stays narrow
    (1024 px)."""
    rows = []
    for index, page in enumerate(pages[SOURCE]):
        shown = []
        for language in _languages(langs):
            notebook = tree.localized(language["code"], page.stem)
            shown.append(
                {
                    **language,
                    "title": pages[language["code"]][index].title,
                    "colab": paths.colab_url(notebook, tree.root),
                    "kaggle": paths.kaggle_url(notebook, tree.root),
                }
            )
        rows.append(
            {"number": _number(page.stem), "stem": page.stem, "title": page.title, "pages": shown}
        )
    return render("landing.md", title=TITLE, source=SOURCE, languages=_languages(langs), rows=rows)


if __name__ == "__main__":
    raise SystemExit("tools.site.pages has no command line: the other tools import it.")
