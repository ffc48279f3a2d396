"""The site's sources (tools/site/build.py) for a tiny tree in a temporary folder: real files,
no Sphinx.

The rendering itself and the browser check run in `nox -s site` (tests/browser/).
"""

from __future__ import annotations

import html
import json
import re
import runpy
import sys
import types
from pathlib import Path

import nbformat
import pytest

from tools import languages, paths, phrases
from tools import notebook as notebook_file
from tools.l10n import cli as l10n
from tools.l10n import sentences as site_sentences
from tools.site import build as site
from tools.site import pages

TITLE = """\
# Alpha notebook

[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://example.com)

Alpha trains on `strategy.run` and links to [beta](02_beta.ipynb)."""
PNG = (  # one pixel
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
RUN = {
    "date": "2026-11-23T19:00:00+00:00",
    "machine": {"platform": "Linux-6.1-x86_64", "cpus": 2, "accelerator": "none"},
    "python": "3.11.9",
    "packages": {"tensorflow-cpu": "2.21.0", "keras": "3.15.1"},
    "environment": {},
}


def english(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A notebook with the conventional cells: title, install, parameters, `cells`, summary."""
    nb = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell("STEPS = 10", metadata={"tags": ["parameters"]})
    nb.cells = [nbformat.v4.new_markdown_cell(TITLE), nbformat.v4.new_code_cell(""), parameters]
    nb.cells += [*cells, nbformat.v4.new_markdown_cell("## Summary\n\nTraining ran.")]
    return nb


def write(root: Path, relative: str, nb: nbformat.NotebookNode) -> Path:
    """Writes a notebook of the tree in canonical form (badge included), as `nbcheck --fix`."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        notebook_file.dumps(notebook_file.normalize(nb, paths.ROOT / relative)), "utf-8"
    )
    return path


def executed_copy(source: Path, target: Path, run: dict | None = RUN) -> Path:
    """What papermill writes: injected parameters, outputs, metadata (and the run record)."""
    nb = nbformat.read(source, as_version=4)
    injected = nbformat.v4.new_code_cell("# Parameters\nSTEPS = 2\n")
    injected.metadata["tags"] = ["injected-parameters"]
    index = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    nb.cells.insert(index + 1, injected)
    for cell in nb.cells:
        if cell.cell_type == "code" and "train" in cell.source:
            cell.outputs = [
                nbformat.v4.new_output("stream", name="stdout", text="\r1/2 loss: 0.9"),
                nbformat.v4.new_output(
                    "stream", name="stdout", text="\x08" * 12 + "\r2/2 loss: 0.5\n"
                ),
                nbformat.v4.new_output(
                    "display_data", data={"image/png": PNG, "text/plain": "<Figure>"}
                ),
            ]
    nb.metadata["papermill"] = {
        "parameters": {"STEPS": 2},
        "start_time": "2026-11-23T17:40:00.000000+00:00",
        "end_time": "2026-11-23T17:41:00.000000+00:00",
        "exception": False,
    }
    if run:
        nb.metadata["tpu_curriculum"] = {"run": run}
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return target


@pytest.fixture
def tree(tmp_path: Path) -> l10n.Tree:
    """Two English notebooks, de catalogs (one message translated), executed copies."""
    train = nbformat.v4.new_code_cell("print('train')")
    first = write(
        tmp_path,
        "notebooks/en/01_alpha.ipynb",
        english(nbformat.v4.new_markdown_cell("Alpha trains a model."), train),
    )
    second = write(
        tmp_path,
        "notebooks/en/02_beta.ipynb",
        english(nbformat.v4.new_markdown_cell("Beta places `a` on `/GPU:0`.")),
    )
    tree = l10n.Tree(tmp_path)
    l10n.extract(tree, add="de")
    path = tree.catalog("de", "01_alpha")
    po = l10n.read_catalog(path, tree)
    for entry in po:
        if entry.msgid == "Alpha trains a model.":
            entry.msgstr = "Alpha trainiert ein Modell."
    path.write_text(l10n.serialize(po), encoding="utf-8")
    executed_copy(first, tmp_path / "build/executed/en/01_alpha.ipynb")
    executed_copy(second, tmp_path / "build/executed/en/02_beta.ipynb", run=None)
    return tree


def sources(tree: l10n.Tree) -> Path:
    """Writes the site's sources for the tree; returns their folder."""
    found = site.executed_notebooks(tree, tree.root / "build/executed", tree.root / "none")
    src = tree.root / "build/site-src"
    site.write_sources(tree, found, site.site_languages(tree), src)
    return src


def markdown(nb: nbformat.NotebookNode) -> str:
    return "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")


