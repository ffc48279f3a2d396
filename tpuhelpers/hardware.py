"""Find the best hardware, connect to it, and return a `tf.distribute.Strategy`.

The notebooks call two functions::

    strategy = hardware.get_strategy()   # TPU if there is one, else GPUs, else the CPU
    print(hardware.describe(strategy))   # what was found, in words

Where a TPU is looked for, in this order:

1. the `tpu=` argument: a Cloud TPU name (with `zone` and `project`), a `grpc://` address, or
   `"local"` for a TPU VM;
2. `TPU_CONFIG`: a managed training job's JSON (`tpu_node_name`, `zone`, `project`); the TPU may
   still be provisioning, so connecting is retried a bounded number of times;
3. `COLAB_TPU_ADDR`: the legacy Colab TPU node (a TPU behind a gRPC address);
4. `TPU_NAME`, or TPU device files (`/dev/accel*`, `/dev/vfio/*`): a TPU VM, which is what Colab's
   TPU runtimes are today; connected to with `TPUClusterResolver(tpu="local")`.

Without a TPU: several GPUs give a `MirroredStrategy`, one GPU a `OneDeviceStrategy`, the CPU the
default strategy, or, with `cpu_replicas=N`, a `MirroredStrategy` over N logical CPU devices, so
that every distributed code path (per-replica batches, all-reduce) runs for real on a laptop.

`TPUHELPERS_ACCELERATOR` (`auto`, `tpu`, `gpu`, `cpu`) and `TPUHELPERS_CPU_REPLICAS` set the same
choices for headless runs. TensorFlow is imported inside functions, so that CPU devices can still
be split when this module is imported.
"""

from __future__ import annotations

import glob
import importlib.metadata
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tpuhelpers import jax_setup

ACCELERATOR_ENV = "TPUHELPERS_ACCELERATOR"
CPU_REPLICAS_ENV = "TPUHELPERS_CPU_REPLICAS"
ACCELERATORS = ("auto", "tpu", "gpu", "cpu")
TPU_CONFIG_KEYS = ("tpu_node_name", "zone", "project")


class HardwareError(RuntimeError):
    """Base class of the errors raised when hardware cannot be found or set up."""


class AcceleratorNotFoundError(HardwareError):
    """The accelerator that was asked for is not on this machine."""


class TpuConnectionError(HardwareError):
    """A TPU was expected but could not be connected to or initialized."""


class CpuSplitError(HardwareError):
    """The CPU could not be split into logical devices (the runtime already started)."""


@dataclass(frozen=True)
class TpuTarget:
    """Where to look for a TPU.

    Attributes:
        tpu: The `tpu` argument of `TPUClusterResolver`: `"local"`, a name or a `grpc://` address.
        zone: Cloud zone of a named TPU, else None.
        project: Cloud project of a named TPU, else None.
        source: How the target was found, in words (shown by `describe`).
        wait: Whether the TPU may still be provisioning (a managed job), so connecting is retried.
    """

    tpu: str
    zone: str | None = None
    project: str | None = None
    source: str = ""
    wait: bool = False


@dataclass
class HardwareReport:
    """What `get_strategy` found, for people to read."""

    kind: str
    num_replicas: int
    devices: list[str]
    strategy: str
    how: str
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [
            f"Hardware:  {self.kind}",
            f"Strategy:  {self.strategy}",
            f"Replicas:  {self.num_replicas}",
            "Devices:   " + ", ".join(self.devices),
            f"How:       {self.how}",
        ]
        lines += [f"Note:      {note}" for note in self.notes]
        return "\n".join(lines)


# The errors TensorFlow raises while a TPU is missing, unreachable or still provisioning. Anything
# else is a real error and propagates untouched.
def _tpu_not_ready_errors() -> tuple[type[BaseException], ...]:
    import tensorflow as tf

    return (
        ValueError,
        ConnectionError,
        tf.errors.NotFoundError,
        tf.errors.InvalidArgumentError,
        tf.errors.UnavailableError,
        tf.errors.DeadlineExceededError,
        tf.errors.UnimplementedError,
        # tensorflow-tpu on a machine without TPU chips: a RET_CHECK in tpu_node_interfaces.cc.
        tf.errors.InternalError,
    )


