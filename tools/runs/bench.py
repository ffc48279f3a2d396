"""Benchmark the four training-loop styles of the curriculum on the hardware at hand.

    python -m tools.runs.bench [--filters 32] [--batch 200] [--replicas 1] [--steps 60]
                               [--steps-per-execution 10] [--repeats 3] [--out build/bench]

Styles: `Model.fit` with `steps_per_execution` 1 and N, the custom loop with one step per call,
and the multi-step loop (N steps per call). Each runs the guide's model on synthetic data (so the
input pipeline is not measured) from the same seed; the first execution of each (tracing and
compilation) is left out of the timing. Also measured, in the same run and on the same device:
the FLOP/s of a dense fp32 matmul, which gives the model FLOP utilization (MFU) = achieved
training FLOP/s / matmul FLOP/s; and `Model.fit` through `training.fix_steps_per_execution` vs
Keras' own multi-step loop, on one replica, where Keras' own works.

Each figure is the median of `--repeats` runs, taken in turns (style A, B, C, D, then A again,
...) so that a slow spell of the machine does not fall on one style only; the table also gives
the spread (lowest to highest run, relative to the median). On a shared or small machine single
runs differ by 5-10%: compare medians, and repeat more for a finer comparison.

Prints a table, writes `bench_f<filters>_b<batch>_r<replicas>.json` and `.png` into `--out`, a
folder this tool makes and marks (tools/outputs.py), or one it made before: it refuses any other.
It is a benchmark that prints figures, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from tools import outputs
from tpuhelpers import checks, hardware, training

TOOL = "tools.runs.bench"  # the mark on --out: it writes only into its own folder


def examples_per_second(times: list[float], steps: list[int], global_batch: int) -> float:
    """Examples/s from `time.perf_counter()` at the end of each execution and the step counts
    then, counted from the end of the first execution (which includes tracing and compiling)."""
    if len(times) < 2 or len(times) != len(steps):
        raise ValueError(
            f"Need the end times and step counts of at least two executions, got {len(times)} "
            f"times and {len(steps)} step counts: run more steps than steps_per_execution."
        )
    seconds, counted = times[-1] - times[0], steps[-1] - steps[0]
    if seconds <= 0 or counted <= 0:
        raise ValueError(
            f"No rate from {counted} steps in {seconds:g} s: the times and step counts must grow "
            "from the first execution's end to the last (time.perf_counter() after each)."
        )
    return counted * global_batch / seconds


def create_model(filters: int) -> Any:
    """The TPU guide's MNIST model (two Conv2D of `filters`, Dense 256/128/10, L2 penalties)."""
    import tensorflow as tf

    regularizer = tf.keras.regularizers.L2(1e-5)
    return tf.keras.Sequential(
        [
            tf.keras.layers.Input(shape=(28, 28, 1)),
            tf.keras.layers.Conv2D(filters, 3, activation="relu", kernel_regularizer=regularizer),
            tf.keras.layers.Conv2D(filters, 3, activation="relu", kernel_regularizer=regularizer),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(256, activation="relu", kernel_regularizer=regularizer),
            tf.keras.layers.Dense(128, activation="relu", kernel_regularizer=regularizer),
            tf.keras.layers.Dense(10, kernel_regularizer=regularizer),
        ]
    )


def training_flops_per_example(model: Any) -> float:
    """Multiply-add FLOPs of one training example: 3x the forward pass (forward + backward).

    Counts Conv2D (2 x output pixels x kernel area x input channels x filters) and Dense
    (2 x inputs x units) layers, which hold nearly all the work of the guide's model.
    """
    import tensorflow as tf

    forward = 0.0
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.Conv2D):
            _, height, width, filters = layer.output.shape
            k_h, k_w = layer.kernel_size
            forward += 2.0 * height * width * k_h * k_w * layer.input.shape[-1] * filters
        elif isinstance(layer, tf.keras.layers.Dense):
            forward += 2.0 * layer.input.shape[-1] * layer.units
    return 3.0 * forward


def accelerator_device() -> str:
    """Returns the first accelerator's device name: `/TPU:0`, else `/GPU:0`, else `/CPU:0`."""
    import tensorflow as tf

    kinds = [k for k in ("TPU", "GPU") if tf.config.list_logical_devices(k)]
    return f"/{(kinds or ['CPU'])[0]}:0"


def per_replica_batch_size(global_batch: int, strategy: Any) -> int:
    """Returns the per-replica batch of a global batch; a ValueError if it does not split."""
    global_batch = checks.integer(global_batch, "global batch size")
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


