"""Which training API works with which strategy, per stack: `support_table.json`'s tables."""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from tpuhelpers import checks, tpu, training

REFERENCE = Path(__file__).with_name("support_table.json")
WHEELS = ("tensorflow-tpu", "tensorflow-cpu", "tensorflow")  # provide `tensorflow`, in lookup order
STRATEGIES = {  # measured, in table order: key -> label
    "default": "Default strategy",
    "one_device": "OneDeviceStrategy('/cpu:0')",
    "mirrored": "MirroredStrategy, 2 CPU devices",
    "mirrored_spe4": "MirroredStrategy, 2 CPU devices, 4 steps per call",
    "multi_worker": "MultiWorkerMirroredStrategy, 2 processes",
    "central_storage": "CentralStorageStrategy, 2 CPU devices",
    "parameter_server": "ParameterServerStrategy, 2 workers + 1 ps",
    "parameter_server_sharded": "ParameterServerStrategy + variable_partitioner",
    "tpu": "TPUStrategy",
    "nccl": "MirroredStrategy + NcclAllReduce",
}
APIS = {"fit": "Model.fit", "loop": "custom loop (guide)", "loop_built": "loop + optimizer.build"}


@dataclass(frozen=True)
class Stack:
    """A software stack: Keras flavor (`keras3`, `tf-keras`), TensorFlow version, wheel."""

    flavor: str
    tensorflow: str
    wheel: str = "tensorflow"
    keras: str = ""

    def __post_init__(self) -> None:
        for name in ("flavor", "tensorflow", "keras"):
            checks.of_type(getattr(self, name), str, f"Stack.{name}")
        checks.one_of(self.wheel, WHEELS, "Stack.wheel")

    @property
    def key(self) -> str:
        """The table's key (tensorflow-tpu apart: its XLA cannot compile for a CPU)."""
        suffix = " (tensorflow-tpu)" if self.wheel == "tensorflow-tpu" else ""
        return f"{self.flavor} / TensorFlow {self.tensorflow}{suffix}"


def current_stack() -> Stack:
    """The stack of this process (imports TensorFlow)."""
    wheel = next((w for w in WHEELS if any(metadata.distributions(name=w))), "tensorflow")
    keras = training.keras_version().split()[-1]  # tf-keras' tf.keras has no __version__
    return Stack(training.keras_flavor(), tpu.import_tensorflow().__version__, wheel, keras)


def load_reference(path: Path = REFERENCE) -> dict[str, Any]:
    """Every committed table, by key."""
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _version(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def nearest_reference(stack: Stack | None = None, path: Path = REFERENCE) -> dict[str, Any]:
    """The committed table of `stack` (default: this one), else the nearest, with a `note`."""
    stack = checks.of_type(stack or current_stack(), Stack, "stack")
    if not (tables := load_reference(path)):
        raise LookupError(f"{path} holds no table: run `nox -s support_table` to measure.")
    if stack.key in tables:
        return {"key": stack.key, **tables[stack.key]}
    tpu, wanted = stack.wheel == "tensorflow-tpu", _version(stack.tensorflow)

    def preference(key: str) -> tuple:
        version = _version(tables[key]["tensorflow"])
        newer = version > wanted
        other_wheel = (tables[key].get("wheel") == "tensorflow-tpu") != tpu
        order = version if newer else tuple(-part for part in version)
        return tables[key]["flavor"] != stack.flavor, other_wheel, newer, order

    nearest = min(tables, key=preference)
    note = f"No table was measured for {stack.key}: showing the nearest, {nearest}."
    return {"key": nearest, **tables[nearest], "note": note}


def format_table(table: Mapping[str, Any]) -> str:
    """A table's text (a row per strategy, a column per API), after its `note` if it has one."""
    return (f"Note: {table['note']}\n\n" if table.get("note") else "") + table["text"]
