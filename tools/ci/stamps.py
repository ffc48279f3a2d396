"""Stamps of the slow sessions: one per (session, notebook), over exactly what that run reads.

    python -m tools.ci.stamps status          # each stamped session: fresh, or what is stale
    python -m tools.ci.stamps digest NAME     # the digests a session would record now

A slow session (`tpu_stack`, `stacks_index`, `pytorch_xla`, `runtime-<name>`) records in its
stamp file one line per unit it ran and passed: `<sha256>  <unit>  passed: <summary>`. A runtime
session's units are its notebooks; every other session is one unit, named after itself.
`.ci/run` runs a session again (`nox -s stamped_if_changed`) when the digest of a unit's inputs
no longer matches its line, and a runtime session then runs only its stale notebooks.

What a unit reads, and so what its digest covers:
- every session: the session code and the pins (`BASE`), and the helper package;
- the tools a session runs, found by following `tools` imports (`tools_read`): a tool module
  counts with the files beside it that are not Python (its data), never the whole of tools/;
- `tpu_stack`: the unit tests that run on the TPU wheel (`TPU_STACK_TESTS`), not all of tests/;
- a runtime's notebook: that notebook's code cells (source and tags; its text and translations
  run nothing), the CI parameters, the runtime's settings and package list, and the runner.
Stamps themselves (`*.passed`) and caches are never inputs. The digests are taken when a session
starts (`current`) and written with `write`, which refuses a unit whose inputs changed meanwhile.
A stamp file that is not whole (truncated, not UTF-8, not stamp lines) is named on stderr and
counts as stale, never fresh; `write` writes a temporary sibling and renames it into place, so
that an interrupted write or two writers at once leave a whole stamp. Standard library only:
nox's own environment imports this module.
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What every stamped session reads: the session code, the install cell's script and the pins,
# the helper package.
BASE = (
    "noxfile.py",
    "pyproject.toml",
    "requirements.txt",
    "stacks/install.py",
    "stacks/cpu.txt",
    "stacks/gpu.txt",
    "stacks/jax.txt",
    "stacks/pytorch_xla.txt",
    "stacks/tpu.txt",
    "stacks/tools.txt",
    "tpuhelpers",
)
# pytest's settings, wherever pytest runs.
PYTEST = ("conftest.py", "tests/conftest.py")
# The notebooks' CI parameters and nbval's comparison settings.
NOTEBOOK_RUN = ("tests/notebook_parameters.yaml",)
NBVAL = ("tests/reference_sanitize.cfg",)
# The unit tests that use TensorFlow or the helper package, so run on the TPU wheel too. The
# others test repository tooling, which does not depend on the wheel; the notebooks on the wheel
# run in the TPU runtime sessions, and tests/test_stacks.py resolves the pins (`stacks_index`).
TPU_STACK_TESTS = tuple(
    f"tests/test_{name}.py"
    for name in (
        "bench",
        "checks",
        "cloud_jobs",
        "cluster",
        "hardware",
        "jax_setup",
        "mnist",
        "package",
        "support",
        "support_table",
        "tpu_wheel",
        "training",
    )
)
# The module each session runs: its tools, and what they import, are its inputs.
RUNNER = "tools.runs.notebooks"
RUNTIMES = "tools.ci.runtimes"
# A stamp file, whole: one line per unit, each ended by a newline.
LINE = re.compile(r"([0-9a-f]{64})  (\S+)  passed: ([^\n]+)\n")


@dataclass(frozen=True)
class Session:
    """A stamped session: what all its units read, and what each reads besides."""

    name: str
    inputs: tuple[str, ...]  # relative to the repository root
    stamp: Path
    units: dict[str, tuple[str, ...]]  # unit -> its own inputs


def sessions(root: Path = ROOT) -> dict[str, Session]:
    """Every stamped session, by name (runtimes from stacks/runtimes/runtimes.toml)."""
    pytorch = "notebooks/en/15_pytorch_xla.ipynb", "tests/references/15_pytorch_xla.json"
    single = {
        "tpu_stack": BASE + PYTEST + TPU_STACK_TESTS + tools_read(TPU_STACK_TESTS, root),
        "stacks_index": BASE
        + PYTEST
        + ("tests/test_stacks.py",)
        + tools_read(("tests/test_stacks.py",), root),
        "pytorch_xla": BASE + PYTEST + NOTEBOOK_RUN + NBVAL + pytorch + tools_read([RUNNER], root),
    }
    found = {
        name: Session(name, inputs, root / f"stacks/{name}.passed", {name: ()})
        for name, inputs in single.items()
    }
    from tools.ci import runtimes  # standard library only too; it checks the file's schema

    config = root / "stacks/runtimes/runtimes.toml"
    runner = tools_read([RUNTIMES], root)
    for runtime in runtimes.load(config=config):
        if runtime.session:
            listed = (config.relative_to(root).as_posix(), f"stacks/runtimes/{runtime.name}.txt")
            runs, _ = runtimes.notebooks_of(runtime, root)
            units = {path.stem: (path.relative_to(root).as_posix(),) for path, _ in runs}
            stamp = root / f"stacks/runtimes/{runtime.name}.passed"
            inputs = BASE + NOTEBOOK_RUN + listed + runner
            found[f"runtime-{runtime.name}"] = Session(runtime.name, inputs, stamp, units)
    return found


def tools_read(entries, root: Path = ROOT) -> tuple[str, ...]:
    """The files of `tools` that running `entries` (modules such as "tools.notebooks", or test
    files) reads: the modules they import, directly or not, each with its package's `__init__`
    and the files beside it that are not Python (its data)."""
    todo = [e for e in entries if not e.endswith(".py")]
    files = [root / e for e in entries if e.endswith(".py")]
    todo += [m for path in files if path.is_file() for m in imported(path)]  # absent: reads none
    seen: set[Path] = set()
    while todo:
        path = module_file(todo.pop(), root)
        if path is None or path in seen:
            continue
        seen.add(path)
        todo.extend(imported(path))
    files = set(seen)
    for path in seen:
        files.update(p for p in path.parent.glob("*") if p.is_file() and p.suffix != ".py")
        files.update(p / "__init__.py" for p in path.parents if (p / "__init__.py").is_file())
    return tuple(sorted(p.relative_to(root).as_posix() for p in files if _inside(p, root)))


def _inside(path: Path, root: Path) -> bool:
    return path.is_relative_to(root / "tools") and path.suffix not in (".passed", ".pyc")


def imported(path: Path) -> list[str]:
    """The `tools...` modules a file imports anywhere in it (names, and `from tools.x import y`
    as both "tools.x" and "tools.x.y", since y may be a module)."""
    status = path.stat()  # parsed again only when the file changed
    return list(_imported(str(path), status.st_mtime_ns, status.st_size))


@functools.lru_cache(maxsize=1024)
def _imported(path: str, _mtime_ns: int, _size: int) -> tuple[str, ...]:
    found = []
    for node in ast.walk(ast.parse(Path(path).read_bytes(), path)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return tuple(name for name in found if name == "tools" or name.startswith("tools."))


def module_file(name: str, root: Path) -> Path | None:
    """The file of module `name` under `root` (a package's `__init__.py`), or None."""
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def digest(inputs: tuple[str, ...], root: Path = ROOT) -> str:
    """sha256 over the files (paths and contents) under `inputs`; stamps and caches excluded."""
    sha = hashlib.sha256()
    for name in sorted(set(inputs)):
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


def _session(name: str, root: Path) -> Session:
    table = sessions(root)
    if name not in table:
        raise SystemExit(f"No stamped session {name!r}: they are {', '.join(table)}.")
    return table[name]


def current(name: str, root: Path = ROOT) -> dict[str, str]:
    """{unit: the digest it would record now} of session `name`."""
    session = _session(name, root)
    shared = digest(session.inputs, root)  # once: what every unit of the session reads
    return {
        unit: hashlib.sha256(f"{shared}\0{digest(own, root)}".encode()).hexdigest()
        for unit, own in session.units.items()
    }


def damage(stamp: Path) -> str | None:
    """What is wrong with a stamp file (not UTF-8, truncated, not stamp lines), or None if it is
    whole or absent."""
    if not stamp.is_file():
        return None
    try:
        text = stamp.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return f"cannot be read ({error})"
    if not text or LINE.sub("", text):
        shape = "'<sha256>  <unit>  passed: <summary>' lines, each ended by a newline"
        return f"is not a whole stamp ({shape}): {text[:80]!r}"
    return None


def _lines(stamp: Path, name: str) -> dict[str, tuple[str, str]]:
    """{unit: (digest, summary)} of a stamp file: empty, with a warning naming the file, if it
    is damaged, so that nothing in it counts as fresh."""
    if problem := damage(stamp):
        print(
            f"warning: {stamp} {problem}: {name} counts as stale; running the session writes "
            "it again.",
            file=sys.stderr,
        )
        return {}
    text = stamp.read_text(encoding="utf-8") if stamp.is_file() else ""
    return {m[2]: (m[1], m[3]) for m in LINE.finditer(text)}


def recorded(name: str, root: Path = ROOT) -> dict[str, str]:
    """{unit: digest} in session `name`'s stamp file; a unit that never passed is absent."""
    return {unit: d for unit, (d, _) in _lines(_session(name, root).stamp, name).items()}


def stale(name: str, root: Path = ROOT) -> list[str]:
    """The units of session `name` that did not pass with exactly the inputs they have now."""
    have = recorded(name, root)
    return [unit for unit, now in current(name, root).items() if have.get(unit) != now]


def is_fresh(name: str, root: Path = ROOT) -> bool:
    """True if every unit of session `name` passed with exactly the inputs it has now."""
    return not stale(name, root)


def write(name: str, passed: dict[str, str], started: dict[str, str], root: Path = ROOT) -> Path:
    """Records that the units in `passed` ({unit: summary}) of session `name` passed with the
    inputs they had when it `started` ({unit: digest}, from `current`); keeps the other units'
    lines. Refuses a unit whose inputs changed while it ran (the run did not test them): the
    others are written, then RuntimeError names it."""
    session = _session(name, root)
    now = current(name, root)
    changed = sorted(u for u in passed if now.get(u) != started.get(u))
    lines = {u: v for u, v in _lines(session.stamp, name).items() if u in now}
    for unit, summary in passed.items():
        if unit not in changed:
            lines[unit] = (started[unit], " ".join(summary.split()) or "passed")
    _replace(
        session.stamp, "".join(f"{d}  {u}  passed: {s}\n" for u, (d, s) in sorted(lines.items()))
    )
    if changed:
        raise RuntimeError(
            f"{name}: the inputs of {', '.join(changed)} changed while it ran: not stamped. "
            "Run it again without editing them."
        )
    return session.stamp


def _replace(stamp: Path, text: str) -> None:
    """Writes `text` beside `stamp` and renames it into place: an interrupted write leaves the
    old stamp, and of two writers at once, the last rename wins with a whole file."""
    handle, temporary = tempfile.mkstemp(
        prefix=f".{stamp.stem}.", suffix=".passed", dir=stamp.parent
    )
    os.close(handle)
    try:
        Path(temporary).write_text(text, encoding="utf-8")
        os.replace(temporary, stamp)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_report(name: str, report: Path, started: dict[str, str], root: Path = ROOT) -> list[str]:
    """Stamps each notebook a runtime session's report (tools.runtimes) says passed; returns
    the failed ones' outcomes."""
    records = json.loads(report.read_text(encoding="utf-8"))["notebooks"]
    failed = [r for r in records if r["outcome"].startswith("FAILED")]
    passed = {r["notebook"]: f"{r['outcome']} in {r['seconds']} s" for r in records}
    for record in failed:
        passed.pop(record["notebook"])
    if passed:
        write(name, passed, started, root)
    return [f"{r['notebook']}: {r['outcome']}" for r in failed]


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
        for unit, value in current(args.name).items():
            print(f"{value}  {unit}")
        return 0
    for name, session in sessions().items():
        units = stale(name)
        if not units:
            print(f"fresh  {name}")
        elif len(session.units) == 1:
            print(f"stale  {name}")
        else:
            print(f"stale  {name}: {len(units)} of {len(session.units)} ({', '.join(units)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
