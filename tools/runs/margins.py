"""How far a notebook's accuracy check is from failing, over seeds: run it once per seed.

    python -m tools.runs.margins notebooks/en/04_custom_training_loop.ipynb --seeds 1-8
    python -m tools.runs.margins notebooks/en/10_keras_on_jax.ipynb --seeds 1,2,3 --set FILTERS=32

A notebook that asserts `accuracy >= MIN_TEST_ACCURACY` with its CI parameters must pass for any
seed and on any CPU, not for the one seed CI happens to use: a CPU with other vector instructions
computes other round-off, which changes a short training run about as much as another seed does.
This tool runs the notebook with its CI parameters (`tests/notebook_parameters.yaml`), once per
seed, with `MIN_TEST_ACCURACY=0` so that every run finishes, and prints each accuracy the
notebook reports (every `...accuracy...: NN.NN%` line) and, per check, the lowest one and its
margin over the notebook's `MIN_TEST_ACCURACY`. Executed copies go to `build/margins/seed-<n>/`
(`--out`: a folder this tool makes and marks, or one it made before; it refuses any other).
"""

from __future__ import annotations

import argparse
import ast
import re
import statistics
import sys
import time
from pathlib import Path

from tools import notebook as notebook_file
from tools import outputs, paths
from tools.runs import notebooks

ROOT = paths.ROOT
TOOL = (
    "tools.runs.margins"  # the mark on --out (tools/outputs.py): it writes only into its own folder
)
# What a notebook prints about an accuracy: a label with "accuracy" in it, a colon, a percentage.
ACCURACY_LINE = re.compile(
    r"^\s*(?P<label>[^\n:]*accuracy[^\n:%]*):\s*(?P<value>\d+(?:\.\d+)?)%", re.M
)


class MarginsError(ValueError):
    """Bad input: the message says what was wrong and how to fix it."""


MAX_SEEDS = 100


def parse_seeds(text: str) -> list[int]:
    """Parses `1-8`, `1,2,5` or a mix (`1-3,7`) into a list of at most MAX_SEEDS seeds.

    Raises:
        MarginsError: A part is not a number (ASCII digits) or a rising range, a seed is over
            2**32 - 1 (numpy's limit), or there are more than MAX_SEEDS seeds (one run each).
    """
    seeds: list[int] = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?", part)
        if not match or (match[2] and int(match[2]) < int(match[1])):
            raise MarginsError(
                f"--seeds {text!r}: {part.strip()!r} is not a seed or a rising range "
                "(write for example 1-8 or 1,2,5)"
            )
        first, last = int(match[1]), int(match[2] or match[1])
        if last > 2**32 - 1 or last - first + 1 + len(seeds) > MAX_SEEDS:
            raise MarginsError(
                f"--seeds {text!r}: seeds go from 0 to 2**32 - 1, at most {MAX_SEEDS} of them "
                "(each is a run of the notebook)"
            )
        seeds.extend(range(first, last + 1))
    return list(dict.fromkeys(seeds))


def literal(text: str) -> object:
    """A Python literal (`32`, `0.001`, `None`, `"tpu"`); anything else is the text itself."""
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()


def parse_settings(items: list[str]) -> dict:
    """Parses `NAME=VALUE` overrides; VALUE is a Python literal, or else a string (`tpu`).

    Raises:
        MarginsError: An item has no `=` or no name.
    """
    settings = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name.strip().isidentifier():
            raise MarginsError(f"--set {item!r}: write NAME=VALUE, for example --set FILTERS=32")
        settings[name.strip()] = literal(value)
    return settings


def parameter_defaults(notebook: Path) -> dict:
    """The names and values assigned in a notebook's `parameters` cell (simple literals only)."""
    cell = next(
        (
            c
            for c in notebook_file.read(notebook).cells
            if "parameters" in c.metadata.get("tags", [])
        ),
        None,
    )
    if cell is None:
        raise MarginsError(
            f"{notebook}: no code cell is tagged `parameters`, so there is no SEED to vary: "
            "this tool measures the curriculum's notebooks (tag the cell that holds SEED and "
            "MIN_TEST_ACCURACY `parameters`)"
        )
    found = re.findall(r"^([A-Z_][A-Z0-9_]*)\s*=\s*([^#\n]+?)\s*(?:#.*)?$", cell.source, re.M)
    return {name: literal(value) for name, value in found}


