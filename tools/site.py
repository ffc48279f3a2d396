"""The executed curriculum as a static site: every notebook in every language, with its outputs.

    python -m tools.site build [--executed build/executed] [--out build/site] [--lang de]
    python -m tools.site sources [--executed build/executed]   # build/site-src/ only, no Sphinx

Nothing runs here: the pages are the executed English notebooks that CI keeps
(`build/executed/en/`, written by `nox -s tests` or `nox -s notebooks -- --lang en`; the
PyTorch/XLA notebook by `nox -s pytorch_xla`, into `build/pytorch_xla/en/`). A page in another
language is the executed English notebook with its markdown translated from that language's
catalog by `l10n.translate_markdown`, exactly as the localized notebooks are built; its code cells
are identical to English by construction, so the English run's outputs are its outputs. Its Colab
badge points at the language's own notebook (the badge image is a local copy, so the site works
offline). Every page starts with a header: the papermill parameters and the machine and software
that produced the outputs (`metadata["tpu_curriculum"]["run"]`, written by
`tools.notebooks.execute`), and links to the same notebook in every other language.

The sources go to `build/site-src/`, one Sphinx project per language (`<lang>/`), so that each
language has its own `<html lang>`, theme labels and search index, with word splitting for
Japanese and Chinese; the English project is the folder itself, with the landing page (the
curriculum table: one row per notebook, one link and one Colab badge per language) and `en/`.
Sphinx with myst-nb (execution off) and sphinx-book-theme renders them into `build/site/`, the
same layout: `index.html`, `en/`, `de/`, ... (`stacks/site.txt` pins them; `nox -s site`).
"""

from __future__ import annotations

import argparse
import copy
import html
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools import l10n, links, nbcheck, outputs
from tools.site_text import text

ROOT = nbcheck.ROOT
SOURCE = links.SOURCE_LANGUAGE
EXECUTED = ROOT / "build" / "executed"
# The PyTorch/XLA notebook runs in an environment of its own; that session keeps its copy here.
PYTORCH_XLA = ROOT / "build" / "pytorch_xla"
SITE_SOURCES = ROOT / "build" / "site-src"
SITE = ROOT / "build" / "site"
TITLE = text(SOURCE, "title")  # each language has its own: tools/site_text.py
# Sphinx's code of each language folder: `<html lang>`, theme labels, search word splitting.
SPHINX_LANGUAGES = {"zh-cn": "zh_CN", "pt-br": "pt_BR", "es-419": "es_419"}
# Where `tools.notebooks.execute` records the run in an executed copy (RUN_METADATA there).
RUN_METADATA = "tpu_curriculum"
BADGE_IMAGE = "/_static/colab-badge.svg"  # from the project's source folder (Sphinx rule)
# How long one language's sphinx-build may run (it takes under a minute on 2 busy cores).
SPHINX_SECONDS = 1200
# Sphinx's own files, per language: `<lang>/doctrees`, `<lang>/html` (copied into the site) and
# `<lang>/jupyter_execute` (myst-nb writes it next to the HTML folder, whatever the project).
SPHINX_WORK = ".sphinx"
TOOL = "tools.site"  # the mark on the folders it writes (tools/outputs.py)
# The folders of the English project's sources; the others hold other languages' projects.
OWN = (SOURCE, "_static", SPHINX_WORK)


class SiteError(Exception):
    """The site cannot be built; the message says what is missing or wrong and how to fix it."""


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


# ----------------------------------------------------------------------------- inputs


def command_for(english: Path) -> str:
    """The command that writes a notebook's executed copy."""
    if nbcheck.stack(english) == "pytorch":
        return "nox -s pytorch_xla"
    return f"nox -s notebooks -- notebooks/{SOURCE}/{english.name}"


def executed_notebooks(
    tree: l10n.Tree, executed: Path = EXECUTED, pytorch_xla: Path = PYTORCH_XLA
) -> dict[str, Path]:
    """Finds the executed copy of every English notebook.

    Args:
        tree: The checkout (its `notebooks/en/`).
        executed: Where `tools.notebooks run` writes executed copies (`<executed>/en/`).
        pytorch_xla: Where `nox -s pytorch_xla` writes the PyTorch/XLA notebook's copy.

    Returns:
        The executed copy of each notebook, by file stem, in the notebooks' order.

    Raises:
        SiteError: Some are missing, are not executed copies, or recorded a failed run; one
            error lists them all, each with the command that writes it.
    """
    found, problems = {}, []
    for english in tree.english():
        folder = pytorch_xla if nbcheck.stack(english) == "pytorch" else executed
        path = folder / SOURCE / english.name
        why = _not_executed(path)
        if why:
            problems.append(f"{tree.rel(english)}: {why}; run `{command_for(english)}`")
        else:
            found[english.stem] = path
    if not tree.english():
        problems.append(f"no notebooks in {tree.rel(tree.notebooks / SOURCE)}/")
    if problems:
        raise SiteError(
            f"the site shows executed notebooks, and {len(problems)} cannot be used "
            f"(`nox -s tests` executes every English notebook but the PyTorch/XLA one):\n  "
            + "\n  ".join(problems)
        )
    return found


