"""The runtimes readers open the notebooks in (Colab, Kaggle), rebuilt from their package lists.

    python -m tools.runtimes list                              # runtimes, Pythons, sources
    python -m tools.runtimes refresh --colab DIR --kaggle DIR  # rewrite stacks/runtimes/*.txt
    python -m tools.runtimes plan NAME                         # what a session installs, skips
    python -m tools.runtimes install NAME   # into this interpreter (a venv of the runtime's Python)
    python -m tools.runtimes run NAME [--out DIR]              # every notebook, from cell 1

`stacks/runtimes/runtimes.toml` names the runtimes and the rules; `refresh` reads the package
lists from git checkouts (bare or not) of googlecolab/backend-info and Kaggle/docker-python and
writes one `stacks/runtimes/<name>.txt` each, headed by its source, commit, date and Python: all
lists or none, each checked first (`check_list`: an HTML page is no package list). runtimes.toml
is checked against a schema where it is read (`check_settings`).
`nox -s runtime-<name>` runs `install` then `run` in a virtual environment of that Python. `run`
executes each notebook of the runtime's stacks with its CI parameters (and the runtime's own,
such as one device on a v5e-1). Cell 1 runs as committed: it reads `stacks/install.py` from a
copy of what the release serves (TPU_CURRICULUM_SOURCE, `release_copy`) and, on a TPU runtime,
installs the TPU stack (TPU_CURRICULUM_HARDWARE=tpu) on this machine without TPU chips. The
first notebook of each stack starts from the runtime as published (what cell 1 changed is put
back); the next ones keep that stack and reinstall the helper.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from tools import paths, pins  # standard library only, like this module

ROOT = paths.ROOT
FOLDER = ROOT / "stacks" / "runtimes"
CONFIG = FOLDER / "runtimes.toml"
HEADER = re.compile(r"# (\w+): (.*)")
# Notebooks that compile for the host CPU with XLA (`jit_compile=True`, or Keras' default
# strategy, which compiles its step with XLA): the tensorflow-tpu wheel's XLA has no CPU backend
# ("could not find registered transfer manager for platform Host"), so on a machine without TPU
# chips they cannot run on that wheel; on a TPU, XLA compiles for the TPU and they do.
HOST_XLA_NOTEBOOKS = (
    "11_how_a_tpu_computes",
    "12_mixed_precision_and_xla",
    "14_gradient_accumulation",
)
PYTORCH_LEFT_OUT = (
    "PyTorch/XLA: the runtimes' CPU builds of torch come from PyTorch's own index; the package "
    "index has the CUDA build only (several GB). `nox -s pytorch_xla` runs this notebook."
)
NO_CHIP = "is installed, but this machine has no TPU chip"  # tpuhelpers.tpu's note


class RuntimeListError(RuntimeError):
    """A runtime's package list or settings cannot be used; the message says the fix."""


