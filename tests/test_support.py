"""The reader of the committed support table: stacks, the nearest table, the printed table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.runs import support_table
from tpuhelpers import support

REFERENCE = support.load_reference()


def table(**overrides: str) -> dict:
    """A synthetic table: everything works, except `strategy__api="fails"` or `"n/a"`."""
    cases = {key: dict.fromkeys(support.APIS, {"status": "works"}) for key in support.STRATEGIES}
    for name, status in overrides.items():
        key, api = name.split("__")
        cases[key][api] = {
            "fails": {"status": "fails", "error": "ValueError", "message": "it broke"},
            "n/a": {"status": "n/a", "reason": "not here"},
        }[status]
    return {"key": "keras3 / TensorFlow 2.99.0", "keras": "3.99.0", "cases": cases}


def write_tables(path: Path, stacks: list[support.Stack]) -> None:
    entries = {s.key: {"flavor": s.flavor, "tensorflow": s.tensorflow, "wheel": s.wheel,
                       "keras": "3.99.0", "cases": {}} for s in stacks}  # fmt: skip
    path.write_text(json.dumps(entries), encoding="utf-8")


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        (("keras3", 2.21), TypeError, "Stack.tensorflow must be a str, got float 2.21"),
        (("keras3", "2.21.0", "tensorflow-gpu"), ValueError, "Unknown Stack.wheel 'tensorflow-g"),
        ((None, "2.21.0"), TypeError, "Stack.flavor must be a str"),
    ],
)  # fmt: skip
def test_a_malformed_stack_is_refused_with_what_was_wrong(arguments, error, message):
    with pytest.raises(error, match=message):
        support.Stack(*arguments)


def test_the_key_keeps_the_tpu_wheel_apart() -> None:
    assert support.Stack("keras3", "2.21.0", "tensorflow-cpu").key == "keras3 / TensorFlow 2.21.0"
    tpu = support.Stack("keras3", "2.19.1", "tensorflow-tpu")
    assert tpu.key == "keras3 / TensorFlow 2.19.1 (tensorflow-tpu)"


@pytest.mark.parametrize(
    ("stack", "shown"),
    [
        (("keras3", "2.99.0", "tensorflow-cpu"), "keras3 / TensorFlow 2.99.0"),  # its own table
        (("keras3", "2.97.1", "tensorflow"), "keras3 / TensorFlow 2.98.0"),  # the oldest newer
        (("keras3", "3.1.0", "tensorflow"), "keras3 / TensorFlow 2.99.0"),  # the newest older
        (("keras3", "2.99.0", "tensorflow-tpu"), "keras3 / TensorFlow 2.98.0 (tensorflow-tpu)"),
        (("tf-keras", "2.20.0", "tensorflow"), "tf-keras / TensorFlow 2.16.1"),
        (("keras4", "2.99.0", "tensorflow"), "keras3 / TensorFlow 2.99.0"),  # another flavor
    ],
)
def test_a_stack_without_a_table_gets_the_nearest_with_a_note(tmp_path, stack, shown):
    path = tmp_path / "table.json"
    write_tables(
        path,
        [
            support.Stack("keras3", "2.99.0"),
            support.Stack("keras3", "2.98.0"),
            support.Stack("keras3", "2.98.0", "tensorflow-tpu"),
            support.Stack("tf-keras", "2.16.1"),
        ],
    )
    stack = support.Stack(*stack)
    found = support.nearest_reference(stack, path)
    assert found["key"] == shown
    if shown == stack.key:
        assert "note" not in found
    else:
        assert (
            found["note"] == f"No table was measured for {stack.key}: showing the nearest, {shown}."
        )


def test_without_any_table_the_error_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(LookupError, match="holds no table: run `nox -s support_table`"):
        support.nearest_reference(support.Stack("keras3", "2.21.0"), tmp_path / "none.json")


def test_nearest_reference_refuses_a_stack_that_is_not_a_stack() -> None:
    with pytest.raises(TypeError, match="stack must be a Stack, got dict"):
        support.nearest_reference({"flavor": "keras3", "tensorflow": "2.21.0"})


def test_format_table_orders_rows_and_lists_errors_alternatives_and_reasons() -> None:
    measured = table(mirrored__loop="fails", nccl__fit="n/a", nccl__loop="n/a")
    measured["cases"]["mirrored"]["loop"]["instead"] = "build the optimizer first"
    measured["cases"] = dict(reversed(measured["cases"].items()))  # JSON order does not matter
    measured["text"] = support_table.format_table(measured)
    measured["note"] = "the nearest"
    lines = support.format_table(measured).splitlines()
    assert lines[:3] == [
        "Note: the nearest",
        "",
        "Measured with keras3 / TensorFlow 2.99.0 (Keras 3.99.0)",
    ]
    assert [line.split("  ")[0] for line in lines[5:15]] == list(support.STRATEGIES.values())
    assert lines[7].split() == [
        "MirroredStrategy,",
        "2",
        "CPU",
        "devices",
        "works",
        "fails",
        "(ValueError)",
        "works",
    ]
    text = "\n".join(lines)
    assert (
        "  MirroredStrategy, 2 CPU devices, custom loop (guide): it broke\n"
        "      instead: build the optimizer first\n" in text
    )
    assert text.endswith("Not measured here:\n  MirroredStrategy + NcclAllReduce: not here")
    assert "Note" not in support_table.format_table(table())
    assert "Errors" not in support_table.format_table(table())
