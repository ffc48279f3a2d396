"""The repository tools as a user meets them: each `python -m tools.X` has a command line with
`--help` or says it has none (never a silent exit 0), and a broken notebook file is named, with
the others still checked or run."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools import languages, notebook, paths
from tools.ci import nbcheck
from tools.l10n import index
from tools.runs import notebooks

ROOT = Path(__file__).resolve().parents[1]


def _dotted(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


MODULES = sorted(
    _dotted(p) for p in (ROOT / "tools").rglob("*.py") if p.stem not in ("__init__", "__main__")
)
WITH_COMMAND_LINE = [
    *(m for m in MODULES if "def main(" in (ROOT / f"{m.replace('.', '/')}.py").read_text()),
    *(_dotted(p.parent) for p in (ROOT / "tools").rglob("__main__.py")),
]


def run_tool(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("module", sorted({*MODULES, *WITH_COMMAND_LINE}))
def test_every_tool_has_help_or_says_it_has_no_command_line(module: str) -> None:
    if module in WITH_COMMAND_LINE:
        result = run_tool(module, "--help")
        assert result.returncode == 0 and result.stdout.startswith("usage:"), result.stderr
    else:
        result = run_tool(module)
        assert result.returncode == 1
        assert f"{module.rsplit('.', 1)[-1]} has no command line" in result.stderr


BROKEN = {
    "98_folder.ipynb": None,  # a folder where a notebook is expected
    "97_not_json.ipynb": b"not json\n",
    "96_latin1.ipynb": b'{"cells": "\xe9"}',
    "95_not_a_notebook.ipynb": b'{"cells": 3}',
}


@pytest.fixture
def broken(tmp_path: Path) -> list[Path]:
    paths = []
    for name, content in BROKEN.items():
        path = tmp_path / "en" / name
        path.parent.mkdir(exist_ok=True)
        path.mkdir() if content is None else path.write_bytes(content)
        paths.append(path)
    return paths


def test_nbcheck_names_each_broken_file_and_checks_the_others(broken: list[Path]) -> None:
    good = paths.NOTEBOOKS / "en" / "02_device_placement.ipynb"
    found = [line for path in [*broken, good] for line in nbcheck.problems(path)]
    assert [line.split(" ")[0] for line in found] == [str(path) for path in broken]
    assert "is a folder, not a notebook" in found[0]
    assert "is not a Jupyter notebook" in found[1] and "git checkout" in found[1]
    assert "is not UTF-8 text" in found[2]
    assert "is not a Jupyter notebook" in found[3]


GERMAN = paths.NOTEBOOKS / "de" / "02_device_placement.ipynb"


def badge_problems(monkeypatch, old: str, new: str) -> list[str]:
    """What nbcheck says of the German notebook 02 with `old` replaced by `new` in its text."""
    text = GERMAN.read_text(encoding="utf-8")
    assert old in text
    monkeypatch.setattr(nbcheck, "read_text", lambda path: text.replace(old, new))
    return nbcheck.problems(GERMAN)


KAGGLE_URL = paths.kaggle_url(GERMAN)
COLAB_URL = paths.colab_url(GERMAN)
ENGLISH = paths.NOTEBOOKS / "en" / "02_device_placement.ipynb"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (" " + paths.kaggle_badge(GERMAN), "", "cell 0 has no Open in Kaggle badge"),
        (
            KAGGLE_URL,
            paths.kaggle_url(ENGLISH),
            f"the Kaggle badge points to {paths.kaggle_url(ENGLISH)}, expected {KAGGLE_URL}",
        ),
        (
            paths.KAGGLE_BADGE_IMAGE,
            "https://example.com/k.svg",
            "the Kaggle badge shows https://example.com/k.svg, expected "
            + paths.KAGGLE_BADGE_IMAGE,
        ),
        (paths.badge(GERMAN) + " ", "", "cell 0 has no Open in Colab badge"),
        (
            COLAB_URL,
            paths.colab_url(ENGLISH),
            f"the Colab badge points to {paths.colab_url(ENGLISH)}, expected {COLAB_URL}",
        ),
    ],
)
def test_nbcheck_reports_a_missing_or_wrong_badge(monkeypatch, old, new, message) -> None:
    assert nbcheck.problems(GERMAN) == []
    found = badge_problems(monkeypatch, old, new)
    assert found[0] == f"{GERMAN}: {message}", found
    # `--fix` (normalize) writes both badges again, on one line, from the Colab badge.
    if "no Open in Colab" not in message:
        nb = notebook.normalize(notebook.read(GERMAN, notebook.read_text(GERMAN)), GERMAN)
        assert notebook.dumps(nb) == GERMAN.read_text(encoding="utf-8")


def test_nbcheck_fix_adds_the_kaggle_badge_after_the_colab_badge() -> None:
    nb = notebook.read(GERMAN)
    title = nb.cells[0].source
    nb.cells[0].source = title.replace(" " + paths.kaggle_badge(GERMAN), "")
    assert paths.badge(GERMAN) in nb.cells[0].source and "Kaggle" not in nb.cells[0].source
    assert notebook.normalize(nb, GERMAN).cells[0].source == title
    # A Kaggle badge on a line of its own, even a wrong one, joins the Colab badge's line.
    nb.cells[0].source = title.replace(" [![Open In Kaggle]", "\n\n[![Open In Kaggle]").replace(
        KAGGLE_URL, "https://kaggle.com/kernels/welcome?src=x"
    )
    assert notebook.normalize(nb, GERMAN).cells[0].source == title
    assert f"{paths.badges(GERMAN)}\n" in title


def exercise_problems(lang: str, drop) -> list[str]:
    """What nbcheck says of notebook 09 in folder `lang` without the cells `drop` selects."""
    cells = notebook.read(paths.NOTEBOOKS / "en" / "09_cloud_tpu_jobs.ipynb").cells
    return nbcheck.missing_exercises(Path(lang, "09.ipynb"), [c for c in cells if not drop(c)])


def test_nbcheck_finds_the_exercises_and_solutions_of_an_english_notebook() -> None:
    assert exercise_problems("en", lambda cell: False) == []


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        (lambda cell: cell.source.startswith(nbcheck.SOLUTIONS), "needs a '## Exercises' and a"),
        (lambda cell: cell.source[:4] in ("# 1.", "# 2.", "# 3."), "with code cells before the"),
    ],
)
def test_nbcheck_asks_every_english_notebook_for_exercises_and_solutions(drop, message) -> None:
    problems = exercise_problems("en", drop)
    assert len(problems) == 1 and message in problems[0], problems


def test_nbcheck_leaves_the_exercise_headings_of_translations_to_their_translators() -> None:
    assert exercise_problems("de", lambda cell: cell.source.startswith(nbcheck.EXERCISES)) == []


def test_the_notebook_runner_goes_on_past_a_broken_notebook(broken: list[Path], capsys) -> None:
    files = [p for p in broken if p.is_file()]
    assert notebooks.main(["run", *map(str, files), "--out", str(broken[0].parent / "x")]) == 1
    out = capsys.readouterr().out
    assert out.count("FAILED") == len(files) and f"0 notebooks ran, {len(files)} failed" in out


def test_writefile_scripts_are_extracted_as_a_run_writes_them(tmp_path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%%writefile work/job.py\nimport os\n\nprint(os.sep)"),
        nbformat.v4.new_markdown_cell("%%writefile not_code.py\nno"),
        nbformat.v4.new_code_cell("%%writefile -a work/job.py\n\n\ndef f():\n    return 1"),
        nbformat.v4.new_code_cell("%%writefile {WORK_DIR}/other.py\nx = 1"),
        nbformat.v4.new_code_cell("%%writefile other.py\nx = 2  # written again: replaced"),
    ]
    path = tmp_path / "01_x.ipynb"
    nbformat.write(nb, path)
    scripts = nbcheck.writefile_scripts(path)
    assert scripts == {
        "job.py": "import os\n\nprint(os.sep)\n\n\ndef f():\n    return 1\n",
        "other.py": "x = 2  # written again: replaced\n",
    }
    written = nbcheck.extract_scripts([path], tmp_path / "out")
    assert sorted(p.relative_to(tmp_path) for p in written) == [
        Path("out/01_x/job.py"),
        Path("out/01_x/other.py"),
    ]


def test_the_notebooks_write_the_scripts_their_lessons_show() -> None:
    scripts = {p.stem: nbcheck.writefile_scripts(p) for p in paths.NOTEBOOKS.glob("en/*.ipynb")}
    assert set(scripts["07_multi_worker_training"]) == {"worker.py"}
    assert set(scripts["15_pytorch_xla"]) == {"mnist_torch.py", "train_data_parallel.py"}
    assert "def create_model" in scripts["15_pytorch_xla"]["mnist_torch.py"]  # the -a part


# ----------------------------------------------------------------------------- architecture

BASE = ("tools.paths", "tools.outputs", "tools.notebook", "tools.languages", "tools.phrases")
PACKAGES = ("tools.l10n", "tools.site", "tools.runs", "tools.ci")


def _is_module(root: Path, name: str) -> bool:
    where = root.joinpath(*name.split("."))
    return where.with_suffix(".py").is_file() or where.is_dir()


def imported(path: Path, root: Path) -> set[str]:
    """The tools modules a file imports, anywhere in it (top level or inside a function): for
    `from PACKAGE import NAME`, PACKAGE.NAME where that is a module, else PACKAGE."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if _is_module(root, name) else node.module)
    return {name for name in found if name == "tools" or name.startswith("tools.")}


