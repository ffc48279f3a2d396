"""Folders the repository's tools write: each is marked by the tool that made it, and a tool
writes into, clears or replaces only a folder that carries its own mark, so that a mistyped
`--out` or `--clean` never deletes or overwrites a user's files. A folder that exists without
the mark, even an empty one, is not the tool's: it may have been made for something else, and
what is put there later would go with it.

    claim(folder, "tools.site")      # makes the folder with the mark; refuses anyone else's
    clear(folder, "tools.site")      # deletes it, only if it carries that mark
    replace(staged, folder, tool)    # renames a fully written sibling into place
    refuse_inputs(folder, inputs)    # refuses an output folder that holds one of the inputs
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
    if owner(folder) != tool:
        made = f"made by {owner(folder)}" if owner(folder) else f"has no {MARK} mark"
        filled = "is not empty" if any(folder.iterdir()) else "is empty, but made by someone else"
        raise NotOwnedError(
            f"{folder} was not made by {tool} ({made}) and {filled}: nothing was deleted or "
            f"written. Name a folder that does not exist yet ({tool} makes it), or move its "
            "files away and delete it yourself."
        )


def claim(folder: Path, tool: str) -> Path:
    """Creates `folder` with `tool`'s mark, or takes one that carries it; refuses any other."""
    folder = Path(folder)
    _check(folder, tool)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARK).write_text(tool + "\n", encoding="utf-8")
    return folder


def clear(folder: Path, tool: str) -> None:
    """Deletes `folder` if `tool` made it; NotOwnedError otherwise."""
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


def refuse_inputs(folder: Path, inputs: list[Path], option: str = "--out") -> None:
    """NotOwnedError if an input lies inside the output `folder`: a tool would write over it."""
    folder = Path(folder).resolve()
    inside = [p for p in inputs if Path(p).resolve().is_relative_to(folder)]
    if inside:
        raise NotOwnedError(
            f"{option} {folder} holds the input {inside[0]}: a tool never writes where it reads, "
            "and the input would be overwritten. Name an output folder outside the inputs "
            "(nothing was written)."
        )


if __name__ == "__main__":
    raise SystemExit("tools.outputs has no command line: the other tools use it.")
