"""`tpuhelpers.jax_setup`, for real: each case runs Keras in a fresh interpreter (no fakes)."""

import os

import pytest

from tpuhelpers import jax_setup


def jax_env(**extra: str) -> dict[str, str]:
    """A fresh interpreter's environment: without KERAS_BACKEND or XLA_FLAGS."""
    keep = {k: v for k, v in os.environ.items() if k in ("HOME", "TPU_SKIP_MDS_QUERY")}
    return {"PATH": "/usr/bin:/bin", "TF_CPP_MIN_LOG_LEVEL": "2", **keep, **extra}


def test_importing_the_module_imports_neither_jax_nor_keras(run_python):
    out = run_python(
        """
        import sys
        from tpuhelpers import jax_setup
        print(sorted(m for m in ("jax", "keras", "tensorflow") if m in sys.modules))
    """,
        jax_env(),
    ).stdout
    assert out.strip() == "[]"


def test_keras_gets_the_backend_asked_for(run_python):
    out = run_python(
        """
        from tpuhelpers import jax_setup
        jax_setup.use_keras_backend("jax")
        import keras
        print(keras.backend.backend(), jax_setup.use_keras_backend("jax"))  # again: harmless
    """,
        jax_env(),
    ).stdout
    assert out.split() == ["jax", "jax"]


def test_keras_already_imported_with_another_backend_says_restart_the_kernel(run_python):
    out = run_python(
        """
        import tensorflow  # imports Keras, with its default backend, tensorflow
        from tpuhelpers import jax_setup
        try:
            jax_setup.use_keras_backend("jax")
        except jax_setup.KerasBackendError as error:
            print(error)
        import keras
        print("backend:", keras.backend.backend())
    """,
        jax_env(),
    ).stdout
    assert "already imported with the 'tensorflow' backend" in out
    assert "Restart the kernel" in out
    assert "backend: tensorflow" in out


def test_keras_backend_set_to_another_in_the_environment_is_refused(run_python):
    out = run_python(
        """
        import os
        from tpuhelpers import jax_setup
        try:
            jax_setup.use_keras_backend("jax")
        except jax_setup.KerasBackendError as error:
            print(error)
        print("KERAS_BACKEND:", os.environ["KERAS_BACKEND"])  # left as it was
        os.environ.pop("KERAS_BACKEND")  # the fix the message gives
        jax_setup.use_keras_backend("jax")
        import keras
        print("backend:", keras.backend.backend())
    """,
        jax_env(KERAS_BACKEND="torch"),
    ).stdout
    assert "KERAS_BACKEND is already set to 'torch', not 'jax'" in out
    assert "os.environ.pop('KERAS_BACKEND')" in out
    assert "KERAS_BACKEND: torch" in out
    assert "backend: jax" in out


@pytest.mark.parametrize("name", ["JAX", "tf", "", None])
def test_unknown_backend_names_are_refused(name):
    with pytest.raises(ValueError, match="Unknown Keras backend .* choose one of jax, tensorflow"):
        jax_setup.use_keras_backend(name)