def _not_executed(path: Path) -> str:
    """Why `path` is not a usable executed copy, or "" when it is."""
    shown = _shown(path)
    if not path.is_file():
        return f"no executed copy {shown}"
    try:
        papermill = nbcheck.read(path).metadata.get("papermill")
    except Exception as error:  # nbformat raises several kinds; the message says which
        return f"{shown} is not a readable notebook ({error})"
    if not papermill:
        return f"{shown} is not an executed copy (no papermill metadata)"
    if papermill.get("exception"):
        return f"the run in {shown} failed (papermill recorded an exception)"
    if not papermill.get("end_time"):  # papermill writes the copy cell by cell while it runs
        return f"{shown} is being executed now, or its run was interrupted (no end time)"
    return ""


def _shown(path: Path) -> str:
    """A path as messages show it: relative to the repository where it is inside it."""
    path = path.resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def stale(tree: l10n.Tree, stem: str, executed: nbformat.NotebookNode) -> list[int]:
    """The cells in which an executed copy differs from the English notebook as it is now.

    Papermill's injected parameters cell is left out; a different cell count lists every cell.
    """
    now = nbcheck.read(tree.notebooks / SOURCE / f"{stem}.ipynb").cells
    cells = [c for c in executed.cells if "injected-parameters" not in c.metadata.get("tags", [])]
    if len(cells) != len(now):
        return list(range(max(len(cells), len(now))))
    return [i for i, (a, b) in enumerate(zip(cells, now, strict=True)) if a.source != b.source]


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
            accelerator=html.escape(str(machine.get("accelerator", "?"))),
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
        name = html.escape(links.LANGUAGE_NAMES.get(other, other))
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


def colab_badge(tree: l10n.Tree, lang: str, stem: str) -> str:
    """The Colab badge of a notebook in one language, with the site's local badge image."""
    url = links.colab_url(tree.localized(lang, stem), tree.root)
    return f"[![Open In Colab]({BADGE_IMAGE})]({url})"


def make_page(
    tree: l10n.Tree, executed: nbformat.NotebookNode, lang: str, langs: list[str], stem: str
) -> Page:
    """One page: the executed copy, translated, its badge for `lang`, the header first.

    Raises:
        L10nError: The language's catalog of this notebook cannot be read.
    """
    path = tree.catalog(lang, stem)
    catalog = l10n.read_catalog(path, tree) if lang != SOURCE and path.exists() else None
    nb = l10n.translate_markdown(copy.deepcopy(executed), catalog)
    for cell in nb.cells:
        if cell.cell_type == "code":
            merge_streams(cell)
    first = nb.cells[0]
    title = stem
    if first.cell_type == "markdown":
        first.source = nbcheck.BADGE_RE.sub(
            lambda _: colab_badge(tree, lang, stem).replace("\\", "\\\\"), first.source
        )
        heading = first.source.split("\n", 1)[0]
        title = heading[2:].strip() if heading.startswith("# ") else stem
    header = nbformat.v4.new_markdown_cell(page_header(executed, lang, langs, stem))
    header.id, header.metadata = "tpu-site-header", {"tags": ["tpu-site-header"]}
    nb.cells.insert(0, header)
    return Page(lang, stem, title, nb)


def _number(stem: str) -> int | str:
    """A notebook's number as the tables show it ("03_keras_fit" -> 3), or ""."""
    return int(stem[:2]) if stem[:2].isdigit() else ""


def _table_cell(markdown: str) -> str:
    return markdown.replace("|", "\\|")


