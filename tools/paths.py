"""The repository's places and addresses, in one home: its root, its notebooks (by language and
stack), its settings in pyproject.toml, and the "Open in Colab" URL of each notebook.

Standard library only: noxfile.py imports it, in nox's own environment.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SOURCE = "en"  # the language the others are translated from
BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
# Notebooks whose file name contains the key run on that stack (stacks/install.py), the others on
# TensorFlow's. `pytorch` notebooks need an environment of their own (`nox -s pytorch_xla`): the
# default test run and `tools.notebooks run` without named notebooks leave them out.
NAMED_STACKS = {"_jax": "jax", "_pytorch": "pytorch"}
OWN_ENVIRONMENT = ("pytorch",)


def project_settings(root: Path = ROOT) -> dict:
    """Returns `[tool.tpuhelpers]` from pyproject.toml: `repository`, `branch` and `release`."""
    with open(root / "pyproject.toml", "rb") as file:
        return tomllib.load(file)["tool"]["tpuhelpers"]


def all_notebooks(lang: str | None = None, root: Path = ROOT) -> list[Path]:
    """Returns the notebooks of one language folder (default: of every language), sorted."""
    return sorted((root / "notebooks").glob(f"{lang or '*'}/*.ipynb"))


def stack(path: Path) -> str:
    """Returns the stack a notebook needs, from its file name: `tensorflow`, `jax` or `pytorch`."""
    return next((name for key, name in NAMED_STACKS.items() if key in path.stem), "tensorflow")


def colab_url(path: Path, root: Path = ROOT) -> str:
    """Returns the "Open in Colab" URL of the notebook at `path` in the checkout at `root`."""
    settings = project_settings(ROOT)
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    return (
        f"https://colab.research.google.com/github/{settings['repository']}/blob/"
        f"{settings['branch']}/{relative}"
    )


def badge(path: Path, root: Path = ROOT) -> str:
    """Returns the markdown of a notebook's "Open in Colab" badge."""
    return f"[![Open In Colab]({BADGE_IMAGE})]({colab_url(path, root)})"


if __name__ == "__main__":
    raise SystemExit("tools.paths has no command line: the other tools use it.")