def tpu_device_files() -> list[str]:
    """The device files a TPU VM has: `/dev/accel*` (v2-v4), `/dev/vfio/N` (v5e and later)."""
    return glob.glob("/dev/accel*") + glob.glob("/dev/vfio/[0-9]*")


def tpu_wheel_version() -> str | None:
    """The installed version of the `tensorflow-tpu` wheel, or None."""
    try:
        return importlib.metadata.version("tensorflow-tpu")
    except importlib.metadata.PackageNotFoundError:
        return None


def _no_chip_note(wheel: str) -> str:
    return (
        f"tensorflow-tpu {wheel} is installed, but this machine has no TPU chip (no /dev/accel* "
        "or /dev/vfio/N device)"
    )


def skip_tpu_metadata_query(
    environ: dict[str, str] | os._Environ = os.environ,
    device_files: Callable[[], list[str]] = tpu_device_files,
    wheel: Callable[[], str | None] = tpu_wheel_version,
) -> str | None:
    """Keeps the TPU wheel from waiting minutes for a Cloud metadata server that is not there.

    `import tensorflow` with `tensorflow-tpu` installed asks the Cloud metadata server about the
    TPU, retrying for more than 5 minutes on a machine outside Google Cloud. Where nothing points
    at a TPU (no TPU device file, no `TPU_NAME`, `TPU_CONFIG` or `COLAB_TPU_ADDR`), this sets
    `TPU_SKIP_MDS_QUERY=1`, which the wheel reads on import. A value already set is kept.

    Returns:
        A note saying what was done, or None when nothing was.
    """
    pointers = ("TPU_SKIP_MDS_QUERY", "TPU_NAME", "TPU_CONFIG", "COLAB_TPU_ADDR")
    if any(name in environ for name in pointers) or device_files():
        return None
    version = wheel()
    if version is None:
        return None
    environ["TPU_SKIP_MDS_QUERY"] = "1"
    return (
        f"{_no_chip_note(version)}: set TPU_SKIP_MDS_QUERY=1, so that importing TensorFlow does "
        "not wait minutes for the Cloud metadata server."
    )


def _default_connect(target: TpuTarget) -> Any:
    """Connects to `target` and initializes its TPU system; returns the resolver."""
    import tensorflow as tf

    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
        tpu=target.tpu, zone=target.zone, project=target.project
    )
    if target.tpu != "local":
        if "worker" not in resolver.cluster_spec().as_dict():
            raise ValueError(f"the TPU {target.tpu!r} has no worker yet")
        tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return resolver


@dataclass
class Platform:
    """What `get_strategy` asks of the machine. Tests replace the parts a CI machine lacks."""

    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    tpu_device_files: Callable[[], list[str]] = tpu_device_files
    tpu_wheel: Callable[[], str | None] = tpu_wheel_version
    num_gpus: Callable[[], int] = lambda: _count_physical("GPU")
    connect: Callable[[TpuTarget], Any] = _default_connect
    not_ready_errors: Callable[[], tuple[type[BaseException], ...]] = _tpu_not_ready_errors
    sleep: Callable[[float], None] = time.sleep


def _count_physical(kind: str) -> int:
    import tensorflow as tf

    return len(tf.config.list_physical_devices(kind))


