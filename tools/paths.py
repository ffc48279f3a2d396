"""The repository's places and addresses, in one home: its root, its notebooks (by language and
stack), its settings in pyproject.toml, and the "Open in Colab" and "Open in Kaggle" URLs and
badges of each notebook.

Standard library only: noxfile.py imports it, in nox's own environment.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SOURCE = "en"  # the language the others are translated from
BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
KAGGLE_BADGE_IMAGE = "https://kaggle.com/static/images/open-in-kaggle.svg"
# Notebooks whose file name contains the key run on that stack (stacks/install.py), the others on
# TensorFlow's. `pytorch` notebooks need an environment of their own (`nox -s pytorch_xla`): the
# default test run and `tools.runs.notebooks run` without named notebooks leave them out.
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


def github_url(path: Path, root: Path = ROOT) -> str:
    """Returns the GitHub URL of the file at `path` in the checkout at `root` (on the branch)."""
    settings = project_settings(ROOT)
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    return f"https://github.com/{settings['repository']}/blob/{settings['branch']}/{relative}"


def colab_url(path: Path, root: Path = ROOT) -> str:
    """Returns the "Open in Colab" URL of the notebook at `path` in the checkout at `root`."""
    settings = project_settings(ROOT)
    relative = path.resolve().relative_to(root.resolve()).as_posix()
    return (
        f"https://colab.research.google.com/github/{settings['repository']}/blob/"
        f"{settings['branch']}/{relative}"
    )


def kaggle_url(path: Path, root: Path = ROOT) -> str:
    """Returns the "Open in Kaggle" URL of the notebook at `path` in the checkout at `root`:
    Kaggle imports the notebook from its GitHub URL."""
    return f"https://kaggle.com/kernels/welcome?src={github_url(path, root)}"


def badge(path: Path, root: Path = ROOT, image: str = BADGE_IMAGE) -> str:
    """Returns the markdown of a notebook's "Open in Colab" badge (`image`: another copy of the
    badge's picture, such as the site's local one)."""
    return f"[![Open In Colab]({image})]({colab_url(path, root)})"


def kaggle_badge(path: Path, root: Path = ROOT, image: str = KAGGLE_BADGE_IMAGE) -> str:
    """Returns the markdown of a notebook's "Open in Kaggle" badge."""
    return f"[![Open In Kaggle]({image})]({kaggle_url(path, root)})"


def badges(path: Path, root: Path = ROOT) -> str:
    """Returns a notebook's badge line: its Colab badge, a space, its Kaggle badge."""
    return f"{badge(path, root)} {kaggle_badge(path, root)}"


if __name__ == "__main__":
    raise SystemExit("tools.paths has no command line: the other tools use it.")
