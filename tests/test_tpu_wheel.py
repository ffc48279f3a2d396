"""The real tensorflow-tpu wheel on a machine without TPU chips (`nox -s tpu_stack` runs these).

Each test starts a fresh interpreter: what matters is what happens at `import tensorflow` and at
TPU initialization, with the environment a reader has.
"""

from __future__ import annotations

import os

import pytest

from tpuhelpers import tpu

pytestmark = [
    pytest.mark.skipif(tpu.tpu_wheel_version() is None, reason="tensorflow-tpu not here"),
    pytest.mark.skipif(bool(tpu.tpu_device_files()), reason="this machine has a TPU"),
]
ENV_WITHOUT_TPU_SETTINGS = {
    k: v
    for k, v in os.environ.items()
    if k not in ("TPU_SKIP_MDS_QUERY", "TPU_NAME", "TPU_CONFIG", "COLAB_TPU_ADDR")
    and not k.startswith("TPUHELPERS_")
}


def wheel_env(**extra: str) -> dict[str, str]:
    """This process's environment without its TPU settings, for one child interpreter."""
    # Without ALLOW_MULTIPLE_LIBTPU_LOAD, libtpu stays unloaded while another process (this
    # one) holds its lock.
    quiet = {"TF_CPP_MIN_LOG_LEVEL": "2", "ALLOW_MULTIPLE_LIBTPU_LOAD": "1"}
    return {**ENV_WITHOUT_TPU_SETTINGS, **quiet, **extra}


def test_quiet_tensorflow_keeps_the_import_from_waiting_for_the_metadata_server(run_python):
    # Without TPU_SKIP_MDS_QUERY, a bare `import tensorflow` retries for more than 5 minutes.
    result = run_python(
        """
        import time
        start = time.monotonic()
        import tpuhelpers
        tpuhelpers.quiet_tensorflow()
        import tensorflow as tf
        print(f"imported in {time.monotonic() - start:.0f} s")
        """,
        wheel_env(),
        timeout=90,
    )
    assert result.stdout.startswith(
        "Note: tensorflow-tpu 2.19.1 is installed, but this machine has no TPU chip"
    )
    assert "set TPU_SKIP_MDS_QUERY=1" in result.stdout


def test_the_tpu_system_device_is_not_taken_for_a_tpu(run_python):
    result = run_python(
        """
        import tpuhelpers
        tpuhelpers.quiet_tensorflow()
        import tensorflow as tf
        from tpuhelpers import hardware
        strategy = hardware.get_strategy(cpu_replicas=2)
        print([d.device_type for d in tf.config.list_logical_devices()])
        print(hardware.describe(strategy))
        from tools.runs import bench
        print(bench.accelerator_device())
        """,
        wheel_env(TPU_SKIP_MDS_QUERY="1"),
    )
    devices, *report, device = result.stdout.strip().splitlines()
    assert "TPU_SYSTEM" in devices
    assert "Hardware:  CPU" in report and "Replicas:  2" in report
    assert report[-1] == (
        "Note:      tensorflow-tpu 2.19.1 is installed, but this machine has no TPU chip (no "
        "/dev/accel* or /dev/vfio/N device): using the CPU."
    )
    assert device == "/CPU:0"


def test_auto_falls_back_to_2_cpu_replicas_since_the_wheel_cannot_jit_for_the_cpu(run_python):
    result = run_python(
        """
        import tpuhelpers
        tpuhelpers.quiet_tensorflow()
        import tensorflow as tf
        from tpuhelpers import hardware
        strategy = hardware.get_strategy()
        print(hardware.describe(strategy).num_replicas)
        print(hardware.describe(strategy).notes[0].split(": using ")[1])
        jit = tf.function(lambda x: x * 2, jit_compile=True)
        try:
            jit(tf.ones(2))
        except tf.errors.NotFoundError as error:
            print(str(error).splitlines()[0][:60])
        """,
        wheel_env(TPU_SKIP_MDS_QUERY="1"),
    )
    replicas, using, jit_error = result.stdout.strip().splitlines()
    assert replicas == "2"
    assert using == "the CPU split into 2 replicas (this wheel's XLA has no CPU backend)."
    assert jit_error == "could not find registered transfer manager for platform Host"


def test_forcing_the_tpu_gives_the_helpers_error_not_a_ret_check(run_python):
    result = run_python(
        """
        from tpuhelpers import hardware
        try:
            hardware.get_strategy("tpu")
        except hardware.AcceleratorNotFoundError as error:
            print(error)
        """,
        wheel_env(TPU_SKIP_MDS_QUERY="1"),
    )
    assert "the wheel alone is not a TPU" in result.stdout
    assert "RET_CHECK" not in result.stdout + result.stderr


def test_tpu_local_on_the_wheel_without_chips_is_a_connection_error(run_python):
    # TPU_NAME=local points at a TPU VM: initialization fails late, with InternalError.
    result = run_python(
        """
        from tpuhelpers import hardware
        print(hardware.describe(hardware.get_strategy()).notes[0][:40])  # auto: falls back
        try:
            hardware.get_strategy("tpu")
        except hardware.TpuConnectionError as error:
            print(type(error.__cause__).__name__)
            print(str(error).splitlines()[0][:120])
        """,
        wheel_env(TPU_SKIP_MDS_QUERY="1", TPU_NAME="local"),
    )
    fallback, cause, message = result.stdout.strip().splitlines()
    assert fallback == "TPU not usable, fell back: Could not con"
    assert cause == "InternalError"
    assert message.startswith("Could not connect to the TPU (TPU_NAME='local' (TPU VM))")


def test_get_strategy_outside_a_notebook_raises_at_once_without_quiet_tensorflow(run_python):
    # No quiet_tensorflow(), no TPU_SKIP_MDS_QUERY: the helper bounds the wheel's import itself
    # (tpu.import_tensorflow) before it counts GPUs, instead of waiting minutes for the server.
    result = run_python(
        """
        import time
        start = time.monotonic()
        from tpuhelpers import hardware
        try:
            hardware.get_strategy(accelerator="tpu")
        except hardware.AcceleratorNotFoundError as error:
            print(type(error).__name__, f"{time.monotonic() - start:.0f} s")
        """,
        wheel_env(),
        timeout=90,
    )
    assert result.stdout.startswith("AcceleratorNotFoundError"), result.stdout
