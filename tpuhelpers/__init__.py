"""Helpers for the TPU curriculum notebooks: hardware detection, data, plumbing and checks.

Importing this package does not import TensorFlow, so `quiet_tensorflow()` and the CPU split in
`hardware.get_strategy(cpu_replicas=N)` can still act before TensorFlow starts."""

from tpuhelpers.tpu import quiet_tensorflow

__all__ = ["quiet_tensorflow"]
__version__ = "0.3.0"