def test_a_translated_page_has_the_catalogs_text_and_the_english_runs_outputs(tree):
    src = sources(tree)
    page = nbformat.read(src / "de/01_alpha.ipynb", as_version=4)
    english_page = nbformat.read(src / "en/01_alpha.ipynb", as_version=4)
    assert "Alpha trainiert ein Modell." in markdown(page)
    assert "Alpha trains a model." not in markdown(page)
    # Untranslated messages stay English; code and outputs are the English run's.
    assert "## Summary\n\nTraining ran." in markdown(page)
    code = [c for c in page.cells if c.cell_type == "code"]
    assert code == [c for c in english_page.cells if c.cell_type == "code"]
    outputs = next(c.outputs for c in code if c.outputs)
    assert outputs[0].text == "2/2 loss: 0.5\n"  # the progress bar's last state, as Jupyter
    assert outputs[1].data["image/png"] == PNG
    assert "STEPS = 2" in "\n".join(c.source for c in code)  # papermill's parameters cell


def test_the_badges_open_the_pages_own_language_with_local_images(tree):
    src = sources(tree)
    for lang in ("en", "de"):
        page = nbformat.read(src / lang / "01_alpha.ipynb", as_version=4)
        # The title first, then the run's record (the header), then the badges and the intro.
        assert page.cells[0].source.startswith("# ") and "\n" not in page.cells[0].source
        assert page.cells[1].id == "tpu-site-header"
        title = page.cells[2].source
        notebook = tree.localized(lang, "01_alpha")
        url = paths.colab_url(notebook, tree.root)
        assert notebook_file.BADGE_RE.findall(title) == [(site.BADGE_IMAGE, url)]
        assert url.endswith(f"/notebooks/{lang}/01_alpha.ipynb")
        kaggle = paths.kaggle_url(notebook, tree.root)
        assert notebook_file.KAGGLE_BADGE_RE.findall(title) == [(site.KAGGLE_BADGE_IMAGE, kaggle)]
        assert kaggle.endswith(f"/blob/main/notebooks/{lang}/01_alpha.ipynb")
        assert title.startswith(f"[![Open In Colab]({site.BADGE_IMAGE})]({url}) [![Open In Kaggle]")
    for folder in (src, src / "de"):
        assert (folder / "_static/colab-badge.svg").is_file()
        svg = (folder / "_static/kaggle-badge.svg").read_text(encoding="utf-8")
        assert svg.startswith("<svg ") and "Open in Kaggle" in svg
        # The site's static files, tools/site/static/, are copied into each project's _static/.
        for name in ("site.css", "colab-badge.svg", "kaggle-badge.svg"):
            assert (folder / "_static" / name).read_bytes() == (site.STATIC / name).read_bytes()


def test_an_executed_copy_with_the_colab_badge_only_gets_both(tree):
    # Copies executed before the notebooks had their Kaggle badge.
    path = tree.root / "build/executed/en/01_alpha.ipynb"
    nb = nbformat.read(path, as_version=4)
    kaggle = paths.kaggle_badge(tree.localized("en", "01_alpha"), tree.root)
    nb.cells[0].source = nb.cells[0].source.replace(" " + kaggle, "")
    assert "Kaggle" not in nb.cells[0].source
    nbformat.write(nb, path)
    title = nbformat.read(sources(tree) / "de/01_alpha.ipynb", as_version=4).cells[2].source
    assert (
        len(notebook_file.BADGE_RE.findall(title))
        == len(notebook_file.KAGGLE_BADGE_RE.findall(title))
        == 1
    )