def _install_stack():
    """stacks/install.py, the install cell's script, as a module (one home for running pip)."""
    spec = importlib.util.spec_from_file_location("install_stack", ROOT / "stacks/install.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


install_stack = _install_stack()
normalize = install_stack.normalize


@dataclass(frozen=True)
class Runtime:
    """One runtime: its settings from runtimes.toml and its package list's header and lines."""

    name: str
    title: str
    hardware: str
    stacks: tuple[str, ...]
    stops: tuple[str, ...] = ()
    session: bool = True
    why: str = ""
    header: dict[str, str] = field(default_factory=dict)
    lines: tuple[str, ...] = ()
    parameters: dict[str, dict] = field(default_factory=dict)  # {notebook: CI overrides}

    @property
    def python(self) -> str:
        """The runtime's Python as major.minor, from its list's header."""
        return ".".join(self.header.get("python", "?").split(".")[:2])

    @property
    def list_path(self) -> Path:
        return FOLDER / f"{self.name}.txt"


def settings(config: Path = CONFIG) -> dict:
    """runtimes.toml, read and checked (`check_settings`); RuntimeListError naming the file if
    it cannot be read, and the file and key if a key is missing or of the wrong type."""
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise RuntimeListError(f"{config}: cannot be read ({error}); fix or restore it.") from None
    check_settings(data, config)
    return data


# runtimes.toml's schema: {key: (type, required)}; a list's items are strings.
RUNTIME_KEYS = {
    "name": (str, True),
    "title": (str, True),
    "repository": (str, True),
    "version": (str, True),
    "packages": (str, True),
    "hardware": (str, True),
    "stacks": (list, True),
    "os_info": (str, False),
    "config": (str, False),
    "stops": (list, False),
    "session": (bool, False),
    "why": (str, False),
    "parameters": (dict, False),
}
TABLES = {
    "install": {"packages": (list, True), "runner": (list, True), "offline": (list, True)},
    "skip": {"url": (str, True), "local_version": (str, True)},
}
KNOWN_STACKS = ("tensorflow", "jax", "pytorch")
KNOWN_HARDWARE = install_stack.HARDWARE


def _check_table(table: object, keys: dict, where: str, config: Path) -> None:
    names = {list: "a list of strings", str: "a string", bool: "true or false", dict: "a table"}
    if not isinstance(table, dict):
        raise RuntimeListError(f"{config}: {where} must be a table; fix or restore the file.")
    for key, (kind, required) in keys.items():
        if key not in table:
            if required:
                raise RuntimeListError(f"{config}: {where} has no key {key!r}; add it.")
            continue
        value = table[key]
        if not isinstance(value, kind) or (
            kind is list and not all(isinstance(item, str) for item in value)
        ):
            raise RuntimeListError(
                f"{config}: {where}: {key} must be {names[kind]}, not {value!r} "
                f"(write for example {key} = {_example(kind)})."
            )
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise RuntimeListError(
            f"{config}: {where}: unknown key {unknown[0]!r}; the keys are {', '.join(keys)}."
        )


def _example(kind: type) -> str:
    return {list: '["tensorflow", "jax"]', str: '"text"', bool: "false", dict: "{ }"}[kind]


def check_settings(data: dict, config: Path = CONFIG) -> None:
    """RuntimeListError naming `config` and the key, unless runtimes.toml has each table and key
    this module reads, each of its type (RUNTIME_KEYS, TABLES), with known stacks and hardware,
    names that are unique, and where each list's Python comes from (`os_info` or `config`)."""
    entries = data.get("runtime")
    if not isinstance(entries, list) or not entries:
        raise RuntimeListError(
            f"{config}: no [[runtime]] tables (an array of tables, one per runtime); fix or "
            "restore the file."
        )
    seen = set()
    for number, entry in enumerate(entries, 1):
        name = entry.get("name") if isinstance(entry, dict) else None
        where = f"[[runtime]] number {number}" + (f" ({name})" if isinstance(name, str) else "")
        _check_table(entry, RUNTIME_KEYS, where, config)
        for key, known in (("stacks", KNOWN_STACKS), ("stops", KNOWN_STACKS)):
            if bad := [s for s in entry.get(key, ()) if s not in known]:
                raise RuntimeListError(
                    f"{config}: {where}: {key} names {bad[0]!r}: stacks are {', '.join(known)}."
                )
        if entry["hardware"] not in KNOWN_HARDWARE:
            raise RuntimeListError(
                f"{config}: {where}: hardware {entry['hardware']!r}: use one of "
                f"{', '.join(KNOWN_HARDWARE)}."
            )
        if "os_info" not in entry and "config" not in entry:
            raise RuntimeListError(
                f"{config}: {where} has neither os_info nor config: refresh reads its Python "
                "from one of them; add it."
            )
        if name in seen:
            raise RuntimeListError(f"{config}: {where}: the name {name!r} is used twice.")
        seen.add(name)
    for table, keys in TABLES.items():
        if table not in data:
            raise RuntimeListError(f"{config}: no [{table}] table; add it.")
        _check_table(data[table], keys, f"[{table}]", config)


# A line of a package list: `name==version` (pip freeze), a requirement (`jax[tpu]`, `keras>=3`,
# Kaggle's requirements.in), `name @ url`, or a URL (`https://...whl`, `git+https://...`).
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\[[A-Za-z0-9._,\s-]*\])?"
_SPEC = r"(?:===|==|>=|<=|~=|!=|<|>)\s*[A-Za-z0-9.*+!_-]+"
LIST_LINE = re.compile(
    rf"{_NAME}\s*(?:{_SPEC}(?:\s*,\s*{_SPEC})*)?(?:\s*;\s*\S.*)?"
    rf"|{_NAME}\s+@\s+\S+(?:\s*;\s*\S.*)?"
    r"|(?:git\+)?(?:https?|file)://\S+"
)


