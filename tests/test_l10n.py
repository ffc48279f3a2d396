"""The localization machinery on a tiny notebooks tree in a temporary folder (real files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import polib
import pytest

from tools import notebook as notebook_file
from tools import paths
from tools.ci import links
from tools.l10n import catalogs, markdown, translation
from tools.l10n import cli as l10n
from tools.l10n import index as indexes
from tools.l10n import sentences as site_sentences

TITLE = """\
# Alpha notebook

[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://example.com)

Alpha shows `tf.device` and links to [beta](02_beta.ipynb).

You will:

* run `strategy.run`,
* read the [guide](https://www.tensorflow.org/guide/tpu)."""
TABLE = """\
## Where

| where | how |
| --- | --- |
| Colab | `tpu="local"` |"""
FENCE = """\
Run this:

```bash
nox -s tests

nox -s lint
```"""


def notebook(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A notebook with the conventional first cells (title, install, parameters) and `cells`."""
    nb = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell("STEPS = 10", metadata={"tags": ["parameters"]})
    nb.cells = [nbformat.v4.new_markdown_cell(TITLE), nbformat.v4.new_code_cell(""), parameters]
    nb.cells += list(cells)
    nb.cells.append(nbformat.v4.new_markdown_cell("## Summary\n\n* `STEPS` steps ran."))
    return nb


def write(root: Path, relative: str, nb: nbformat.NotebookNode) -> Path:
    """Writes a notebook in canonical form, with its badge, as `nbcheck --fix` would."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    notebook_file.normalize(nb, paths.ROOT / relative)
    path.write_text(notebook_file.dumps(nb), encoding="utf-8")
    return path


def fix_readme(root: Path) -> None:
    """`links.fix_readme`, then words under "what it teaches" in each README row without."""
    links.fix_readme(root)
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    readme.write_text(text.replace(".ipynb) |  |", ".ipynb) | a lesson |"), encoding="utf-8")


@pytest.fixture
def tree(tmp_path: Path) -> l10n.Tree:
    """Two English notebooks, catalogs for de and it, built notebooks, a README with the table."""
    reference = nbformat.v4.new_code_cell(
        "print(STEPS)", metadata={"tags": [notebook_file.REFERENCE_TAG]}
    )
    write(
        tmp_path,
        "notebooks/en/01_alpha.ipynb",
        notebook(
            nbformat.v4.new_markdown_cell(TABLE),
            reference,
            nbformat.v4.new_markdown_cell(FENCE),
        ),
    )
    write(
        tmp_path,
        "notebooks/en/02_beta.ipynb",
        notebook(
            nbformat.v4.new_markdown_cell("Beta places `a` on `/GPU:0`."),
            nbformat.v4.new_code_cell("a = 1"),
        ),
    )
    (tmp_path / "README.md").write_text(
        f"# Course\n\n{links.TABLE_START}\n{links.TABLE_END}\n", encoding="utf-8"
    )
    tree = l10n.Tree(tmp_path)
    l10n.extract(tree, add="de")
    l10n.extract(tree, add="it")
    l10n.build(tree)
    fix_readme(tmp_path)
    return tree


def catalog(tree: l10n.Tree, lang: str, stem: str) -> polib.POFile:
    return l10n.read_catalog(tree.catalog(lang, stem), tree)


def translate_all(tree: l10n.Tree, lang: str = "de", site: bool = False) -> None:
    """Translates every message "by hand": a marker word, code spans and links kept (with
    `site`, the site's sentences too)."""
    for path in [*tree.catalogs(lang), *([tree.catalog(lang, "_site")] if site else [])]:
        po = l10n.read_catalog(path, tree)
        for entry in po:
            entry.msgstr = entry.msgid.replace("Alpha", "Alfa").replace("Beta", "Bet") + " ✓"
            if entry.msgid.startswith("|"):
                entry.msgstr = entry.msgid  # tables: kept as they are
            if entry.fuzzy:
                entry.flags.remove(l10n.FUZZY)
                entry.previous_msgid = None
        path.write_text(l10n.serialize(po), encoding="utf-8")


def set_english_block(tree: l10n.Tree, stem: str, old: str, new: str) -> None:
    path = tree.notebooks / "en" / f"{stem}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.source = cell.source.replace(old, new)
    path.write_text(notebook_file.dumps(nb), encoding="utf-8")


# ----------------------------------------------------------------------------- markdown blocks


def test_split_blocks_round_trips_and_keeps_fences_and_tables_whole() -> None:
    text = f"{TITLE}\n\n\n{TABLE}\n\n{FENCE}\n"
    parts = l10n.split_blocks(text)
    assert "\n".join(part for _, part in parts) == text
    blocks = [part for is_block, part in parts if is_block]
    assert blocks[-1] == "```bash\nnox -s tests\n\nnox -s lint\n```"
    assert "| --- | --- |" in blocks[-3] and blocks[-3].startswith("| where")
    assert l10n.kind(blocks[-1]) == "fence" and l10n.kind(blocks[-3]) == "table"


def test_a_fence_is_whole_until_its_closing_fence_and_inline_backticks_open_none() -> None:
    fences = [
        "~~~\ncode\n\n~~~",  # tildes
        "````\n```\n\nstill code\n`````",  # closed by a longer fence of the same character only
        "```\nno closing fence\n\nruns to the end",
        "1. Run:\n\n    ```bash\n    a\n\n    b\n    ```",  # in a list item, indented 4
    ]
    for text in fences:
        blocks = [part for is_block, part in l10n.split_blocks(text) if is_block]
        assert l10n.kind(blocks[-1]) == "fence" and "\n\n" in blocks[-1], text
    assert l10n.split_blocks("```x``` is code\n\ntext") == [
        (True, "```x``` is code"),
        (False, ""),
        (True, "text"),
    ]
    assert l10n.split_blocks("    ```\n    not a fence (indented code)\n\nb") == [
        (True, "    ```\n    not a fence (indented code)"),
        (False, ""),
        (True, "b"),
    ]
    assert l10n.kind("Run:\n```\nx\n```") == l10n.kind("| a | b |") == "text"


def test_a_table_is_a_message_with_the_table_hint(tree: l10n.Tree) -> None:
    found = l10n.messages(tree.notebooks / "en" / "01_alpha.ipynb")
    hints = {m.msgid: m.hint for m in found}
    assert hints[TABLE.split("\n\n")[1]] == translation.HINTS["table"]
    assert hints[TABLE.split("\n\n")[0]] == ""


def test_messages_name_notebook_cell_and_block_and_skip_the_badges(tree: l10n.Tree) -> None:
    found = l10n.messages(tree.notebooks / "en" / "01_alpha.ipynb")
    places = [f"{file}:{block}" for file, block in (m.occurrence for m in found)]
    assert places[:4] == [
        "01_alpha.ipynb:cell-000:0",
        "01_alpha.ipynb:cell-000:2",  # block 1, the badges, is not a message
        "01_alpha.ipynb:cell-000:3",
        "01_alpha.ipynb:cell-000:4",
    ]
    assert not any("colab-badge" in m.msgid or "kaggle" in m.msgid for m in found)
    # Block 1 is both badges, on one line (`notebook_file.normalize` added Kaggle's after Colab's).
    badges = l10n.split_blocks(
        notebook_file.read(tree.notebooks / "en" / "01_alpha.ipynb").cells[0].source
    )
    assert badges[2][1] == paths.badges(tree.notebooks / "en" / "01_alpha.ipynb", tree.root)
    text = tree.catalog("de", "01_alpha").read_text(encoding="utf-8")
    assert "#: 01_alpha.ipynb:cell-003:1\n" in text
    assert '"Language: de\\n"' in text and "charset=UTF-8" in text and "Plural-Forms" in text


def test_a_block_of_badges_is_no_message_but_text_beside_them_is() -> None:
    colab = (
        "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://x)"
    )
    kaggle = "[![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://y)"
    for block in (colab, kaggle, f"{colab} {kaggle}", f"{colab}\n{kaggle}"):
        assert translation.is_badges(block) and not translation.translatable(block)
    for block in (f"Open it: {colab} {kaggle}", f"{kaggle} or download it.", "Colab and Kaggle"):
        assert not translation.is_badges(block) and translation.translatable(block)


# ----------------------------------------------------------------------------- extract and build


def test_round_trip_copies_code_and_translates_markdown(tree: l10n.Tree) -> None:
    assert l10n.check(tree) == []
    translate_all(tree)
    l10n.build(tree)
    assert l10n.check(tree) == []
    english = nbformat.read(tree.notebooks / "en" / "01_alpha.ipynb", as_version=4)
    german_path = tree.localized("de", "01_alpha")
    german = nbformat.read(german_path, as_version=4)
    assert len(german.cells) == len(english.cells)
    for en, de in zip(english.cells, german.cells, strict=True):
        if en.cell_type == "code":
            assert de == en  # source, tags and metadata, by construction
    assert german.cells[0].source.startswith("# Alfa notebook ✓\n\n[![Open In Colab]")
    assert paths.colab_url(german_path, tree.root).endswith("notebooks/de/01_alpha.ipynb")
    assert paths.colab_url(german_path, tree.root) in german.cells[0].source
    assert f"{paths.badges(german_path, tree.root)}\n" in german.cells[0].source
    assert paths.kaggle_url(german_path, tree.root).endswith(
        "/blob/main/notebooks/de/01_alpha.ipynb"
    )
    assert "Alfa shows `tf.device` and links to [beta](02_beta.ipynb). ✓" in german.cells[0].source
    # Italian is untranslated: English text, Italian badge.
    italian = nbformat.read(tree.localized("it", "01_alpha"), as_version=4)
    assert italian.cells[3] == english.cells[3]
    assert "notebooks/it/01_alpha.ipynb" in italian.cells[0].source
    assert paths.kaggle_url(tree.localized("it", "01_alpha"), tree.root) in italian.cells[0].source
    # The build wrote each language's index, with the translated titles.
    index = (tree.notebooks / "de" / "README.md").read_text(encoding="utf-8")
    assert index == indexes.language_index(tree.root, "de")
    assert "| 1 | [Alfa notebook ✓](01_alpha.ipynb) |" in index
    assert "| 1 | [Alpha notebook](01_alpha.ipynb) |" in (
        tree.notebooks / "it" / "README.md"
    ).read_text(encoding="utf-8")
    # The build's output is in nbcheck's canonical form.
    text = german_path.read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=4)
    assert (
        notebook_file.dumps(notebook_file.normalize(nb, paths.ROOT / "notebooks/de/01_alpha.ipynb"))
        == text
    )


def test_code_in_markdown_fences_is_never_a_message_and_stays_english(tree: l10n.Tree) -> None:
    found = [m.msgid for m in l10n.messages(tree.notebooks / "en" / "01_alpha.ipynb")]
    assert "Run this:" in found and not any("nox -s tests" in msgid for msgid in found)
    # A catalog that still translates the fence (written before this rule) changes nothing.
    fence = FENCE.split("\n\n", 1)[1]
    path = tree.catalog("de", "01_alpha")
    po = l10n.read_catalog(path, tree)
    po.append(polib.POEntry(msgid=fence, msgstr=fence.replace("tests", "Tests")))
    path.write_text(l10n.serialize(po), encoding="utf-8")
    assert any("out of date" in line for line in l10n.check(tree, ["de"]))
    l10n.build(tree)
    german = tree.localized("de", "01_alpha").read_text(encoding="utf-8")
    assert "nox -s tests" in german and "nox -s Tests" not in german


def test_extract_is_idempotent(tree: l10n.Tree) -> None:
    translate_all(tree)
    before = {path: path.read_text(encoding="utf-8") for path in tree.catalogs("de")}
    assert l10n.extract(tree) == ["catalogs up to date"]
    assert {path: path.read_text(encoding="utf-8") for path in tree.catalogs("de")} == before


def test_changed_english_fails_check_until_extract_translate_build(tree: l10n.Tree) -> None:
    translate_all(tree)
    l10n.build(tree)
    set_english_block(tree, "02_beta", "Beta places `a`", "Beta now places `a`")
    found = l10n.check(tree, ["de"])
    assert any(
        "notebooks/de/po/02_beta.po is out of date with notebooks/en/02_beta.ipynb" in line
        and "02_beta.ipynb:cell-003:0" in line
        for line in found
    ), found
    assert any("notebooks/de/02_beta.ipynb: cell-003 (markdown) differs" in p for p in found)

    l10n.extract(tree)
    found = l10n.check(tree, ["de"])
    assert not any("out of date" in line for line in found)
    assert any("cell-003 (markdown) differs" in line for line in found)  # not rebuilt yet

    l10n.build(tree)  # the fuzzy translation is not used: English until someone translates
    assert l10n.check(tree) == []
    german = nbformat.read(tree.localized("de", "02_beta"), as_version=4)
    assert german.cells[3].source == "Beta now places `a` on `/GPU:0`."

    translate_all(tree)
    assert any("cell-003 (markdown) differs" in line for line in l10n.check(tree))
    l10n.build(tree)
    assert l10n.check(tree) == []
    german = nbformat.read(tree.localized("de", "02_beta"), as_version=4)
    assert german.cells[3].source == "Bet now places `a` on `/GPU:0`. ✓"


def test_hand_edited_code_cell_in_localized_notebook_fails_check(tree: l10n.Tree) -> None:
    path = tree.localized("it", "02_beta")
    nb = nbformat.read(path, as_version=4)
    nb.cells[4].source = "a = 2  # corretto"
    path.write_text(notebook_file.dumps(nb), encoding="utf-8")
    found = l10n.check(tree)
    assert found == [
        "notebooks/it/02_beta.ipynb: cell-004 (code) differs from notebooks/en/02_beta.ipynb: "
        "code, tags, metadata and outputs are copied from English; edit the English notebook; "
        "run `python -m tools.l10n build` to rewrite it"
    ]
    assert l10n.main(["check", "--root", str(tree.root)]) == 1
    l10n.build(tree)
    assert l10n.check(tree) == []


def test_changed_message_keeps_old_translation_as_fuzzy_with_previous_msgid(
    tree: l10n.Tree,
) -> None:
    translate_all(tree)
    set_english_block(tree, "02_beta", "Beta places `a`", "Beta now places `a`")
    log = l10n.extract(tree, ["de"])
    assert "notebooks/de/po/02_beta.po: updated: 0 new, 1 fuzzy, 0 obsolete, 7 messages" in log
    entry = catalog(tree, "de", "02_beta").find("Beta now places `a` on `/GPU:0`.")
    assert entry.fuzzy
    assert entry.previous_msgid == "Beta places `a` on `/GPU:0`."
    assert entry.msgstr == "Bet places `a` on `/GPU:0`. ✓"
    assert entry.occurrences == [("02_beta.ipynb:cell-003", "0")]
    text = tree.catalog("de", "02_beta").read_text(encoding="utf-8")
    assert '#, fuzzy\n#| msgid "Beta places `a` on `/GPU:0`."\n' in text
    # Changed again before anyone translated: the previous English stays the one translated.
    set_english_block(tree, "02_beta", "Beta now places", "Beta today places")
    l10n.extract(tree, ["de"])
    entry = catalog(tree, "de", "02_beta").find("Beta today places `a` on `/GPU:0`.")
    assert entry.fuzzy and entry.previous_msgid == "Beta places `a` on `/GPU:0`."
    assert l10n.counts(tree, ["de"])[1].fuzzy == 1


def test_removed_message_becomes_obsolete_and_comes_back(tree: l10n.Tree) -> None:
    translate_all(tree)
    set_english_block(tree, "01_alpha", "Run this:\n\n", "")
    log = l10n.extract(tree, ["de"])
    assert "notebooks/de/po/01_alpha.po: updated: 0 new, 0 fuzzy, 1 obsolete, 8 messages" in log
    po = catalog(tree, "de", "01_alpha")
    assert [(e.msgid, e.msgstr) for e in po.obsolete_entries()] == [("Run this:", "Run this: ✓")]
    assert '#~ msgid "Run this:"\n#~ msgstr "Run this: ✓"\n' in tree.catalog(
        "de", "01_alpha"
    ).read_text(encoding="utf-8")
    # Untranslated messages that leave English are dropped, not kept as obsolete.
    assert catalog(tree, "it", "01_alpha").obsolete_entries() == []
    set_english_block(tree, "01_alpha", "```bash", "Run this:\n\n```bash")
    l10n.extract(tree, ["de"])
    entry = catalog(tree, "de", "01_alpha").find("Run this:")
    assert entry.msgstr == "Run this: ✓" and not entry.fuzzy and not entry.obsolete


def test_new_notebook_gets_catalogs_and_missing_ones_fail_check(tree: l10n.Tree) -> None:
    write(tree.root, "notebooks/en/03_gamma.ipynb", notebook())
    found = l10n.check(tree)
    assert found == [
        "notebooks/de/po/03_gamma.po is missing for notebooks/en/03_gamma.ipynb; run "
        "`python -m tools.l10n extract` then build",
        "notebooks/it/po/03_gamma.po is missing for notebooks/en/03_gamma.ipynb; run "
        "`python -m tools.l10n extract` then build",
    ]
    l10n.extract(tree)
    found = l10n.check(tree)
    assert found == [
        "notebooks/de/03_gamma.ipynb is missing; run `python -m tools.l10n build`",
        "notebooks/it/03_gamma.ipynb is missing; run `python -m tools.l10n build`",
    ]
    l10n.build(tree)
    fix_readme(tree.root)
    assert l10n.check(tree) == []


# ----------------------------------------------------------------------------- bad input


def test_po_syntax_error_names_file_and_line(tree: l10n.Tree, capsys) -> None:
    path = tree.catalog("de", "02_beta")
    lines = path.read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(lines) if line.startswith('msgstr ""') and i > 5)
    lines[number] = 'msgstr "ein "kaputtes" Zitat"'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(
        l10n.L10nError, match=rf"^notebooks/de/po/02_beta.po:{number + 1}: PO syntax"
    ):
        l10n.read_catalog(path, tree)
    found = l10n.check(tree)
    assert any(
        line.startswith(f"notebooks/de/po/02_beta.po:{number + 1}: PO syntax") for line in found
    )
    assert l10n.main(["build", "--root", str(tree.root)]) == 1
    error = capsys.readouterr().err
    assert (
        f"notebooks/de/po/02_beta.po:{number + 1}: PO syntax error: unescaped double quote" in error
    )


def test_translation_that_breaks_a_code_span_or_a_link_is_reported_and_not_built(
    tree: l10n.Tree,
) -> None:
    path = tree.catalog("de", "01_alpha")
    po = l10n.read_catalog(path, tree)
    po.find(
        TITLE.split("\n\n")[2]
    ).msgstr = "Alfa zeigt `tf.Device` und verweist auf [Beta](02_beta.ipynb)."
    po.find("Run this:").msgstr = "Führen Sie das aus, siehe [hier](03_missing.ipynb):"
    path.write_text(l10n.serialize(po), encoding="utf-8")
    found = l10n.check(tree, ["de"])
    assert len(found) == 2
    first, second = sorted(found, key=lambda line: "cell-005" in line)
    assert (
        first.startswith("notebooks/de/po/01_alpha.po:") and "(01_alpha.ipynb:cell-000:2)" in first
    )
    assert (
        "code spans differ from the English: missing `tf.device`; not in the English `tf.Device`"
        in first
    )
    assert "(01_alpha.ipynb:cell-005:0)" in second
    assert "link targets differ from the English: not in the English 03_missing.ipynb" in second
    l10n.build(tree)  # broken translations fall back to English
    german = nbformat.read(tree.localized("de", "01_alpha"), as_version=4)
    assert "Alpha shows `tf.device`" in german.cells[0].source
    assert german.cells[5].source.startswith("Run this:")


def test_translation_that_breaks_markdown_structure_is_reported() -> None:
    english = "* one `a`,\n* two `b`."
    assert l10n.translation_problems(english, "* eins `a`,\n* zwei `b`.") == []
    assert l10n.translation_problems(english, "* eins `a`, zwei `b`.") == [
        "markdown structure: list items 1, English 2"
    ]
    assert l10n.translation_problems("## Summary", "# Zusammenfassung") == [
        "markdown structure: headings ['#'], English ['##']"
    ]
    table = "| a | b |\n| --- | --- |\n| `x` | y |"
    assert l10n.translation_problems(table, "| a | b |\n| --- | --- |\n| `x` | y | z |") == [
        "markdown structure: table cells per row [3, 3, 4], English [3, 3, 3]"
    ]


def test_translation_that_changes_indentation_blank_lines_or_fences_is_reported() -> None:
    assert l10n.translation_problems("  * one `a`", "  * eins `a`") == []
    assert l10n.translation_problems("  * one `a`", "* eins `a`") == [
        "markdown structure: indentation 0, English 2"
    ]
    fence = "```bash\na\n\nb\n```"
    assert l10n.translation_problems(fence, "```bash\na\nb\n```") == [
        "markdown structure: blank lines 0, English 1"
    ]
    assert l10n.translation_problems(fence, fence.replace("bash", "sh")) == [
        "markdown structure: fence lines ('```sh', '```'), English ('```bash', '```')"
    ]
    # Pipes in code spans and escaped pipes are counted as markdown-it-py splits table rows.
    table = "| a | b |\n| --- | --- |\n| `x` | y \\| z |"
    assert l10n.translation_problems(table, table.replace("y \\|", "y |")) == [
        "markdown structure: table cells per row [3, 3, 4], English [3, 3, 3]"
    ]


def test_a_block_indented_under_a_list_item_is_read_as_in_its_cell() -> None:
    english = "    Run `a` with [b](b.md)."  # four spaces: alone, it would be indented code
    assert l10n.translation_problems(english, "    Führen Sie `a` mit [b](b.md) aus.") == []
    assert l10n.translation_problems(english, "    Führen Sie a mit [b](c.md) aus.") == [
        "code spans differ from the English: missing `a`",
        "link targets differ from the English: missing b.md; not in the English c.md",
    ]


def test_catalog_for_a_deleted_notebook_is_an_error_unless_pruned(tree: l10n.Tree, capsys) -> None:
    (tree.notebooks / "en" / "02_beta.ipynb").unlink()
    with pytest.raises(l10n.L10nError, match="no English notebook in notebooks/en/ for: "):
        l10n.extract(tree)
    assert l10n.main(["extract", "--root", str(tree.root)]) == 1
    error = capsys.readouterr().err
    assert "notebooks/de/po/02_beta.po, notebooks/de/02_beta.ipynb" in error
    assert "extract --prune" in error
    assert any("notebooks/it/po/02_beta.po" in line for line in l10n.check(tree))
    log = l10n.extract(tree, prune=True)
    assert "notebooks/de/po/02_beta.po: removed (no English notebook)" in log
    assert not tree.catalog("it", "02_beta").exists()
    assert not tree.localized("it", "02_beta").exists()
    # The English alpha notebook still links to the deleted beta: only links complain.
    assert l10n.check(tree) == []
    fix_readme(tree.root)
    assert all("'02_beta.ipynb' does not resolve" in line for line in links.problems(tree.root))


def test_unknown_language_code_lists_the_available_ones(tree: l10n.Tree, capsys) -> None:
    for command in ("extract", "build", "check", "report"):
        assert l10n.main([command, "--lang", "xx", "--root", str(tree.root)]) == 1
        error = capsys.readouterr().err
        assert "no catalogs for language 'xx' (there is no notebooks/xx/po/)" in error
        assert "available: de, it" in error and "extract --add xx" in error
    with pytest.raises(l10n.L10nError, match="no Plural-Forms known for 'tlh'"):
        l10n.extract(tree, add="tlh")
    with pytest.raises(l10n.L10nError, match="not a language code"):
        l10n.extract(tree, add="../de")


def test_localized_folder_without_catalogs_fails_check(tree: l10n.Tree) -> None:
    write(tree.root, "notebooks/fr/01_alpha.ipynb", notebook())
    found = l10n.check(tree)
    assert found == [
        "notebooks/fr/ holds notebooks but no po/ catalogs: localized notebooks are built from "
        "catalogs (see CONTRIBUTING.md, Translations)"
    ]


# ----------------------------------------------------------------------------- report


def test_report_counts_and_require_complete(tree: l10n.Tree, capsys) -> None:
    translate_all(tree, "de", site=True)
    set_english_block(tree, "02_beta", "Beta places `a`", "Beta now places `a`")
    l10n.extract(tree)
    rows = {(row.lang, row.notebook): row for row in l10n.counts(tree)}
    assert (rows["de", "01_alpha"].translated, rows["de", "01_alpha"].total) == (9, 9)
    assert (rows["de", "02_beta"].translated, rows["de", "02_beta"].fuzzy) == (6, 1)
    assert rows["it", "02_beta"].untranslated == 7 and rows["it", "02_beta"].percent == 0
    assert l10n.main(["report", "--root", str(tree.root)]) == 0
    table = capsys.readouterr().out
    assert "| de | 01_alpha | 9 | 0 | 0 | 9 | 100% |" in table
    assert "| de | 02_beta | 6 | 1 | 0 | 7 | 86% |" in table
    sentences = len(site_sentences.messages())  # the site's own, in notebooks/<lang>/po/_site.po
    assert f"| de | _site | {sentences} | 0 | 0 | {sentences} | 100% |" in table
    assert f"| de | **all** | {15 + sentences} | 1 | 0 | {16 + sentences} | " in table
    assert l10n.main(["report", "--require-complete", "--root", str(tree.root)]) == 1
    assert "not complete: de/02_beta, it/01_alpha, it/02_beta, it/_site" in capsys.readouterr().err
    translate_all(tree, "de", site=True)
    assert (
        l10n.main(["report", "--lang", "de", "--require-complete", "--root", str(tree.root)]) == 0
    )


@pytest.mark.parametrize(
    ("msgstr", "extra"),
    [
        ("Hallo <script>alert(1)</script> Welt", "script, /script"),
        ("Hallo <img src=x onerror=alert(1)> Welt", "img"),
        ("Hallo <IFRAME width=1></iframe>", "iframe, /iframe"),
    ],
)
def test_check_rejects_raw_html_the_english_does_not_have(msgstr, extra):
    problems = l10n.translation_problems("Hello world", msgstr)
    assert problems == [f"HTML tags differ from the English: not in the English {extra}"]


def test_html_in_code_spans_or_in_the_english_itself_is_fine():
    assert l10n.translation_problems("Use `<b>` here", "Nutze `<b>` hier") == []
    assert l10n.translation_problems("A<br>B", "A<br>B") == []
    assert l10n.translation_problems("A<br>B", "A<br/>B") == []  # the same tag


def test_html_tags_are_counted_outside_code_only():
    code = "Use `<i>` and\n```html\n<b>x</b>\n```"
    assert markdown.read(code).tags == {}
    assert markdown.read("<div align='center'>\n<img src='a.png'>\n</div>").tags == {
        "div": 1,
        "img": 1,
        "/div": 1,
    }
    assert l10n.translation_problems("A <b>B</b>", "A <i>B</i>") == [
        "HTML tags differ from the English: missing b, /b; not in the English i, /i"
    ]


# ----------------------------------------------------------------------------- glossary

CHECKED = """\
# Glossar

## Terms

| English | Deutsch | notes |
| --- | --- | --- |
| alpha | Alfa | not checked here |

## Checked terms

| English | accepted | avoid |
| --- | --- | --- |
| notebook | Heft / Kapitel | Notizbuch |
| places | | platziert dumm |
"""


def test_a_checked_glossary_term_must_be_translated_one_way(tree: l10n.Tree) -> None:
    (tree.notebooks / "de" / "po" / "GLOSSARY.md").write_text(CHECKED, encoding="utf-8")
    translate_all(tree)
    l10n.build(tree)
    # "# Alpha notebook" (the title of both notebooks) became "# Alfa notebook ✓".
    found = [line for line in l10n.check(tree, ["de"]) if "glossary" in line]
    assert len(found) == 2, found
    assert "01_alpha.po" in found[0] and "cell-000:0" in found[0] and "02_beta.po" in found[1]
    assert "the English says “notebook”" in found[0] and "“Heft” or “Kapitel”" in found[0]
    assert "GLOSSARY.md:13" in found[0]
    # One accepted form (any case, any inflection that contains it) is enough.
    for stem, title in (("01_alpha", "# Das Alfa-Heft"), ("02_beta", "# Alfa-KAPITEL")):
        path = tree.catalog("de", stem)
        po = l10n.read_catalog(path, tree)
        po.find("# Alpha notebook").msgstr = title
        path.write_text(l10n.serialize(po), encoding="utf-8")
    assert not [line for line in l10n.check(tree, ["de"]) if "glossary" in line]
    # An avoided form fails wherever it appears; a code span or a link target does not count.
    beta = tree.catalog("de", "02_beta")
    po = l10n.read_catalog(beta, tree)
    po.find("Beta places `a` on `/GPU:0`.").msgstr = "Bet platziert dumm `a` auf `/GPU:0`."
    beta.write_text(l10n.serialize(po), encoding="utf-8")
    found = [line for line in l10n.check(tree, ["de"]) if "glossary" in line]
    assert len(found) == 1 and "“platziert dumm” is a form to avoid for “places”" in found[0]
    assert "use another wording" in found[0]
    po.find("Beta places `a` on `/GPU:0`.").msgstr = "Bet setzt `a` auf `/GPU:0`."
    beta.write_text(l10n.serialize(po), encoding="utf-8")
    assert not [line for line in l10n.check(tree, ["de"]) if "glossary" in line]


def test_a_glossary_term_matches_words_not_parts_of_words_or_code() -> None:
    from tools.l10n import glossary

    term = glossary.Term("core", ("Kern",), (), 1)
    assert term.in_english("two cores per chip") and term.in_english("One TPU core.")
    assert not term.in_english("a TensorCore") and not term.in_english("the core-count")
    assert not glossary.problems([term], "Use `core` here.", "Nutzen Sie `core`.")
    assert glossary.problems([term], "One core.", "Ein Chip.")
    server = glossary.Term("parameter server", ("servidor de parámetros",), ("servidor  param",), 2)
    assert server.in_english("a parameter\nserver holds") and not server.in_english("a parameter")
    assert not glossary.problems([server], "One parameter server.", "Un servidor de\nparámetros.")
    assert glossary.problems([server], "Hi.", "El servidor\nparam.")  # avoided, across lines
    # Fenced code, link targets and bare URLs are no prose; link text, emphasis and HTML text are.
    for english in ("Run:\n```\ncore = 1\n```", "[Docs](core.md).", "See https://x.example/core."):
        assert not glossary.problems([term], english, "Nichts.")
    for english in ("[The core](a.md).", "One *core*.", "<p>One core.</p>"):
        assert glossary.problems([term], english, "Nichts."), english


def test_a_malformed_checked_table_is_reported_with_its_line(tree: l10n.Tree) -> None:
    bad = CHECKED.replace("| places | | platziert dumm |", "| places | |")
    (tree.notebooks / "de" / "po" / "GLOSSARY.md").write_text(bad, encoding="utf-8")
    found = l10n.check(tree, ["de"])
    bad_row = [line for line in found if "GLOSSARY.md:14: a checked term needs three" in line]
    assert len(bad_row) == 1, found  # once for the language, not once per catalog
    assert bad_row[0].startswith("notebooks/de/po/GLOSSARY.md:14")


@pytest.mark.parametrize(
    ("broken", "why"),
    [
        ('msgstr "ein \\q Escape"', "invalid control sequence"),
        ('msgstr "nicht beendet', "end-of-line within string"),
        ('msgstr "ein Backslash am Ende\\"', "end-of-line within string"),
        ('msgstr "Zeilenende\\n"', "'msgid' and 'msgstr' entries do not both end with"),
    ],
    ids=["bad-escape", "unterminated", "escaped-last-quote", "newline-at-end"],
)
def test_po_entries_msgfmt_refuses_are_refused_with_their_line(
    tree: l10n.Tree, broken: str, why: str
) -> None:
    # polib accepts these (and would corrupt the text); `msgfmt --check` refuses them.
    path = tree.catalog("de", "02_beta")
    lines = path.read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(lines) if line.startswith('msgstr ""') and i > 5)
    lines[number] = broken
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(l10n.L10nError, match=rf"^notebooks/de/po/02_beta.po:{number + 1}: {why}"):
        l10n.read_catalog(path, tree)
    assert l10n.main(["check", "--root", str(tree.root)]) == 1