def language_index(tree: l10n.Tree, lang: str, langs: list[str], pages: list[Page]) -> str:
    """The index page of one language (markdown): its notebooks, their badges, the switcher."""
    name = links.LANGUAGE_NAMES.get(lang, lang)
    rows = [
        f"| {_number(p.stem)} | "
        f"[{_table_cell(p.title)}]({p.stem}.ipynb) | {colab_badge(tree, lang, p.stem)} |"
        for p in pages
    ]
    toctree = "\n".join(p.stem for p in pages)
    return f"""# {text(lang, "title")} ({name})

{switcher(lang, langs, "index.html", "../index.html")}

{text(lang, "index_intro", language=name)}

| # | {text(lang, "column_notebook")} | Colab |
| --- | --- | --- |
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


def landing_page(tree: l10n.Tree, langs: list[str], pages: dict[str, list[Page]]) -> str:
    """The landing page (markdown with an HTML table): one row per notebook, one column per
    language, each cell a link to the page and the Colab badge."""
    names = [html.escape(links.LANGUAGE_NAMES.get(lang, lang)) for lang in langs]
    head = "".join(
        f'<th lang="{lang}">{name}</th>' for lang, name in zip(langs, names, strict=True)
    )
    rows = []
    for index, page in enumerate(pages[SOURCE]):
        cells = [f'<a href="{SOURCE}/{page.stem}.html">{_inline(page.title)}</a>']
        for lang in langs:
            here = pages[lang][index]
            url = html.escape(links.colab_url(tree.localized(lang, page.stem), tree.root))
            cells.append(
                f'<a href="{lang}/{page.stem}.html" hreflang="{lang}" lang="{lang}" '
                f'title="{html.escape(here.title)}">read</a><br><a href="{url}">'
                f'<img src="_static/colab-badge.svg" alt="Open In Colab"></a>'
            )
        rows.append(
            f"<tr><td>{_number(page.stem)}</td><td>" + "</td><td>".join(cells) + "</td></tr>"
        )
    indexes = " · ".join(
        f'<a href="{lang}/index.html" hreflang="{lang}" lang="{lang}">{name}</a>'
        for lang, name in zip(langs, names, strict=True)
    )
    return f"""# {TITLE}: the executed curriculum

Every notebook of the curriculum, in every language, with the outputs of its headless CI run:
plots, training logs, printed devices. Each page says which parameters, machine and software
produced its outputs; a translated page shows the English run's outputs (the code is the same)
with the text from the language's catalog. The badges open a notebook in Colab, to run it on a
TPU with the full parameters.

<p class="tpu-language-list">By language: {indexes}</p>

<div class="pst-scrollable-table-container"><table class="table tpu-curriculum">
<thead><tr><th>#</th><th>notebook</th>{head}</tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table></div>

```{{toctree}}
:hidden:

{SOURCE}/index
```
"""


# ----------------------------------------------------------------------------- Sphinx projects


def conf_py(lang: str, others: list[str]) -> str:
    """The Sphinx configuration of one language's project.

    myst-nb renders the notebooks as they are (`nb_execution_mode = "off"`: nothing runs);
    sphinx-book-theme gives the navigation, the search box and a Colab launch button.

    Args:
        lang: The project's language.
        others: Folders the project leaves out (the English project's: the other languages').
    """
    settings = nbcheck.project_settings()
    english = lang == SOURCE
    values = {
        "project": text(lang, "title"),
        "language": SPHINX_LANGUAGES.get(lang, lang),
        "extensions": ["myst_nb"],
        "nb_execution_mode": "off",
        "nb_merge_streams": False,  # merge_streams() did it, keeping the order of the outputs
        "exclude_patterns": [SPHINX_WORK, "**.ipynb_checkpoints", *others],
        "html_theme": "sphinx_book_theme",
        "html_title": f"{text(lang, 'title')} ({links.LANGUAGE_NAMES.get(lang, lang)})",
        "html_static_path": ["_static"],
        "html_css_files": ["site.css"],
        "html_theme_options": {
            "repository_url": f"https://github.com/{settings['repository']}",
            "repository_branch": settings["branch"],
            "path_to_docs": "notebooks" if english else f"notebooks/{lang}",
            "use_repository_button": True,
            "launch_buttons": {"colab_url": "https://colab.research.google.com"},
        },
    }
    lines = [f"{name} = {value!r}" for name, value in values.items()]
    if lang.startswith("zh"):
        lines += CHINESE_SEARCH_FIX
    return "# Written by tools/site.py on every build: change it there.\n" + "\n".join(lines) + "\n"


# Sphinx 9.0.4 names the search's JavaScript stemmer after the language, `ChineseStemmer`, which
# does not exist (Chinese uses the English stemmer): search fails in the browser. Fixed upstream
# after 9.0.4 (sphinx-doc/sphinx#14229, #14416); drop this with the next Sphinx pin.
CHINESE_SEARCH_FIX = [
    "from sphinx.search import zh as _zh  # noqa: E402",
    "",
    '_zh.SearchChinese.language_name = "English"  # window.Stemmer = EnglishStemmer',
]


SITE_CSS = """\
/* Written by tools/site.py. */
.tpu-run p, .tpu-run nav { margin: 0.3em 0; font-size: 0.9em; }
.tpu-languages strong, .tpu-languages a { white-space: nowrap; }
/* The landing page's table: as wide as the window, each badge under its page's link. */
.bd-content:has(table.tpu-curriculum) .bd-article-container { max-width: none !important; }
.bd-content:has(table.tpu-curriculum) .bd-sidebar-secondary { display: none; }
table.tpu-curriculum { width: auto; }
table.tpu-curriculum th, table.tpu-curriculum td { vertical-align: middle; padding: 0.3em; }
table.tpu-curriculum td:nth-child(2) { min-width: 14em; }
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


