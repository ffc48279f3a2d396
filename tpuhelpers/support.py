"""What works on this TensorFlow: the guide's support table, measured instead of copied.

The distributed-training guide says which strategy supports `Model.fit` and custom training
loops ("Supported", "Experimental support", ...). This module runs a few training steps of each
combination it can build on this machine and records what happened::

    table = support.measure()                # every case in a fresh subprocess, 2 at a time
    print(support.format_table(table))
    rows = support.guide_comparison(table)   # each cell of the guide's table, with a verdict

Each case runs in its own Python process, so that a crash, a hang or a broken runtime state in
one case cannot affect the others. `isolate="strategy"` runs the cases of one strategy in one
process instead (one TensorFlow start per strategy instead of one per case: about half the CPU
time); a process that dies is restarted for the cases it did not finish. The committed
reference, `support_table.json` next to this file, is written by
`python -m tpuhelpers.support write` with one process per case, and is keyed by Keras flavor
and TensorFlow version, so a TensorFlow or Keras upgrade shows up as a diff in review.
`nox -s support_table` writes both entries: Keras 3, and tf-keras in an environment of its own
(the full `tensorflow` wheel, `TF_USE_LEGACY_KERAS=1`).

The cases are the guide's own code, adapted only where an API was renamed:

* `fit`: `model.compile(..., steps_per_execution=N)` and `model.fit` (under
  ParameterServerStrategy through `DatasetCreator`, where the Keras at hand has it);
* `loop`: the guide's custom loop (model and optimizer created in the scope, `strategy.run`,
  `strategy.reduce`), or the ClusterCoordinator loop of the parameter-server tutorial;
* `loop_built`: the same loop after `training.build_optimizer` created the optimizer's
  variables inside the scope, the fix Keras 3 needs.

TensorFlow is imported only inside the case processes.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import importlib.metadata
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REFERENCE = Path(__file__).with_name("support_table.json")
STEPS = 4  # training steps per case: enough to run the step function more than once
GLOBAL_BATCH = 8
MARKER = "SUPPORT_RESULT "
ENV_MARKER = "SUPPORT_ENV "
CRASH_ENV = "TPUHELPERS_SUPPORT_CRASH"  # "strategy:api" aborts that case (for tests)

#: The strategies measured, in table order: key -> label.
STRATEGIES = {
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
#: The training APIs measured: key -> label.
APIS = {
    "fit": "Model.fit",
    "loop": "custom loop (guide)",
    "loop_built": "custom loop + build_optimizer",
}
STATUSES = ("works", "fails", "n/a")

#: The guide's table ("Cosa è supportato ora?"), in English. Its Estimator row is kept too.
GUIDE_STRATEGIES = {
    "mirrored": "MirroredStrategy",
    "tpu": "TPUStrategy",
    "multi_worker": "MultiWorkerMirroredStrategy",
    "central_storage": "CentralStorageStrategy",
    "parameter_server": "ParameterServerStrategy",
}
GUIDE_CLAIMS = {
    "Model.fit": dict.fromkeys(("mirrored", "tpu", "multi_worker"), "Supported")
    | dict.fromkeys(("central_storage", "parameter_server"), "Experimental"),
    "Custom training loop": dict.fromkeys(("mirrored", "tpu", "multi_worker"), "Supported")
    | dict.fromkeys(("central_storage", "parameter_server"), "Experimental"),
    "Estimator API": {
        "mirrored": "Limited",
        "tpu": "Not supported",
        "multi_worker": "Limited",
        "central_storage": "Limited",
        "parameter_server": "Limited",
    },
}
#: Which measured cases stand for each cell of the guide's table.
GUIDE_CASES = {
    "Model.fit": {
        "mirrored": [("mirrored", "fit"), ("mirrored_spe4", "fit")],
        "tpu": [("tpu", "fit")],
        "multi_worker": [("multi_worker", "fit")],
        "central_storage": [("central_storage", "fit")],
        "parameter_server": [("parameter_server", "fit"), ("parameter_server_sharded", "fit")],
    },
    "Custom training loop": {
        "mirrored": [("mirrored", "loop"), ("mirrored", "loop_built")],
        "tpu": [("tpu", "loop"), ("tpu", "loop_built")],
        "multi_worker": [("multi_worker", "loop"), ("multi_worker", "loop_built")],
        "central_storage": [("central_storage", "loop"), ("central_storage", "loop_built")],
        "parameter_server": [
            ("parameter_server", "loop"),
            ("parameter_server", "loop_built"),
            ("parameter_server_sharded", "loop_built"),
        ],
    },
}

#: What to do instead, where a case fails under Keras 3.
# The distributions that provide the `tensorflow` module, in the order they are looked for.
TENSORFLOW_WHEELS = ("tensorflow-tpu", "tensorflow-cpu", "tensorflow")
ALTERNATIVES = {
    ("default", "fit"): "compile with jit_compile=False: the tensorflow-tpu wheel's XLA cannot "
    "compile for a CPU, and Keras compiles the default strategy's step with XLA",
    ("mirrored_spe4", "fit"): "training.fix_steps_per_execution(model) after compile, or "
    "steps_per_execution=1",
    "loop": "create the optimizer's variables in the scope first: "
    "training.build_optimizer(strategy, optimizer, model) (the loop_built column)",
    ("multi_worker", "fit"): "the custom loop with build_optimizer (notebook 07), or tf-keras",
    ("parameter_server", "fit"): "the ClusterCoordinator custom loop (notebook 08), or tf-keras "
    "with DatasetCreator",
    ("parameter_server_sharded", "fit"): "the ClusterCoordinator custom loop on the variables' "
    "shards (notebook 08), or tf-keras with DatasetCreator",
    ("parameter_server_sharded", "loop"): "take the gradients with respect to the shards "
    "(weight.value.variables) and build the optimizer on them (notebook 08)",
}


class SupportTableError(RuntimeError):
    """The committed reference has no entry for this Keras flavor and TensorFlow version."""


# Running one case (inside the case's own process) ---------------------------------------------


def _make_model() -> Any:
    import tensorflow as tf

    return tf.keras.Sequential(
        [
            tf.keras.Input((8,)),
            tf.keras.layers.Dense(16, activation="relu"),
            tf.keras.layers.Dense(1),
        ]
    )


def _dataset() -> Any:
    import tensorflow as tf

    return tf.data.Dataset.from_tensors(([1.0] * 8, [1.0])).repeat(100).batch(GLOBAL_BATCH)


def _in_process_cluster(workers: int = 2, ps: int = 1) -> Any:
    """Starts the servers of a parameter-server cluster in this process, as TF's tutorial does."""
    import tensorflow as tf

    from tpuhelpers import cluster

    spec = tf.train.ClusterSpec(cluster.local_cluster(workers, ps=ps))
    config = tf.compat.v1.ConfigProto()
    config.inter_op_parallelism_threads = workers + 1  # the tutorial's advice for few cores
    for index in range(workers):
        tf.distribute.Server(spec, "worker", index, config=config, protocol="grpc")
    for index in range(ps):
        tf.distribute.Server(spec, "ps", index, protocol="grpc")
    return tf.distribute.cluster_resolver.SimpleClusterResolver(spec, rpc_layer="grpc")


