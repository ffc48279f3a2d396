"""The cases of the support table, as they run inside a case process (see `support_table`).

Each case is the guide's own code, adapted only where an API was renamed:

* `fit`: `model.compile(..., steps_per_execution=N)` and `model.fit` (under
  ParameterServerStrategy through `DatasetCreator`, where the Keras at hand has it);
* `loop`: the guide's custom loop (model and optimizer created in the scope, `strategy.run`,
  `strategy.reduce`), or the ClusterCoordinator loop of the parameter-server tutorial;
* `loop_built`: the same loop after `optimizer.build(model.trainable_variables)` created the
  optimizer's variables inside the scope, the fix Keras 3 needs.

TensorFlow is imported inside the functions: only the case processes import it.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from tpuhelpers import checks, support

STEPS = 4  # training steps per case: enough to run the step function more than once
GLOBAL_BATCH = 8
MARKER = "SUPPORT_RESULT "
ENV_MARKER = "SUPPORT_ENV "
CRASH_ENV = "TPUHELPERS_SUPPORT_CRASH"  # "strategy:api" aborts that case (for tests)


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

    checks.one_of(key, support.STRATEGIES, "strategy")
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
    return tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.NcclAllReduce())


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

    with strategy.scope():
        model = _make_model()
        optimizer = tf.keras.optimizers.Adam()
        if built:
            optimizer.build(model.trainable_variables)
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
    """Runs a few training steps of one API under an existing strategy; a failure is a result."""
    checks.one_of(api, support.APIS, "API")
    steps_per_call = 4 if strategy_key == "mirrored_spe4" else 1
    try:
        if api == "fit":
            loss = _fit(strategy, steps_per_call)
        else:
            loss = _loop(strategy, steps_per_call, built=api == "loop_built")
        if not math.isfinite(loss):
            raise FloatingPointError(f"the loss is {loss} after {STEPS} steps")
    except Exception as error:  # the point is to record any failure
        return {"status": "fails", "error": type(error).__name__, "message": clean_message(error)}
    return {"status": "works"}


def case_main(strategy_key: str, apis: list[str]) -> None:
    """Runs cases in this process, printing each result as soon as it is known; then exits."""
    import dataclasses

    import tpuhelpers

    tpuhelpers.quiet_tensorflow()
    print(ENV_MARKER + json.dumps(dataclasses.asdict(support.current_stack())), flush=True)
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


if __name__ == "__main__":
    raise SystemExit("tools.runs.support_cases has no command line: the other tools import it.")
