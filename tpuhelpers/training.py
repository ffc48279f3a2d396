"""Checks and one fix (`fix_steps_per_execution`) for training under `tf.distribute`, Keras 3."""

from importlib.metadata import version
from typing import Any

from tpuhelpers import checks, tpu


def keras_flavor() -> str:
    """Returns `"keras3"` for Keras 3 (the default `tf.keras`), `"tf-keras"` for legacy Keras 2."""
    return "tf-keras" if tpu.import_tensorflow().keras.__name__.startswith("tf_keras") else "keras3"


def keras_version() -> str:
    """Returns the version of the Keras that `tf.keras` is, e.g. `"keras 3.15.1"`."""
    package = "tf-keras" if keras_flavor() == "tf-keras" else "keras"
    return f"{package} {version(package)}"


def _in_scope(strategy: Any, obj: Any) -> bool:
    """Whether all variables of `obj` (or of the list `obj`) were created in `strategy.scope()`."""
    for variable in getattr(obj, "variables", obj):
        inner = getattr(variable, "value", None)  # Keras 3 wraps each tf.Variable: `.value`
        inner = inner if hasattr(inner, "_distribute_strategy") else variable
        if not strategy.extended.variable_created_in_scope(inner):
            return False
    return True


def check_created_in_scope(strategy: Any, **objects: Any) -> None:
    """A ValueError naming each of `objects` (`model=model`...) made outside `strategy.scope()`."""
    if missing := [name for name, obj in objects.items() if obj is None]:
        raise ValueError(f"{', '.join(missing)} is None: pass the object itself, e.g. model=model.")
    if not hasattr(strategy, "extended") or not objects:
        raise ValueError("Pass a strategy and what to check: (strategy, model=model, ...).")
    if outside := [name for name, obj in objects.items() if not _in_scope(strategy, obj)]:
        names = ", ".join(outside)
        was, its = ("was", "its") if len(outside) == 1 else ("were", "their")
        raise ValueError(
            f"{names} {was} created outside strategy.scope(), so {its} variables are not "
            f"distributed over the {strategy.num_replicas_in_sync} replicas of "
            f"{type(strategy).__name__}. Move the creation of {names} into `with strategy.scope():`"
            " (create the model, optimizer and metrics there)."
        )


def use_multi_step_train_function(model: Any) -> None:
    """Makes `fit` run `steps_per_execution` steps a call in a `tf.range` loop (as notebook 03)."""
    tf = tpu.import_tensorflow()
    strategy = model.distribute_strategy

    @tf.function(reduce_retracing=True)
    def multi_step_train_function(iterator):
        for _ in tf.range(model.steps_per_execution - 1):
            strategy.run(model.train_step, args=(next(iterator),))
        logs = strategy.run(model.train_step, args=(next(iterator),))
        return tf.nest.map_structure(
            lambda value: strategy.reduce(tf.distribute.ReduceOp.MEAN, value, axis=None), logs
        )

    model.train_function = multi_step_train_function
    model.make_train_function = lambda force=False: multi_step_train_function


def fix_steps_per_execution(model: Any, *, always: bool = False) -> Any:
    """Makes `fit` with `steps_per_execution` > 1 work on several replicas under Keras 3 (keras
    #19246) and returns it; call it after `compile`, feed a repeated dataset and `steps_per_epoch` a
    multiple of it. Unless `always`, it acts only with Keras 3, several replicas and steps."""
    if not (getattr(model, "compiled", None) or getattr(model, "_is_compiled", False)):
        raise ValueError("Compile the model first: call model.compile(...), then this function.")
    if keras_flavor() != "keras3":
        return model  # tf-keras runs steps_per_execution on several replicas by itself
    steps = checks.integer(int(model.steps_per_execution), "steps_per_execution")
    if always or model.distribute_strategy.num_replicas_in_sync > 1 and steps > 1:
        use_multi_step_train_function(model)
    return model
