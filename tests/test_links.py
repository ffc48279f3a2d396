"""Colab and Kaggle badges, the README table, the language indexes and relative links, on a tiny
checkout in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tools import notebook as notebook_file
from tools import paths
from tools.ci import links
from tools.l10n import index as indexes
from tools.l10n import markdown

REPOSITORY = paths.project_settings()["repository"]
COLAB = f"https://colab.research.google.com/github/{REPOSITORY}/blob/main"
KAGGLE = f"https://kaggle.com/kernels/welcome?src=https://github.com/{REPOSITORY}/blob/main"
FIX = "run `python -m tools.ci.links --fix`"


def write_notebook(root: Path, relative: str, *markdown: str) -> Path:
    """A notebook whose title cell carries the right badges, plus markdown cells."""
    nb = nbformat.v4.new_notebook()
    title = (
        f"# Title {Path(relative).parent.name}\n\n{paths.badges(root / relative, root)}\n\nIntro."
    )
    nb.cells = [nbformat.v4.new_markdown_cell(text) for text in (title, *markdown)]
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(notebook_file.dumps(nb), encoding="utf-8")
    return path


def describe(root: Path) -> None:
    """Writes the README table's "what it teaches" words of every row that has none."""
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    readme.write_text(text.replace(".ipynb) |  |", ".ipynb) | how to `do` it |"), encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """English and German notebooks, a README with a synced table (described), the German
    index, CONTRIBUTING.md."""
    write_notebook(tmp_path, "notebooks/en/01_a.ipynb", "Next: [b](02_b.ipynb#top).")
    write_notebook(tmp_path, "notebooks/en/02_b.ipynb", "Back to [the README](../../README.md).")
    write_notebook(tmp_path, "notebooks/de/01_a.ipynb", "Weiter: [b](../en/02_b.ipynb#top).")
    (tmp_path / "CONTRIBUTING.md").write_text("See [README](README.md).\n", encoding="utf-8")
    (tmp_path / "README.md").write_text(
        f"# Course\n\n{links.TABLE_START}\n{links.TABLE_END}\n\n[Contributing](CONTRIBUTING.md)\n",
        encoding="utf-8",
    )
    links.fix_readme(tmp_path)
    describe(tmp_path)
    return tmp_path


# ----------------------------------------------------------------------------- markdown helpers


def test_code_spans_follow_commonmark() -> None:
    text = "Use `a`, ``b ` c``, not \\`d\\`.\n```\nfenced `e`\n\n```\nthen `f`."
    assert markdown.code_spans(text) == ["`a`", "``b ` c``", "`f`"]
    assert markdown.code_spans("an unclosed ` tick and `g`") == ["` tick and `"]


def test_link_targets_cover_links_images_badges_and_urls_outside_code() -> None:
    text = (
        '[a](x.ipynb) ![img](pic.png "title") [![Open In Colab](badge.svg)](https://c.example/n)\n'
        '<https://auto.example> <a href="page.html">p</a> see https://bare.example/path.\n'
        "`[not](code.md)` and [ref]: ref.md"
    )
    assert sorted(markdown.link_targets(text)) == sorted(
        [
            "x.ipynb",
            "pic.png",
            "badge.svg",
            "https://c.example/n",
            "https://auto.example",
            "page.html",
            "https://bare.example/path",
        ]
    )
    assert markdown.link_targets("[ref]: ref.md") == ["ref.md"]


def test_link_targets_are_read_as_written_in_document_order() -> None:
    text = (
        "[a](<my file.md>) [b](javascript:x) [c][r] <mailto:a@b.example>\n"
        '<a href="h.html" title=t>h</a> <img src=unquoted.png> <https://auto.example/x.>\n'
        "    [indented](i.md) under a list item\n\n"
        "    [code](c.md) is indented code\n\n"
        "[r]: ref.md"
    )
    assert markdown.link_targets(text) == [
        "my file.md",
        "javascript:x",
        "ref.md",
        "mailto:a@b.example",
        "h.html",
        "https://auto.example/x.",
        "i.md",
        "ref.md",
    ]
    assert markdown.link_targets("    [b](b.md) alone, the block of a list item") == ["b.md"]


def test_code_spans_are_inline_code_only() -> None:
    assert markdown.code_spans("    `a` in a block indented under a list item") == ["`a`"]
    assert markdown.code_spans("~~~\n`a`\n~~~\n\n<div>`b`</div>\n\n`` `c` ``") == ["`` `c` ``"]
    assert markdown.code_spans("| `a` | b |\n| --- | --- |\n| c | `d` |") == ["`a`", "`d`"]


def test_is_relative() -> None:
    assert links.is_relative("02_b.ipynb") and links.is_relative("../README.md#x")
    assert not any(map(links.is_relative, ["https://x", "mailto:a@b", "#anchor", "//cdn/x"]))


# ----------------------------------------------------------------------------- checks


def test_a_consistent_checkout_passes(root: Path, capsys) -> None:
    assert links.problems(root) == []
    assert links.main(["--root", str(root)]) == 0
    assert "badges and links OK" in capsys.readouterr().out


def test_wrong_badge_is_caught(root: Path) -> None:
    path = root / "notebooks/de/01_a.ipynb"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("notebooks/de/01_a", "notebooks/en/01_a"), encoding="utf-8")
    assert links.notebook_problems(path, root) == [
        f"notebooks/de/01_a.ipynb: cell-000: the Colab badge points to {COLAB}/notebooks/en/"
        f"01_a.ipynb, not {COLAB}/notebooks/de/01_a.ipynb",
        f"notebooks/de/01_a.ipynb: cell-000: the Kaggle badge points to {KAGGLE}/notebooks/en/"
        f"01_a.ipynb, not {KAGGLE}/notebooks/de/01_a.ipynb",
    ]
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source = "# Titel\n\nOhne Abzeichen."
    path.write_text(notebook_file.dumps(nb), encoding="utf-8")
    assert links.notebook_problems(path, root) == [
        f"notebooks/de/01_a.ipynb: cell-000 has no Open in Colab badge; expected "
        f"{COLAB}/notebooks/de/01_a.ipynb",
        f"notebooks/de/01_a.ipynb: cell-000 has no Open in Kaggle badge; expected "
        f"{KAGGLE}/notebooks/de/01_a.ipynb",
    ]