def layering_problems(root: Path) -> list[str]:
    """Imports against the layers of tools/ (its docstring): the translation tooling and the
    site never import each other, and the base layer imports no package."""
    found = []
    for path in sorted((root / "tools").rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        for name in sorted(imported(path, root)):
            within = [p for p in PACKAGES if name == p or name.startswith(p + ".")]
            if module.startswith("tools.l10n") and name.startswith("tools.site"):
                found.append(f"{module} imports {name}: tools.l10n must not import tools.site")
            if module.startswith("tools.site") and name.startswith("tools.l10n"):
                found.append(f"{module} imports {name}: tools.site must not import tools.l10n")
            if module in BASE and within:
                found.append(f"{module} imports {name}: the base layer imports no package")
    return found


# The site translates the notebooks' markdown with the translation tooling's own function.
SITE_USES_L10N = {"tools.l10n.catalogs", "tools.l10n.translation"}


def test_the_tools_keep_their_layers() -> None:
    found = layering_problems(ROOT)
    allowed = [
        line
        for line in found
        if line.startswith("tools.site")
        and line.split(" imports ")[1].split(":")[0] in SITE_USES_L10N
    ]
    assert [line for line in found if line not in allowed] == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("l10n/cli.py", "from tools.site import pages\n", "tools.l10n must not import tools.site"),
        ("l10n/cli.py", "def f():\n    import tools.site.build\n", "must not import tools.site"),
        ("site/pages.py", "from tools.l10n import cli\n", "tools.site must not import tools.l10n"),
        ("phrases.py", "from tools.l10n import catalogs\n", "the base layer imports no package"),
        ("notebook.py", "from tools.ci import nbcheck\n", "the base layer imports no package"),
    ],
)
def test_an_import_across_the_layers_is_found(
    tmp_path: Path, module: str, source: str, expected: str
) -> None:
    path = tmp_path / "tools" / module
    path.parent.mkdir(parents=True)
    path.write_text(source, encoding="utf-8")
    assert any(expected in line for line in layering_problems(tmp_path))


