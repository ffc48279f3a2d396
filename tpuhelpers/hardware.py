"""Find the best hardware, connect to it, and return a `tf.distribute.Strategy`.

Too long to inline into every notebook: detection with fallback. Notebook 01 writes the TPU
connection out by hand; later notebooks call `strategy = hardware.get_strategy()`.

A TPU is looked for in this order: the `tpu=` argument (a Cloud TPU name with `zone` and
`project`, a `grpc://host:port` address, or `"local"`); `TPU_CONFIG` (a managed job's JSON,
retried while the TPU provisions); `COLAB_TPU_ADDR` (legacy TPU node); `TPU_NAME`; TPU device
files (`/dev/accel*`, `/dev/vfio/N`: a TPU VM, which Colab's TPU runtimes are). Without one:
several GPUs give a `MirroredStrategy`, one GPU a `OneDeviceStrategy`, the CPU the default
strategy or, with `cpu_replicas=N`, a `MirroredStrategy` over N logical CPU devices.
`TPUHELPERS_ACCELERATOR` (auto, tpu, gpu, cpu) and `TPUHELPERS_CPU_REPLICAS` set the same
choices for headless runs. TensorFlow is imported inside functions, so that the CPU can still
be split after this module is imported.
"""

from __future__ import annotations

import glob
import importlib.metadata
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tpuhelpers import checks, jax_setup

ACCELERATOR_ENV = "TPUHELPERS_ACCELERATOR"
CPU_REPLICAS_ENV = "TPUHELPERS_CPU_REPLICAS"
ACCELERATORS = ("auto", "tpu", "gpu", "cpu")
MAX_CPU_REPLICAS = 64  # each logical CPU device holds a model copy and runs its own threads
TPU_CONFIG_EXAMPLE = '{"tpu_node_name": "my-tpu", "zone": "us-central1-b", "project": "my-project"}'
_HOST_PORT = re.compile(r"[A-Za-z0-9.\-]+:\d{1,5}|\[[0-9a-fA-F:]+\]:\d{1,5}")


class HardwareError(RuntimeError):
    """Base class of the errors raised when hardware cannot be found or set up."""


class AcceleratorNotFoundError(HardwareError):
    """The accelerator that was asked for is not on this machine."""


class TpuConnectionError(HardwareError):
    """A TPU was expected but could not be connected to or initialized in time."""


class CpuSplitError(HardwareError):
    """The CPU could not be split into logical devices (the runtime already started)."""


@dataclass(frozen=True)
class TpuTarget:
    """Where to look for a TPU: `TPUClusterResolver`'s arguments, how it was found (`source`),
    and whether it may still be provisioning (`wait`: a managed job's TPU, retried)."""

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
        rows = [("Hardware", self.kind), ("Strategy", self.strategy)]
        rows += [("Replicas", self.num_replicas), ("Devices", ", ".join(self.devices))]
        rows += [("How", self.how)] + [("Note", note) for note in self.notes]
        return "\n".join(f"{name + ':':<10} {value}" for name, value in rows)


def _tpu_not_ready_errors() -> tuple[type[BaseException], ...]:
    """TensorFlow's errors for a TPU that is missing, unreachable or still provisioning."""
    import tensorflow as tf

    e = tf.errors  # InternalError: tensorflow-tpu on a machine without TPU chips (a RET_CHECK)
    return (ValueError, ConnectionError, e.NotFoundError, e.InvalidArgumentError) + (
        e.UnavailableError, e.DeadlineExceededError, e.UnimplementedError, e.InternalError
    )  # fmt: skip


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
    """Sets `TPU_SKIP_MDS_QUERY=1` where `tensorflow-tpu` is installed but nothing points at a
    TPU, so that `import tensorflow` does not retry the Cloud metadata server for minutes.

    Returns:
        A note saying what was done, or None when nothing was (a value already set is kept).
    """
    pointers = ("TPU_SKIP_MDS_QUERY", "TPU_NAME", "TPU_CONFIG", "COLAB_TPU_ADDR")
    if any(name in environ for name in pointers) or device_files() or not (version := wheel()):
        return None
    environ["TPU_SKIP_MDS_QUERY"] = "1"
    return f"{_no_chip_note(version)}: set TPU_SKIP_MDS_QUERY=1 (no metadata-server wait)."


def grpc_address(value: str, where: str) -> str:
    """Normalises `host:port` or `grpc://host:port` to `grpc://host:port`; refuses anything else."""
    address = value.strip().removeprefix("grpc://")
    if not _HOST_PORT.fullmatch(address) or not 0 < int(address.rsplit(":", 1)[1]) < 65536:
        raise ValueError(
            f"{where} must be host:port (e.g. 10.0.0.2:8470), optionally after grpc://; "
            f"got {value!r}."
        )
    return "grpc://" + address


