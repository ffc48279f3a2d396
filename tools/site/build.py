"""The executed curriculum as a static site: every notebook in every language, with its outputs.

    python -m tools.site build [--executed build/executed] [--out build/site] [--lang de]
    python -m tools.site sources [--executed build/executed]   # build/site-src/ only, no Sphinx

Nothing runs here: the pages are the executed English notebooks that `tools.runs.notebooks run`
keeps (`build/executed/en/`, written by `nox -s notebooks -- --lang en`; the PyTorch/XLA notebook by
`nox -s pytorch_xla -- --site`, into `build/pytorch_xla/en/`). A page in another language is the
executed English notebook with its markdown translated from that language's catalog by
`tools.l10n.translation.translate_markdown`, exactly as the localized notebooks are built; its code
cells are identical to English by construction, so the English run's outputs are its outputs. Its
Colab and Kaggle badges point at the language's own notebook (the badge images are local copies, so
the site works offline). Every page starts with a header: the papermill parameters and the machine
and software that produced the outputs (`metadata["tpu_curriculum"]["run"]`, written by
`tools.runs.notebooks.execute`), and links to the same notebook in every other language.

The sources go to `build/site-src/`, one Sphinx project per language (`<lang>/`), so that each
language has its own `<html lang>`, theme labels and search index, with word splitting for
Japanese and Chinese; the English project is the folder itself, with the landing page (the
curriculum table: one row per notebook, its pages in every language in one cell, its Colab and
Kaggle links in every language in another) and `en/`.
Sphinx with myst-nb (execution off) and sphinx-book-theme renders them into `build/site/`, the
same layout: `index.html`, `en/`, `de/`, ... (`stacks/site.txt` pins them; `nox -s site`).

The pages themselves (header, switcher, indexes, landing page) are written by `tools.site.pages`,
from the templates in `tools/site/templates/`; this module finds the executed copies, writes the
Sphinx projects and runs Sphinx. Every project has the same configuration, `tools/site/conf.py`
(`sphinx-build -c tools/site`), which reads the language's values from the project's `conf.json`
(`sphinx_values`), and a copy of `tools/site/static/` (the site's CSS, the badge images) in its
`_static/`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat

from tools import languages, outputs, paths
from tools import notebook as notebook_file
from tools.l10n import catalogs
from tools.site.pages import BADGE_IMAGE as BADGE_IMAGE
from tools.site.pages import KAGGLE_BADGE_IMAGE as KAGGLE_BADGE_IMAGE
from tools.site.pages import RUN_METADATA as RUN_METADATA
from tools.site.pages import (
    STATIC,
    Page,
    command_for,
    landing_page,
    language_index,
    make_page,
    text,
)
from tools.site.pages import run_line as run_line
from tools.site.pages import terminal_text as terminal_text

ROOT = paths.ROOT
SOURCE = paths.SOURCE
EXECUTED = ROOT / "build" / "executed"
# The PyTorch/XLA notebook runs in an environment of its own; that session keeps its copy here.
PYTORCH_XLA = ROOT / "build" / "pytorch_xla"
SITE_SOURCES = ROOT / "build" / "site-src"
SITE = ROOT / "build" / "site"
# How long one language's sphinx-build may run (it takes under a minute on 2 busy cores).
SPHINX_SECONDS = 1200
# Sphinx's own files, per language: `<lang>/doctrees`, `<lang>/html` (copied into the site) and
# `<lang>/jupyter_execute` (myst-nb writes it next to the HTML folder, whatever the project).
SPHINX_WORK = ".sphinx"
TOOL = "tools.site"  # the mark on the folders it writes (tools/outputs.py)
# The Sphinx configuration of every project (`-c`), and the values of one project, beside it,
# whose path it reads from CONFIG_VARIABLE.
CONF_DIR = Path(__file__).parent
CONFIG = "conf.json"
CONFIG_VARIABLE = "TPU_SITE_CONFIG"
# The folders of the English project's sources; the others hold other languages' projects.
OWN = (SOURCE, "_static", SPHINX_WORK)


class SiteError(Exception):
    """The site cannot be built; the message says what is missing or wrong and how to fix it."""


# ----------------------------------------------------------------------------- inputs


def executed_notebooks(
    tree: catalogs.Tree, executed: Path = EXECUTED, pytorch_xla: Path = PYTORCH_XLA
) -> dict[str, Path]:
    """Finds the executed copy of every English notebook.

    Args:
        tree: The checkout (its `notebooks/en/`).
        executed: Where `tools.runs.notebooks run` writes executed copies (`<executed>/en/`).
        pytorch_xla: Where `nox -s pytorch_xla` writes the PyTorch/XLA notebook's copy.

    Returns:
        The executed copy of each notebook, by file stem, in the notebooks' order; for a notebook
        of an environment of its own (`paths.OWN_ENVIRONMENT`: PyTorch/XLA) without one, the
        notebook itself, which its pages show without outputs.

    Raises:
        SiteError: Some are missing, are not executed copies, or recorded a failed run; one
            error lists them all, each with the command that writes it.
    """
    found, problems = {}, []
    for english in tree.english():
        folder = pytorch_xla if paths.stack(english) == "pytorch" else executed
        path = folder / SOURCE / english.name
        why = _not_executed(path)
        if not path.exists() and paths.stack(english) in paths.OWN_ENVIRONMENT:
            found[english.stem] = english  # shown without outputs: no 7 GB environment needed
        elif why:
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
        papermill = notebook_file.read(path).metadata.get("papermill")
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


def stale(tree: catalogs.Tree, stem: str, executed: nbformat.NotebookNode) -> list[int]:
    """The cells in which an executed copy differs from the English notebook as it is now.

    Papermill's injected parameters cell is left out; a different cell count lists every cell.
    """
    now = notebook_file.read(tree.notebooks / SOURCE / f"{stem}.ipynb").cells
    cells = [c for c in executed.cells if "injected-parameters" not in c.metadata.get("tags", [])]
    if len(cells) != len(now):
        return list(range(max(len(cells), len(now))))
    return [i for i, (a, b) in enumerate(zip(cells, now, strict=True)) if a.source != b.source]


# ----------------------------------------------------------------------------- Sphinx projects


def sphinx_values(lang: str, others: list[str]) -> dict[str, object]:
    """The values of one language's Sphinx project, which `tools/site/conf.py` reads (`CONFIG`).

    Args:
        lang: The project's language.
        others: Folders the project leaves out (the English project's: the other languages').
    """
    settings = paths.project_settings()
    return {
        "project": text(lang, "title"),
        "language": languages.get(lang).sphinx,
        "exclude_patterns": [SPHINX_WORK, "**.ipynb_checkpoints", *others],
        "html_title": f"{text(lang, 'title')} ({languages.get(lang).name})",
        "repository_url": f"https://github.com/{settings['repository']}",
        "repository_branch": settings["branch"],
        "path_to_docs": "notebooks" if lang == SOURCE else f"notebooks/{lang}",
    }


def write_if_changed(path: Path, text: str) -> None:
    """Writes `text` unless the file holds it already (Sphinx rebuilds only changed files)."""
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def copy_if_changed(source: Path, target: Path) -> None:
    """Copies `source` to `target` unless `target` holds the same bytes already."""
    if target.is_file() and target.read_bytes() == source.read_bytes():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def project_folder(src: Path, lang: str) -> Path:
    """The source folder of a language's Sphinx project (English: `src` itself)."""
    return src if lang == SOURCE else src / lang