def test_a_languages_file_is_read_into_languages() -> None:
    german = languages.get("de")
    assert (german.name, german.po, german.sphinx) == ("Deutsch", "de", "de")
    assert languages.get("zh-cn").po == "zh_CN" and languages.get("fr").glossary is None
    assert set(index.language_folders(ROOT)) <= set(languages.all_languages())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[language.de\nname = 1", "is not valid TOML"),
        ('[language.de]\nname = "Deutsch"\n', "missing keys ['plural_forms', 'po', 'sphinx']"),
        (
            '[language.de]\nname = "D"\nplural_forms = "p"\npo = "de"\nsphinx = "de"\nflag = "x"\n',
            "unknown keys ['flag']",
        ),
        ('[language.de]\nname = ""\nplural_forms = "p"\npo = "de"\nsphinx = "de"\n', "non-empty"),
        ('[language."Not a code"]\nname = "x"\n', "is not a folder code"),
        ("[other]\nx = 1\n", "expected only [language.CODE] tables"),
    ],
)
def test_a_malformed_languages_file_names_the_file_and_the_fix(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "languages.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(languages.LanguageError, match=re.escape(expected)) as error:
        languages.load(path)
    assert str(path) in str(error.value)


def test_an_unknown_language_names_the_file_and_the_fix() -> None:
    with pytest.raises(languages.LanguageError) as error:
        languages.get("tlh")
    message = str(error.value)
    assert "tools/languages.toml" in message and "add a [language.tlh] table" in message
