"""Fixtures the test files share."""

import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping

import pytest


@pytest.fixture
def run_python() -> Callable[..., subprocess.CompletedProcess]:
    """`run_python(code, env, timeout=180)`: runs `code` (dedented) in a fresh interpreter with
    exactly the environment `env` (each test file says which variables its children keep), and
    fails the test with the tail of its stderr unless it exits 0."""

    def run(code: str, env: Mapping[str, str], timeout: float = 180) -> subprocess.CompletedProcess:
        command = [sys.executable, "-c", textwrap.dedent(code)]
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=dict(env)
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return result

    return run