def _default_connect(target: TpuTarget) -> Any:
    """Connects to `target` and initializes its TPU system; returns the resolver."""
    import tensorflow as tf

    if target.tpu.startswith("grpc://"):  # fail in seconds where nothing listens
        host, port = target.tpu.removeprefix("grpc://").rsplit(":", 1)
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
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
    """Parses a managed job's `TPU_CONFIG` (JSON: tpu_node_name, zone, project).

    Raises:
        ValueError: Not JSON, not an object, or a key missing or not a string.
    """
    config = checks.json_object(text, "TPU_CONFIG", TPU_CONFIG_EXAMPLE)
    keys = ("tpu_node_name", "zone", "project")
    wrong = [key for key in keys if not isinstance(config.get(key), str) or not config[key]]
    if wrong:
        raise ValueError(
            f"TPU_CONFIG lacks {', '.join(wrong)} (each a non-empty string); got keys "
            f"{sorted(config)}. Expected e.g. {TPU_CONFIG_EXAMPLE}."
        )
    name, zone, project = (config[key] for key in keys)
    where = f"Cloud TPU {name!r} in {zone}, project {project}"
    return TpuTarget(name, zone, project, f"managed training job (TPU_CONFIG): {where}", wait=True)


def find_tpu(
    tpu: str | None = None,
    zone: str | None = None,
    project: str | None = None,
    platform: Platform | None = None,
) -> TpuTarget | None:
    """Decides where to look for a TPU, without connecting; None when nothing suggests one."""
    platform = platform or Platform()
    env = platform.environ
    if tpu:
        checks.of_type(tpu, str, "tpu")
        if tpu != "local" and (tpu.startswith("grpc://") or ":" in tpu):
            tpu = grpc_address(tpu, "tpu")
        where = ", ".join(part for part in (zone, project and f"project {project}") if part)
        source = {"local": "TPU VM: TPUClusterResolver(tpu='local')"}.get(tpu, f"TPU {tpu!r}")
        return TpuTarget(tpu, zone, project, source + (f" in {where}" if where else ""))
    if env.get("TPU_CONFIG"):
        return parse_tpu_config(env["TPU_CONFIG"])
    if env.get("COLAB_TPU_ADDR"):
        address = grpc_address(env["COLAB_TPU_ADDR"], "COLAB_TPU_ADDR")
        return TpuTarget(address, source=f"legacy Colab TPU node at {address}")
    if name := env.get("TPU_NAME", "").strip():
        return TpuTarget(name, source=f"TPU_NAME={name!r}")
    if platform.tpu_device_files():
        return TpuTarget("local", source="TPU VM: TPUClusterResolver(tpu='local')")
    return None


