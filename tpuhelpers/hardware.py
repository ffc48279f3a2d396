"""Find the best hardware (a TPU, GPUs, else the CPU) and return a `tf.distribute.Strategy`."""

from dataclasses import dataclass, field
from typing import Any

from tpuhelpers import checks, jax_setup
from tpuhelpers.tpu import (  # noqa: F401 - the TPU half of this module's public API
    _NO_CHIP_NOTE,
    Platform,
    TpuConnectionError,
    TpuTarget,
    connect_tpu,
    find_tpu,
    import_tensorflow,
)

ACCELERATOR_ENV = "TPUHELPERS_ACCELERATOR"
CPU_REPLICAS_ENV = "TPUHELPERS_CPU_REPLICAS"
ACCELERATORS = ("auto", "tpu", "gpu", "cpu")
MAX_CPU_REPLICAS = 64  # each logical CPU device holds a model copy and runs its own threads
_STRATEGIES: dict[tuple, Any] = {}  # get_strategy's, by what was asked and found
_REPORTS: dict[int, "HardwareReport"] = {}  # by id(strategy)


class AcceleratorNotFoundError(RuntimeError):
    """The accelerator that was asked for is not on this machine."""


class CpuSplitError(RuntimeError):
    """The CPU could not be split into logical devices (the runtime already started)."""


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


def choose_kind(accelerator: str, tpu: TpuTarget | None, platform: Platform) -> str:
    """Decides "tpu", "gpu" or "cpu"; AcceleratorNotFoundError if a forced one is missing."""
    gpus = platform.num_gpus() if accelerator in ("gpu", "auto") or tpu is None else 0
    found = [f"a TPU ({tpu.source})"] if tpu else []
    found += ([f"{gpus} GPU{'s' * (gpus > 1)}"] if gpus else []) + ["the CPU"]
    if accelerator == "tpu" and tpu is None:
        wheel = platform.tpu_wheel()
        raise AcceleratorNotFoundError(
            "accelerator='tpu' was asked for, but no TPU was found: no tpu= argument, no "
            "TPU_CONFIG, COLAB_TPU_ADDR or TPU_NAME, no /dev/accel* or /dev/vfio/N device"
            + (f" ({_NO_CHIP_NOTE.format(wheel)}: the wheel alone is not a TPU)" if wheel else "")
            + f". Available: {', '.join(found)}. On Colab, pick a TPU runtime; elsewhere pass "
            "tpu='name' with zone and project, or use accelerator='auto'."
        )
    if accelerator == "gpu" and not gpus:
        raise AcceleratorNotFoundError(
            f"accelerator='gpu' was asked for, but TensorFlow sees no GPU. Available: "
            f"{', '.join(found)}. Install 'tensorflow[and-cuda]' on a machine with an NVIDIA "
            "GPU, or use accelerator='auto'."
        )
    if accelerator == "auto":
        return "tpu" if tpu is not None else "gpu" if gpus else "cpu"
    return accelerator


