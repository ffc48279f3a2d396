"""Set up Keras on JAX: the Keras backend and JAX's virtual CPU devices, in the right order.

Both are fixed once per process: Keras reads `KERAS_BACKEND` when it is first imported (and
`import tensorflow` imports it), JAX fixes its CPU devices when its backend starts (at the first
array, computation or `jax.devices()`). Too late, Keras ignores the variable without a word, and
JAX's error does not say how to recover; these helpers say what to do. Importing this module
imports neither JAX nor Keras.

    jax_setup.use_keras_backend("jax")  # before anything imports keras or TensorFlow
    jax_setup.split_jax_cpu(8)  # before JAX's backend starts
"""

from __future__ import annotations

import os
import sys

BACKENDS = ("jax", "tensorflow", "torch", "numpy", "openvino")
RESTART = "Restart the kernel (on Colab: Runtime > Restart session)"


class KerasBackendError(RuntimeError):
    """Keras already uses, or is told to use, another backend than the one asked for."""


class JaxCpuSplitError(RuntimeError):
    """JAX's backend already started with another number of CPU devices."""


def use_keras_backend(name: str) -> str:
    """Makes Keras use the backend `name`: sets `os.environ["KERAS_BACKEND"]`, after checks.

    Keras reads the variable once, when it is first imported, and a process cannot switch
    backends later. Calling this again with the backend Keras already has is harmless.

    Args:
        name: A Keras 3 backend: "jax", "tensorflow", "torch", "numpy" or "openvino".

    Returns:
        `name`.

    Raises:
        ValueError: `name` is not a Keras backend.
        KerasBackendError: Keras was already imported with another backend, or `KERAS_BACKEND`
            is already set to another backend.
    """
    if name not in BACKENDS:
        raise ValueError(f"Unknown Keras backend {name!r}: choose one of {', '.join(BACKENDS)}.")
    keras = sys.modules.get("keras")
    if keras is not None and hasattr(keras, "backend"):
        current = keras.backend.backend()
        if current != name:
            raise KerasBackendError(
                f"Keras was already imported with the {current!r} backend (`import tensorflow` "
                f"imports Keras too), and a process cannot switch to {name!r}. {RESTART} and call "
                f"use_keras_backend({name!r}) before anything imports keras or tensorflow."
            )
    else:
        current = os.environ.get("KERAS_BACKEND", "")
        if current not in ("", name):
            raise KerasBackendError(
                f"KERAS_BACKEND is already set to {current!r}, not {name!r} (by this process or "
                "the environment Jupyter started in). Remove it with "
                "`os.environ.pop('KERAS_BACKEND')` (or unset it before starting Jupyter) and run "
                "this again."
            )
    os.environ["KERAS_BACKEND"] = name
    return name


def split_jax_cpu(devices: int) -> int:
    """Splits the host CPU into `devices` virtual JAX devices, before JAX's backend starts.

    Calls `jax.config.update("jax_num_cpu_devices", devices)`. Only JAX's CPU backend changes: on
    a TPU or GPU machine `jax.devices()` still lists the accelerator's devices. Calling this
    again with the count JAX already has is harmless; another count cannot take effect once
    JAX's backend has started (`XLA_FLAGS=--xla_force_host_platform_device_count=N` would then
    be ignored silently).

    Args:
        devices: How many CPU devices JAX should have (1 or more).

    Returns:
        `devices`.

    Raises:
        ValueError: `devices` is not a positive integer.
        JaxCpuSplitError: JAX's backend already started with another number of CPU devices.
    """
    if isinstance(devices, bool) or not isinstance(devices, int) or devices < 1:
        raise ValueError(f"JAX's CPU device count must be a positive integer, got {devices!r}.")
    import jax

    try:
        jax.config.update("jax_num_cpu_devices", devices)
    except RuntimeError as error:  # a new count after JAX's backend started
        have = len(jax.devices("cpu"))
        if have != devices:
            raise JaxCpuSplitError(
                f"Cannot split the CPU into {devices} JAX devices: JAX's backend already "
                f"started with {have} CPU device{'s' if have > 1 else ''} (a JAX array, "
                f"computation or jax.devices() call ran first). {RESTART} and call "
                f"split_jax_cpu({devices}) before anything else uses JAX."
            ) from error
    return devices