def build_strategy(key: str) -> Any:
    """Creates the strategy of a case; must run first in a fresh process."""
    import tensorflow as tf

    from tpuhelpers import hardware

    if key == "default":
        return tf.distribute.get_strategy()
    if key == "one_device":
        return tf.distribute.OneDeviceStrategy("/cpu:0")
    if key in ("mirrored", "mirrored_spe4"):
        return tf.distribute.MirroredStrategy(hardware.split_cpu(2))
    if key == "central_storage":
        return tf.distribute.experimental.CentralStorageStrategy(
            compute_devices=hardware.split_cpu(2), parameter_device="/cpu:0"
        )
    if key == "multi_worker":  # the launcher gave this process its TF_CONFIG
        options = tf.distribute.experimental.CommunicationOptions(
            implementation=tf.distribute.experimental.CommunicationImplementation.RING
        )
        return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    if key in ("parameter_server", "parameter_server_sharded"):
        partitioner = None
        if key == "parameter_server_sharded":  # as the guide creates it
            partitioner = tf.distribute.experimental.partitioners.FixedShardsPartitioner(2)
        return tf.distribute.experimental.ParameterServerStrategy(
            _in_process_cluster(), variable_partitioner=partitioner
        )
    if key == "tpu":
        return hardware.get_strategy("tpu")
    if key == "nccl":
        return tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.NcclAllReduce())
    raise ValueError(f"unknown strategy {key!r}; the strategies are {', '.join(STRATEGIES)}")


