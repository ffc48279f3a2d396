"""Set `KERAS_BACKEND` with a check (Keras ignores it if set late); imports no JAX or Keras."""

import os
import sys

from tpuhelpers import checks

BACKENDS = ("jax", "tensorflow", "torch", "numpy", "openvino")
RESTART = "Restart the kernel (on Colab: Runtime > Restart session)"


class KerasBackendError(RuntimeError):
    """Keras already uses, or is told to use, another backend than the one asked for."""


def use_keras_backend(name: str) -> str:
    """Sets KERAS_BACKEND to `name`, repeatable; KerasBackendError where another one is set."""
    checks.one_of(name, BACKENDS, "Keras backend")
    keras = sys.modules.get("keras")
    current = keras.backend.backend() if hasattr(keras, "backend") else None
    if current not in (None, name):
        raise KerasBackendError(
            f"Keras was already imported with the {current!r} backend (`import tensorflow` "
            f"imports Keras too), and a process cannot switch to {name!r}. {RESTART} and call "
            f"use_keras_backend({name!r}) before anything imports keras or tensorflow."
        )
    if current is None and os.environ.get("KERAS_BACKEND", "") not in ("", name):
        raise KerasBackendError(
            f"KERAS_BACKEND is already set to {os.environ['KERAS_BACKEND']!r}, not {name!r} (by "
            "this process or the environment Jupyter started in). Unset it with "
            "`os.environ.pop('KERAS_BACKEND')` (or before starting Jupyter) and run this again."
        )
    os.environ["KERAS_BACKEND"] = name
    return name