def write_if_changed(path: Path, text: str) -> None:
    """Writes `text` unless the file holds it already (Sphinx rebuilds only changed files)."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def project_folder(src: Path, lang: str) -> Path:
    """The source folder of a language's Sphinx project (English: `src` itself)."""
    return src if lang == SOURCE else src / lang


def output_folder(out: Path, lang: str) -> Path:
    """Where a language's project is rendered (English, with the landing page: `out` itself)."""
    return out if lang == SOURCE else out / lang


def write_sources(
    tree: l10n.Tree, found: dict[str, Path], langs: list[str], src: Path = SITE_SOURCES
) -> list[str]:
    """Writes every page, index, landing page and Sphinx configuration into `src`.

    Args:
        tree: The checkout (English notebooks, catalogs).
        found: The executed copy of each notebook, by stem (`executed_notebooks`).
        langs: The languages of the site, English first.
        src: The sources folder (`build/site-src/`).

    Returns:
        Warnings: executed copies older than the English notebook they came from.

    Raises:
        L10nError: A catalog cannot be read.
        NotOwnedError: `src` holds files this tool did not write.
    """
    outputs.claim(src, TOOL)
    pages: dict[str, list[Page]] = {lang: [] for lang in langs}
    log = []
    for stem, path in found.items():
        executed = nbcheck.read(path)
        differ = stale(tree, stem, executed)
        if differ:
            log.append(
                f"warning: {_shown(path)} was executed from an older notebooks/{SOURCE}/"
                f"{stem}.ipynb (cells {', '.join(map(str, differ[:8]))} differ): its pages show "
                f"that run; `{command_for(tree.notebooks / SOURCE / f'{stem}.ipynb')}` updates it"
            )
        for lang in langs:
            pages[lang].append(make_page(tree, executed, lang, langs, stem))
    for lang in langs:
        folder = src / lang
        for page in pages[lang]:
            write_if_changed(folder / f"{page.stem}.ipynb", nbformat.writes(page.notebook))
        for old in folder.glob("*.ipynb"):
            if old.stem not in found:
                old.unlink()
        write_if_changed(folder / "index.md", language_index(tree, lang, langs, pages[lang]))
    others = [d.name for d in sorted(src.iterdir()) if d.is_dir() and d.name not in OWN]
    for lang in langs:
        project = project_folder(src, lang)
        write_if_changed(project / "conf.py", conf_py(lang, others if lang == SOURCE else []))
        write_if_changed(project / "_static" / "site.css", SITE_CSS)
        write_if_changed(project / "_static" / "colab-badge.svg", COLAB_BADGE_SVG)
    write_if_changed(src / "index.md", landing_page(tree, langs, pages))
    return log