def test_a_po_file_that_is_not_utf8_or_a_folder_names_the_file(tree: l10n.Tree) -> None:
    path = tree.catalog("de", "02_beta")
    path.write_bytes(b"\xff\xfe not UTF-8")
    with pytest.raises(l10n.L10nError, match=r"^notebooks/de/po/02_beta.po: not UTF-8 text"):
        l10n.read_catalog(path, tree)
    path.unlink()
    path.mkdir()
    with pytest.raises(l10n.L10nError, match=r"^notebooks/de/po/02_beta.po: cannot be read \(Is a"):
        l10n.read_catalog(path, tree)


@pytest.mark.parametrize("command", ["build", "check", "extract", "report"])
def test_a_root_without_notebooks_says_so_and_fails(tmp_path: Path, capsys, command) -> None:
    # Before: `l10n build` on an empty root printed "localized notebooks up to date", exit 0.
    assert l10n.main([command, "--root", str(tmp_path)]) == 1
    assert "error: no English notebooks in" in capsys.readouterr().err
    with pytest.raises(l10n.L10nError, match="no English notebooks"):
        l10n.build(l10n.Tree(tmp_path))


def test_build_without_any_language_says_so(tree: l10n.Tree) -> None:
    for lang in ("de", "it"):
        for path in (tree.notebooks / lang / "po").iterdir():
            path.unlink()
        (tree.notebooks / lang / "po").rmdir()
    with pytest.raises(l10n.L10nError, match="no language has catalogs.*extract --add LANG"):
        l10n.build(tree)


