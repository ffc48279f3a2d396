"""Checks and one fix for training under `tf.distribute` with Keras 3 (`tf.keras` since TF 2.16).

`Model.fit` with `steps_per_execution` > 1 fails on several replicas under Keras 3
(keras-team/keras#19246: its multi-step loop uses a `tf.while_loop` around `tf.cond` and
`tf.experimental.Optional`, which `MirroredStrategy` cannot replicate); `fix_steps_per_execution`
gives the model the multi-step loop of the TPU guide instead. Too long to inline, so it lives here.
`TF_USE_LEGACY_KERAS=1` with `tf-keras` installed gives the Keras 2 of older guides.
"""

from __future__ import annotations

from typing import Any

from tpuhelpers import checks


def keras_flavor() -> str:
    """Returns `"keras3"` for Keras 3 (the default `tf.keras`), `"tf-keras"` for legacy Keras 2."""
    import tensorflow as tf

    # tf-keras' `tf.keras` is the module `tf_keras.api._v2.keras`, which has no __version__.
    return "tf-keras" if tf.keras.__name__.startswith("tf_keras") else "keras3"


def keras_version() -> str:
    """Returns the version of the Keras that `tf.keras` is, e.g. `"keras 3.15.1"`."""
    from importlib.metadata import version

    package = "tf-keras" if keras_flavor() == "tf-keras" else "keras"
    return f"{package} {version(package)}"


def _variables_of(obj: Any) -> list:
    if hasattr(obj, "variables") and not isinstance(obj, (list, tuple)):
        return list(obj.variables)
    return list(obj)


def _tf_variable(variable: Any) -> Any:
    # Keras 3 wraps each tf.Variable in a keras.Variable; the distributed one is its `.value`.
    inner = getattr(variable, "value", None)
    return inner if hasattr(inner, "_distribute_strategy") else variable


def check_created_in_scope(strategy: Any, **objects: Any) -> None:
    """Raises a clear error if a model's (or optimizer's, or metric's) variables were created
    outside `strategy.scope()`.

    Args:
        strategy: The strategy the objects must belong to.
        **objects: Named models, optimizers, metrics or variable lists, e.g. `model=model`.

    Raises:
        ValueError: Names each object whose variables are not the strategy's.
    """
    outside = []
    for name, obj in objects.items():
        variables = _variables_of(obj)
        if any(not strategy.extended.variable_created_in_scope(_tf_variable(v)) for v in variables):
            outside.append(name)
    if outside:
        names = ", ".join(outside)
        raise ValueError(
            f"{names} {'was' if len(outside) == 1 else 'were'} created outside "
            f"strategy.scope(), so {'its' if len(outside) == 1 else 'their'} variables are not "
            f"distributed over the {strategy.num_replicas_in_sync} replicas of "
            f"{type(strategy).__name__}. Move the creation of {names} into "
            "`with strategy.scope():` (create the model, optimizer and metrics there)."
        )


def fix_steps_per_execution(model: Any, *, always: bool = False) -> Any:
    """Makes `Model.fit` with `steps_per_execution` > 1 work on several replicas under Keras 3.

    Call it after `model.compile(...)`. It replaces the model's train function with one that
    runs `steps_per_execution` training steps in a `tf.range` loop inside one `tf.function`,
    then returns the metrics averaged over replicas, as Keras does. Like Keras, it runs whole
    groups of `steps_per_execution` steps: use a repeated training dataset and a
    `steps_per_epoch` that is a multiple of `steps_per_execution`. Nothing changes under
    tf-keras, with one replica, or with `steps_per_execution=1`.

    Args:
        model: A compiled Keras model, created inside the strategy's scope.
        always: Install the train function even where Keras' own works (for benchmarks).

    Returns:
        The same model.

    Raises:
        ValueError: The model is not compiled.
    """
    import tensorflow as tf

    compiled = getattr(model, "compiled", None) or getattr(model, "_is_compiled", False)
    if not compiled:
        raise ValueError("Compile the model first: call model.compile(...), then this function.")
    if keras_flavor() != "keras3":
        return model  # tf-keras runs steps_per_execution on several replicas by itself
    steps = checks.positive_int(int(model.steps_per_execution), "steps_per_execution")
    strategy = model.distribute_strategy
    needed = strategy.num_replicas_in_sync > 1 and steps > 1
    if not (needed or always):
        return model

    def make_train_function(force: bool = False) -> Any:
        if model.train_function is not None and not force:
            return model.train_function

        @tf.function(reduce_retracing=True)
        def multi_step_train_function(iterator: Any) -> Any:
            for _ in tf.range(model.steps_per_execution - 1):
                strategy.run(model.train_step, args=(next(iterator),))
            logs = strategy.run(model.train_step, args=(next(iterator),))
            return tf.nest.map_structure(
                lambda value: strategy.reduce(tf.distribute.ReduceOp.MEAN, value, axis=None),
                logs,
            )

        model.train_function = multi_step_train_function
        return model.train_function

    model.train_function = None
    model.make_train_function = make_train_function
    return model


def per_replica_batch_size(global_batch: int, strategy: Any) -> int:
    """Returns the per-replica batch of a global batch, which must split evenly.

    Raises:
        ValueError: The global batch does not divide evenly among the replicas.
    """
    global_batch = checks.positive_int(global_batch, "global batch size")
    replicas = strategy.num_replicas_in_sync
    if global_batch % replicas:
        lower = global_batch - global_batch % replicas
        raise ValueError(
            f"The global batch size {global_batch} does not divide evenly among {replicas} "
            f"replicas. Use a multiple of {replicas}, e.g. {lower or replicas} or "
            f"{lower + replicas}, or set the per-replica batch and multiply it by "
            "strategy.num_replicas_in_sync."
        )
    return global_batch // replicas


def examples_per_second(times: list[float], steps: list[int], global_batch: int) -> float:
    """Training throughput from the end times of successive executions, warm-up excluded.

    The first execution includes tracing and compilation, so the rate is measured from its end
    to the end of the last one.

    Args:
        times: `time.perf_counter()` at the end of each execution (at least two).
        steps: The total step count at those times.
        global_batch: Examples per step, over all replicas.

    Raises:
        ValueError: Fewer than two executions were timed.
    """
    if len(times) < 2 or len(times) != len(steps):
        raise ValueError(
            f"Need the end times and step counts of at least two executions, got "
            f"{len(times)} times and {len(steps)} step counts: run more steps than "
            "steps_per_execution."
        )
    return (steps[-1] - steps[0]) * global_batch / (times[-1] - times[0])