def parse_tpu_config(text: str) -> TpuTarget:
    """Parses a managed job's `TPU_CONFIG` environment variable.

    Args:
        text: JSON with the keys `tpu_node_name`, `zone` and `project`.

    Returns:
        A target that is retried while the TPU is provisioning.

    Raises:
        ValueError: The text is not JSON, not an object, or lacks a key.
    """
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"TPU_CONFIG is not valid JSON ({error.msg} at position {error.pos}): {text!r}. "
            'Expected e.g. {"tpu_node_name": "my-tpu", "zone": "us-central1-b", '
            '"project": "my-project"}.'
        ) from None
    if not isinstance(config, dict):
        raise ValueError(
            f"TPU_CONFIG must be a JSON object with {', '.join(TPU_CONFIG_KEYS)}, "
            f"got a {type(config).__name__}: {text!r}"
        )
    missing = [key for key in TPU_CONFIG_KEYS if not config.get(key)]
    if missing:
        raise ValueError(
            f"TPU_CONFIG lacks {', '.join(missing)}: it needs {', '.join(TPU_CONFIG_KEYS)}; "
            f"got keys {sorted(config)}."
        )
    return TpuTarget(
        tpu=config["tpu_node_name"],
        zone=config["zone"],
        project=config["project"],
        source=(
            f"managed training job (TPU_CONFIG): Cloud TPU {config['tpu_node_name']!r} "
            f"in {config['zone']}, project {config['project']}"
        ),
        wait=True,
    )


def find_tpu(
    tpu: str | None = None,
    zone: str | None = None,
    project: str | None = None,
    platform: Platform | None = None,
) -> TpuTarget | None:
    """Decides where to look for a TPU, without connecting.

    Args:
        tpu: A Cloud TPU name, a `grpc://` address, or `"local"`; None to look around.
        zone: The zone of a named Cloud TPU.
        project: The project of a named Cloud TPU.
        platform: The machine to inspect (tests pass a fake).

    Returns:
        The target, or None when nothing suggests a TPU.
    """
    platform = platform or Platform()
    env = platform.environ
    if tpu:
        if tpu == "local":
            source = "TPU VM: TPUClusterResolver(tpu='local')"
        elif tpu.startswith("grpc://"):
            source = f"TPU at {tpu}"
        else:
            where = ", ".join(part for part in (zone, project and f"project {project}") if part)
            source = f"named Cloud TPU {tpu!r}" + (f" in {where}" if where else "")
        return TpuTarget(tpu=tpu, zone=zone, project=project, source=source)
    if env.get("TPU_CONFIG"):
        return parse_tpu_config(env["TPU_CONFIG"])
    if env.get("COLAB_TPU_ADDR"):
        address = "grpc://" + env["COLAB_TPU_ADDR"]
        return TpuTarget(tpu=address, source=f"legacy Colab TPU node at {address}")
    if env.get("TPU_NAME"):
        name = env["TPU_NAME"]
        source = f"TPU_NAME={name!r}" + (" (TPU VM)" if name == "local" else "")
        return TpuTarget(tpu=name, source=source)
    if platform.tpu_device_files():
        return TpuTarget(tpu="local", source="TPU VM: TPUClusterResolver(tpu='local')")
    return None


def connect_tpu(
    target: TpuTarget,
    *,
    attempts: int | None = None,
    delay: float = 10.0,
    platform: Platform | None = None,
) -> Any:
    """Connects to a TPU and initializes its system, retrying while it is not ready.

    Args:
        target: Where the TPU is (see `find_tpu`).
        attempts: How many times to try; default 40 for a managed job's TPU (which may still be
            provisioning), else 1.
        delay: Seconds to wait between attempts.
        platform: The machine (tests pass a fake with a fake clock).

    Returns:
        The `TPUClusterResolver`, ready for `tf.distribute.TPUStrategy`.

    Raises:
        TpuConnectionError: Every attempt failed; the message names what was tried.
    """
    platform = platform or Platform()
    if attempts is None:
        attempts = 40 if target.wait else 1
    if not isinstance(attempts, int) or attempts < 1:
        raise ValueError(f"attempts must be a positive integer, got {attempts!r}")
    not_ready = platform.not_ready_errors()
    last_error: BaseException | None = None
    for attempt in range(1, attempts + 1):
        try:
            return platform.connect(target)
        except not_ready as error:
            last_error = error
            if attempt < attempts:
                print(f"TPU not ready ({type(error).__name__}); retry {attempt}/{attempts - 1}...")
                platform.sleep(delay)
    tried = f"{attempts} attempt{'s' if attempts > 1 else ''}"
    if attempts > 1:
        tried += f", {delay:g} s apart"
    raise TpuConnectionError(
        f"Could not connect to the TPU ({target.source}) after {tried}. Last error: "
        f"{type(last_error).__name__}: {_first_line(last_error)}. If this machine has no TPU, "
        "choose another accelerator (accelerator='auto', 'gpu' or 'cpu'); on Colab, pick a TPU "
        "runtime under Runtime > Change runtime type."
    ) from last_error