def _attempt(connect: Callable[[TpuTarget], Any], target: TpuTarget, seconds: float) -> Any:
    """Runs one connection attempt in a thread, so that a hang inside TensorFlow has a bound."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = connect(target)
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True, name="tpu-connect")
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {seconds:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def connect_tpu(
    target: TpuTarget,
    *,
    attempts: int | None = None,
    delay: float = 10.0,
    attempt_timeout: float = 120.0,
    platform: Platform | None = None,
) -> Any:
    """Connects to a TPU and initializes its system, retrying while it is not ready.

    Args:
        target: Where the TPU is (see `find_tpu`).
        attempts: Tries; default 40 for a managed job's TPU (it may be provisioning), else 1.
        delay: Seconds between attempts.
        attempt_timeout: Seconds one attempt may take; a TPU that does not answer in time
            counts as not ready (restart the kernel before trying that TPU again).
        platform: The machine (tests pass a fake).

    Returns:
        The `TPUClusterResolver`, ready for `tf.distribute.TPUStrategy`.

    Raises:
        TpuConnectionError: Every attempt failed or timed out; the message names what was tried.
    """
    platform = platform or Platform()
    default = 40 if target.wait else 1
    attempts = checks.positive_int(default if attempts is None else attempts, "attempts")
    not_ready = platform.not_ready_errors() + (TimeoutError, OSError)
    for attempt in range(1, attempts + 1):
        try:
            return _attempt(platform.connect, target, attempt_timeout)
        except not_ready as error:
            last_error = error
            if attempt < attempts:
                print(f"TPU not ready ({type(error).__name__}); retry {attempt}/{attempts - 1}...")
                platform.sleep(delay)
    first_line = (str(last_error).strip() or "(no message)").splitlines()[0][:300]
    tried = f"{attempts} attempts, {delay:g} s apart" if attempts > 1 else "1 attempt"
    raise TpuConnectionError(
        f"Could not connect to the TPU ({target.source}) after {tried}. Last error: "
        f"{type(last_error).__name__}: {first_line}. (Each attempt may take {attempt_timeout:g} "
        "s.) If this machine has no TPU, use accelerator='auto', 'gpu' or 'cpu'; on Colab, pick "
        "a TPU runtime under Runtime > Change runtime type."
    ) from last_error


def choose_kind(accelerator: str, tpu: TpuTarget | None, platform: Platform) -> str:
    """Decides which hardware to use: `"tpu"`, `"gpu"` or `"cpu"`.

    Raises:
        AcceleratorNotFoundError: A forced TPU or GPU is not there; the message lists what is.
    """
    gpus = platform.num_gpus() if accelerator in ("gpu", "auto") or tpu is None else 0
    found = ([f"a TPU ({tpu.source})"] if tpu else []) + (
        [f"{gpus} GPU{'s' * (gpus > 1)}"] if gpus else []
    )
    found.append("the CPU")
    if accelerator == "tpu" and tpu is None:
        wheel = platform.tpu_wheel()
        raise AcceleratorNotFoundError(
            "accelerator='tpu' was asked for, but no TPU was found: no tpu= argument, no "
            "TPU_CONFIG, COLAB_TPU_ADDR or TPU_NAME, no /dev/accel* or /dev/vfio/N device"
            + (f" ({_no_chip_note(wheel)}: the wheel alone is not a TPU)" if wheel else "")
            + f". Available: {', '.join(found)}. On Colab, pick a TPU runtime; elsewhere pass "
            "tpu='name' with zone and project, or use accelerator='auto'."
        )
    if accelerator == "gpu" and not gpus:
        raise AcceleratorNotFoundError(
            f"accelerator='gpu' was asked for, but TensorFlow sees no GPU. Available: "
            f"{', '.join(found)}. Install 'tensorflow[and-cuda]' on a machine with an NVIDIA "
            "GPU, or use accelerator='auto'."
        )
    if accelerator != "auto":
        return accelerator
    return "tpu" if tpu is not None else "gpu" if gpus else "cpu"


def split_cpu(replicas: int) -> list[str]:
    """Splits the host CPU into `replicas` logical devices, before TensorFlow's runtime starts
    (running it again with the same count is harmless); returns the devices' names.

    Raises:
        ValueError: `replicas` is not an integer from 1 to MAX_CPU_REPLICAS.
        CpuSplitError: The runtime already started with another device layout.
    """
    replicas = checks.positive_int(replicas, "cpu_replicas", MAX_CPU_REPLICAS)
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    if len(tf.config.get_logical_device_configuration(cpu) or [None]) != replicas:
        try:
            layout = [tf.config.LogicalDeviceConfiguration()] * replicas
            tf.config.set_logical_device_configuration(cpu, layout)
        except RuntimeError as error:
            have = len(tf.config.list_logical_devices("CPU"))
            raise CpuSplitError(
                f"Cannot split the CPU into {replicas} devices: TensorFlow's runtime already "
                f"started with {have} CPU device(s). Restart the kernel and ask for the split "
                "before running any TensorFlow op."
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
    platform: Platform | None = None,
) -> Any:
    """Returns a ready `tf.distribute.Strategy` for the best hardware available.

    Calling it again in the same process returns the same strategy: a TPU system is initialized
    once, so re-running a cell does not wipe the TPU's memory.

    Args:
        accelerator: "auto" (default), "tpu", "gpu" or "cpu"; None reads TPUHELPERS_ACCELERATOR.
        cpu_replicas: Logical CPU devices (1 to MAX_CPU_REPLICAS) when the CPU is used; None
            reads TPUHELPERS_CPU_REPLICAS (default 1: the default strategy).
        tpu: A Cloud TPU name (with `zone`, `project`), a `grpc://host:port` address or "local".
        zone: The zone of a named Cloud TPU.
        project: The project of a named Cloud TPU.
        tpu_attempts: Connection attempts (default: 40 for a managed job's TPU, else 1).
        platform: The machine (tests pass a fake).

    Raises:
        ValueError: An unknown accelerator, a bad replica count or TPU address.
        AcceleratorNotFoundError: A forced TPU or GPU is missing.
        TpuConnectionError: A TPU that was named, forced or given by a managed job is unusable.
        CpuSplitError: CPU replicas were asked for after TensorFlow's runtime started.
        jax_setup.KerasBackendError: Keras is set to a backend other than TensorFlow.
    """
    platform = platform or Platform()
    jax_setup.use_keras_backend("tensorflow")  # tf.distribute needs Keras on TensorFlow
    env = platform.environ
    chosen = accelerator if accelerator is not None else env.get(ACCELERATOR_ENV, "auto")
    name = ACCELERATOR_ENV if accelerator is None else "accelerator"
    accelerator = checks.one_of(str(chosen).strip().lower(), ACCELERATORS, f"{name} value")
    name = CPU_REPLICAS_ENV if cpu_replicas is None else "cpu_replicas"
    value = env.get(CPU_REPLICAS_ENV, "1") if cpu_replicas is None else cpu_replicas
    value = int(value) if isinstance(value, str) and value.strip().isdigit() else value
    replicas = checks.positive_int(value, name, MAX_CPU_REPLICAS)
    target = find_tpu(tpu, zone, project, platform) if accelerator != "cpu" else None
    kind = choose_kind(accelerator, target, platform)
    notes: list[str] = []
    if kind != "tpu" and target is None and (wheel := platform.tpu_wheel()):
        replicas = _without_tpu_chips(wheel, kind, replicas, notes)
    key = (accelerator, kind, target, replicas if kind == "cpu" else None)
    if key not in _STRATEGIES:
        # A TPU found by looking around (device files, TPU_NAME) may not answer: fall back. One
        # named by the caller, forced, or given by a managed job must work or fail loudly.
        strict = accelerator == "tpu" or bool(tpu) or bool(target and target.wait)
        made = _make_strategy(kind, target, replicas, platform, notes, (tpu_attempts, strict))
        strategy, kind, how = made
        _STRATEGIES[key] = strategy
        _REPORTS[id(strategy)] = _report(kind, strategy, how, notes)
    return _STRATEGIES[key]


def _make_strategy(kind, target, replicas, platform, notes, tpu) -> tuple[Any, str, str]:
    """Builds the strategy for `kind`; a TPU that cannot be reached falls back unless strict."""
    import tensorflow as tf

    if kind == "tpu":
        attempts, strict = tpu
        try:
            resolver = connect_tpu(target, attempts=attempts, platform=platform)
            return tf.distribute.TPUStrategy(resolver), "tpu", target.source
        except TpuConnectionError as error:
            if strict:
                raise
            notes.append(f"TPU not usable, fell back: {error}")
            kind = "gpu" if platform.num_gpus() else "cpu"
    gpus = platform.num_gpus() if kind == "gpu" else 0
    if gpus > 1:
        return tf.distribute.MirroredStrategy(), kind, f"{gpus} GPUs: MirroredStrategy"
    if gpus == 1:
        return tf.distribute.OneDeviceStrategy("/gpu:0"), kind, "one GPU: OneDeviceStrategy"
    if replicas == 1:
        return tf.distribute.get_strategy(), kind, "no TPU or GPU: the CPU, default strategy"
    strategy = tf.distribute.MirroredStrategy(devices=split_cpu(replicas))
    return strategy, kind, f"no TPU or GPU: the CPU split into {replicas} devices, MirroredStrategy"


def _without_tpu_chips(wheel: str, kind: str, replicas: int, notes: list) -> int:
    """tensorflow-tpu without TPU chips: its XLA has no CPU backend, and Keras compiles the
    default strategy's step with XLA (a MirroredStrategy's is not), so 1 CPU replica becomes 2."""
    using = f"the {kind.upper()}"
    if kind == "cpu" and replicas == 1:
        try:
            split_cpu(2)
            replicas, using = (
                2,
                "the CPU split into 2 replicas (this wheel's XLA has no CPU backend)",
            )
        except CpuSplitError:
            using = "the CPU; compile Keras models with jit_compile=False (this wheel's XLA has "
            using += "no CPU backend)"
    notes.append(f"{_no_chip_note(wheel)}: using {using}.")
    return replicas


def _report(kind: str, strategy: Any, how: str, notes: list[str]) -> HardwareReport:
    try:
        devices = strategy.extended.worker_devices
    except RuntimeError:  # the default strategy has no device list: it uses the current device
        devices = ["/device:CPU:0"]
    devices = [d.split("/")[-1].replace("device:", "") if "device:" in d else d for d in devices]
    name = type(strategy).__name__
    return HardwareReport(kind.upper(), strategy.num_replicas_in_sync, devices, name, how, notes)


def describe(strategy: Any | None = None) -> HardwareReport:
    """Describes a strategy (default: the one in scope): hardware, replicas, devices, how."""
    import tensorflow as tf

    strategy = strategy if strategy is not None else tf.distribute.get_strategy()
    if id(strategy) not in _REPORTS:
        report = _report("CPU", strategy, "created outside tpuhelpers", [])
        report.kind = "TPU" if "TPU" in report.strategy else report.kind
        report.kind = "GPU" if any("GPU" in d for d in report.devices) else report.kind
        return report
    return _REPORTS[id(strategy)]


def accelerator_device() -> str:
    """Returns the first accelerator's device name: `/TPU:0`, else `/GPU:0`, else `/CPU:0`."""
    import tensorflow as tf

    kinds = [k for k in ("TPU", "GPU") if tf.config.list_logical_devices(k)]
    return f"/{(kinds or ['CPU'])[0]}:0"
