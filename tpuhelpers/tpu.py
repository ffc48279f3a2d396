"""Find a TPU and connect to it (notebook 01 by hand), waits bounded; quiet TensorFlow's noise."""

import glob
import importlib.metadata
import logging
import os
import socket
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from typing import Any

from tpuhelpers import checks

TPU_CONFIG_EXAMPLE = '{"tpu_node_name": "my-tpu", "zone": "us-central1-b", "project": "my-project"}'
_LOCAL_SOURCE = "TPU VM: TPUClusterResolver(tpu='local')"
_NO_CHIP_NOTE = "tensorflow-tpu {} is installed, but this machine has no TPU chip"
_NO_CHIP_NOTE += " (no /dev/accel* or /dev/vfio/N device)"  # .format(wheel version)
_API_CLIENT = "Connecting to {} needs the Google API client, not installed here: run "
_API_CLIENT += "`pip install google-api-python-client oauth2client`, then retry."  # .format(source)


class TpuConnectionError(RuntimeError):
    """A TPU was expected but could not be connected to or initialized in time."""


@dataclass(frozen=True)
class TpuTarget:
    """`TPUClusterResolver`'s arguments, their `source`, and `wait` (retry: may be provisioning)."""

    tpu: str
    zone: str | None = None
    project: str | None = None
    source: str = ""
    wait: bool = False


def import_tensorflow() -> Any:
    """Imports TensorFlow after making the TPU wheel's import bounded (no metadata wait)."""
    skip_tpu_metadata_query()
    return importlib.import_module("tensorflow")


def _tpu_not_ready_errors() -> tuple[type[BaseException], ...]:
    """TensorFlow's errors for a TPU that is missing, unreachable or still provisioning."""
    e = import_tensorflow().errors  # InternalError: tensorflow-tpu with no TPU chip (a RET_CHECK)
    status = (e.NotFoundError, e.InvalidArgumentError, e.UnavailableError, e.DeadlineExceededError)
    return (ValueError, ConnectionError, *status, e.UnimplementedError, e.InternalError)


def tpu_device_files() -> list[str]:
    """The device files a TPU VM has: `/dev/accel*` (v2-v4), `/dev/vfio/N` (v5e and later)."""
    return glob.glob("/dev/accel*") + glob.glob("/dev/vfio/[0-9]*")


def tpu_wheel_version() -> str | None:
    """The installed version of the `tensorflow-tpu` wheel, or None."""
    return next((d.version for d in importlib.metadata.distributions(name="tensorflow-tpu")), None)


def skip_tpu_metadata_query(
    environ: dict[str, str] | os._Environ = os.environ,
    device_files: Callable[[], list[str]] = tpu_device_files,
    wheel: Callable[[], str | None] = tpu_wheel_version,
) -> str | None:
    """Sets TPU_SKIP_MDS_QUERY=1 where tensorflow-tpu has no TPU to find (no metadata wait)."""
    pointers = ("TPU_SKIP_MDS_QUERY", "TPU_NAME", "TPU_CONFIG", "COLAB_TPU_ADDR")
    if any(name in environ for name in pointers) or device_files() or not (version := wheel()):
        return None
    environ["TPU_SKIP_MDS_QUERY"] = "1"
    return _NO_CHIP_NOTE.format(version) + ": set TPU_SKIP_MDS_QUERY=1 (no metadata-server wait)."


def grpc_address(value: str, where: str) -> str:
    """Normalises `host:port` or `grpc://host:port` to `grpc://host:port`; refuses anything else."""
    return "grpc://" + checks.address(str(value).strip().removeprefix("grpc://"), where)


def _default_connect(target: TpuTarget) -> Any:
    """Connects to `target` and initializes its TPU system; returns the resolver."""
    tf = import_tensorflow()
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


def _count_gpus() -> int:
    return len(import_tensorflow().config.list_physical_devices("GPU"))


@dataclass
class Platform:
    """What `get_strategy` asks of the machine. Tests replace the parts a CI machine lacks."""

    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    tpu_device_files: Callable[[], list[str]] = tpu_device_files
    tpu_wheel: Callable[[], str | None] = tpu_wheel_version
    num_gpus: Callable[[], int] = _count_gpus
    connect: Callable[[TpuTarget], Any] = _default_connect
    not_ready_errors: Callable[[], tuple[type[BaseException], ...]] = _tpu_not_ready_errors
    sleep: Callable[[float], None] = time.sleep