def matmul_flops_per_second(size: int = 2048, repeats: int = 10) -> float:
    """Dense fp32 matmul throughput on the first accelerator (or the CPU), warm-up excluded."""
    import tensorflow as tf

    with tf.device(accelerator_device()):
        a = tf.random.stateless_normal((size, size), seed=(1, 2))
        b = tf.random.stateless_normal((size, size), seed=(3, 4))

        @tf.function
        def chain(a: Any, b: Any) -> Any:
            c = a
            for _ in range(repeats):
                c = tf.matmul(c, b) * 1e-3  # scaled so values stay finite
            return tf.reduce_sum(c)

        chain(a, b).numpy()  # warm-up: tracing
        start = time.perf_counter()
        chain(a, b).numpy()
        seconds = time.perf_counter() - start
    return 2.0 * size**3 * repeats / seconds


def _synthetic_dataset(batch: int, seed: int) -> Any:
    import tensorflow as tf

    images = tf.random.stateless_uniform((batch, 28, 28, 1), seed=(seed, 0))
    labels = tf.random.stateless_uniform((batch,), seed=(seed, 1), maxval=10, dtype=tf.int64)
    return tf.data.Dataset.from_tensors((images, labels)).repeat()


def _compiled_model(strategy: Any, filters: int, steps_per_execution: int, seed: int) -> Any:
    import tensorflow as tf

    tf.keras.utils.set_random_seed(seed)
    with strategy.scope():
        model = create_model(filters)
        model.compile(
            optimizer="adam",
            steps_per_execution=steps_per_execution,
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        )
    return model


def bench_fit(
    strategy: Any, filters: int, batch: int, steps: int, spe: int, seed: int, *, helper: bool
) -> float:
    """Examples/s of `Model.fit`; `helper` installs `training.fix_steps_per_execution`."""
    import tensorflow as tf

    model = _compiled_model(strategy, filters, spe, seed)
    if helper:
        training.fix_steps_per_execution(model, always=True)
    times: list[float] = []
    counts: list[int] = []

    class Timer(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch_index: int, logs: Any = None) -> None:
            times.append(time.perf_counter())
            counts.append(len(times) * spe)

    dataset = _synthetic_dataset(batch, seed)
    model.fit(dataset, steps_per_epoch=steps + spe, epochs=1, verbose=0, callbacks=[Timer()])
    return examples_per_second(times, counts, batch)