def _fit(strategy: Any, steps_per_call: int) -> float:
    import tensorflow as tf

    with strategy.scope():
        model = _make_model()
        model.compile(loss="mse", optimizer="adam", steps_per_execution=steps_per_call)
    data = _dataset().repeat()
    if "ParameterServer" in type(strategy).__name__:
        creator = getattr(getattr(tf.keras.utils, "experimental", None), "DatasetCreator", None)
        if creator is not None:  # tf-keras: the tutorial's way
            data = creator(lambda context: _dataset().repeat())
    history = model.fit(data, epochs=1, steps_per_epoch=STEPS, verbose=0)
    return float(history.history["loss"][-1])


def _loop(strategy: Any, steps_per_call: int, built: bool) -> float:
    import tensorflow as tf

    from tpuhelpers import training

    with strategy.scope():
        model = _make_model()
        optimizer = tf.keras.optimizers.Adam()
        if built:
            training.build_optimizer(strategy, optimizer, model)
    loss_object = tf.keras.losses.MeanSquaredError(reduction="none")

    def train_step(inputs: Any) -> Any:
        features, labels = inputs
        with tf.GradientTape() as tape:
            predictions = model(features, training=True)
            loss = tf.nn.compute_average_loss(
                loss_object(labels, predictions), global_batch_size=GLOBAL_BATCH
            )
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables, strict=True))
        return loss

    if "ParameterServer" in type(strategy).__name__:  # the parameter-server tutorial's loop
        coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
        iterator = iter(coordinator.create_per_worker_dataset(lambda: _dataset().repeat()))

        @tf.function
        def worker_step(iterator: Any) -> Any:
            losses = strategy.run(train_step, args=(next(iterator),))
            return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

        results = [coordinator.schedule(worker_step, args=(iterator,)) for _ in range(STEPS)]
        coordinator.join()
        return float(results[-1].fetch())

    iterator = iter(strategy.experimental_distribute_dataset(_dataset().repeat()))

    @tf.function
    def distributed_train_step(iterator: Any) -> Any:
        for _ in tf.range(steps_per_call - 1):  # the multi-step loop: several steps per call
            strategy.run(train_step, args=(next(iterator),))
        losses = strategy.run(train_step, args=(next(iterator),))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    for _ in range(STEPS // steps_per_call):
        loss = distributed_train_step(iterator)
    return float(loss)


def clean_message(error: BaseException) -> str:
    """The line of an error message that says what went wrong, without run-specific names."""
    noise = ("File ", "Detected at node", "Graph execution error", "[[", "0 ")
    text = re.sub(r"PerReplica:\{.*?\n\}", "PerReplica:{...}", str(error), flags=re.S)
    lines = [line.strip() for line in text.strip().splitlines()]
    if lines and lines[0].startswith("in user code:"):  # autograph: the error is the last line
        lines = [re.sub(r"^\w+: ", "", lines[-1])]
    lines = [line for line in lines if line and not line.startswith(noise)]
    lines = [line for line in lines if not re.fullmatch(r"\d+ root error\(s\) found\.", line)]
    text = re.sub(r"^\(\d+\) [A-Z_]+:\s*", "", lines[0]) if lines else "(no message)"
    text = re.sub(r"'[^' ]*/[^' ]*'", "'...'", text)  # graph node names
    text = re.sub(r"(127\.0\.0\.1|localhost):\d+", "HOST:PORT", text)
    text = re.sub(r"0x[0-9a-f]+", "0x...", text)
    text = re.sub(r"_\d+\b", "_N", text)  # __inference_train_step_1234, Placeholder_12
    return text[:240]


def run_case(strategy_key: str, api: str, strategy: Any) -> dict[str, Any]:
    """Runs a few training steps of one API under an existing strategy; never raises."""
    steps_per_call = 4 if strategy_key == "mirrored_spe4" else 1
    try:
        if api == "fit":
            loss = _fit(strategy, steps_per_call)
        elif api in ("loop", "loop_built"):
            loss = _loop(strategy, steps_per_call, built=api == "loop_built")
        else:
            raise ValueError(f"unknown API {api!r}; the APIs are {', '.join(APIS)}")
        if not math.isfinite(loss):
            raise FloatingPointError(f"the loss is {loss} after {STEPS} steps")
    except Exception as error:  # the point is to record any failure
        return {"status": "fails", "error": type(error).__name__, "message": clean_message(error)}
    return {"status": "works"}


def _case_main(strategy_key: str, apis: list[str]) -> None:
    """Runs cases in this process, printing each result as soon as it is known."""
    import tpuhelpers

    tpuhelpers.quiet_tensorflow()
    print(ENV_MARKER + json.dumps(_versions()), flush=True)
    try:
        strategy = build_strategy(strategy_key)
    except Exception as error:  # then every case of this strategy fails the same way
        strategy, failure = None, {"status": "fails", "error": type(error).__name__}
        failure["message"] = clean_message(error)
    for api in apis:
        if os.environ.get(CRASH_ENV) == f"{strategy_key}:{api}":
            os.abort()  # tests: a case that takes its whole process down
        result = failure if strategy is None else run_case(strategy_key, api, strategy)
        print(MARKER + json.dumps({"api": api, **result}), flush=True)
    # Leave at once: a multi-worker runtime can take seconds to shut down after its partner left.
    os._exit(0)


# Measuring the table (in the parent process) ---------------------------------------------------


def not_available_reason(strategy_key: str) -> str | None:
    """Why a strategy cannot run on this machine, or None if it can (decided without TF)."""
    if strategy_key == "tpu":
        from tpuhelpers import hardware

        if hardware.find_tpu() is None:
            return (
                "no TPU on this machine (no TPU_NAME, TPU_CONFIG, COLAB_TPU_ADDR or "
                "/dev/accel* device)"
            )
    if strategy_key == "nccl" and not glob.glob("/dev/nvidia[0-9]*"):
        return "NcclAllReduce runs on NVIDIA GPUs only; this machine has none"
    return None


def estimator_status() -> dict[str, Any]:
    """The guide's Estimator row: is `tf.estimator` still there?"""
    if importlib.util.find_spec("tensorflow_estimator") is None:
        return {
            "status": "n/a",
            "reason": "tf.estimator was removed in TensorFlow 2.16",
        }
    return {"status": "works", "reason": "tensorflow-estimator is installed"}


def _parse_results(lines: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The results a case process printed, by API; its versions under the key `None`."""
    results: dict[Any, dict[str, Any]] = {}
    for line in lines:
        if line.startswith(MARKER):
            record = json.loads(line[len(MARKER) :])
            results[record.pop("api")] = record
        elif line.startswith(ENV_MARKER):
            results[None] = json.loads(line[len(ENV_MARKER) :])
    return results


_CASE_SCRIPT = "import sys\nfrom tpuhelpers import support\nsupport.main(sys.argv[1:])\n"


def _run_processes(strategy_key: str, apis: list[str], timeout: float) -> tuple[dict, str]:
    """Runs some cases of one strategy in one process (two for MultiWorkerMirrored).

    Returns:
        The results by API (see `_parse_results`), and what went wrong with the process, if
        anything.
    """
    from tpuhelpers import cluster
    from tpuhelpers.cluster import describe_exit

    args = ["case", strategy_key, *apis]
    if strategy_key == "multi_worker":
        with tempfile.TemporaryDirectory() as folder:
            script = Path(folder, "support_case.py")
            script.write_text(_CASE_SCRIPT, encoding="utf-8")
            with cluster.start(script, 2, args=args, echo=False) as job:
                try:
                    job.wait(timeout)
                    problem = ""
                except cluster.LaunchError as error:
                    problem = str(error).splitlines()[0]
                return _parse_results(job.lines["worker 0"]), problem
    environ = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "TF_NUM_INTEROP_THREADS": "2"}
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "tpuhelpers.support", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=environ,
        )
    except subprocess.TimeoutExpired as error:
        output = error.stdout or b""
        text = output.decode() if isinstance(output, bytes) else output
        return _parse_results(text.splitlines()), f"timed out after {timeout:g} s"
    problem = (
        "" if completed.returncode == 0 else f"the process {describe_exit(completed.returncode)}"
    )
    return _parse_results(completed.stdout.splitlines()), problem


def _measure_strategy(
    strategy_key: str, apis: list[str], isolate: str, timeout: float
) -> tuple[dict, dict | None]:
    """Measures every API under one strategy; returns the results and the versions seen."""
    reason = not_available_reason(strategy_key)
    if reason:
        return {api: {"status": "n/a", "reason": reason} for api in apis}, None
    results: dict[str, dict[str, Any]] = {}
    versions = None
    pending = list(apis)
    while pending:
        batch = pending if isolate == "strategy" else pending[:1]
        found, problem = _run_processes(strategy_key, batch, timeout)
        versions = found.pop(None, versions)
        results.update({api: found[api] for api in batch if api in found})
        missing = [api for api in batch if api not in found]
        if missing:  # the process died or hung during the first missing case
            results[missing[0]] = {
                "status": "fails",
                "error": "crash",
                "message": problem or "the process ended without a result",
            }
        pending = [api for api in pending if api not in results]
    return {api: results[api] for api in apis}, versions


def measure(
    strategies: Iterable[str] | None = None,
    *,
    isolate: str = "case",
    parallel: int = 2,
    timeout: float = 180.0,
) -> dict[str, Any]:
    """Measures the support table on this machine.

    Args:
        strategies: Which strategies (keys of `STRATEGIES`); default: all.
        isolate: `"case"` runs every case in a fresh process; `"strategy"` runs the cases of
            one strategy in one process (faster), restarting it for the rest if it dies.
        parallel: How many strategies to measure at once.
        timeout: Seconds one process may take.

    Returns:
        `{"key", "flavor", "tensorflow", "keras", "cases": {strategy: {api: result}},
        "estimator": result}`; a result has `status` (`works`, `fails`, `n/a`) and `error` and
        `message` for a failure, or `reason` for n/a.

    Raises:
        ValueError: An unknown strategy or isolation mode.
    """
    keys = list(STRATEGIES) if strategies is None else list(strategies)
    unknown = [key for key in keys if key not in STRATEGIES]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; choose from {', '.join(STRATEGIES)}")
    if isolate not in ("case", "strategy"):
        raise ValueError(f"isolate must be 'case' or 'strategy', got {isolate!r}")
    with concurrent.futures.ThreadPoolExecutor(max_workers=parallel) as pool:
        futures = {
            key: pool.submit(_measure_strategy, key, list(APIS), isolate, timeout) for key in keys
        }
        done = {key: future.result() for key, future in futures.items()}
    cases = {key: results for key, (results, _) in done.items()}
    versions = next((v for _, v in done.values() if v), None) or environment()
    return {
        "key": table_key(versions["flavor"], versions["tensorflow"], versions["wheel"]),
        **versions,
        "cases": cases,
        "estimator": estimator_status(),
    }


def _versions() -> dict[str, str]:
    import tensorflow as tf

    from tpuhelpers import training

    keras = training.keras_version().split()[-1]  # tf-keras' tf.keras has no __version__
    wheel = next((name for name in TENSORFLOW_WHEELS if _has(name)), "tensorflow")
    return {
        "flavor": training.keras_flavor(),
        "tensorflow": tf.__version__,
        "keras": keras,
        "wheel": wheel,
    }


def _has(distribution: str) -> bool:
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def environment() -> dict[str, str]:
    """The Keras flavor and versions, from a subprocess (TensorFlow is not imported here)."""
    code = "import json; from tpuhelpers import support; print(json.dumps(support._versions()))"
    output = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def table_key(flavor: str, tensorflow_version: str, wheel: str = "tensorflow") -> str:
    """The reference entry's key: Keras flavor, TensorFlow version, and the wheel if it matters.

    `tensorflow` and `tensorflow-cpu` run the same code on a CPU; `tensorflow-tpu` does not (its
    XLA has no CPU compiler), so its tables are kept apart.
    """
    suffix = " (tensorflow-tpu)" if wheel == "tensorflow-tpu" else ""
    return f"{flavor} / TensorFlow {tensorflow_version}{suffix}"


# The committed reference and the comparisons ----------------------------------------------------


def load_reference(path: Path = REFERENCE) -> dict[str, Any]:
    """Returns every committed table, by key."""
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def reference_for(key: str, path: Path = REFERENCE) -> dict[str, Any]:
    """Returns the committed table measured under `key` (see `table_key`).

    Raises:
        SupportTableError: None was committed for that key (after an upgrade, say).
    """
    tables = load_reference(path)
    if key not in tables:
        raise SupportTableError(
            f"{path.name} has no table for {key!r} (it has "
            f"{', '.join(map(repr, tables)) or 'none'}). Regenerate it with "
            "`nox -s support_table` and review the diff."
        )
    return {"key": key, **tables[key]}


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def nearest_reference(
    stack: Mapping[str, str] | None = None, path: Path = REFERENCE
) -> dict[str, Any]:
    """The committed table for a stack, or else the nearest one, with a note that says so.

    A stack without a table of its own (a TensorFlow that Colab or a TPU VM image brings, say)
    gets the table of the same Keras flavor and wheel if there is one (else of another): the
    newest TensorFlow not newer than its own, else the oldest newer one. `format_table` shows
    the note. It never fails for a version it does not know.

    Args:
        stack: `flavor`, `tensorflow` (version) and `wheel`; default: this process's.
        path: The committed tables.

    Raises:
        SupportTableError: No table is committed at all.
    """
    stack = dict(stack or _versions())
    stack.setdefault("wheel", "tensorflow")
    key = table_key(stack["flavor"], stack["tensorflow"], stack["wheel"])
    tables = load_reference(path)
    if key in tables or not tables:
        return reference_for(key, path)
    wanted = _version_tuple(stack["tensorflow"])

    def preference(k: str) -> tuple:
        table = tables[k]
        version = _version_tuple(table["tensorflow"])
        newer = version > wanted
        return (
            table["flavor"] != stack["flavor"],
            (table.get("wheel") == "tensorflow-tpu") != (stack["wheel"] == "tensorflow-tpu"),
            newer,
            version if newer else tuple(-part for part in version),
        )

    nearest = min(tables, key=preference)
    note = (
        f"No table was measured for {key}: showing the nearest, {nearest}. Set "
        "MEASURE_SUPPORT = True to measure this stack, or run `nox -s support_table`."
    )
    return {**reference_for(nearest, path), "note": note}


def write_reference(table: Mapping[str, Any], path: Path = REFERENCE) -> None:
    """Stores `table` under its key, keeping the tables of other flavors and versions."""
    tables = load_reference(path)
    tables[table["key"]] = {k: v for k, v in table.items() if k != "key"}
    path.write_text(json.dumps(tables, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def differences(measured: Mapping[str, Any], reference: Mapping[str, Any]) -> list[str]:
    """Cases whose status or error class differs from the reference, one line each.

    Cases not measured here (n/a on this machine, or left out) are not compared.
    """
    found = []
    if measured.get("keras") != reference.get("keras"):
        found.append(f"Keras version: {reference.get('keras')} -> {measured.get('keras')}")
    for key, api, result in cases(measured):
        before = reference["cases"].get(key, {}).get(api)
        if result["status"] == "n/a" or before is None or before["status"] == "n/a":
            continue
        if (result["status"], result.get("error")) != (before["status"], before.get("error")):
            found.append(f"{STRATEGIES[key]}, {APIS[api]}: {_cell(before)} -> {_cell(result)}")
    return found


def _cell(result: Mapping[str, Any]) -> str:
    if result["status"] == "fails":
        return f"fails ({result['error']})"
    return result["status"]


def cases(table: Mapping[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """The measured cases as `(strategy, api, result)`, in table order."""
    found = table["cases"]
    return [
        (key, api, found[key][api])
        for key in STRATEGIES
        for api in APIS
        if api in found.get(key, {})
    ]


def format_table(table: Mapping[str, Any], messages: bool = True) -> str:
    """The measured table as text: one row per strategy, one column per API."""
    width = max(len(label) for label in STRATEGIES.values())
    header = f"{'strategy':<{width}}  " + "  ".join(f"{label:<30}" for label in APIS.values())
    lines = [f"Measured with {table['key']} (Keras {table['keras']})", "", header.rstrip()]
    if table.get("note"):
        lines[:0] = [f"Note: {table['note']}", ""]
    rows: dict[str, list[str]] = {}
    notes, reasons = [], {}
    for key, api, result in cases(table):
        rows.setdefault(key, []).append(f"{_cell(result):<30}")
        if messages and result["status"] == "fails":
            notes.append(f"  {STRATEGIES[key]}, {APIS[api]}: {result['message']}")
        if result["status"] == "n/a":
            reasons[key] = result["reason"]
    lines += [
        f"{STRATEGIES[key]:<{width}}  " + "  ".join(cells).rstrip() for key, cells in rows.items()
    ]
    if notes:
        lines += ["", "Errors (first line):", *notes]
    if reasons:
        lines += ["", "Not measured here:"]
        lines += [f"  {STRATEGIES[key]}: {reason}" for key, reason in reasons.items()]
    return "\n".join(lines)


def guide_comparison(table: Mapping[str, Any]) -> list[dict[str, str]]:
    """Each cell of the guide's table next to what was measured, with a verdict.

    Returns:
        One dict per cell: `api`, `strategy`, `claim`, `measured` (the cases, in words), `short`
        (a word or two) and `verdict`: `"agrees"`, `"differs"` or `"not measured"`.
    """
    rows = []
    for api, claims in GUIDE_CLAIMS.items():
        for key, claim in claims.items():
            if api == "Estimator API":
                removed = table["estimator"]["status"] == "n/a"
                measured, short = (
                    table["estimator"]["reason"],
                    "removed" if removed else "installed",
                )
            else:
                measured, short = _measured_cell(table, GUIDE_CASES[api][key])
            if short in ("n/a here", "installed"):  # the Estimator itself is not measured
                verdict = "not measured"
            else:
                claimed_to_work = claim != "Not supported"
                verdict = "agrees" if (short == "works") == claimed_to_work else "differs"
            strategy = GUIDE_STRATEGIES[key]
            rows.append(
                dict(api=api, strategy=strategy, claim=claim, measured=measured, short=short)
                | {"verdict": verdict}
            )
    return rows


def _measured_cell(table: Mapping[str, Any], guide_cases: list[tuple[str, str]]) -> tuple[str, str]:
    """What the cases standing for one cell of the guide's table gave: in words, and in short."""
    found = [(case, table["cases"].get(case[0], {}).get(case[1])) for case in guide_cases]
    found = [(case, result) for case, result in found if result and result["status"] != "n/a"]
    if not found:
        return "not available here", "n/a here"
    measured = "; ".join(f"{_short(case)}: {result['status']}" for case, result in found)
    works = [result["status"] == "works" for _, result in found]
    if all(works):
        return measured, "works"
    if not any(works):
        return measured, "fails"
    return measured, "with a fix" if works[-1] and not works[0] else "partly"


def _short(case: tuple[str, str]) -> str:
    strategy_key, api = case
    words = {
        ("mirrored", "fit"): "steps_per_execution=1",
        ("mirrored_spe4", "fit"): "steps_per_execution=4",
        ("parameter_server", "fit"): "no partitioner",
        ("parameter_server_sharded", "fit"): "partitioner",
        ("parameter_server_sharded", "loop_built"): "partitioner + build_optimizer",
    }
    if case in words:
        return words[case]
    return {"fit": "Model.fit", "loop": "as written", "loop_built": "build_optimizer"}[api]


def alternative(strategy_key: str, api: str) -> str | None:
    """The working alternative to a case that fails under Keras 3, or None."""
    if strategy_key == "parameter_server_sharded" and api == "loop_built":
        api = "loop"
    return ALTERNATIVES.get((strategy_key, api)) or (
        ALTERNATIVES["loop"] if api == "loop" else None
    )


def main(argv: list[str] | None = None) -> int:
    """`write` regenerates the reference; `check` compares with it; `case` runs cases."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("write", "check", "show"):
        command = commands.add_parser(name)
        command.add_argument("--isolate", choices=["case", "strategy"], default="case")
        command.add_argument("--parallel", type=int, default=2)
        command.add_argument("strategies", nargs="*", help="default: all")
    case = commands.add_parser("case", help="(internal) run cases in this process")
    case.add_argument("strategy", choices=list(STRATEGIES))
    case.add_argument("apis", nargs="+", choices=list(APIS))
    args = parser.parse_args(argv)
    if args.command == "case":
        _case_main(args.strategy, args.apis)
        return 0
    if args.command == "write" and args.strategies:
        parser.error("write measures every strategy: give no strategy names")
    start = time.perf_counter()
    table = measure(args.strategies or None, isolate=args.isolate, parallel=args.parallel)
    print(format_table(table))
    print(f"\n({time.perf_counter() - start:.0f} s)")
    if args.command == "write":
        write_reference(table)
        print(f"wrote {REFERENCE}")
    elif args.command == "check":
        found = differences(table, reference_for(table["key"]))
        print("\n".join(found) if found else "same as the committed reference")
        return 1 if found else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
