"""The runtimes readers open the notebooks in (Colab, Kaggle), rebuilt from their package lists.

    python -m tools.ci.runtimes list                  # runtimes, Pythons, sources
    python -m tools.ci.runtimes refresh --colab DIR --kaggle DIR   # rewrite the lists
    python -m tools.ci.runtimes plan NAME             # what a session installs, skips
    python -m tools.ci.runtimes install NAME          # into this interpreter (the runtime's Python)
    python -m tools.ci.runtimes run NAME [--out DIR]  # every notebook, from cell 1

`stacks/runtimes/runtimes.toml` names the runtimes and the rules; `refresh` reads the package
lists from git checkouts (bare or not) of googlecolab/backend-info and Kaggle/docker-python and
writes one `stacks/runtimes/<name>.txt` each, headed by its source, commit, date and Python: all
lists or none, each checked first (`check_list`: an HTML page is no package list). runtimes.toml
is checked against a schema where it is read (`check_settings`). Reading and checking those
files is `tools.ci.runtime_files`'; this module plans, installs and runs.
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
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tools import paths, pins  # standard library only, like this module
from tools.ci.runtime_files import CONFIG as CONFIG
from tools.ci.runtime_files import Runtime, install_stack, load, normalize
from tools.ci.runtime_files import RuntimeListError as RuntimeListError
from tools.ci.runtime_files import refresh as refresh
from tools.ci.runtime_files import settings as settings

ROOT = paths.ROOT

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
            f"{runtime.list_path} is missing or empty: run `python -m tools.ci.runtimes refresh`."
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
    """Names the list's file, line and text behind a pip failure over one package (missing from
    the index, or the index not reached), with pip's cause first."""
    named = re.search(
        r"No matching distribution found for (\S+)|pip found no (\S+?) for Python|"
        r"could not reach the package index for (\S+?)[ :]",
        message,
    )
    name = requirement_name(next(g for g in named.groups() if g)) if named else None
    found = [(n, line) for n, line in numbered_lines(runtime) if requirement_name(line) == name]
    if not name or not found:
        return None
    number, line = found[0]
    where = f"{display(runtime.list_path)}{f' line {number}' if number else ''}"
    fix = (
        "check the network and run the session again"
        if "could not reach" in message
        else "add a rule with its reason under [skip] in stacks/runtimes/runtimes.toml, or "
        "refresh the list if the runtime changed"
    )
    cause = message.splitlines()[0]
    rest = "\n".join(message.splitlines()[1:])
    return (
        f"{where} has {line!r}, which pip could not install for Python {runtime.python}: "
        f"{fix}.\npip: {cause}\n{rest}"
    )


def numbered_lines(runtime: Runtime) -> list[tuple[int, str]]:
    """The runtime's requirement lines with their line numbers in its list file (0 where the
    file does not hold the line)."""
    try:
        text = runtime.list_path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        text = []
    numbers = {line.strip(): n for n, line in reversed(list(enumerate(text, 1)))}
    return [(numbers.get(line, 0), line) for line in runtime.lines]


def display(path: Path) -> str:
    """`path` relative to the checkout where it lies in it, else as given."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


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
    from tools.runs import notebooks

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

    outputs.clear(folder, "tools.ci.runtimes")  # replaced only where an earlier run made it
    outputs.claim(folder, "tools.ci.runtimes")
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
    from tools import notebook

    return notebook.read(executed).cells if executed.is_file() else []


# Refresh: the lists from their publishers' repositories --------------------------------------


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
        parser.error(f"{args.command} needs a runtime name: see `python -m tools.ci.runtimes list`")
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
    outputs.claim(out, "tools.ci.runtimes")
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
