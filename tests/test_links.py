"""Colab badges and relative links, on a tiny checkout in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tools import links, markdown, nbcheck, paths

REPOSITORY = paths.project_settings()["repository"]
COLAB = f"https://colab.research.google.com/github/{REPOSITORY}/blob/main"


def write_notebook(root: Path, relative: str, *markdown: str) -> Path:
    """A notebook whose title cell carries the right badge, plus markdown cells."""
    nb = nbformat.v4.new_notebook()
    title = f"# Title\n\n{paths.badge(root / relative, root)}\n\nIntro."
    nb.cells = [nbformat.v4.new_markdown_cell(text) for text in (title, *markdown)]
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbcheck.dumps(nb), encoding="utf-8")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """English and German notebooks, a README with a synced table, CONTRIBUTING.md."""
    write_notebook(tmp_path, "notebooks/en/01_a.ipynb", "Next: [b](02_b.ipynb#top).")
    write_notebook(tmp_path, "notebooks/en/02_b.ipynb", "Back to [the README](../../README.md).")
    write_notebook(tmp_path, "notebooks/de/01_a.ipynb", "Weiter: [b](../en/02_b.ipynb#top).")
    (tmp_path / "CONTRIBUTING.md").write_text("See [README](README.md).\n", encoding="utf-8")
    (tmp_path / "README.md").write_text(
        f"# Course\n\n{links.TABLE_START}\n{links.TABLE_END}\n\n[Contributing](CONTRIBUTING.md)\n",
        encoding="utf-8",
    )
    links.fix_readme(tmp_path)
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
    assert links.problems(root) == [
        f"notebooks/de/01_a.ipynb: cell-000: the Colab badge points to {COLAB}/notebooks/en/"
        f"01_a.ipynb, not {COLAB}/notebooks/de/01_a.ipynb"
    ]
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source = "# Titel\n\nOhne Abzeichen."
    path.write_text(nbcheck.dumps(nb), encoding="utf-8")
    assert links.notebook_problems(path, root) == [
        f"notebooks/de/01_a.ipynb: cell-000 has no Open in Colab badge; expected "
        f"{COLAB}/notebooks/de/01_a.ipynb"
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


def test_colab_url_to_a_missing_notebook_is_caught(root: Path) -> None:
    readme = root / "README.md"
    url = f"{COLAB}/notebooks/it/01_a.ipynb"
    readme.write_text(readme.read_text(encoding="utf-8") + f"\n[Italiano]({url})\n")
    assert links.problems(root) == [
        f"README.md: link '{url}' does not resolve: there is no notebooks/it/01_a.ipynb"
    ]


def test_readme_needs_a_badge_for_every_notebook_of_every_language(root: Path) -> None:
    (root / "README.md").write_text("# Course\n\nNo table yet.\n", encoding="utf-8")
    found = links.problems(root)
    assert len(found) == 3
    assert found[0] == (
        "README.md has no Open in Colab badge for notebooks/de/01_a.ipynb; run "
        "`python -m tools.links --fix` (or paste `--table`)"
    )
    with pytest.raises(links.LinkError, match="README.md has no <!-- notebooks:start -->"):
        links.fix_readme(root)


def test_readme_table_is_generated_and_kept_in_sync(root: Path, capsys) -> None:
    table = links.readme_table(root)
    lines = table.splitlines()
    assert lines[0] == "| # | notebook | English | Deutsch |"
    english_badge = paths.badge(root / "notebooks/en/01_a.ipynb", root)
    assert lines[2].startswith(f"| 1 | [Title](notebooks/en/01_a.ipynb) | {english_badge} | ")
    assert lines[3].endswith(" | — |")  # no German 02_b yet
    assert table in (root / "README.md").read_text(encoding="utf-8")

    write_notebook(root, "notebooks/de/02_b.ipynb", "Zurück zur [README](../../README.md).")
    assert links.problems(root) == [
        "README.md has no Open in Colab badge for notebooks/de/02_b.ipynb; run "
        "`python -m tools.links --fix` (or paste `--table`)",
        "README.md: the notebooks table between <!-- notebooks:start --> and "
        "<!-- notebooks:end --> is out of date; run `python -m tools.links --fix` "
        "(or paste `--table`)",
    ]
    assert links.main(["--fix", "--root", str(root)]) == 0
    assert "README.md: table rewritten" in capsys.readouterr().out
    assert links.problems(root) == []
    text = (root / "README.md").read_text(encoding="utf-8")
    assert text.startswith("# Course\n\n<!-- notebooks:start -->\n| # |")
    assert text.endswith("<!-- notebooks:end -->\n\n[Contributing](CONTRIBUTING.md)\n")
    assert links.main(["--table", "--root", str(root)]) == 0
    assert capsys.readouterr().out == links.readme_table(root) + "\n"
