"""The reader package: what a notebook reader installs, built and installed for real.

The wheel holds `tpuhelpers` only (the repository tooling in `tools/` is not packaged), and
every module imports with the runtime dependencies alone: no TensorFlow, no dev extras.
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
def test_the_wheel_installs_and_imports_without_dev_extras(tmp_path: Path) -> None:
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
