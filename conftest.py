"""nbval's settings for the notebook copies that `nox -s tests` runs (`tools.runs.notebooks
prepare`).

pytest reads this file for every path under the repository, `build/nbval/` included, which a
`tests/conftest.py` would not reach.
"""

import os

import pytest


def pytest_collectstart(collector):
    """Leaves stderr out of nbval's comparison: it carries TensorFlow's log lines, which differ
    between runs and machines (tests/references store none)."""
    if hasattr(collector, "skip_compare"):  # nbval's collector of one notebook
        collector.skip_compare += ("stderr",)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A notebook's kernel starts without the choices a test made for this process (a test that
    called `get_strategy()` set KERAS_BACKEND=tensorflow; notebook 10 needs its own backend)."""
    if item.path.suffix == ".ipynb":
        from tools.runs.notebooks import PROCESS_CHOICES  # papermill: only where notebooks run

        for name in PROCESS_CHOICES:
            os.environ.pop(name, None)