@pytest.mark.parametrize("escape", ["\\033[1m", "\\a", "\\x1b", "\\101"])
def test_an_escape_the_build_would_not_decode_is_refused_with_its_line(
    tree: l10n.Tree, escape: str
) -> None:
    # Before: `\033` and `\a` passed `l10n check` (msgfmt accepts them) and the built notebook
    # showed a backslash and digits, since polib leaves them as they are.
    path = tree.catalog("de", "02_beta")
    lines = path.read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(lines) if line.startswith('msgstr ""') and i > 5)
    lines[number] = f'msgstr "Bet {escape} fett"'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(
        l10n.L10nError, match=rf"^notebooks/de/po/02_beta.po:{number + 1}: the escape"
    ):
        l10n.read_catalog(path, tree)
    assert l10n.main(["check", "--root", str(tree.root)]) == 1
    lines[number] = 'msgstr "Bet \\\\033 \\t \\n fett"'  # an escaped backslash: the text \033
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    texts = [entry.msgstr for entry in l10n.read_catalog(path, tree)]
    assert "Bet \\033 \t \n fett" in texts  # read, and decoded as gettext would


def test_a_glossary_that_is_not_utf8_is_named(tree: l10n.Tree) -> None:
    # Before: a raw UnicodeDecodeError from `l10n check` and `l10n build`.
    (tree.notebooks / "de" / "po" / "GLOSSARY.md").write_bytes(b"| caf\xe9 | x | y |\n")
    found = l10n.check(tree, ["de"])
    assert any(
        line.startswith("notebooks/de/po/GLOSSARY.md: not UTF-8 text (byte 5") for line in found
    ), found
    assert any("GLOSSARY.md: not UTF-8" in line for line in l10n.build(tree, ["de"]))