def sphinx_command(src: Path, lang: str) -> list[str]:
    """The sphinx-build command of one language's project: warnings are errors."""
    work = src / SPHINX_WORK / lang
    return [
        *(sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going"),
        *("-d", str(work / "doctrees")),
        str(project_folder(src, lang)),
        str(work / "html"),
    ]


def assemble(src: Path, out: Path, langs: list[str]) -> None:
    """Replaces `out` (only if this tool made it) with the rendered projects: English at the
    top, the others in folders; they are copied beside it first, then renamed into place."""
    staged = outputs.staging(out)
    for lang in langs:
        html_files = src / SPHINX_WORK / lang / "html"
        shutil.copytree(html_files, output_folder(staged, lang), dirs_exist_ok=True)
    outputs.replace(staged, out, TOOL)


def run_sphinx(src: Path, langs: list[str], jobs: int = 2) -> list[str]:
    """Renders every language's project, `jobs` sphinx-build processes at a time.

    Returns:
        One line per language: how long it took.

    Raises:
        SiteError: Sphinx is not installed, or a build failed (its messages are printed).
    """
    try:
        import myst_nb  # noqa: F401
        import sphinx  # noqa: F401
    except ImportError as error:
        raise SiteError(
            f"{error.name} is not installed in this environment: run `nox -s site`, or "
            "`pip install -r stacks/site.txt` first"
        ) from None
    waiting, running, log, failed = list(langs), {}, [], []
    while waiting or running:
        while waiting and len(running) < max(jobs, 1):
            lang = waiting.pop(0)
            command = sphinx_command(src, lang)
            running[lang] = (time.perf_counter(), subprocess.Popen(command, cwd=src))
        time.sleep(0.2)
        for lang, (start, process) in list(running.items()):
            seconds = time.perf_counter() - start
            if process.poll() is None and seconds < SPHINX_SECONDS:
                continue
            if process.poll() is None:
                process.kill()
                process.wait()
                failed.append(f"{lang} (stopped after {SPHINX_SECONDS} s)")
            elif process.returncode:
                failed.append(f"{lang} ({' '.join(sphinx_command(src, lang))})")
            del running[lang]
            log.append(f"{lang}: {'FAILED' if process.returncode else 'ok'} ({seconds:.1f} s)")
    if failed:
        raise SiteError(
            f"sphinx-build failed for {', '.join(failed)}; its messages are above (a warning "
            "counts as an error: fix the page or the generator in tools/site.py)"
        )
    return log


def site_languages(tree: l10n.Tree, requested: list[str] | None = None) -> list[str]:
    """English, then the requested languages (default: every language with catalogs).

    Raises:
        L10nError: A requested language has no catalogs.
    """
    others = [lang for lang in requested or [] if lang != SOURCE]
    if requested and not others:
        return [SOURCE]
    return [SOURCE, *tree.select(others or None)]


def build(
    tree: l10n.Tree,
    executed: Path = EXECUTED,
    pytorch_xla: Path = PYTORCH_XLA,
    out: Path = SITE,
    langs: list[str] | None = None,
    jobs: int = 2,
    src: Path = SITE_SOURCES,
) -> list[str]:
    """Writes the sources and renders the site into `out`; returns what happened, line by line.

    Raises:
        SiteError: Executed notebooks are missing, or Sphinx is missing or failed.
        L10nError: An unknown language, or a catalog that cannot be read.
    """
    selected = site_languages(tree, langs)
    found = executed_notebooks(tree, executed, pytorch_xla)
    log = write_sources(tree, found, selected, src)
    log += run_sphinx(src, selected, jobs)
    assemble(src, out, selected)
    log.append(
        f"site: {_shown(out / 'index.html')} ({len(found)} notebooks x {len(selected)} "
        f"languages: {', '.join(selected)})"
    )
    return log


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["build", "sources"])
    parser.add_argument("--executed", type=Path, default=EXECUTED, help="executed copies")
    parser.add_argument("--pytorch-xla", type=Path, default=PYTORCH_XLA, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=SITE, help="the site (HTML)")
    parser.add_argument("--src", type=Path, default=SITE_SOURCES, help="the generated sources")
    parser.add_argument("--lang", action="append", help="language(s) besides English")
    parser.add_argument("--jobs", type=int, default=2, help="sphinx-build processes at a time")
    parser.add_argument("--clean", action="store_true", help="delete --src and --out first")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    tree = l10n.Tree(args.root.resolve())
    src, out = args.src.resolve(), args.out.resolve()
    try:
        for folder in (src, out) if args.clean else ():
            outputs.clear(folder, TOOL)
        if args.command == "sources":
            langs = site_languages(tree, args.lang)
            found = executed_notebooks(tree, args.executed.resolve(), args.pytorch_xla.resolve())
            log = write_sources(tree, found, langs, src) + [f"sources: {_shown(src)}"]
        else:
            log = build(
                tree,
                args.executed.resolve(),
                args.pytorch_xla.resolve(),
                out,
                args.lang,
                args.jobs,
                src,
            )
    except (SiteError, l10n.L10nError, outputs.NotOwnedError, nbcheck.NotebookFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print("\n".join(log))
    return 0


if __name__ == "__main__":
    sys.exit(main())