def check_list(text: str, source: str) -> None:
    """RuntimeListError naming `source` and the line unless `text` is a package list: after the
    comments, at least one line, each a requirement (LIST_LINE). An HTML page ("404: Not Found")
    or a truncated download is refused here, before anything is written."""
    lines = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)]
    lines = [(n, line) for n, line in lines if line and not line.startswith("#")]
    if not lines:
        raise RuntimeListError(f"{source}: no package lines: is it the runtime's package list?")
    for number, line in lines:
        if not LIST_LINE.fullmatch(line):
            raise RuntimeListError(
                f"{source}, line {number}: {line[:80]!r} is not a requirement (name==version, "
                "name @ url or a URL): is it the runtime's package list?"
            )


def read_list(path: Path) -> tuple[dict[str, str], tuple[str, ...]]:
    """A package list's header ({key: value}) and its requirement lines; RuntimeListError
    naming the file and line if it is not a package list (`check_list`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise RuntimeListError(f"{path}: cannot be read ({error}); run refresh.") from None
    header, lines = {}, []
    for line in text.splitlines():
        if match := HEADER.fullmatch(line.strip()):
            header[match[1]] = match[2]
        elif line.strip() and not line.startswith("#"):
            lines.append(line.strip())
    if lines:
        check_list(text, str(path))
    return header, tuple(lines)


def load(name: str | None = None, config: Path = CONFIG) -> list[Runtime]:
    """The runtimes of runtimes.toml (or the one named), with their lists where written."""
    entries = settings(config)["runtime"]
    names = [entry["name"] for entry in entries]
    if name is not None and name not in names:
        raise RuntimeListError(f"No runtime {name!r}: runtimes are {', '.join(names)}.")
    found = []
    for entry in entries:
        if name not in (None, entry["name"]):
            continue
        path = config.parent / f"{entry['name']}.txt"
        header, lines = read_list(path) if path.is_file() else ({}, ())
        keys = ("name", "title", "hardware", "session", "why", "parameters")
        fields = {k: entry[k] for k in keys if k in entry}
        stacks, stops = tuple(entry.get("stacks", ())), tuple(entry.get("stops", ()))
        found.append(Runtime(**fields, stacks=stacks, stops=stops, header=header, lines=lines))
    return found


# Plan: what a session installs -------------------------------------------------------------


@dataclass
class Plan:
    """A runtime session's pip input: requirements, constraints, and the lines left out."""

    requirements: list[str]
    constraints: list[str]
    skipped: list[tuple[str, str]]


def requirement_name(line: str) -> str:
    """The normalized distribution name of a requirement line ("jax[tpu]>=0.7" -> "jax")."""
    return normalize(re.split(r"[\s\[<>=!~;@]", line, maxsplit=1)[0])


def skip_reason(line: str, rules: dict[str, str]) -> str | None:
    """Why a list line cannot come from the package index (runtimes.toml [skip]), or None."""
    if " @ " in line or "://" in line or line.startswith("git+"):
        return rules["url"]
    if re.search(r"==[^\s;]*\+", line):
        return rules["local_version"]
    return None


