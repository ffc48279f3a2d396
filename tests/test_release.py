"""The release every install cell downloads exists in this repository and holds the current
install script, pins and helper package (CONTRIBUTING, "Stacks and releases": moving it)."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

from tools import notebook, paths

ROOT = Path(__file__).resolve().parents[1]
# What cell 1 takes from the release: the script, the pins it installs under, the helper.
RELEASED = ("stacks/install.py", "stacks/cpu.txt", "stacks/gpu.txt", "stacks/jax.txt")
RELEASED += ("stacks/pytorch_xla.txt", "stacks/tpu.txt", "tpuhelpers")


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)


def test_the_release_resolves_to_a_commit_of_main():
    release = notebook.release()
    found = git("rev-parse", "--verify", "--quiet", f"{release}^{{commit}}")
    assert found.returncode == 0, (
        f"[tool.tpuhelpers] release = {release!r} is no commit of this repository (a shallow "
        "clone lacks it too: fetch the history)."
    )
    ancestor = git("merge-base", "--is-ancestor", found.stdout.strip(), "HEAD")
    assert ancestor.returncode == 0, f"release {release} is not an ancestor of HEAD"


def test_the_release_holds_the_current_script_pins_and_helper():
    release = notebook.release()
    differ = git("diff", "--stat", release, "--", *RELEASED)
    assert differ.returncode == 0, differ.stderr
    assert not differ.stdout.strip(), (
        f"The install cells' release {release} differs from this tree in what they install:\n"
        f"{differ.stdout}Commit these files, set [tool.tpuhelpers] release in pyproject.toml to "
        "that commit, run `python -m tools.ci.nbcheck --fix` (CONTRIBUTING, 'Stacks and releases')."
    )


def test_the_release_builds_the_same_package():
    # pyproject.toml names the release itself, so only its [project] table must agree; extras
    # are not part of it: cell 1 installs the helper without any (the tooling's versions live in
    # stacks/tools.txt, not in an extra).
    then = tomllib.loads(git("show", f"{notebook.release()}:pyproject.toml").stdout)
    now = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for table in (then, now):
        table["project"].pop("optional-dependencies", None)
    assert then["project"] == now["project"]


def test_every_install_cell_names_the_release():
    cells = {notebook.install_cell(path) for path in paths.all_notebooks()}
    assert all(f'RELEASE = "{notebook.release()}"' in cell for cell in cells)