def set_title(path: Path, old: str, new: str) -> None:
    nb = nbformat.read(path, as_version=4)
    assert old in nb.cells[0].source
    nb.cells[0].source = nb.cells[0].source.replace(old, new)
    path.write_text(notebook_file.dumps(nb), encoding="utf-8")


def test_wrong_kaggle_badge_is_caught(root: Path) -> None:
    path = root / "notebooks/de/01_a.ipynb"
    set_title(path, f"src=https://github.com/{REPOSITORY}/blob/main/notebooks/de/", "src=x/")
    assert links.problems(root) == [
        f"notebooks/de/01_a.ipynb: cell-000: the Kaggle badge points to "
        f"https://kaggle.com/kernels/welcome?src=x/01_a.ipynb, not {KAGGLE}/notebooks/de/01_a.ipynb"
    ]
    set_title(path, "src=x/", f"src=https://github.com/{REPOSITORY}/blob/main/notebooks/de/")
    set_title(path, paths.KAGGLE_BADGE_IMAGE, "https://example.com/kaggle.png")
    assert links.notebook_problems(path, root) == [
        "notebooks/de/01_a.ipynb: cell-000: the Kaggle badge shows "
        f"https://example.com/kaggle.png, not {paths.KAGGLE_BADGE_IMAGE}"
    ]


def test_missing_kaggle_badge_is_caught(root: Path) -> None:
    path = root / "notebooks/en/02_b.ipynb"
    set_title(path, " " + paths.kaggle_badge(path, root), "")
    assert links.notebook_problems(path, root) == [
        f"notebooks/en/02_b.ipynb: cell-000 has no Open in Kaggle badge; expected "
        f"{KAGGLE}/notebooks/en/02_b.ipynb"
    ]


def test_dangling_relative_link_is_caught(root: Path) -> None:
    (root / "notebooks/en/02_b.ipynb").unlink()
    found = links.problems(root)
    assert (
        "notebooks/en/01_a.ipynb: cell-001: link '02_b.ipynb#top' does not resolve: there is no "
        "notebooks/en/02_b.ipynb" in found
    )
    # Relative to the notebook's own folder.
    assert (
        "notebooks/de/01_a.ipynb: cell-001: link '../en/02_b.ipynb#top' does not resolve: there "
        "is no notebooks/en/02_b.ipynb" in found
    )
    (root / "CONTRIBUTING.md").write_text("[gone](docs/gone.md) [up](../../x)\n", encoding="utf-8")
    found = links.problems(root)
    assert (
        "CONTRIBUTING.md: link 'docs/gone.md' does not resolve: there is no docs/gone.md" in found
    )
    assert "CONTRIBUTING.md: link '../../x' points outside the repository" in found


def test_colab_or_kaggle_url_to_a_missing_notebook_is_caught(root: Path) -> None:
    readme = root / "README.md"
    colab, kaggle = f"{COLAB}/notebooks/it/01_a.ipynb", f"{KAGGLE}/notebooks/it/01_a.ipynb"
    text = readme.read_text(encoding="utf-8")
    readme.write_text(text + f"\n[Italiano]({colab}) [Kaggle]({kaggle})\n", encoding="utf-8")
    assert links.problems(root) == [
        f"README.md: link '{url}' does not resolve: there is no notebooks/it/01_a.ipynb"
        for url in (colab, kaggle)
    ]


def test_readme_needs_both_badges_of_every_english_notebook(root: Path) -> None:
    (root / "README.md").write_text("# Course\n\nNo table yet.\n", encoding="utf-8")
    found = links.problems(root)
    fix = f"{FIX} (or paste `--table`)"
    assert found == [
        f"README.md has no Open in {kind} badge for notebooks/en/{name}.ipynb; {fix}"
        for name in ("01_a", "02_b")
        for kind in ("Colab", "Kaggle")
    ]
    with pytest.raises(links.LinkError, match="README.md has no <!-- notebooks:start -->"):
        links.fix_readme(root)


