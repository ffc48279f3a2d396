"""`tpuhelpers.jax_setup`, for real: each case runs in a fresh interpreter (no fakes of JAX)."""

import os
import subprocess
import sys
import textwrap

import pytest

from tpuhelpers import jax_setup


def run_python(code: str, **env: str) -> str:
    """Runs `code` in a fresh interpreter, without KERAS_BACKEND or XLA_FLAGS; returns stdout."""
    keep = {k: v for k, v in os.environ.items() if k in ("HOME", "TPU_SKIP_MDS_QUERY")}
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=180,
        env={"PATH": "/usr/bin:/bin", "TF_CPP_MIN_LOG_LEVEL": "2", **keep, **env},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_importing_the_module_imports_neither_jax_nor_keras():
    out = run_python("""
        import sys
        from tpuhelpers import jax_setup
        print(sorted(m for m in ("jax", "keras", "tensorflow") if m in sys.modules))
    """)
    assert out.strip() == "[]"


def test_keras_gets_the_backend_asked_for():
    out = run_python("""
        from tpuhelpers import jax_setup
        jax_setup.use_keras_backend("jax")
        import keras
        print(keras.backend.backend(), jax_setup.use_keras_backend("jax"))  # again: harmless
    """)
    assert out.split() == ["jax", "jax"]


def test_keras_already_imported_with_another_backend_says_restart_the_kernel():
    out = run_python("""
        import tensorflow  # imports Keras, with its default backend, tensorflow
        from tpuhelpers import jax_setup
        try:
            jax_setup.use_keras_backend("jax")
        except jax_setup.KerasBackendError as error:
            print(error)
        import keras
        print("backend:", keras.backend.backend())
    """)
    assert "already imported with the 'tensorflow' backend" in out
    assert "Restart the kernel" in out
    assert "backend: tensorflow" in out


def test_keras_backend_set_to_another_in_the_environment_is_refused():
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
        KERAS_BACKEND="torch",
    )
    assert "KERAS_BACKEND is already set to 'torch', not 'jax'" in out
    assert "os.environ.pop('KERAS_BACKEND')" in out
    assert "KERAS_BACKEND: torch" in out
    assert "backend: jax" in out


@pytest.mark.parametrize("name", ["JAX", "tf", "", None])
def test_unknown_backend_names_are_refused(name):
    with pytest.raises(ValueError, match="Unknown Keras backend .* choose one of jax, tensorflow"):
        jax_setup.use_keras_backend(name)


@pytest.mark.parametrize("devices", [1, 3])
def test_cpu_split_gives_that_many_jax_devices(devices):
    out = run_python(f"""
        from tpuhelpers import jax_setup
        jax_setup.split_jax_cpu({devices})
        import jax
        import jax.numpy as jnp
        from jax.sharding import Mesh, NamedSharding, PartitionSpec
        mesh = Mesh(jax.devices(), ("batch",))
        x = jax.device_put(jnp.arange({devices} * 2.0), NamedSharding(mesh, PartitionSpec("batch")))
        print(len(jax.devices()), jax.devices()[0].platform, len(x.addressable_shards))
    """)
    assert out.split() == [str(devices), "cpu", str(devices)]


def test_cpu_split_after_jax_started_says_restart_the_kernel():
    out = run_python("""
        import jax
        from tpuhelpers import jax_setup
        print(len(jax.devices()))  # starts JAX's backend, with one CPU device
        try:
            jax_setup.split_jax_cpu(4)
        except jax_setup.JaxCpuSplitError as error:
            print(error)
        print(jax_setup.split_jax_cpu(1), len(jax.devices()))  # the count it has is fine
    """)
    lines = out.splitlines()
    assert lines[0] == "1"
    assert "Cannot split the CPU into 4 JAX devices" in out
    assert "already started with 1 CPU device " in out
    assert "Restart the kernel" in out
    assert lines[-1] == "1 1"


def test_cpu_split_survives_a_rerun_after_jax_started():
    out = run_python("""
        from tpuhelpers import jax_setup
        jax_setup.split_jax_cpu(2)
        import jax
        print(len(jax.devices()))
        print(jax_setup.split_jax_cpu(2))  # re-running the set-up cell
    """)
    assert out.split() == ["2", "2"]


@pytest.mark.parametrize("devices", [0, -2, True, 2.0, "2", None])
def test_bad_cpu_device_counts_are_refused(devices):
    with pytest.raises(ValueError, match="must be a positive integer"):
        jax_setup.split_jax_cpu(devices)
