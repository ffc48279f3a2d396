"""Stamps of the slow sessions: each records the digest of every file the session runs or reads.

    python -m tools.ci.stamps status          # each stamped session: fresh or stale
    python -m tools.ci.stamps digest NAME     # the digest a session would record now

A slow session (`tpu_stack`, `pytorch_xla`, `runtime-<name>`) writes `<digest>  passed: ...`
into its stamp file when it passes; `.ci/run` runs it again (`nox -s stamped_if_changed`)
whenever the digest of its inputs no longer matches. The inputs are whole folders where a
session reads from many files (the helper package, the tools, the tests), so any change there
makes it stale: run the session and commit its stamp (CONTRIBUTING, "Stacks and releases").
Of a notebook, only the code cells count: its text and its translations run nothing.
Stamps themselves (`*.passed`) and caches are never part of a digest. A stamp file that is not
whole (truncated, not UTF-8, not a stamp) is named on stderr and counts as stale, never fresh;
`write` writes a temporary sibling and renames it into place, so that an interrupted write or two
writers at once leave a whole stamp. Standard library only:
nox's own environment imports this module.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What every stamped session runs or reads: the session code, the install cell's script and
# the pins, the helper package, the CI parameters and the notebook runner.
COMMON = (
    "noxfile.py",
    "pyproject.toml",
    "requirements.txt",
    "stacks/install.py",
    "stacks/cpu.txt",
    "stacks/gpu.txt",
    "stacks/jax.txt",
    "stacks/pytorch_xla.txt",
    "stacks/tpu.txt",
    "tpuhelpers",
    "tests/notebook_parameters.yaml",
    "tools/__init__.py",
    "tools/notebook.py",
    "tools/outputs.py",
    "tools/paths.py",
    "tools/ci/__init__.py",
    "tools/ci/nbcheck.py",
    "tools/ci/stamps.py",
    "tools/runs/__init__.py",
    "tools/runs/notebooks.py",
)
RUNTIMES = ROOT / "stacks" / "runtimes"
# A stamp file, whole: the digest, the summary, the newline `write` ends it with.
STAMP = re.compile(r"([0-9a-f]{64})  passed: [^\n]+\n")


def sessions(root: Path = ROOT) -> dict[str, tuple[tuple[str, ...], Path]]:
    """{session: (its inputs, relative to `root`; its stamp file)} for every stamped session."""
    found = {
        # The unit tests on the real TPU wheel; its notebooks run in the TPU runtime sessions.
        "tpu_stack": (
            COMMON + ("conftest.py", "tests", "tools", "notebooks"),
            root / "stacks/tpu_stack.passed",
        ),
        # The pins resolved against the package index (tests/test_stacks.py, marked `index`).
        "stacks_index": (COMMON + ("tests/test_stacks.py",), root / "stacks/stacks_index.passed"),
        "pytorch_xla": (
            COMMON
            + ("conftest.py", "notebooks/en/15_pytorch_xla.ipynb")
            + ("tests/references/15_pytorch_xla.json", "tests/reference_sanitize.cfg"),
            root / "stacks/pytorch_xla.passed",
        ),
    }
    from tools.ci import runtimes  # standard library only too; it checks the file's schema

    config = runtimes.settings(root / "stacks/runtimes/runtimes.toml")
    for entry in config["runtime"]:
        if entry.get("session", True):
            name = entry["name"]
            own = ("notebooks/en", "stacks/runtimes/runtimes.toml", f"stacks/runtimes/{name}.txt")
            inputs = COMMON + own + ("tools/ci/runtimes.py", "tools/ci/runtime_files.py")
            found[f"runtime-{name}"] = (inputs, root / f"stacks/runtimes/{name}.passed")
    return found


def digest(inputs: tuple[str, ...], root: Path = ROOT) -> str:
    """sha256 over the files (paths and contents) under `inputs`; stamps and caches excluded."""
    sha = hashlib.sha256()
    for name in inputs:
        top = root / name
        paths = sorted(top.rglob("*")) if top.is_dir() else [top]
        for path in paths:
            skip = path.suffix in (".passed", ".pyc") or "__pycache__" in path.parts
            if path.is_file() and not skip:
                relative = path.relative_to(root).as_posix()
                sha.update(relative.encode() + b"\0" + content(path))
    return sha.hexdigest()


def content(path: Path) -> bytes:
    """What a session reads of a file: all of it, except that of a notebook only its code cells
    (source and tags) count, so that an edit to its text or a translation stales nothing. A
    notebook that is not valid JSON counts whole."""
    data = path.read_bytes()
    if path.suffix != ".ipynb":
        return data
    try:
        cells = json.loads(data)["cells"]
        code = [
            (c["source"], c.get("metadata", {}).get("tags", []))
            for c in cells
            if c["cell_type"] == "code"
        ]
    except (ValueError, KeyError, TypeError):
        return data
    return json.dumps(code, sort_keys=True).encode()


def current(name: str, root: Path = ROOT) -> str:
    """The digest session `name` would record now."""
    table = sessions(root)
    if name not in table:
        raise SystemExit(f"No stamped session {name!r}: they are {', '.join(table)}.")
    return digest(table[name][0], root)


def damage(stamp: Path) -> str | None:
    """What is wrong with a stamp file (not UTF-8, truncated, not a stamp), or None if it is
    whole or absent."""
    if not stamp.is_file():
        return None
    try:
        text = stamp.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return f"cannot be read ({error})"
    if not STAMP.fullmatch(text):
        return f"is not a whole stamp ('<sha256>  passed: <summary>' and a newline): {text[:80]!r}"
    return None


def recorded(name: str, root: Path = ROOT) -> str:
    """The digest in session `name`'s stamp file: "" if it never passed, and "" (stale, with a
    warning on stderr naming the file) if the file is damaged, so that it never counts as fresh."""
    stamp = sessions(root)[name][1]
    if problem := damage(stamp):
        print(
            f"warning: {stamp} {problem}: {name} counts as stale; running the session writes "
            "it again.",
            file=sys.stderr,
        )
        return ""
    return STAMP.fullmatch(stamp.read_text(encoding="utf-8"))[1] if stamp.is_file() else ""


def is_fresh(name: str, root: Path = ROOT) -> bool:
    """True if session `name` passed with exactly the inputs it has now."""
    return recorded(name, root) == current(name, root)


def write(name: str, summary: str, started: str, root: Path = ROOT) -> Path:
    """Records that session `name` passed with the inputs it had when it `started` (their
    digest, taken then); refuses if they changed while it ran, since the run did not test them."""
    if (now := current(name, root)) != started:
        raise RuntimeError(
            f"{name}: its inputs changed while it ran ({started[:12]} -> {now[:12]}): not "
            "stamped. Run it again without editing them."
        )
    stamp = sessions(root)[name][1]
    summary = " ".join(summary.split()) or "passed"  # one line, as STAMP reads it
    # Written beside it, then renamed into place: an interrupted write leaves the old stamp, and
    # of two writers at once, the last rename wins with a whole file.
    handle, temporary = tempfile.mkstemp(
        prefix=f".{stamp.stem}.", suffix=".passed", dir=stamp.parent
    )
    os.close(handle)
    try:
        Path(temporary).write_text(f"{started}  passed: {summary}\n", encoding="utf-8")
        os.replace(temporary, stamp)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return stamp


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["status", "digest"])
    parser.add_argument("name", nargs="?", help="digest: a stamped session")
    args = parser.parse_args(argv)
    from tools.ci import runtimes

    try:
        return _command(parser, args)
    except runtimes.RuntimeListError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "digest":
        if not args.name:
            parser.error("digest needs a session name: see `python -m tools.ci.stamps status`")
        print(current(args.name))
        return 0
    for name in sessions():
        print(f"{'fresh' if is_fresh(name) else 'stale':6} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