def cpu_default(notebook: Path, name: str) -> float:
    """The CPU value a notebook's sizes cell gives parameter `name` (`for_hardware(..., cpu=X)`)."""
    call = rf"{name} = for_hardware\(\s*{name}, \"{name}\", kind, "
    pattern = call + r"accelerator=[^,]+, cpu=([^)\s]+)"
    for cell in notebook_file.read(notebook).cells:
        if found := re.search(pattern, cell.source):
            return float(found[1])
    raise MarginsError(
        f"{notebook}: {name} is None and no for_hardware(...) call gives its CPU value"
    )


def accuracies(executed: Path) -> dict[str, float]:
    """Every `label: NN.NN%` accuracy line a notebook printed, as {label: fraction}."""
    values = {}
    for cell in notebook_file.read(executed).cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                for match in ACCURACY_LINE.finditer(output["text"]):
                    values[match["label"].strip()] = float(match["value"]) / 100
    return values


def summary(runs: dict[int, dict[str, float]], minimum: float) -> list[str]:
    """One line per accuracy label: lowest, mean and highest over seeds, and the margin."""
    labels = list(dict.fromkeys(label for values in runs.values() for label in values))
    lines = []
    for label in labels:
        values = [v[label] for v in runs.values() if label in v]
        low = min(values)
        spread = f", sd {statistics.stdev(values):.2%}" if len(values) > 1 else ""
        lines.append(
            f"{label}: lowest {low:.2%}, mean {statistics.mean(values):.2%}, highest "
            f"{max(values):.2%}{spread} over {len(values)} seed(s); margin over {minimum:.0%}: "
            f"{(low - minimum) * 100:+.2f} points"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--seeds", default="1-4", help="seeds to run: 1-8, 1,2,5 (default 1-4)")
    parser.add_argument("--set", action="append", default=[], help="NAME=VALUE over CI parameters")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "margins")
    args = parser.parse_args(argv)
    try:
        seeds = parse_seeds(args.seeds)
        settings = parse_settings(args.set)
        if not args.notebook.is_file():
            raise MarginsError(f"{args.notebook}: no such notebook")
        defaults = parameter_defaults(args.notebook)
        if "SEED" not in defaults or "MIN_TEST_ACCURACY" not in defaults:
            raise MarginsError(
                f"{args.notebook}: its parameters cell has no SEED or no MIN_TEST_ACCURACY: "
                "this tool measures notebooks that check a test accuracy"
            )
        outputs.refuse_inputs(args.out, [args.notebook])
        outputs.claim(args.out, TOOL)
    except (MarginsError, notebook_file.NotebookFileError, outputs.NotOwnedError) as error:
        parser.error(str(error))
    parameters = notebooks.ci_parameters(args.notebook) | settings
    minimum = parameters.get("MIN_TEST_ACCURACY", defaults["MIN_TEST_ACCURACY"])
    if minimum is None:  # sized for the hardware found: this tool runs on the CPU
        minimum = cpu_default(args.notebook, "MIN_TEST_ACCURACY")
    print(f"{args.notebook.name} with {parameters}", flush=True)
    runs = {}
    for seed in seeds:
        start = time.perf_counter()
        run = parameters | {"SEED": seed, "MIN_TEST_ACCURACY": 0.0}
        executed = notebooks.execute(args.notebook.resolve(), args.out / f"seed-{seed}", run)
        runs[seed] = accuracies(executed)
        shown = ", ".join(f"{label} {value:.2%}" for label, value in runs[seed].items())
        print(
            f"seed {seed}: {shown or 'no accuracy printed'} ({time.perf_counter() - start:.0f} s)"
        )
    print("\n".join(summary(runs, minimum)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
