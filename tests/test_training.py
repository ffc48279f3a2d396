"""Training helpers: the Keras 3 fixes run for real on 2 CPU replicas, in fresh processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tools.runs import bench

# A small model on random data: what matters is the distributed machinery, not accuracy.
PRELUDE = """
import json, os
import numpy as np
from tpuhelpers import hardware, training
strategy = hardware.get_strategy("cpu", cpu_replicas=2)
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.random((400, 8, 8, 1)).astype("float32")
y = rng.integers(0, 10, 400)
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(40, drop_remainder=True).repeat()


def new_model():
    return tf.keras.Sequential([
        tf.keras.layers.Input((8, 8, 1)),
        tf.keras.layers.Conv2D(4, 3, activation="relu",
                               kernel_regularizer=tf.keras.regularizers.L2(1e-4)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(10),
    ])


def compiled(steps_per_execution):
    tf.keras.utils.set_random_seed(0)
    with strategy.scope():
        model = new_model()
        model.compile(
            optimizer="adam",
            steps_per_execution=steps_per_execution,
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["sparse_categorical_accuracy"],
        )
    return model


result = {"flavor": training.keras_flavor()}
"""


def run_script(body: str) -> dict:
    code = PRELUDE + textwrap.dedent(body) + "\nprint('RESULT', json.dumps(result))\n"
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    line = [ln for ln in completed.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT ") :])


@pytest.mark.slow
def test_fit_with_steps_per_execution_on_two_replicas():
    result = run_script("""
        # Plain Keras: the bug this helper works around (keras-team/keras#19246).
        try:
            compiled(5).fit(dataset, steps_per_epoch=10, epochs=1, verbose=0)
            result["plain"] = "ok"
        except Exception as error:
            result["plain"] = type(error).__name__ + ": " + str(error).splitlines()[0]

        reference = compiled(1)
        reference.fit(dataset, steps_per_epoch=10, epochs=2, verbose=0)
        fixed = training.fix_steps_per_execution(compiled(5))
        history = fixed.fit(dataset, steps_per_epoch=10, epochs=2, verbose=0)
        result["steps"] = int(fixed.optimizer.iterations.numpy())
        result["max_weight_difference"] = max(
            float(np.abs(a - b).max()) for a, b in zip(reference.get_weights(), fixed.get_weights())
        )
        result["loss_history"] = history.history["loss"]
        result["reference_loss_history"] = reference.history.history["loss"]
    """)
    if result["flavor"] == "keras3":
        assert "InvalidArgumentError" in result["plain"], result["plain"]
    else:
        assert result["plain"] == "ok"
    assert result["steps"] == 20  # 2 epochs x 10 steps, in 4 executions of 5 steps
    assert result["max_weight_difference"] < 1e-5  # the same training as 20 single steps
    assert result["loss_history"] == pytest.approx(result["reference_loss_history"], rel=1e-5)


@pytest.mark.slow
def test_custom_loop_needs_the_optimizer_built_in_scope():
    result = run_script("""
        def custom_step(build):
            with strategy.scope():
                model = new_model()
                optimizer = tf.keras.optimizers.Adam()
            if build:
                with strategy.scope():
                    optimizer.build(model.trainable_variables)

            @tf.function
            def step(iterator):
                def step_fn(inputs):
                    images, labels = inputs
                    with tf.GradientTape() as tape:
                        logits = model(images, training=True)
                        loss = tf.nn.compute_average_loss(
                            tf.keras.losses.sparse_categorical_crossentropy(
                                labels, logits, from_logits=True))
                        loss += tf.nn.scale_regularization_loss(tf.add_n(model.losses))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                strategy.run(step_fn, args=(next(iterator),))

            iterator = iter(strategy.experimental_distribute_dataset(dataset))
            try:
                for _ in range(3):
                    step(iterator)
                return int(optimizer.iterations.numpy())
            except Exception as error:
                return type(error).__name__

        result["without_build"] = custom_step(build=False)
        result["with_build"] = custom_step(build=True)

        outside = new_model()
        try:
            training.check_created_in_scope(strategy, model=outside)
        except ValueError as error:
            result["outside"] = str(error)
    """)
    if result["flavor"] == "keras3":
        assert result["without_build"] == "InvalidArgumentError"
    assert result["with_build"] == 3
    assert result["outside"].startswith("model was created outside strategy.scope()")
    assert "Move the creation of model into `with strategy.scope():`" in result["outside"]


@pytest.mark.slow
def test_check_created_in_scope_names_each_object_outside():
    result = run_script("""
        with strategy.scope():
            inside = new_model()
            metric = tf.keras.metrics.Mean()
        outside = new_model()
        training.check_created_in_scope(strategy, model=inside, metric=metric)
        try:
            training.check_created_in_scope(strategy, model=inside, discriminator=outside)
        except ValueError as error:
            result["message"] = str(error)
        try:
            training.fix_steps_per_execution(new_model())
        except ValueError as error:
            result["uncompiled"] = str(error)
        result["spe_one_untouched"] = training.fix_steps_per_execution(compiled(1)).train_function
    """)
    assert result["message"].startswith("discriminator was created outside strategy.scope()")
    assert "2 replicas of MirroredStrategy" in result["message"]
    assert "model" not in result["message"].split("Move")[0].replace("discriminator", "")
    assert result["uncompiled"].startswith("Compile the model first")
    assert result["spe_one_untouched"] is None


class FakeStrategy:
    def __init__(self, replicas: int) -> None:
        self.num_replicas_in_sync = replicas


def test_per_replica_batch_splits_the_global_batch():
    assert bench.per_replica_batch_size(200, FakeStrategy(8)) == 25


def test_a_global_batch_that_does_not_split_evenly_is_refused_with_a_suggestion():
    with pytest.raises(ValueError) as caught:
        bench.per_replica_batch_size(201, FakeStrategy(2))
    message = str(caught.value)
    assert "201 does not divide evenly among 2 replicas" in message
    assert "e.g. 200 or 202" in message
    with pytest.raises(ValueError, match="e.g. 8 or 16"):
        bench.per_replica_batch_size(12, FakeStrategy(8))


@pytest.mark.parametrize("value", [0, -200, 1.5, "200", True])
def test_batch_sizes_must_be_positive_integers(value):
    with pytest.raises(ValueError, match="must be a positive integer"):
        bench.per_replica_batch_size(value, FakeStrategy(2))


def test_examples_per_second_leaves_the_first_execution_out():
    times = [10.0, 12.0, 14.0, 16.0]  # the first execution ended at t=10 after tracing
    steps = [50, 100, 150, 200]
    assert bench.examples_per_second(times, steps, 200) == pytest.approx(150 * 200 / 6.0)
    with pytest.raises(ValueError, match="at least two executions"):
        bench.examples_per_second([1.0], [50], 200)


def test_notebook_03_writes_the_multi_step_function_the_package_reuses():
    # d2l's `#@save` idea: notebooks 06 and 10 call `fix_steps_per_execution`, which runs
    # `use_multi_step_train_function`; notebook 03 writes and explains that function. The two must
    # be the same code (the package imports TensorFlow itself; docstrings may differ).
    import ast
    import inspect

    import nbformat

    from tools import paths
    from tpuhelpers import training

    def body(source: str) -> list[str]:
        function = ast.parse(source).body[0]
        statements = [s for s in function.body if not isinstance(s, ast.Expr)]  # the docstring
        return [ast.dump(s) for s in statements if "import_tensorflow" not in ast.unparse(s)]

    notebook = nbformat.read(paths.NOTEBOOKS / "en" / "03_keras_fit.ipynb", 4)
    (cell,) = [c for c in notebook.cells if "def use_multi_step_train_function" in c.source]
    package = inspect.getsource(training.use_multi_step_train_function)
    assert body(cell.source) == body(package)


def test_check_created_in_scope_with_none_names_it():
    # Before: TypeError: 'NoneType' object is not iterable.
    from tpuhelpers import training

    with pytest.raises(ValueError, match=r"^model is None: pass the object itself, e\.g\. model="):
        training.check_created_in_scope(object(), model=None)


@pytest.mark.parametrize(
    ("strategy", "objects"), [(None, {}), (None, {"model": object()}), ("strategy", {})]
)
def test_check_created_in_scope_without_a_strategy_or_objects_says_what_to_pass(strategy, objects):
    # Before: `check_created_in_scope(None)` checked nothing and returned None.
    from tpuhelpers import training

    with pytest.raises(ValueError, match=r"Pass a strategy and what to check"):
        training.check_created_in_scope(strategy, **objects)