def plan(runtime: Runtime, config: Path = CONFIG) -> Plan:
    """The runtime's own versions of the packages the curriculum touches, the runner, and every
    other installable pin of its list as a constraint."""
    rules = settings(config)
    if not runtime.lines:
        raise RuntimeListError(
            f"{runtime.list_path} is missing or empty: run `python -m tools.runtimes refresh`."
        )
    wanted = {normalize(n) for n in rules["install"]["packages"]}
    requirements, constraints, skipped = [], [], []
    for line in runtime.lines:
        if reason := skip_reason(line, rules["skip"]):
            skipped.append((line, reason))
        elif "==" in line:
            constraints.append(line)
        if not reason and requirement_name(line) in wanted:
            requirements.append(line)
    listed = {requirement_name(line) for line in runtime.lines}
    for runner in rules["install"]["runner"]:
        name = requirement_name(runner)
        requirements.append(name if name in listed else tool_pins([runner])[0])
    return Plan(requirements, constraints, skipped)


def tool_pins(names: list[str]) -> list[str]:
    """`name==version` of each package, its version from stacks/tools.txt (tools.pins); a
    RuntimeListError naming that file for a package it does not pin."""
    try:
        return pins.pinned(names)
    except pins.PinError as error:
        raise RuntimeListError(str(error)) from None


def check_python(runtime: Runtime) -> None:
    """RuntimeListError unless this interpreter runs the runtime's Python."""
    here = "{}.{}".format(*sys.version_info[:2])
    if here != runtime.python:
        raise RuntimeListError(
            f"{runtime.name} runs Python {runtime.python}, this interpreter is {here}: run "
            f"`nox -s runtime-{runtime.name}` (it makes a virtual environment of that Python)."
        )


def install(runtime: Runtime, folder: Path) -> Plan:
    """Installs the runtime's packages into this interpreter's environment (see `plan`)."""
    check_python(runtime)
    steps = plan(runtime)
    folder.mkdir(parents=True, exist_ok=True)
    constraints = folder / "constraints.txt"
    constraints.write_text("\n".join(steps.constraints) + "\n", encoding="utf-8")
    pip = [sys.executable, "-m", "pip", "install", "--progress-bar", "off"]
    offline = tool_pins(settings()["install"]["offline"])
    try:
        install_stack.run_pip(pip + ["-c", str(constraints), *steps.requirements])
        install_stack.run_pip(pip + ["--no-deps", *offline])
    except install_stack.StackError as error:
        raise RuntimeListError(_list_problem(runtime, str(error)) or str(error)) from None
    return steps


def _list_problem(runtime: Runtime, message: str) -> str | None:
    """Names the list line behind a pip failure over a package the index lacks."""
    missing = re.search(r"pip found no (\S+?)(?:==\S+)? for Python", message)
    lines = [
        line
        for line in runtime.lines
        if missing and requirement_name(line) == normalize(missing[1])
    ]
    if not lines:
        return None
    return (
        f"{runtime.list_path.relative_to(ROOT)} has {lines[0]!r}, which the package index lacks "
        f"for Python {runtime.python}: add a rule with its reason under [skip] in "
        "stacks/runtimes/runtimes.toml, or refresh the list if the runtime changed."
    )


# Run: every notebook of the runtime's stacks, from cell 1 ------------------------------------