def test_every_page_links_the_same_notebook_in_every_other_language(tree):
    src = sources(tree)
    header = nbformat.read(src / "de/02_beta.ipynb", as_version=4).cells[1].source
    assert "\n\n" not in header  # one HTML block: markdown leaves it whole
    targets = re.findall(r'<a href="([^"]+)" hreflang="([^"]+)"', header)
    assert targets == [("../en/02_beta.html", "en")]
    assert '<strong lang="de">Deutsch</strong>' in header
    assert 'href="../index.html"' in header
    landing = (src / "index.md").read_text(encoding="utf-8")
    assert 'href="de/01_alpha.html"' in landing and 'href="en/02_beta.html"' in landing
    # Four columns however many languages (readable at 1024 px): the pages of every language
    # share one cell, their Colab and Kaggle links another.
    assert landing.count("<th>") == 4 and landing.count("<tr><td>") == 2
    row = landing.split("<tr><td>")[1]
    assert row.count('hreflang="de"') == 3 and row.count('hreflang="en"') == 3
    opens = row.split("</td><td>")[3]
    assert opens.count('<img src="_static/colab-badge.svg"') == 1
    assert opens.count('<img src="_static/kaggle-badge.svg"') == 1
    for lang in ("en", "de"):
        notebook = tree.localized(lang, "01_alpha")
        for url in (paths.colab_url(notebook, tree.root), paths.kaggle_url(notebook, tree.root)):
            assert f'<a href="{url}" hreflang="{lang}"' in opens
    assert "en/index" in landing  # the English index in the toctree


def test_the_header_names_the_parameters_and_the_hardware(tree):
    src = sources(tree)
    header = nbformat.read(src / "en/01_alpha.ipynb", as_version=4).cells[1].source
    assert "<code>STEPS = 2</code>" in header
    assert "2026-11-23 19:00 UTC" in header and "Linux-6.1-x86_64, 2 CPUs" in header
    assert "accelerator: none" in header and "Python 3.11.9" in header
    assert "tensorflow-cpu 2.21.0" in header and "keras 3.15.1" in header
    translated = nbformat.read(src / "de/01_alpha.ipynb", as_version=4).cells[1].source
    assert "notebooks/de/po/01_alpha.po" in translated and "englischen Notebooks" in translated


