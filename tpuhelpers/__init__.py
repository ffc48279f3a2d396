"""Helpers for the TPU curriculum notebooks: hardware detection, data, plumbing and checks. It
imports no TensorFlow, so that `quiet_tensorflow()` and CPU splitting can act before it."""

from tpuhelpers.tpu import quiet_tensorflow

__all__ = ["quiet_tensorflow"]
__version__ = "0.4.0"
