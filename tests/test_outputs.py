"""A tool clears or replaces only the folders it made (tools/outputs.py), so that a mistyped
`--out` or `--clean` never deletes anyone's files; the site build is the main user."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tools import outputs

ROOT = Path(__file__).resolve().parents[1]


def mine(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("keep me")
    return folder


def test_claim_marks_a_new_folder_and_clear_deletes_only_that(tmp_path: Path) -> None:
    made = outputs.claim(tmp_path / "new" / "out", "tools.x")
    assert outputs.owner(made) == "tools.x"
    (made / "page.html").write_text("x")
    assert outputs.claim(made, "tools.x") == made  # its own folder, again
    outputs.clear(made, "tools.x")
    assert not made.exists()
    outputs.clear(tmp_path / "absent", "tools.x")  # nothing to do


def test_an_empty_folder_the_tool_did_not_make_is_refused(tmp_path: Path) -> None:
    # Before: claimed; the next `clear` deleted it with whatever a user had put there since.
    empty = tmp_path / "empty"
    empty.mkdir()
    for action in (outputs.clear, outputs.claim):
        with pytest.raises(outputs.NotOwnedError, match="is empty, but made by someone else"):
            action(empty, "tools.x")
    assert empty.is_dir() and not any(empty.iterdir())


def test_an_output_folder_that_holds_an_input_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "nbs" / "en" / "x.ipynb"
    outputs.refuse_inputs(tmp_path / "out", [source])  # elsewhere: fine
    for folder in (tmp_path / "nbs", tmp_path, tmp_path / "nbs" / "en"):
        with pytest.raises(outputs.NotOwnedError, match="holds the input .*x.ipynb"):
            outputs.refuse_inputs(folder, [source])


@pytest.mark.parametrize("marked_by", [None, "tools.other"])
def test_a_folder_with_files_and_no_mark_of_this_tool_is_refused(
    tmp_path: Path, marked_by: str | None
) -> None:
    folder = mine(tmp_path / "build")
    if marked_by:
        (folder / outputs.MARK).write_text(marked_by)
    for action in (outputs.clear, outputs.claim):
        with pytest.raises(outputs.NotOwnedError, match=r"was not made by tools\.x .*nothing was"):
            action(folder, "tools.x")
    assert (folder / "notes.txt").read_text() == "keep me"


def test_a_file_where_a_folder_is_expected_is_refused(tmp_path: Path) -> None:
    (tmp_path / "site").write_text("a file")
    with pytest.raises(outputs.NotOwnedError, match="is a file, not a folder"):
        outputs.clear(tmp_path / "site", "tools.x")
    assert (tmp_path / "site").read_text() == "a file"


def test_replace_puts_a_fully_written_folder_in_place(tmp_path: Path) -> None:
    target = outputs.claim(tmp_path / "site", "tools.x")
    (target / "old.html").write_text("old")
    staged = outputs.staging(target)
    (staged / "new.html").write_text("new")
    outputs.replace(staged, target, "tools.x")
    assert sorted(p.name for p in target.iterdir()) == [outputs.MARK, "new.html"]
    assert not staged.exists()
    user = mine(tmp_path / "user")
    staged = outputs.staging(user)
    with pytest.raises(outputs.NotOwnedError):
        outputs.replace(staged, user, "tools.x")
    assert not staged.exists() and (user / "notes.txt").exists()


@pytest.mark.parametrize("flag", ["--src", "--out"])
def test_site_clean_refuses_a_folder_it_did_not_make(tmp_path: Path, flag: str) -> None:
    # Before: `--clean` emptied build/, executed notebooks included.
    folder = mine(tmp_path / "build")
    other = "--out" if flag == "--src" else "--src"
    command = [sys.executable, "-m", "tools.site", "sources", "--clean", flag, str(folder)]
    command += [other, str(tmp_path / "other")]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 1, result.stderr
    assert f"error: {folder} was not made by tools.site" in result.stderr
    assert (folder / "notes.txt").read_text() == "keep me"