def parse_tpu_config(text: str) -> TpuTarget:
    """Parses a managed job's `TPU_CONFIG` (JSON: tpu_node_name, zone, project)."""
    config = checks.json_object(text, "TPU_CONFIG", TPU_CONFIG_EXAMPLE)
    keys = ("tpu_node_name", "zone", "project")
    if wrong := [key for key in keys if not isinstance(config.get(key), str) or not config[key]]:
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
    env = (platform := platform or Platform()).environ
    if tpu:
        checks.of_type(tpu, str, "tpu")
        if tpu != "local" and ":" in tpu:
            tpu = grpc_address(tpu, "tpu")
        where = ", ".join(part for part in (zone, project and f"project {project}") if part)
        source = _LOCAL_SOURCE if tpu == "local" else f"TPU {tpu!r}"
        return TpuTarget(tpu, zone, project, source + (f" in {where}" if where else ""))
    if env.get("TPU_CONFIG"):
        return parse_tpu_config(env["TPU_CONFIG"])
    if env.get("COLAB_TPU_ADDR"):
        address = grpc_address(env["COLAB_TPU_ADDR"], "COLAB_TPU_ADDR")
        return TpuTarget(address, source=f"legacy Colab TPU node at {address}")
    if name := env.get("TPU_NAME", "").strip():
        return TpuTarget(name, source=f"TPU_NAME={name!r}" + " (TPU VM)" * (name == "local"))
    return TpuTarget("local", source=_LOCAL_SOURCE) if platform.tpu_device_files() else None


def _attempt(connect: Callable[[TpuTarget], Any], target: TpuTarget, seconds: float) -> Any:
    """Runs one connection attempt in a daemon thread, so that a hang in TensorFlow has a bound."""
    future: Future = Future()

    def run() -> None:
        try:
            future.set_result(connect(target))
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
            future.set_exception(error)

    threading.Thread(target=run, daemon=True, name="tpu-connect").start()
    begun, waited = time.monotonic(), 0.0
    while not wait([future], timeout=min(checks.NOTE_SECONDS, seconds - waited)).done:
        if (waited := time.monotonic() - begun) >= seconds:
            raise TimeoutError(f"no answer within {seconds:g} s")
        print(f"Waiting for the TPU to answer ({target.source}): {waited:.0f} s of {seconds:g} s.")
    return future.result()


def connect_tpu(
    target: TpuTarget,
    *,
    attempts: int | None = None,
    delay: float = 10.0,
    attempt_timeout: float = 120.0,
    platform: Platform | None = None,
) -> Any:
    """Connects to `target`, initializes its TPU, returns the resolver; `attempts`: default 40 for
    a managed job's TPU, else 1, `attempt_timeout` s each; TpuConnectionError if all fail."""
    platform = platform or Platform()
    default = 40 if target.wait else 1
    attempts = checks.integer(default if attempts is None else attempts, "attempts")
    checks.number(delay, "delay"), checks.number(attempt_timeout, "attempt_timeout", 0.1)
    not_ready = platform.not_ready_errors() + (TimeoutError, OSError)
    for attempt in range(1, attempts + 1):
        try:
            return _attempt(platform.connect, target, attempt_timeout)
        except RuntimeError as error:  # TensorFlow's, where googleapiclient is missing: no retry
            if "Google API client" in str(error):
                raise TpuConnectionError(_API_CLIENT.format(target.source)) from error
            raise
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


def quiet_tensorflow() -> None:
    """Hides TensorFlow's start-up lines and warnings (not errors); call before it is imported."""
    if note := skip_tpu_metadata_query():  # tensorflow-tpu without a TPU chip
        print("Note:", note)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # C++: errors only
    # TF_ENABLE_ONEDNN_OPTS=0 would also hide the oneDNN notice, but halves CPU training speed.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    for module in ("tensorflow", "keras", "tf_keras", "tensorflow_datasets", "absl"):
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=module)
        warnings.filterwarnings("ignore", category=FutureWarning, module=module)
    warnings.filterwarnings("ignore", category=UserWarning, module="keras")
    importlib.import_module("absl.logging").set_verbosity("error")  # installed with TensorFlow
    tf = import_tensorflow()
    tf.get_logger().setLevel(logging.ERROR)
    tf.get_logger().propagate = not tf.get_logger().handlers  # each error once, not also via root
    tf.autograph.set_verbosity(0)