def _first_line(error: BaseException | None) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else "(no message)"


def _accelerator_setting(accelerator: str | None, env: Mapping[str, str]) -> str:
    value = accelerator if accelerator is not None else env.get(ACCELERATOR_ENV, "auto")
    normalized = str(value).strip().lower()
    if normalized not in ACCELERATORS:
        origin = "accelerator" if accelerator is not None else ACCELERATOR_ENV
        raise ValueError(
            f"Unknown accelerator {value!r} (from {origin}): "
            f"choose one of {', '.join(ACCELERATORS)}."
        )
    return normalized


def check_replica_count(value: object, name: str = "cpu_replicas") -> int:
    """Returns `value` as a positive int, or raises a ValueError that says what is expected."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer (1, 2, 4, ...), got {value!r}.")
    return value


def _cpu_replica_setting(cpu_replicas: int | None, env: Mapping[str, str]) -> int:
    if cpu_replicas is not None:
        return check_replica_count(cpu_replicas)
    return check_replica_count(env.get(CPU_REPLICAS_ENV, "1"), CPU_REPLICAS_ENV)


def _available(platform: Platform, tpu: TpuTarget | None) -> str:
    gpus = platform.num_gpus()
    found = []
    if tpu:
        found.append(f"a TPU ({tpu.source})")
    if gpus:
        found.append(f"{gpus} GPU{'s' if gpus > 1 else ''}")
    found.append("the CPU")
    return ", ".join(found)


def choose_kind(accelerator: str, tpu: TpuTarget | None, platform: Platform) -> str:
    """Decides which hardware to use: `"tpu"`, `"gpu"` or `"cpu"`.

    Raises:
        AcceleratorNotFoundError: A forced TPU or GPU is not there; the message lists what is.
    """
    if accelerator == "tpu" and tpu is None:
        wheel = platform.tpu_wheel()
        raise AcceleratorNotFoundError(
            "accelerator='tpu' was asked for, but no TPU was found: no tpu= argument, no "
            "TPU_CONFIG, COLAB_TPU_ADDR or TPU_NAME variable, no /dev/accel* or /dev/vfio/N "
            "device."
            + (f" ({_no_chip_note(wheel)}: the wheel alone is not a TPU.)" if wheel else "")
            + f" Available: {_available(platform, tpu)}. On Colab, pick a TPU runtime; "
            "elsewhere pass tpu='name' with zone and project, or use accelerator='auto'."
        )
    if accelerator == "gpu" and platform.num_gpus() == 0:
        raise AcceleratorNotFoundError(
            f"accelerator='gpu' was asked for, but TensorFlow sees no GPU. Available: "
            f"{_available(platform, tpu)}. Install a GPU build of TensorFlow "
            "(pip install 'tensorflow[and-cuda]') on a machine with an NVIDIA GPU, or use "
            "accelerator='auto'."
        )
    if accelerator != "auto":
        return accelerator
    if tpu is not None:
        return "tpu"
    return "gpu" if platform.num_gpus() else "cpu"


def split_cpu(replicas: int) -> list[str]:
    """Splits the host CPU into `replicas` logical devices; returns their names.

    Must run before the TensorFlow runtime starts (before any op or device listing). Running it
    again with the same count is harmless.

    Raises:
        ValueError: `replicas` is not a positive integer.
        CpuSplitError: The runtime already started with another device layout.
    """
    replicas = check_replica_count(replicas)
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    current = tf.config.get_logical_device_configuration(cpu)
    if len(current or [None]) != replicas:  # no configuration means one device
        try:
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration()] * replicas
            )
        except RuntimeError as error:
            have = len(tf.config.list_logical_devices("CPU"))
            raise CpuSplitError(
                f"Cannot split the CPU into {replicas} devices: TensorFlow's runtime already "
                f"started with {have} CPU device{'s' if have > 1 else ''}. Restart the kernel "
                "(or the Python process) and ask for the CPU split before running any "
                "TensorFlow op, e.g. in the first cell that imports TensorFlow."
            ) from error
    return [device.name for device in tf.config.list_logical_devices("CPU")]


_STRATEGIES: dict[tuple, Any] = {}
_REPORTS: dict[int, HardwareReport] = {}


def get_strategy(
    accelerator: str | None = None,
    *,
    cpu_replicas: int | None = None,
    tpu: str | None = None,
    zone: str | None = None,
    project: str | None = None,
    tpu_attempts: int | None = None,
    tpu_retry_delay: float = 10.0,
    platform: Platform | None = None,
) -> Any:
    """Returns a ready `tf.distribute.Strategy` for the best hardware available.

    Calling it again in the same process returns the same strategy: a TPU system is initialized
    once, so re-running a notebook cell does not wipe the TPU's memory.

    Args:
        accelerator: `"auto"` (default), `"tpu"`, `"gpu"` or `"cpu"`; None reads
            `TPUHELPERS_ACCELERATOR`.
        cpu_replicas: On the CPU, the number of logical devices to split it into; None reads
            `TPUHELPERS_CPU_REPLICAS` (default 1, the default strategy).
        tpu: A Cloud TPU name, a `grpc://` address or `"local"`.
        zone: The zone of a named Cloud TPU.
        project: The project of a named Cloud TPU.
        tpu_attempts: Connection attempts (default: 40 for a managed job's TPU, else 1).
        tpu_retry_delay: Seconds between connection attempts.
        platform: The machine (tests pass a fake).

    Raises:
        ValueError: Unknown accelerator name, or a replica count that is not a positive integer.
        AcceleratorNotFoundError: A forced TPU or GPU is missing.
        TpuConnectionError: A TPU was expected (forced, or named) but could not be reached.
        CpuSplitError: CPU replicas were asked for after TensorFlow's runtime started.
        jax_setup.KerasBackendError: Keras is set to, or runs on, a backend other than TensorFlow.
    """
    platform = platform or Platform()
    # A tf.distribute strategy needs Keras on TensorFlow: a KERAS_BACKEND of "jax" (say) left in
    # the environment would give `tf.keras` another backend and fail deep inside the strategy.
    jax_setup.use_keras_backend("tensorflow")
    accelerator = _accelerator_setting(accelerator, platform.environ)
    replicas = _cpu_replica_setting(cpu_replicas, platform.environ)
    target = find_tpu(tpu, zone, project, platform) if accelerator != "cpu" else None
    kind = choose_kind(accelerator, target, platform)
    notes: list[str] = []
    wheel = platform.tpu_wheel() if target is None and kind != "tpu" else None
    if wheel:
        replicas, note = _without_tpu_chips(wheel, kind, replicas)
        notes.append(note)
    key = (accelerator, kind, target, replicas if kind == "cpu" else None)
    if key in _STRATEGIES:
        return _STRATEGIES[key]

    if kind == "tpu":
        # A TPU found only by looking around (device files, TPU_NAME) may not answer: fall back.
        # One named by the caller, forced, or given by a managed job must work or fail loudly.
        try:
            resolver = connect_tpu(
                target, attempts=tpu_attempts, delay=tpu_retry_delay, platform=platform
            )
        except TpuConnectionError as error:
            if accelerator == "tpu" or tpu or target.wait:
                raise
            notes.append(f"TPU not usable, fell back: {error}")
            kind = "gpu" if platform.num_gpus() else "cpu"
        else:
            strategy, how = _tpu_strategy(resolver), target.source
    if kind == "gpu":
        strategy, how = _gpu_strategy(platform.num_gpus())
    elif kind == "cpu":
        strategy, how = _cpu_strategy(replicas)

    _STRATEGIES[key] = strategy
    _REPORTS[id(strategy)] = _report(kind, strategy, how, notes)
    return strategy


def _without_tpu_chips(wheel: str, kind: str, replicas: int) -> tuple[int, str]:
    """The replica count and note for the tensorflow-tpu wheel on a machine without TPU chips.

    This wheel's XLA cannot compile for the CPU, and Keras compiles the default strategy's
    training step with XLA; a MirroredStrategy's step is not compiled. So one CPU replica
    becomes two, while the CPU can still be split.
    """
    using = f"the {kind.upper()}"
    if kind == "cpu" and replicas == 1:
        try:
            split_cpu(2)
            replicas, using = (
                2,
                "the CPU split into 2 replicas (this wheel's XLA has no CPU backend)",
            )
        except CpuSplitError:
            using = (
                "the CPU; compile Keras models with jit_compile=False (this wheel's XLA has no "
                "CPU backend)"
            )
    return replicas, f"{_no_chip_note(wheel)}: using {using}."


def _tpu_strategy(resolver: Any) -> Any:
    import tensorflow as tf

    return tf.distribute.TPUStrategy(resolver)


def _gpu_strategy(num_gpus: int) -> tuple[Any, str]:
    import tensorflow as tf

    if num_gpus > 1:
        return tf.distribute.MirroredStrategy(), f"{num_gpus} GPUs: MirroredStrategy (all-reduce)"
    return tf.distribute.OneDeviceStrategy("/gpu:0"), "one GPU: OneDeviceStrategy('/gpu:0')"


def _cpu_strategy(replicas: int) -> tuple[Any, str]:
    import tensorflow as tf

    if replicas == 1:
        return tf.distribute.get_strategy(), "no TPU or GPU found: the CPU, default strategy"
    devices = split_cpu(replicas)
    return (
        tf.distribute.MirroredStrategy(devices=devices),
        f"no TPU or GPU found: the CPU split into {replicas} logical devices, MirroredStrategy",
    )


def _devices_of(strategy: Any) -> list[str]:
    try:
        devices = strategy.extended.worker_devices
    except RuntimeError:  # the default strategy has no device list: it uses the current device
        devices = ["/job:localhost/replica:0/task:0/device:CPU:0"]
    return [_short_device_name(name) for name in devices]


def _short_device_name(name: str) -> str:
    return name.split("/")[-1].replace("device:", "") if "device:" in name else name


def _report(kind: str, strategy: Any, how: str, notes: list[str]) -> HardwareReport:
    return HardwareReport(
        kind=kind.upper(),
        num_replicas=strategy.num_replicas_in_sync,
        devices=_devices_of(strategy),
        strategy=type(strategy).__name__,
        how=how,
        notes=notes,
    )


def describe(strategy: Any | None = None) -> HardwareReport:
    """Describes a strategy: hardware kind, replicas, devices, and how it was reached.

    Args:
        strategy: A strategy from `get_strategy` (or any strategy); None describes the one in
            scope (`tf.distribute.get_strategy()`).
    """
    import tensorflow as tf

    strategy = strategy if strategy is not None else tf.distribute.get_strategy()
    if id(strategy) in _REPORTS:
        return _REPORTS[id(strategy)]
    devices = _devices_of(strategy)
    if "TPU" in type(strategy).__name__:
        kind = "TPU"
    else:
        kind = "GPU" if any("GPU" in device for device in devices) else "CPU"
    return _report(kind, strategy, "created outside tpuhelpers", [])


def accelerator_device() -> str:
    """Returns the first accelerator's device name: `/TPU:0`, else `/GPU:0`, else `/CPU:0`."""
    import tensorflow as tf

    for kind in ("TPU", "GPU"):
        if tf.config.list_logical_devices(kind):
            return f"/{kind}:0"
    return "/CPU:0"
