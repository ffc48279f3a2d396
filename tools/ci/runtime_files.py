"""The runtimes' files: `stacks/runtimes/runtimes.toml` (its schema: `RUNTIME_KEYS`, `TABLES`,
`check_settings`) and the package lists `stacks/runtimes/<name>.txt` (`check_list`, `read_list`),
read into `Runtime` values (`load`) and rewritten from the runtimes' own repositories
(`refresh`). `tools.ci.runtimes` is the command line that plans, installs and runs them.

Standard library only (noxfile.py imports it).
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from tools import paths, pins  # standard library only, like this module

ROOT = paths.ROOT
FOLDER = ROOT / "stacks" / "runtimes"
CONFIG = FOLDER / "runtimes.toml"
HEADER = re.compile(r"# (\w+): (.*)")


class RuntimeListError(RuntimeError):
    """A runtime's package list or settings cannot be used; the message says the fix."""


install_stack = pins.install_stack  # stacks/install.py: the one home for running pip
normalize = pins.normalize


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
    head.append("# note: written by `python -m tools.ci.runtimes refresh`; do not edit by hand")
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


if __name__ == "__main__":
    raise SystemExit(
        "tools.ci.runtime_files has no command line: see `python -m tools.ci.runtimes`."
    )
