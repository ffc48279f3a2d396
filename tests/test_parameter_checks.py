"""Each notebook checks its parameters in the cell after the parameters cell: the defaults and the
CI parameters pass, and a bad value stops there with a message that names the parameter, before
anything slow runs. The two cells are executed here as they are, in a namespace of their own."""

from __future__ import annotations

import math
import re

import pytest

from tools import notebook as notebook_file
from tools import paths
from tools.ci import nbcheck
from tools.runs import notebooks

ENGLISH = sorted((paths.NOTEBOOKS / "en").glob("*.ipynb"))


def checked_cells(path) -> tuple[str, str]:
    cells = notebook_file.read(path).cells
    (index,) = [i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", [])]
    return cells[index].source, cells[index + 1].source


def run_checks(path, **overrides) -> dict:
    parameters, checks = checked_cells(path)
    namespace: dict = {}
    exec(parameters, namespace)  # noqa: S102 - the notebook's own cells
    namespace.update(overrides)
    exec(checks, namespace)  # noqa: S102
    return namespace


REAL_NUMBERS = {"SHARD_MB"}  # whole by default, fractions allowed
FILES = {"THROUGHPUT_FILE": "no/such/folder/x.json", "KERAS_THROUGHPUT_FILE": None}  # bad value


def bad_values(name: str, default: object) -> list[object]:
    """Values each parameter's check must refuse, by the type of its default; None too where the
    default is not None (a parameter without a default for the hardware found)."""
    return [*_bad_values(name, default), *([None] if default is not None else [])]


def _bad_values(name: str, default: object) -> list[object]:
    if name in REAL_NUMBERS:
        return [math.nan, -1.0, "5"]
    if name in FILES:  # any string names a file; a file that is missing may be fine
        return [3, *([FILES[name]] if FILES[name] else [])]
    if isinstance(default, bool):
        return ["yes", 1]
    if isinstance(default, int):
        return [-1, 2.5, "3", True]
    if isinstance(default, float):
        return [math.nan, -1.0, "0.5", math.inf]
    if isinstance(default, str):
        return ["quantum", 3]
    return [3.5, b"x"]  # None: an optional value of another type


def defaults(path) -> dict:
    namespace: dict = {}
    exec(checked_cells(path)[0], namespace)  # noqa: S102 - the notebook's parameters cell
    return {name: namespace[name] for name in nbcheck.parameter_names(checked_cells(path)[0])}


CASES = [
    (path, name, value)
    for path in ENGLISH
    for name, default in defaults(path).items()
    for value in bad_values(name, default)
]


@pytest.mark.parametrize("path", ENGLISH, ids=lambda p: p.stem)
def test_the_defaults_and_the_ci_parameters_pass_the_checks(path) -> None:
    run_checks(path)
    run_checks(path, **notebooks.ci_parameters(path))


@pytest.mark.parametrize(
    ("path", "name", "value"), CASES, ids=[f"{p.stem}-{n}-{v!r}" for p, n, v in CASES]
)
def test_a_bad_value_is_refused_naming_the_parameter(path, name: str, value: object) -> None:
    with pytest.raises((ValueError, TypeError)) as error:
        run_checks(path, **{name: value})
    assert re.search(rf"\b{name}\b", str(error.value)), error.value


def test_a_seed_numpy_cannot_take_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^SEED must be at most 4294967295, got 4294967296"):
        run_checks(ENGLISH[2], SEED=2**32)


def test_the_checks_cell_is_required_by_nbcheck(tmp_path) -> None:
    import nbformat

    path = tmp_path / "notebooks" / "en" / "99_x.ipynb"
    source = notebook_file.read(ENGLISH[2])
    source.cells[4].source = source.cells[4].source.replace('"FILTERS"', '"filters"')
    assert any("does not check FILTERS" in line for line in nbcheck.unchecked_parameters(
        path, source.cells
    ))  # fmt: skip
    assert nbcheck.unchecked_parameters(path, nbformat.read(ENGLISH[2], 4).cells) == []


def through_the_sizes_cell(path, folder) -> object:
    """A copy of the notebook that ends with its sizes cell (the one calling `for_hardware`)."""
    import nbformat

    notebook = nbformat.read(path, 4)
    last = max(i for i, c in enumerate(notebook.cells) if "for_hardware(" in c.source)
    notebook.cells = notebook.cells[: last + 1]
    copy = folder / "en" / path.name
    copy.parent.mkdir(parents=True)
    nbformat.write(notebook, copy)
    return copy


SIZED = [p for p in ENGLISH if "for_hardware(" in p.read_text(encoding="utf-8")]


def test_the_tensorflow_notebooks_size_themselves_after_detecting_the_hardware() -> None:
    assert {"03_keras_fit", "04_custom_training_loop", "12_mixed_precision_and_xla"} <= {
        p.stem for p in SIZED
    }


@pytest.mark.parametrize(
    ("stem", "parameters", "message"),
    [
        # 2 replicas on the CPU (CPU_REPLICAS' default): an odd batch cannot be split.
        (
            "03_keras_fit",
            {"GLOBAL_BATCH_SIZE": 255},
            "GLOBAL_BATCH_SIZE=255 does not divide over the 2 replica(s) of this CPU",
        ),
        (
            "10_keras_on_jax",
            {"BATCH_SIZE": 255},
            "BATCH_SIZE=255 does not divide over the 2 CPU device(s)",
        ),
        # One execution in all: fit's rate, which leaves the first out, would divide by zero.
        (
            "10_keras_on_jax",
            {"EPOCHS": 1, "STEPS_PER_EPOCH": 78, "STEPS_PER_EXECUTION": 78},
            "EPOCHS=1 x 78 steps per epoch (STEPS_PER_EPOCH) is one execution of "
            "STEPS_PER_EXECUTION=78: the rate needs at least 2",
        ),
    ],
)
def test_a_size_the_hardware_cannot_take_is_refused_before_training(
    tmp_path, stem, parameters, message
) -> None:
    copy = through_the_sizes_cell(paths.NOTEBOOKS / "en" / f"{stem}.ipynb", tmp_path / "in")
    with pytest.raises(notebooks.NotebookFailed) as error:
        notebooks.execute(copy, tmp_path / "out", parameters=parameters, timeout=300)
    assert message in str(error.value), error.value