def installed(python: str = sys.executable) -> dict[str, str]:
    """{name: version} of what is installed in this environment (pip's view)."""
    listing = subprocess.run(
        [python, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return {normalize(p["name"]): p["version"] for p in json.loads(listing.stdout)}


def restore(baseline: dict[str, str]) -> list[str]:
    """Puts the environment back to `baseline` (what cell 1 added goes, what it replaced comes
    back, without dependencies: every version is the runtime's); returns what it changed."""
    now = installed()
    added = sorted(set(now) - set(baseline))
    changed = [f"{n}=={v}" for n, v in sorted(baseline.items()) if now.get(n) != v]
    pip = [sys.executable, "-m", "pip"]
    if added:
        install_stack.run_pip(pip + ["uninstall", "-y", *added])
    if changed:
        install_stack.run_pip(pip + ["install", "--no-deps", "--progress-bar", "off", *changed])
    return added + changed


def notebooks_of(
    runtime: Runtime, root: Path = ROOT
) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]]]:
    """The English notebooks (of the checkout at `root`) a runtime session runs, with their
    stack, and those it leaves out, with the reason."""
    runs, left_out = [], []
    for path in paths.all_notebooks("en", root):
        stack = paths.stack(path)
        tpu_wheel = runtime.hardware == "tpu" and stack == "tensorflow"
        if stack == "pytorch":
            left_out.append((path, PYTORCH_LEFT_OUT))
        elif stack not in runtime.stacks:
            left_out.append((path, f"its stack ({stack}) is not among this runtime's"))
        elif tpu_wheel and stack not in runtime.stops and path.stem in HOST_XLA_NOTEBOOKS:
            left_out.append((path, "XLA for the host CPU: the TPU wheel has none without chips"))
        else:
            runs.append((path, stack))
    return runs, left_out


def outcome(runtime: Runtime, stack: str, error: str | None, text: str) -> str:
    """'ok', 'stopped at cell 1 as expected', or a failure's description ("FAILED: ...")."""
    if stack in runtime.stops:
        expected = error and "cell 1 " in error and "StackError" in error and "2026.07" in error
        return (
            "stopped at cell 1 as expected"
            if expected
            else f"FAILED: expected cell 1 to stop ({error or 'it ran'})"
        )
    if error:
        return f"FAILED: {error}"
    if runtime.hardware == "tpu" and stack == "tensorflow" and NO_CHIP not in text:
        return "FAILED: no CPU fallback note (tensorflow-tpu without a TPU chip) in the outputs"
    return "ok"


def run(runtime: Runtime, out: Path, only: list[str] | None = None) -> list[dict]:
    """Executes the runtime's notebooks (or those of `only`, by file stem); returns a record
    per notebook: its outcome, seconds and what cell 1 printed. The environment is the runtime's
    as installed; cell 1 takes the stack from this checkout."""
    from tools import notebooks

    check_python(runtime)
    os.environ[install_stack.SOURCE_ENV] = str(release_copy(out / "release"))
    os.environ[install_stack.HARDWARE_ENV] = runtime.hardware
    if runtime.hardware == "tpu":  # each cluster task loads libtpu, as on its own TPU host
        os.environ["ALLOW_MULTIPLE_LIBTPU_LOAD"] = "1"
    baseline = {n: v for n, v in installed().items() if n != "tpuhelpers"}
    records, previous = [], None
    runs, _ = notebooks_of(runtime)
    for path, stack in [(p, s) for p, s in runs if not only or p.stem in only]:
        restored = restore(baseline) if stack != previous else _helper_only(baseline)
        previous, start, error = stack, time.perf_counter(), None
        try:
            parameters = notebooks.ci_parameters(path) | runtime.parameters.get(path.stem, {})
            executed = notebooks.execute(path, out, parameters)
        except notebooks.NotebookFailed as failure:
            error, executed = str(failure), out / path.parent.name / path.name
        texts = [notebooks.output_text(c) for c in _cells(executed) if c.cell_type == "code"]
        result = outcome(runtime, stack, error, "".join(texts))
        record = {"notebook": path.stem, "stack": stack, "outcome": result}
        record |= {"seconds": round(time.perf_counter() - start, 1), "restored": restored}
        records.append(record | {"cell_1": texts[0] if texts else ""})  # the install cell
        print(f"{result[:6]:6} {path.stem} ({record['seconds']} s)", flush=True)
    return records


