"""Folders the repository's tools write: each is marked by the tool that made it, and a tool
clears or replaces only a folder that carries its mark (or an empty one), so that a mistyped
`--out` or `--clean` never deletes a user's files.

    claim(folder, "tools.site")      # makes or adopts the folder; refuses someone else's
    clear(folder, "tools.site")      # deletes it, only if it carries that mark
    replace(staged, folder, tool)    # renames a fully written sibling into place
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

MARK = ".written-by"  # its text: the tool's module name


class NotOwnedError(RuntimeError):
    """A folder to clear or replace was not made by this tool; nothing was deleted."""


def owner(folder: Path) -> str | None:
    """The tool whose mark `folder` carries, or None."""
    mark = Path(folder) / MARK
    return mark.read_text(encoding="utf-8").strip() if mark.is_file() else None


def _check(folder: Path, tool: str) -> None:
    if not folder.exists():
        return
    if not folder.is_dir():
        raise NotOwnedError(f"{folder} is a file, not a folder: name another output folder.")
    if owner(folder) != tool and any(folder.iterdir()):
        made = f"made by {owner(folder)}" if owner(folder) else f"has no {MARK} mark"
        raise NotOwnedError(
            f"{folder} was not made by {tool} ({made}) and is not empty: nothing was deleted. "
            "Name another output folder, or move its files away and delete it yourself."
        )


def claim(folder: Path, tool: str) -> Path:
    """Creates `folder` (or adopts an empty one) with `tool`'s mark; refuses another's folder."""
    folder = Path(folder)
    _check(folder, tool)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARK).write_text(tool + "\n", encoding="utf-8")
    return folder


def clear(folder: Path, tool: str) -> None:
    """Deletes `folder` if `tool` made it (or it is empty); NotOwnedError otherwise."""
    folder = Path(folder)
    _check(folder, tool)
    if folder.exists():
        shutil.rmtree(folder)


def staging(folder: Path) -> Path:
    """A new empty sibling of `folder`, to write into before `replace`."""
    Path(folder).parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{Path(folder).name}.", dir=Path(folder).parent))


def replace(staged: Path, folder: Path, tool: str) -> Path:
    """Puts the fully written `staged` folder in place of `folder` (which `tool` must own)."""
    folder = Path(folder)
    try:
        clear(folder, tool)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    (Path(staged) / MARK).write_text(tool + "\n", encoding="utf-8")
    Path(staged).replace(folder)
    return folder


if __name__ == "__main__":
    raise SystemExit("tools.outputs has no command line: the other tools use it.")
