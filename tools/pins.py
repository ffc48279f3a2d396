"""The tooling's pins, named once in `stacks/tools.txt`: read, and written out for pip.

Standard library only (the runtime sessions import it before anything is installed). The nox
sessions, requirements.txt, stacks/site.txt and .ci/run give pip the file itself (`-c`); the
runtime runner (tools.runtimes) asks here for `name==version` of the packages it adds to a
runtime. It also loads `stacks/install.py`, the install cell's script, as the module
`install_stack` (the one home for running pip and for PEP 503 names). No command line.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable
from pathlib import Path

from tools import paths

TOOLS = paths.ROOT / "stacks" / "tools.txt"
# A requirement line that pins one version: `name==version`, an environment marker or a comment
# after it allowed.
PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*([^\s;#]+)")


class PinError(LookupError):
    """A package has no pin in the tools file, or the file cannot be read; the message says
    which file and the fix."""


def _install_stack():
    """stacks/install.py, the install cell's script, as a module."""
    location = paths.ROOT / "stacks" / "install.py"
    spec = importlib.util.spec_from_file_location("install_stack", location)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


install_stack = _install_stack()
normalize = install_stack.normalize  # PEP 503: lowercase, every run of `-`, `_`, `.` one `-`


def read(path: Path = TOOLS) -> dict[str, str]:
    """{normalized name: version} of the `name==version` lines of a requirements or constraints
    file (other lines, options and comments skipped); PinError naming the file if it cannot be
    read, or if it pins one package twice."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PinError(f"{path}: cannot be read ({error}): restore it from git.") from None
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        match = PIN.match(line.strip())
        if not match:
            continue
        name = normalize(match[1])
        if name in found:
            raise PinError(f"{path}, line {number}: {name} is pinned a second time; keep one.")
        found[name] = match[2]
    return found


def pinned(names: Iterable[str], path: Path = TOOLS) -> list[str]:
    """`name==version` for each name, with the version from the tools file; PinError naming the
    file and the package if it pins none."""
    versions = read(path)
    lines = []
    for name in names:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
            raise PinError(f"{name!r}: name the package only; its version comes from {path}.")
        version = versions.get(normalize(name))
        if version is None:
            raise PinError(f"{path} pins no {name}: add `{name}==VERSION` to it.")
        lines.append(f"{name}=={version}")
    return lines


if __name__ == "__main__":
    raise SystemExit("tools.pins has no command line: the other tools import it.")
