"""Checks and fixes for training under `tf.distribute` with today's Keras.

TensorFlow 2.16 and later ship Keras 3 as `tf.keras`; `TF_USE_LEGACY_KERAS=1` (set before
TensorFlow is imported, with the `tf-keras` package installed) gives the Keras 2 of older guides.
Several combinations of Keras 3 and `tf.distribute` fail as the guides write them; the helpers
here hold the reusable part of the working variants, and say plainly what was wrong:

* A custom training loop under `MirroredStrategy` fails on the first `apply_gradients` with
  "You must feed a value for placeholder tensor": Keras 3 creates the optimizer's slot variables
  lazily, inside the replica function. `build_optimizer` creates them up front, in the scope.
* `Model.fit` with `steps_per_execution` > 1 fails on several replicas with the same message
  (keras-team/keras#19246): Keras 3 runs the steps in a `tf.while_loop` around a `tf.cond` and
  `tf.experimental.Optional` values, which `MirroredStrategy` cannot replicate.
  `fix_steps_per_execution` gives the model a train function that runs the steps in a plain
  `tf.range` loop around `strategy.run`, the multi-step loop of the TPU guide.
* Variables created outside `strategy.scope()` are not distributed; `check_created_in_scope`
  says which object to move inside the scope.
"""

from __future__ import annotations

from typing import Any


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


def build_optimizer(strategy: Any, optimizer: Any, model_or_variables: Any) -> Any:
    """Creates the optimizer's variables now, inside `strategy.scope()`, and returns it.

    Needed before a custom training loop under Keras 3 (keras-team/keras#19246): otherwise the
    optimizer creates its variables inside the first replica step and the step fails. Harmless
    under tf-keras and with one replica.

    Args:
        strategy: The strategy that owns the model.
        optimizer: A Keras optimizer created inside `strategy.scope()`.
        model_or_variables: The model, or the list of variables it will train.

    Raises:
        ValueError: The model or optimizer was created outside `strategy.scope()`.
    """
    variables = (
        model_or_variables.trainable_variables
        if hasattr(model_or_variables, "trainable_variables")
        else list(model_or_variables)
    )
    check_created_in_scope(strategy, model=variables)
    if keras_flavor() == "keras3":
        check_created_in_scope(strategy, optimizer=optimizer)
        with strategy.scope():
            optimizer.build(variables)
    return optimizer


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
    steps = check_steps_per_execution(int(model.steps_per_execution))
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


def global_batch_size(per_replica_batch: int, strategy: Any) -> int:
    """Returns per-replica batch x replicas, checking that the per-replica batch is positive."""
    check_positive_int(per_replica_batch, "per_replica_batch")
    return per_replica_batch * strategy.num_replicas_in_sync


def per_replica_batch_size(global_batch: int, strategy: Any) -> int:
    """Returns the per-replica batch of a global batch, which must split evenly.

    Raises:
        ValueError: The global batch does not divide evenly among the replicas.
    """
    check_positive_int(global_batch, "global batch size")
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


def check_positive_int(value: object, name: str) -> int:
    """Returns `value` if it is a positive int, else raises a ValueError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return value


def check_steps_per_execution(value: object) -> int:
    """Checks `steps_per_execution` for `Model.compile`: a positive integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"steps_per_execution must be an integer of at least 1 (1 runs one step per call; "
            f"the upstream guide uses 50 on TPUs), got {value!r}."
        )
    return value


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