def release_copy(folder: Path) -> Path:
    """What a release serves to cell 1 (stacks/ and the helper package's source), copied from
    this checkout: pip builds the helper in its source folder, so sessions side by side, and
    the checkout, stay apart."""
    import shutil

    from tools import outputs

    outputs.clear(folder, "tools.runtimes")  # replaced only where an earlier run made it
    outputs.claim(folder, "tools.runtimes")
    ignore = shutil.ignore_patterns("__pycache__", "*.passed", "runtimes")
    for name in ("stacks", "tpuhelpers"):
        shutil.copytree(ROOT / name, folder / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, folder / name)
    return folder


def _helper_only(baseline: dict[str, str]) -> list[str]:
    """Uninstalls the helper package only, so that the next notebook's cell 1 runs again."""
    if "tpuhelpers" not in installed():
        return []
    install_stack.run_pip([sys.executable, "-m", "pip", "uninstall", "-y", "tpuhelpers"])
    return ["tpuhelpers"]


def _cells(executed: Path) -> list[dict]:
    from tools import nbcheck

    return nbcheck.read(executed).cells if executed.is_file() else []


# Refresh: the lists from their publishers' repositories --------------------------------------


def git_text(repo: Path, commit: str, path: str) -> str:
    """A file of a git checkout (bare or not) at a commit; RuntimeListError naming it if absent."""
    result = subprocess.run(
        ["git", "-C", str(repo), "show", f"{commit}:{path}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode:
        raise RuntimeListError(
            f"{repo}: no {path} at {commit} ({result.stderr.strip()[:200]}): is it a checkout "
            "of the runtime's repository?"
        )
    return result.stdout


def resolve_commit(repo: Path, version: str) -> str:
    """The commit of `version`: "latest" is HEAD; else a Colab version named in the README."""
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=60
    )
    if head.returncode:
        raise RuntimeListError(f"{repo} is not a git checkout ({head.stderr.strip()[:200]}).")
    if version == "latest":
        return head.stdout.strip()
    readme = git_text(repo, "HEAD", "README.md")
    section = re.search(rf"^### {re.escape(version)}\n(.*?)(?=^### |\Z)", readme, re.M | re.S)
    commit = section and re.search(r"tree/([0-9a-f]{40})", section[1])
    if not commit:
        raise RuntimeListError(f"{repo}: its README names no commit for version {version!r}.")
    return commit[1]


def list_text(entry: dict, repo: Path) -> str:
    """A runtime's package list, headed by where it comes from (see the module docstring)."""
    commit = resolve_commit(repo, entry["version"])
    date = subprocess.run(
        ["git", "-C", str(repo), "log", "-1", "--format=%cs", commit],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    text = git_text(repo, commit, entry["packages"])
    if "config" in entry:  # Kaggle: requirements.in with ${VARIABLES} from config.txt
        config = dict(re.findall(r"^(\w+)=(.*)$", git_text(repo, commit, entry["config"]), re.M))
        text = re.sub(r"\$\{(\w+)\}", lambda m: config.get(m[1], m[0]), text)
        python = config.get("BASE_IMAGE", "").removeprefix("python:")
    else:
        os_info = git_text(repo, commit, entry["os_info"])
        found = re.search(r"^Python (\d+\.\d+\S*)", os_info, re.M)
        if not found:
            raise RuntimeListError(
                f"{repo}: {entry['os_info']} at {commit[:12]} ({entry['name']}) names no "
                "'Python X.Y' line: is it the runtime's os-info file?"
            )
        python = found[1]
    check_list(text, f"{repo}: {entry['packages']} at {commit[:12]} ({entry['name']})")
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    header = {"name": entry["name"], "title": entry["title"]}
    header |= {"source": f"{entry['repository']} {entry['packages']}", "commit": commit}
    header |= {"date": date, "python": python}
    head = [f"# {key}: {value}" for key, value in header.items()]
    head.append("# note: written by `python -m tools.runtimes refresh`; do not edit by hand")
    return "\n".join(head + lines) + "\n"


def refresh(checkouts: dict[str, Path], config: Path = CONFIG) -> list[Path]:
    """Rewrites every runtime's list from the checkouts ({repository: folder}); returns them.

    All lists or none: each is read and checked (`check_list`) before any is written; then each
    is written beside its file and the files are renamed into place.
    """
    texts = {}
    for entry in settings(config)["runtime"]:
        repo = checkouts.get(entry["repository"])
        if repo is None:
            raise RuntimeListError(f"{entry['name']} needs a checkout of {entry['repository']}.")
        try:
            texts[config.parent / f"{entry['name']}.txt"] = list_text(entry, repo)
        except RuntimeListError as error:
            raise RuntimeListError(f"{error} No list was written (all or none).") from None
    staged = {}
    try:
        for path, text in texts.items():
            staged[path] = path.with_suffix(".txt.tmp")
            staged[path].write_text(text, encoding="utf-8")
    except BaseException:
        for tmp in staged.values():
            tmp.unlink(missing_ok=True)
        raise
    for path, tmp in staged.items():
        tmp.replace(path)
    return list(staged)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["list", "refresh", "plan", "install", "run"])
    parser.add_argument("name", nargs="?", help="a runtime (plan, install, run)")
    parser.add_argument("--colab", type=Path, help="refresh: googlecolab/backend-info checkout")
    parser.add_argument("--kaggle", type=Path, help="refresh: Kaggle/docker-python checkout")
    parser.add_argument("--out", type=Path, help="run: where the executed notebooks go")
    parser.add_argument("--notebook", action="append", help="run: only these (file stems)")
    args = parser.parse_args(argv)
    if args.command not in ("list", "refresh") and not args.name:
        parser.error(f"{args.command} needs a runtime name: see `python -m tools.runtimes list`")
    from tools import outputs

    try:
        return _command(args)
    except (RuntimeListError, outputs.NotOwnedError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _command(args: argparse.Namespace) -> int:
    if args.command == "refresh":
        repos = {"googlecolab/backend-info": args.colab, "Kaggle/docker-python": args.kaggle}
        for path in refresh({k: v for k, v in repos.items() if v}):
            print("wrote", path.relative_to(ROOT))
        return 0
    if args.command == "list":
        for rt in load():
            how = "session" if rt.session else f"no session: {rt.why}"
            src = f"{rt.header.get('source')} {rt.header.get('commit', '')[:7]}"
            print(f"{rt.name:18} Python {rt.python:5} {src} ({rt.header.get('date')}); {how}")
        return 0
    (runtime,) = load(args.name)
    if args.command == "plan":
        steps = plan(runtime)
        print("install:", " ".join(steps.requirements))
        print(f"constraints: {len(steps.constraints)} pins")
        for line, reason in steps.skipped:
            print(f"skipped: {line.split()[0]}: {reason}")
        return 0
    out = args.out or ROOT / "build" / "runtimes" / runtime.name
    from tools import outputs

    # Its constraints, executed copies, report and release copy go only into a folder it made.
    outputs.refuse_inputs(out, [path for path, _ in notebooks_of(runtime)[0]])
    outputs.claim(out, "tools.runtimes")
    if args.command == "install":
        install(runtime, out)
        return 0
    return _run_and_report(runtime, out, args.notebook)


def _run_and_report(runtime: Runtime, out: Path, only: list[str] | None) -> int:
    start = time.perf_counter()
    records = run(runtime, out, only)
    _, left_out = notebooks_of(runtime)
    report = {"runtime": runtime.name, "python": sys.version.split()[0], "header": runtime.header}
    report |= {"seconds": round(time.perf_counter() - start), "notebooks": records}
    report["left_out"] = [{"notebook": p.stem, "why": why} for p, why in left_out]
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    failed = [r for r in records if r["outcome"].startswith("FAILED")]
    for record in failed:
        print(f"{record['notebook']}: {record['outcome']}")
    print(f"{runtime.name}: {len(records) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed or not records else 0


if __name__ == "__main__":
    sys.exit(main())