def sphinx_conf(project: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """tools/site/conf.py as sphinx-build executes it for `project` (its conf.json)."""
    monkeypatch.setenv(site.CONFIG_VARIABLE, str(project / site.CONFIG))
    return runpy.run_path(str(site.CONF_DIR / "conf.py"))


def test_a_translated_page_and_index_speak_their_language(tree, monkeypatch):
    src = sources(tree)
    header = nbformat.read(src / "de/01_alpha.ipynb", as_version=4).cells[1].source
    assert "Parameter (von papermill eingefügt;" in header and "<code>STEPS = 2</code>" in header
    assert "Ausgeführt am 2026-11-23 19:00 UTC; Hardware: Linux-6.1-x86_64, 2 CPUs" in header
    assert "Beschleuniger: keiner" in header  # the recorded "none", in German
    assert "alle Notebooks, alle Sprachen</a>" in header and 'aria-label="Sprachen"' in header
    for english_words in ("Parameters", "Run on", "hardware:", "all notebooks"):
        assert english_words not in header
    index = (src / "de/index.md").read_text(encoding="utf-8")
    assert index.startswith("# TensorFlow-Modelle auf TPUs trainieren (Deutsch)")
    assert "Alle Notebooks des Kurses auf Deutsch" in index
    assert "| # | Notebook | Colab | Kaggle |" in index
    kaggle = paths.kaggle_url(tree.localized("de", "01_alpha"), tree.root)
    assert f"[![Open In Kaggle]({site.KAGGLE_BADGE_IMAGE})]({kaggle}) |" in index
    assert site.sphinx_values("de", [])["project"] == "TensorFlow-Modelle auf TPUs trainieren"
    conf = sphinx_conf(src / "de", monkeypatch)
    assert conf["html_title"] == "TensorFlow-Modelle auf TPUs trainieren (Deutsch)"
    # sphinx-book-theme's footer would say "By Author name not set" (Sphinx's default author).
    assert conf["html_theme_options"]["footer_content_items"] == ["last-updated.html"]


def test_the_templates_escape_names_and_titles_as_html_and_leave_markdown_alone(tree):
    # Every value an HTML template shows is escaped with html.escape's entities; the site's
    # sentences are HTML and go in as they are; the markdown pages escape only a table's `|`.
    found = site.executed_notebooks(tree, tree.root / "build/executed", tree.root / "none")
    page = pages.make_page(
        tree, notebook_file.read(found["01_alpha"]), "en", ["en", "de"], "01_alpha"
    )
    title = 'Keras\' `fit` & <"friends"> | more'
    page = pages.Page(page.lang, page.stem, title, page.notebook)
    landing = pages.landing_page(tree, ["en"], {"en": [page]})
    assert f'title="{html.escape(title)}"' in landing
    assert "Keras&#x27; <code>fit</code> &amp; &lt;&quot;friends&quot;&gt; | more</a>" in landing
    index = pages.language_index(tree, "en", ["en"], [page])
    assert '[Keras\' `fit` & <"friends"> \\| more](01_alpha.ipynb)' in index
    switcher = pages.switcher("de", ["en", "de"], "x.html", "../index.html")
    assert 'aria-label="Sprachen"' in switcher and ">alle Notebooks, alle Sprachen</a>" in switcher
    rendered = pages.render("switcher.html", **SWITCHER, label="<b>", languages=[WEIRD])
    assert '<a href="../x/t.html" hreflang="x" lang="x">A &amp; &#x27;B&#x27;</a>' in rendered
    assert 'aria-label="&lt;b&gt;"' in rendered


SWITCHER = {"lang": "en", "target": "t.html", "landing": "../index.html", "all_languages": "all"}
WEIRD = {"code": "x", "name": "A & 'B'"}


def test_every_language_of_the_site_translates_every_sentence_with_the_english_placeholders():
    languages = l10n.Tree(paths.ROOT).languages()
    english = {
        key: phrases.site().english[key] for key in phrases.site().english if key != "origin_source"
    }
    for lang in languages:
        for key, sentence in english.items():
            translated = phrases.site().text(lang, key)
            assert translated.strip(), f"{lang} {key}: empty"
            assert translated != sentence or key in SAME_WORDS, f"{lang} {key}: not translated"
            extra = phrases.placeholders(translated) - phrases.placeholders(sentence)
            assert not extra, f"{lang} {key}: placeholders English does not fill: {extra}"


# Sentences that may read the same as the English in some language: the separator, the full stop
# and "notebook", which several languages keep.
SAME_WORDS = {"separator", "end", "column_notebook", "software", "languages"}


def test_the_site_sentences_are_checked_and_counted_like_the_notebooks(tree) -> None:
    # tools/site/sentences.toml holds the English; each language's notebooks/<lang>/po/_site.po the
    # translations: `check` reads them like the notebooks' catalogs, `report` counts them.
    path = tree.catalog("de", phrases.SITE_CATALOG)
    assert path.is_file() and path not in tree.catalogs("de")
    po = l10n.read_catalog(path, tree)
    next(e for e in po if e.msgid == "Run on {date} UTC").msgstr = "Ausgeführt am {date} {zone}"
    path.write_text(l10n.serialize(po), encoding="utf-8")
    found = l10n.check(tree, ["de"])
    assert any(
        "_site.po" in line and "placeholders the English does not fill" in line for line in found
    )
    rows = {(row.lang, row.notebook): row for row in l10n.counts(tree, ["de"])}
    assert rows["de", phrases.SITE_CATALOG].total == len(site_sentences.messages())


def test_a_sentence_changed_in_english_makes_the_site_catalogs_stale(tree, monkeypatch) -> None:
    monkeypatch.setitem(phrases.site().english, "languages", "Other languages")
    found = l10n.check(tree, ["de"])
    assert any("_site.po is out of date with tools/site/sentences.toml" in line for line in found)
    l10n.extract(tree, ["de"])
    found = l10n.check(tree, ["de"])
    assert not [line for line in found if "_site" in line]  # the new sentence: English for now


def test_a_language_without_sentences_is_shown_in_english():
    assert phrases.site().text("xx", "run_on", date="D") == "Run on D UTC"


def test_a_copy_executed_before_the_run_record_says_so(tree):
    src = sources(tree)
    header = nbformat.read(src / "en/02_beta.ipynb", as_version=4).cells[1].source
    assert "Hardware and software: not recorded (executed 2026-11-23 17:40 UTC" in header
    assert "<code>STEPS = 2</code>" in header


def test_missing_executed_notebooks_are_listed_in_one_error_with_their_commands(tree):
    (tree.root / "build/executed/en/02_beta.ipynb").unlink()
    write(tree.root, "notebooks/en/15_gamma_pytorch.ipynb", english())
    with pytest.raises(site.SiteError) as error:
        site.executed_notebooks(tree, tree.root / "build/executed", tree.root / "build/ptx")
    message = str(error.value)
    assert "1 cannot be used" in message
    assert "notebooks/en/02_beta.ipynb: no executed copy" in message
    assert "`nox -s notebooks -- notebooks/en/02_beta.ipynb`" in message
    # A missing PyTorch/XLA copy is shown unexecuted (test above); a broken one is an error.
    write(tree.root, "build/ptx/en/15_gamma_pytorch.ipynb", english())  # no papermill metadata
    with pytest.raises(site.SiteError) as error:
        site.executed_notebooks(tree, tree.root / "build/executed", tree.root / "build/ptx")
    assert "15_gamma_pytorch.ipynb is not an executed copy" in str(error.value)
    assert "nox -s pytorch_xla" in str(error.value)


def test_a_notebook_not_executed_failed_or_still_running_is_refused(tree):
    path = tree.root / "build/executed/en/01_alpha.ipynb"
    write(tree.root, "build/executed/en/01_alpha.ipynb", english())  # no papermill metadata
    with pytest.raises(site.SiteError, match="is not an executed copy"):
        site.executed_notebooks(tree, tree.root / "build/executed")
    executed_copy(tree.root / "notebooks/en/01_alpha.ipynb", path)
    nb = nbformat.read(path, as_version=4)
    nb.metadata.papermill["exception"] = True
    nbformat.write(nb, path)
    with pytest.raises(site.SiteError, match="failed"):
        site.executed_notebooks(tree, tree.root / "build/executed")
    nb.metadata.papermill.update(exception=None, end_time=None)  # as papermill writes it mid-run
    nbformat.write(nb, path)
    with pytest.raises(site.SiteError, match="01_alpha.ipynb is being executed now"):
        site.executed_notebooks(tree, tree.root / "build/executed")


def test_an_executed_copy_older_than_its_notebook_gives_a_warning(tree):
    path = tree.root / "notebooks/en/02_beta.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[3].source = "Beta places `b` on `/GPU:0`."
    nbformat.write(nb, path)
    found = site.executed_notebooks(tree, tree.root / "build/executed")
    log = site.write_sources(tree, found, ["en"], tree.root / "src")
    assert len(log) == 1 and "02_beta.ipynb (cells 3 differ)" in log[0]


def test_each_language_is_a_sphinx_project_that_never_executes(tree, monkeypatch):
    src = sources(tree)
    english = sphinx_conf(src, monkeypatch)
    assert english["nb_execution_mode"] == "off" and english["extensions"] == ["myst_nb"]
    assert "de" in english["exclude_patterns"] and english["language"] == "en"
    assert english["html_static_path"] == [str(src / "_static")]
    german = sphinx_conf(src / "de", monkeypatch)
    assert german["language"] == "de" and "de" not in german["exclude_patterns"]
    assert german["html_theme_options"]["path_to_docs"] == "notebooks/de"
    assert german["html_static_path"] == [str(src / "de/_static")]
    command = site.sphinx_command(src, "de")
    assert command[-2:] == [str(src / "de"), str(src / ".sphinx/de/html")]
    assert command[command.index("-c") + 1] == str(site.CONF_DIR)
    assert site.sphinx_environment(src, "de") == {site.CONFIG_VARIABLE: str(src / "de/conf.json")}


def test_chinese_search_uses_the_english_stemmer(tmp_path, monkeypatch):
    # Sphinx 9.0.4 names a `ChineseStemmer` that does not exist: conf.py names the English one.
    zh = types.SimpleNamespace(SearchChinese=type("SearchChinese", (), {"language_name": "zh"}))
    search = types.ModuleType("sphinx.search")
    search.zh = zh
    for name, module in (("sphinx", types.ModuleType("sphinx")), ("sphinx.search", search)):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setitem(sys.modules, "sphinx.search.zh", zh)
    for lang, stemmer in (("de", "zh"), ("zh-cn", "English")):
        values = site.sphinx_values(lang, [])
        (tmp_path / "conf.json").write_text(json.dumps(values), encoding="utf-8")
        assert sphinx_conf(tmp_path, monkeypatch)["language"] == languages.get(lang).sphinx
        assert zh.SearchChinese.language_name == stemmer


def test_the_languages_are_english_and_those_with_catalogs(tree):
    assert site.site_languages(tree) == ["en", "de"]
    assert site.site_languages(tree, ["en"]) == ["en"]
    with pytest.raises(l10n.L10nError, match="no catalogs for language 'fr'"):
        site.site_languages(tree, ["fr"])


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\r1/3\x08\x08\x08\r2/3\x08\x08\x08\r3/3 done\n", "3/3 done\n"),
        ("abc\rX\n", "Xbc\n"),  # what follows a carriage return overwrites
        ("one\r\ntwo", "one\ntwo"),
    ],
)
def test_streams_show_what_jupyter_shows(text, shown):
    assert site.terminal_text(text) == shown