def output_folder(out: Path, lang: str) -> Path:
    """Where a language's project is rendered (English, with the landing page: `out` itself)."""
    return out if lang == SOURCE else out / lang


def write_sources(
    tree: catalogs.Tree, found: dict[str, Path], langs: list[str], src: Path = SITE_SOURCES
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
        executed = notebook_file.read(path)
        differ = stale(tree, stem, executed)
        if "papermill" not in executed.metadata:
            log.append(
                f"note: {tree.rel(path)} was not executed for this build: its pages show it "
                f"without outputs; `{command_for(path)}` executes it"
            )
        elif differ:
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
        values = sphinx_values(lang, others if lang == SOURCE else [])
        write_if_changed(project / CONFIG, json.dumps(values, indent=1, ensure_ascii=False) + "\n")
        for static in sorted(STATIC.iterdir()):
            copy_if_changed(static, project / "_static" / static.name)
    write_if_changed(src / "index.md", landing_page(tree, langs, pages))
    return log


def sphinx_command(src: Path, lang: str) -> list[str]:
    """The sphinx-build command of one language's project: warnings are errors; the
    configuration is `tools/site/conf.py`, with `sphinx_environment`."""
    work = src / SPHINX_WORK / lang
    return [
        *(sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going"),
        *("-c", str(CONF_DIR), "-d", str(work / "doctrees")),
        str(project_folder(src, lang)),
        str(work / "html"),
    ]


def sphinx_environment(src: Path, lang: str) -> dict[str, str]:
    """What `sphinx_command` adds to the environment: where the project's values are."""
    return {CONFIG_VARIABLE: str(project_folder(src, lang) / CONFIG)}


def _shell_command(src: Path, lang: str) -> str:
    """`sphinx_command` with its environment, as a shell runs it."""
    variables = [f"{name}={value}" for name, value in sphinx_environment(src, lang).items()]
    return " ".join([*variables, *sphinx_command(src, lang)])


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
            environment = {**os.environ, **sphinx_environment(src, lang)}
            process = subprocess.Popen(command, cwd=src, env=environment)
            running[lang] = (time.perf_counter(), process)
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
                failed.append(f"{lang} ({_shell_command(src, lang)})")
            del running[lang]
            log.append(f"{lang}: {'FAILED' if process.returncode else 'ok'} ({seconds:.1f} s)")
    if failed:
        raise SiteError(
            f"sphinx-build failed for {', '.join(failed)}; its messages are above (a warning "
            "counts as an error: fix the page, or its generator: tools/site/pages.py, templates/)"
        )
    return log


def site_languages(tree: catalogs.Tree, requested: list[str] | None = None) -> list[str]:
    """English, then the requested languages (default: every language with catalogs).

    Raises:
        L10nError: A requested language has no catalogs.
    """
    others = [lang for lang in requested or [] if lang != SOURCE]
    if requested and not others:
        return [SOURCE]
    return [SOURCE, *tree.select(others or None)]


def build(
    tree: catalogs.Tree,
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
    parser = argparse.ArgumentParser(
        prog="python -m tools.site", description=__doc__.splitlines()[0]
    )
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
    tree = catalogs.Tree(args.root.resolve())
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
    except (
        SiteError,
        catalogs.L10nError,
        outputs.NotOwnedError,
        notebook_file.NotebookFileError,
    ) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print("\n".join(log))
    return 0


if __name__ == "__main__":
    sys.exit(main())