# ----------------------------------------------------------------------------- gettext


def snapshot(root: Path) -> dict[Path, bytes]:
    """Every file under `root` and its bytes."""
    return {path: path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.mark.parametrize(
    "argv",
    [["extract"], ["extract", "--prune"], ["extract", "--add", "ja"], ["build"], ["check"]],
)
def test_without_gettext_a_command_says_what_to_install_and_touches_nothing(
    tree: l10n.Tree, tmp_path_factory: pytest.TempPathFactory, monkeypatch, capsys, argv
) -> None:
    (tree.notebooks / "en" / "02_beta.ipynb").unlink()  # `--prune` would delete its catalogs
    set_english_block(tree, "01_alpha", "Run this:", "Run this now:")  # extract would merge
    before = snapshot(tree.root)
    monkeypatch.setenv("PATH", str(tmp_path_factory.mktemp("empty-path")))
    assert l10n.main([*argv, "--root", str(tree.root)]) == 1
    error = capsys.readouterr().err
    assert error == (
        "error: msgmerge not found: install GNU gettext (Debian/Ubuntu: apt-get install gettext; "
        "macOS: brew install gettext)\n"
    )
    assert snapshot(tree.root) == before
    with pytest.raises(l10n.L10nError, match="^msgmerge not found: install GNU gettext"):
        l10n.extract(tree, prune=True)
    assert snapshot(tree.root) == before


def test_without_msgfmt_a_catalog_is_not_read(tree: l10n.Tree, monkeypatch, capsys) -> None:
    which = catalogs.shutil.which
    monkeypatch.setattr(
        catalogs.shutil, "which", lambda name: None if name == "msgfmt" else which(name)
    )
    with pytest.raises(l10n.L10nError, match=r"^msgfmt not found: install GNU gettext \(Debian"):
        catalog(tree, "de", "01_alpha")
    assert l10n.main(["report", "--root", str(tree.root)]) == 1
    assert capsys.readouterr().err.startswith("error: msgfmt not found: install GNU gettext")


def test_a_gettext_program_that_hangs_is_stopped(
    tree: l10n.Tree, tmp_path_factory: pytest.TempPathFactory, monkeypatch
) -> None:
    folder = tmp_path_factory.mktemp("slow-gettext")
    for name in ("msgmerge", "msgfmt"):
        (folder / name).write_text(f"#!/bin/sh\nexec {shutil.which('sleep')} 5\n", encoding="utf-8")
        (folder / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setattr(catalogs, "TIMEOUT_S", 0.2)
    with pytest.raises(
        l10n.L10nError, match=r"^notebooks/de/po/01_alpha.po: msgfmt did not finish"
    ):
        catalog(tree, "de", "01_alpha")
    found = l10n.messages(tree.notebooks / "en" / "01_alpha.ipynb")
    with pytest.raises(l10n.L10nError, match=r"01_alpha.po: msgmerge did not finish in 0.2 s"):
        catalogs.update_catalog(catalogs.new_catalog("de", "01_alpha"), found, "de", "01_alpha")


def test_extract_follows_english_order_keeps_comments_and_completes_the_header(
    tree: l10n.Tree,
) -> None:
    translate_all(tree)
    path = tree.catalog("de", "01_alpha")
    po = l10n.read_catalog(path, tree)
    po.find("Run this:").tcomment = "Imperativ, Sie-Form"
    po.find("## Summary").tcomment = "wie in allen Heften"
    del po.metadata["Language"], po.metadata["Plural-Forms"]
    po.metadata["Last-Translator"] = "Ada <ada@example.com>"
    path.write_text(l10n.serialize(po), encoding="utf-8")
    long = "A long line " + "that is not wrapped " * 8 + "at all."
    set_english_block(tree, "01_alpha", "## Summary", f"## Summary again\n\n{long}\n\nRun this:")
    log = l10n.extract(tree, ["de"])
    assert "notebooks/de/po/01_alpha.po: updated: 1 new, 1 fuzzy, 0 obsolete, 10 messages" in log
    po = catalog(tree, "de", "01_alpha")
    english = [m.msgid for m in l10n.messages(tree.notebooks / "en" / "01_alpha.ipynb")]
    assert [entry.msgid for entry in po] == list(dict.fromkeys(english))
    twice = po.find("Run this:")  # one message, both places
    assert twice.occurrences == [("01_alpha.ipynb:cell-005", "0"), ("01_alpha.ipynb:cell-006", "2")]
    assert twice.tcomment == "Imperativ, Sie-Form" and not twice.fuzzy
    changed = po.find("## Summary again")
    assert changed.fuzzy and changed.previous_msgid == "## Summary"
    assert changed.tcomment == "wie in allen Heften" and changed.msgstr == "## Summary ✓"
    assert po.metadata["Language"] == "de" and po.metadata["Plural-Forms"].startswith("nplurals=2")
    assert po.metadata["Last-Translator"] == "Ada <ada@example.com>"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Deutsch (de) translation of notebooks/en/01_alpha.ipynb")
    assert "#: 01_alpha.ipynb:cell-005:0 01_alpha.ipynb:cell-006:2\n" in text
    assert f'msgid "{long}"\n' in text  # no wrapping
    assert "POT-Creation-Date" not in text and "PO-Revision-Date" not in text
    assert l10n.extract(tree, ["de"]) == ["catalogs up to date"]
    assert not [line for line in l10n.check(tree, ["de"]) if "out of date" in line]