def bench_custom(
    strategy: Any, filters: int, batch: int, steps: int, steps_per_call: int, seed: int
) -> float:
    """Examples/s of the custom loop: one step per call, or `steps_per_call` in a tf.range."""
    import tensorflow as tf

    tf.keras.utils.set_random_seed(seed)
    with strategy.scope():
        model = create_model(filters)
        optimizer = tf.keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)  # Keras 3: slot variables in the scope
    per_replica = per_replica_batch_size(batch, strategy)
    dataset = strategy.distribute_datasets_from_function(
        lambda _: _synthetic_dataset(per_replica, seed)
    )
    iterator = iter(dataset)

    def step_fn(inputs: Any) -> None:
        images, labels = inputs
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            loss = tf.nn.compute_average_loss(
                tf.keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
            )
            loss += tf.nn.scale_regularization_loss(tf.add_n(model.losses))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))

    @tf.function
    def train_steps(iterator: Any, count: Any) -> None:
        for _ in tf.range(count):
            strategy.run(step_fn, args=(next(iterator),))

    @tf.function
    def train_step(iterator: Any) -> None:
        strategy.run(step_fn, args=(next(iterator),))

    def call() -> None:
        if steps_per_call == 1:
            train_step(iterator)
        else:
            train_steps(iterator, tf.constant(steps_per_call))

    call()  # warm-up: tracing and compilation
    optimizer.iterations.numpy()
    start = time.perf_counter()
    for _ in range(steps // steps_per_call):
        call()
    optimizer.iterations.numpy()  # waits for the device
    return steps // steps_per_call * steps_per_call * batch / (time.perf_counter() - start)


def _styles(strategy: Any, filters: int, batch: int, steps: int, spe: int, seed: int) -> dict:
    """The four training-loop styles, each a function that times one run (examples/s)."""
    return {
        "fit, steps_per_execution=1": lambda: bench_fit(
            strategy, filters, batch, steps, 1, seed, helper=False
        ),
        f"fit, steps_per_execution={spe}": lambda: bench_fit(
            strategy, filters, batch, steps, spe, seed, helper=strategy.num_replicas_in_sync > 1
        ),
        "custom loop, 1 step per call": lambda: bench_custom(
            strategy, filters, batch, steps, 1, seed
        ),
        f"multi-step loop, {spe} steps per call": lambda: bench_custom(
            strategy, filters, batch, steps, spe, seed
        ),
    }


def _result(name: str, runs: list[float], batch: int, flops: float, peak: float) -> dict:
    """One style's figures: the median of its runs, the step time and the MFU."""
    rate = statistics.median(runs)
    return {
        "style": name,
        "examples_per_second": rate,
        "runs_examples_per_second": runs,
        "step_time_ms": 1000.0 * batch / rate,
        "model_flops_utilization": rate * flops / peak,
    }


def _helper_vs_keras(keras_runs: list[float], helper_runs: list[float]) -> dict:
    """Keras' own multi-step `fit` loop against the same loop through tpuhelpers."""
    keras_own, helper = statistics.median(keras_runs), statistics.median(helper_runs)
    return {
        "keras_examples_per_second": keras_own,
        "tpuhelpers_examples_per_second": helper,
        "keras_runs_examples_per_second": keras_runs,
        "tpuhelpers_runs_examples_per_second": helper_runs,
        "difference_percent": 100.0 * (helper - keras_own) / keras_own,
    }


def run(
    filters: int = 32,
    batch: int = 200,
    replicas: int = 1,
    steps: int = 60,
    steps_per_execution: int = 10,
    seed: int = 0,
    styles: list[str] | None = None,
    repeats: int = 3,
) -> dict[str, Any]:
    """Runs the benchmark; returns its figures (see the module docstring)."""
    for value, name in ((filters, "filters"), (steps, "steps"), (repeats, "repeats")):
        checks.integer(value, name)
    spe = checks.integer(steps_per_execution, "steps_per_execution")
    if steps % spe:
        raise ValueError(f"steps ({steps}) must be a multiple of steps_per_execution ({spe})")
    strategy = hardware.get_strategy(cpu_replicas=replicas)
    per_replica_batch_size(batch, strategy)
    import tensorflow as tf

    all_styles = _styles(strategy, filters, batch, steps, spe, seed)
    chosen = styles or list(all_styles)
    unknown = [name for name in chosen if name not in all_styles]
    if unknown:
        raise ValueError(f"Unknown styles {unknown}; choose from {list(all_styles)}")
    flops_per_example = training_flops_per_example(create_model(filters))
    peak = matmul_flops_per_second()
    # On one replica the steps_per_execution=N style runs Keras' own loop: its runs are the
    # reference, and only the same loop through tpuhelpers is added.
    compare = strategy.num_replicas_in_sync == 1 and spe > 1 and styles is None
    if compare:
        all_styles["tpuhelpers"] = lambda: bench_fit(
            strategy, filters, batch, steps, spe, seed, helper=True
        )
    timed = [*chosen, "tpuhelpers"] if compare else chosen
    runs: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(repeats):
        for name in timed:
            runs[name].append(all_styles[name]())
    settings = {"filters": filters, "global_batch": batch}
    settings |= {"replicas": strategy.num_replicas_in_sync, "steps": steps}
    settings |= {"steps_per_execution": spe, "seed": seed, "repeats": repeats}
    figures: dict[str, Any] = {
        "settings": settings,
        "hardware": str(hardware.describe(strategy)).splitlines()[:3],
        "versions": {"tensorflow": tf.__version__, "keras": training.keras_version()},
        "machine": platform.platform(),
        "training_gflop_per_example": flops_per_example / 1e9,
        "matmul_gflops": peak / 1e9,
        "results": [_result(n, runs[n], batch, flops_per_example, peak) for n in chosen],
    }
    if compare:
        keras_runs = runs[f"fit, steps_per_execution={spe}"]
        figures["helper_vs_keras_fit"] = _helper_vs_keras(keras_runs, runs["tpuhelpers"])
    return figures


def spread(rates: list[float]) -> str:
    """The lowest and highest of several runs relative to their median, e.g. "-3%/+4%"."""
    median = statistics.median(rates)
    return f"{100 * (min(rates) / median - 1):+.0f}%/{100 * (max(rates) / median - 1):+.0f}%"


def table(figures: dict[str, Any]) -> str:
    """Formats the figures as a text table."""
    settings = figures["settings"]
    repeats = settings.get("repeats", 1)
    lines = [
        f"{settings['filters']} filters, global batch {settings['global_batch']}, "
        f"{settings['replicas']} replica(s), {settings['steps']} timed steps, median of "
        f"{repeats} run(s); {figures['training_gflop_per_example']:.3f} GFLOP per training "
        f"example; matmul {figures['matmul_gflops']:.0f} GFLOP/s",
        f"{'style':<36} {'examples/s':>11} {'spread':>11} {'step ms':>9} {'MFU':>7} "
        f"{'vs 1 step':>10}",
    ]
    base = figures["results"][0]["examples_per_second"]
    for row in figures["results"]:
        runs = row.get("runs_examples_per_second", [row["examples_per_second"]])
        lines.append(
            f"{row['style']:<36} {row['examples_per_second']:>11.0f} {spread(runs):>11} "
            f"{row['step_time_ms']:>9.1f} {row['model_flops_utilization']:>7.1%} "
            f"{row['examples_per_second'] / base:>9.2f}x"
        )
    if "helper_vs_keras_fit" in figures:
        comparison = figures["helper_vs_keras_fit"]
        lines.append(
            f"fit, steps_per_execution={settings['steps_per_execution']}, 1 replica: Keras' own "
            f"loop {comparison['keras_examples_per_second']:.0f} examples/s, tpuhelpers' "
            f"{comparison['tpuhelpers_examples_per_second']:.0f} "
            f"({comparison['difference_percent']:+.1f}%; medians of {repeats} run(s))"
        )
    return "\n".join(lines)


def chart(figures: dict[str, Any], path: Path) -> None:
    """Writes a bar chart of examples/s per style."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = figures["results"]
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(rows) + 1.5))
    names = [row["style"] for row in rows][::-1]
    rates = [row["examples_per_second"] for row in rows][::-1]
    runs = [row.get("runs_examples_per_second", [row["examples_per_second"]]) for row in rows][::-1]
    # Whiskers: the slowest and the fastest run around the median.
    whiskers = [
        [rate - min(r) for rate, r in zip(rates, runs, strict=True)],
        [max(r) - rate for rate, r in zip(rates, runs, strict=True)],
    ]
    bars = ax.barh(names, rates, xerr=whiskers, capsize=4, color="tab:blue", ecolor="gray")
    for bar, row, run in zip(bars, rows[::-1], runs, strict=True):
        ax.text(
            max(run),
            bar.get_y() + bar.get_height() / 2,
            f"  {row['examples_per_second']:.0f}/s, MFU {row['model_flops_utilization']:.0%}",
            va="center",
        )
    settings = figures["settings"]
    ax.set_xlabel("examples per second, median and range of the runs (higher is better)")
    ax.set_title(
        f"{settings['filters']} filters, batch {settings['global_batch']}, "
        f"{settings['replicas']} replica(s), {settings.get('repeats', 1)} run(s) each"
    )
    ax.set_xlim(0, max(max(r) for r in runs) * 1.35)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def seed(text: str) -> int:
    """argparse type of --seed: an integer numpy accepts as a seed (0 to 2**32 - 1)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 2**32 - 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a seed: write an integer from 0 to 4294967295 (2**32 - 1)"
        )
    return value


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filters", type=int, default=32)
    parser.add_argument("--batch", type=int, default=200, help="global batch size")
    parser.add_argument("--replicas", type=int, default=1, help="CPU replicas (no TPU/GPU)")
    parser.add_argument("--steps", type=int, default=60, help="timed steps per style")
    parser.add_argument("--steps-per-execution", type=int, default=10)
    parser.add_argument("--seed", type=seed, default=0, help="0 to 2**32 - 1 (numpy's seeds)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per style; medians count")
    parser.add_argument("--style", action="append", help="run only these styles")
    parser.add_argument("--out", type=Path, default=Path("build/bench"))
    args = parser.parse_args(argv)
    try:  # before minutes of measuring, not after
        if args.out.exists() and not args.out.is_dir():
            raise NotADirectoryError("it is a file")
        outputs.claim(args.out, TOOL)
        (args.out / ".bench-write-test").touch()
        (args.out / ".bench-write-test").unlink()
    except outputs.NotOwnedError as error:
        parser.error(str(error))
    except OSError as error:
        parser.error(f"--out {args.out} is not a writable folder ({error}): name a folder.")
    from tpuhelpers import quiet_tensorflow

    quiet_tensorflow()
    figures = run(
        args.filters,
        args.batch,
        args.replicas,
        args.steps,
        args.steps_per_execution,
        args.seed,
        args.style,
        args.repeats,
    )
    print(table(figures))
    stem = f"bench_f{args.filters}_b{args.batch}_r{figures['settings']['replicas']}"
    (args.out / f"{stem}.json").write_text(json.dumps(figures, indent=2) + "\n")
    chart(figures, args.out / f"{stem}.png")
    print(f"wrote {args.out / stem}.json and .png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
