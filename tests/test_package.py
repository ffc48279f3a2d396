"""The reader package: what a notebook reader installs, built and installed for real.

The wheel holds `tpuhelpers` only (the repository tooling in `tools/` is not packaged), and
every module imports with the runtime dependencies alone: no TensorFlow, no tooling.
"""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(p.stem for p in (ROOT / "tpuhelpers").glob("*.py") if p.stem != "__init__")


@pytest.mark.slow
def test_the_wheel_installs_and_imports_without_the_tooling(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("tpuhelpers-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("tools/")], names
    assert {f"tpuhelpers/{m}.py" for m in MODULES} <= set(names)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "-c", str(ROOT / "stacks" / "cpu.txt"), wheel],
        check=True,
        timeout=600,
    )
    code = "import importlib\n" + "".join(
        f"importlib.import_module('tpuhelpers.{m}')\n" for m in MODULES
    )
    result = subprocess.run(
        [str(python), "-c", code + "import sys; print('tensorflow' in sys.modules)"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "False"  # importing the helpers never imports TensorFlow


# The reader package holds only what is too long to inline into a notebook (CONTRIBUTING.md).
MAX_MODULE_LINES, MAX_FUNCTION_LINES, MAX_CLASS_LINES = 400, 60, 150
# The whole reader package, docstrings included (CONTRIBUTING.md, "Rules for `tpuhelpers`").
MAX_PACKAGE_LINES = 1500


def _sizes() -> list[tuple[str, str, int]]:
    import ast

    rows = []
    for path in sorted((ROOT / "tpuhelpers").glob("*.py")):
        text = path.read_text()
        rows.append(("module", path.name, len(text.splitlines())))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                rows.append((kind, f"{path.name}:{node.name}", node.end_lineno - first + 1))
    return rows


def test_the_reader_package_stays_small() -> None:
    limits = {"module": MAX_MODULE_LINES, "function": MAX_FUNCTION_LINES, "class": MAX_CLASS_LINES}
    too_long = [f"{kind} {name}: {n} lines" for kind, name, n in _sizes() if n > limits[kind]]
    assert not too_long, too_long
    total = sum(n for kind, _, n in _sizes() if kind == "module")
    assert total <= MAX_PACKAGE_LINES, (
        f"tpuhelpers/ has {total} lines (at most {MAX_PACKAGE_LINES})"
    )