def test_the_command_line_reports_missing_notebooks_and_exits_1(tree, capsys):
    (tree.root / "build/executed/en/01_alpha.ipynb").unlink()
    argv = ["sources", "--root", str(tree.root), "--executed", str(tree.root / "build/executed")]
    assert site.main(argv) == 1
    assert "01_alpha.ipynb: no executed copy" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the run record


def test_an_executed_copy_carries_its_run_record_and_the_page_shows_it(tmp_path):
    from tools.runs import notebooks

    notebook = tmp_path / "xx" / "probe.ipynb"
    notebook.parent.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('probe')")])
    nbformat.write(nb, notebook)
    executed = nbformat.read(notebooks.execute(notebook, tmp_path / "out", parameters={}), 4)
    run = executed.metadata[site.RUN_METADATA]["run"]
    assert run["python"] and run["machine"]["platform"] and run["packages"]
    assert executed.cells[0].outputs[0]["text"] == "probe\n"
    line = site.run_line(executed)
    assert run["machine"]["platform"] in line and f"Python {run['python']}" in line


def test_the_site_builds_without_the_pytorch_environment(tree):
    # Notebook 15's copy comes from `nox -s pytorch_xla -- --site` (a 7 GB environment): without
    # it, its pages show the notebook as committed, and say so; every other notebook needs its copy.
    write(tree.root, "notebooks/en/03_gamma_pytorch.ipynb", english(nbformat.v4.new_code_cell("1")))
    l10n.extract(tree)
    found = site.executed_notebooks(tree, tree.root / "build/executed", tree.root / "none")
    assert found["03_gamma_pytorch"] == tree.notebooks / "en/03_gamma_pytorch.ipynb"
    src = tree.root / "build/site-src"
    log = site.write_sources(tree, found, site.site_languages(tree), src)
    assert any("03_gamma_pytorch.ipynb was not executed for this build" in line for line in log)
    for lang in ("en", "de"):
        header = nbformat.read(src / lang / "03_gamma_pytorch.ipynb", as_version=4).cells[1].source
        assert phrases.site().text(
            lang, "not_executed", command="<code>nox -s pytorch_xla -- --site</code>"
        ) in (header)
    (tree.root / "build/executed/en/02_beta.ipynb").unlink()  # a TensorFlow notebook: an error
    with pytest.raises(site.SiteError, match="02_beta.ipynb: no executed copy"):
        site.executed_notebooks(tree, tree.root / "build/executed", tree.root / "none")