def test_each_language_needs_its_index_with_both_badges_of_its_notebooks(root: Path) -> None:
    index = root / "notebooks/de/README.md"
    text = index.read_text(encoding="utf-8")
    kaggle = paths.kaggle_badge(root / "notebooks/de/01_a.ipynb", root)
    index.write_text(text.replace(kaggle, "Kaggle"), encoding="utf-8")
    assert links.problems(root) == [
        f"notebooks/de/README.md has no Open in Kaggle badge for notebooks/de/01_a.ipynb; {FIX}",
        f"notebooks/de/README.md is out of date; {FIX}",
    ]
    index.unlink()
    assert links.problems(root) == [
        f"notebooks/de/README.md is missing; {FIX}",
        "README.md: link 'notebooks/de/README.md' does not resolve: there is no "
        "notebooks/de/README.md",
    ]
    assert links.main(["--fix", "--root", str(root)]) == 0
    assert index.read_text(encoding="utf-8") == text
    assert not (root / "notebooks/en/README.md").exists()  # the README is the English index


def test_a_language_index_lists_its_titles_and_badges_in_its_language(root: Path) -> None:
    text = (root / "notebooks/de/README.md").read_text(encoding="utf-8")
    assert text == indexes.language_index(root, "de")
    lines = text.splitlines()
    assert lines[0].startswith("<!-- Written by `python -m tools.ci.links --fix`")
    # The site's own words, from the German catalog of the site's sentences.
    assert lines[2] == "# TensorFlow-Modelle auf TPUs trainieren (Deutsch)"
    assert lines[4] == "[English](../../README.md) · **Deutsch**"
    assert lines[6] == "| # | Notebook | Colab | Kaggle |"
    german = root / "notebooks/de/01_a.ipynb"
    assert lines[8] == (
        f"| 1 | [Title de](01_a.ipynb) | {paths.badge(german, root)} | "
        f"{paths.kaggle_badge(german, root)} |"
    )
    assert len(lines) == 9  # the German 01_a only


def test_readme_table_is_generated_and_kept_in_sync(root: Path, capsys) -> None:
    table = links.readme_table(root)
    lines = table.splitlines()
    assert lines[0] == "| # | notebook | what it teaches | Colab | Kaggle |"
    english = root / "notebooks/en/01_a.ipynb"
    assert lines[2] == (
        f"| 1 | [Title en](notebooks/en/01_a.ipynb) | how to `do` it | "
        f"{paths.badge(english, root)} | {paths.kaggle_badge(english, root)} |"
    )
    assert len(lines) == 6  # two English notebooks, a blank line, the languages
    assert lines[-1] == "The notebooks in other languages: [Deutsch](notebooks/de/README.md)"
    assert table in (root / "README.md").read_text(encoding="utf-8")
    assert links.descriptions((root / "README.md").read_text(encoding="utf-8")) == {
        "01_a": "how to `do` it",
        "02_b": "how to `do` it",
    }

    write_notebook(root, "notebooks/de/02_b.ipynb", "Zurück zur [README](../../README.md).")
    assert links.problems(root) == [
        f"notebooks/de/README.md has no Open in {kind} badge for notebooks/de/02_b.ipynb; {FIX}"
        for kind in ("Colab", "Kaggle")
    ] + [f"notebooks/de/README.md is out of date; {FIX}"]
    assert links.main(["--fix", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "README.md: table up to date\nnotebooks/de/README.md: rewritten\n" in out
    assert links.problems(root) == []

    # A new English notebook: a row with its badges, the words kept for the others.
    write_notebook(root, "notebooks/en/03_c.ipynb")
    fix = f"{FIX} (or paste `--table`)"
    assert links.problems(root) == [
        f"README.md has no Open in {kind} badge for notebooks/en/03_c.ipynb; {fix}"
        for kind in ("Colab", "Kaggle")
    ] + [
        "README.md: the notebooks table between <!-- notebooks:start --> and "
        f"<!-- notebooks:end --> is out of date; {fix}",
        "README.md: the notebooks table says nothing under 'what it teaches' for "
        "notebooks/en/03_c.ipynb: write a few words in its row (`--fix` keeps them)",
    ]
    assert links.main(["--fix", "--root", str(root)]) == 1  # the words are still missing
    assert "README.md: table rewritten" in capsys.readouterr().out
    assert links.problems(root) == [
        "README.md: the notebooks table says nothing under 'what it teaches' for "
        "notebooks/en/03_c.ipynb: write a few words in its row (`--fix` keeps them)",
    ]
    describe(root)
    assert links.problems(root) == []
    text = (root / "README.md").read_text(encoding="utf-8")
    assert text.startswith("# Course\n\n<!-- notebooks:start -->\n| # |")
    assert text.endswith("<!-- notebooks:end -->\n\n[Contributing](CONTRIBUTING.md)\n")
    assert links.main(["--table", "--root", str(root)]) == 0
    assert capsys.readouterr().out == links.readme_table(root) + "\n"