def split_cpu(replicas: int) -> list[str]:
    """Splits the CPU into `replicas` logical devices, their names; CpuSplitError once it ran."""
    replicas = checks.integer(replicas, "cpu_replicas", 1, MAX_CPU_REPLICAS)
    tf = import_tensorflow()
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
    """The best hardware's ready `tf.distribute.Strategy`, the same again (a TPU initializes once).

    Args:
        accelerator: "auto", "tpu", "gpu" or "cpu"; None reads TPUHELPERS_ACCELERATOR ("auto").
        cpu_replicas: CPU devices (1-64) if the CPU is used; None reads TPUHELPERS_CPU_REPLICAS.
        tpu, zone, project: A Cloud TPU's name, zone and project; or "grpc://host:port", "local".
        tpu_attempts: Connection attempts (default: 40 for a managed job's TPU, else 1).

    Raises:
        ValueError: An unknown accelerator, a bad replica count or TPU address.
        AcceleratorNotFoundError, TpuConnectionError, CpuSplitError: No fallback for a TPU that
            was named, forced or given by a managed job (one found by looking around falls back).
        jax_setup.KerasBackendError: Keras is set to a backend other than TensorFlow.
    """
    platform = platform or Platform()
    jax_setup.use_keras_backend("tensorflow")  # tf.distribute needs Keras on TensorFlow
    chosen = platform.environ.get(ACCELERATOR_ENV, "auto") if accelerator is None else accelerator
    name = ACCELERATOR_ENV if accelerator is None else "accelerator"
    accelerator = checks.one_of(str(chosen).strip().lower(), ACCELERATORS, f"{name} value")
    name = CPU_REPLICAS_ENV if cpu_replicas is None else "cpu_replicas"
    value = platform.environ.get(CPU_REPLICAS_ENV, "1") if cpu_replicas is None else cpu_replicas
    replicas = checks.integer(value, name, 1, MAX_CPU_REPLICAS, text=cpu_replicas is None)
    target = find_tpu(tpu, zone, project, platform) if accelerator != "cpu" else None
    kind = choose_kind(accelerator, target, platform)
    notes: list[str] = []
    if kind != "tpu" and target is None and (wheel := platform.tpu_wheel()):
        using = f"the {kind.upper()}"
        if kind == "cpu" and replicas == 1:  # Keras jit-compiles the default strategy's step
            try:
                split_cpu(2)
                replicas, using = 2, "the CPU split into 2 replicas"
            except CpuSplitError:
                using = "the CPU; compile Keras models with jit_compile=False"
            using += " (this wheel's XLA has no CPU backend)"
        notes.append(f"{_NO_CHIP_NOTE.format(wheel)}: using {using}.")
    key = (accelerator, kind, target, replicas if kind == "cpu" else None)
    if key not in _STRATEGIES:
        tpu_options = (tpu_attempts, accelerator == "tpu" or bool(tpu))  # named or forced
        strategy, kind, how = _make_strategy(kind, target, replicas, platform, notes, tpu_options)
        _STRATEGIES[key] = strategy
        _REPORTS[id(strategy)] = _report(kind, strategy, how, notes)
    return _STRATEGIES[key]


def _make_strategy(kind, target, replicas, platform, notes, tpu) -> tuple[Any, str, str]:
    """Builds the strategy for `kind`; an unreachable TPU falls back unless strict or waited for."""
    tf = import_tensorflow()
    if kind == "tpu":
        attempts, strict = tpu
        try:
            resolver = connect_tpu(target, attempts=attempts, platform=platform)
            return tf.distribute.TPUStrategy(resolver), "tpu", target.source
        except TpuConnectionError as error:
            if strict or target.wait:
                raise
            notes.append(f"TPU not usable, fell back: {error}")
    gpus = platform.num_gpus() if kind != "cpu" else 0  # a TPU's fallback looks for GPUs too
    if gpus > 1:
        return tf.distribute.MirroredStrategy(), "gpu", f"{gpus} GPUs: MirroredStrategy"
    if gpus == 1:
        return tf.distribute.OneDeviceStrategy("/gpu:0"), "gpu", "one GPU: OneDeviceStrategy"
    if replicas == 1:
        return tf.distribute.get_strategy(), "cpu", "no TPU or GPU: the CPU, default strategy"
    how = f"no TPU or GPU: the CPU split into {replicas} devices, MirroredStrategy"
    return tf.distribute.MirroredStrategy(devices=split_cpu(replicas)), "cpu", how


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
    strategy = strategy if strategy is not None else import_tensorflow().distribute.get_strategy()
    if id(strategy) in _REPORTS:
        return _REPORTS[id(strategy)]
    report = _report("CPU", strategy, "created outside tpuhelpers", [])
    report.kind = "TPU" if "TPU" in report.strategy else report.kind
    report.kind = "GPU" if any("GPU" in d for d in report.devices) else report.kind
    return report
