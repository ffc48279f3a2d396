"""Choose the Keras backend with a check: Keras reads `KERAS_BACKEND` once, when first imported.

Too late (`import tensorflow` imports Keras too), Keras ignores the variable without a word;
`use_keras_backend` says so instead. Importing this module imports neither JAX nor Keras.
"""

from __future__ import annotations

import os
import sys

from tpuhelpers import checks

BACKENDS = ("jax", "tensorflow", "torch", "numpy", "openvino")
RESTART = "Restart the kernel (on Colab: Runtime > Restart session)"


class KerasBackendError(RuntimeError):
    """Keras already uses, or is told to use, another backend than the one asked for."""


def use_keras_backend(name: str) -> str:
    """Sets `os.environ["KERAS_BACKEND"] = name` if no other backend was chosen already.

    Args:
        name: A Keras 3 backend: "jax", "tensorflow", "torch", "numpy" or "openvino".

    Returns:
        `name`. Calling again with the backend Keras already has is harmless.

    Raises:
        ValueError: `name` is not a Keras backend.
        KerasBackendError: Keras was already imported with another backend, or
            `KERAS_BACKEND` is already set to another one.
    """
    checks.one_of(name, BACKENDS, "Keras backend")
    keras = sys.modules.get("keras")
    if keras is not None and hasattr(keras, "backend"):
        current = keras.backend.backend()
        if current != name:
            raise KerasBackendError(
                f"Keras was already imported with the {current!r} backend (`import tensorflow` "
                f"imports Keras too), and a process cannot switch to {name!r}. {RESTART} and call "
                f"use_keras_backend({name!r}) before anything imports keras or tensorflow."
            )
    elif os.environ.get("KERAS_BACKEND", "") not in ("", name):
        raise KerasBackendError(
            f"KERAS_BACKEND is already set to {os.environ['KERAS_BACKEND']!r}, not {name!r} (by "
            "this process or the environment Jupyter started in). Remove it with "
            "`os.environ.pop('KERAS_BACKEND')` (or unset it before starting Jupyter) and run "
            "this again."
        )
    os.environ["KERAS_BACKEND"] = name
    return name
