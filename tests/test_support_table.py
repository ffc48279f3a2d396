"""The measurement of the support table (`tools.runs.support_table`), and the committed tables."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

from tools.runs import support_cases, support_table
from tpuhelpers import support

REFERENCE = support.load_reference()


def result(status: str, error: str = "ValueError") -> dict:
    if status == "fails":
        return {"status": "fails", "error": error, "message": "it broke"}
    if status == "n/a":
        return {"status": "n/a", "reason": "not here"}
    return {"status": "works"}


def table(**overrides: str) -> dict:
    """A synthetic table: everything works, except `strategy__api="fails"` overrides."""
    cases = {key: {api: result("works") for api in support.APIS} for key in support.STRATEGIES}
    for name, status in overrides.items():
        key, api = name.split("__")
        cases[key][api] = result(status)
    stack = {"flavor": "keras3", "tensorflow": "2.99.0", "wheel": "tensorflow", "keras": "3.99.0"}
    return {"key": support.Stack(**stack).key, **stack, "cases": cases}


# Error messages ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "Graph execution error:\n\nDetected at node while/cond/Placeholder_1 defined at:\n"
            '  File "x.py", line 1, in <module>\n\n2 root error(s) found.\n'
            "  (0) INVALID_ARGUMENT:  You must feed a value for placeholder tensor "
            "'while/body/_1/while/cond/Placeholder_1' with dtype int32\n\t [[{{node x}}]]",
            "You must feed a value for placeholder tensor '...' with dtype int32",
        ),
        (
            'in user code:\n\n    File "s.py", line 3, in step  *\n        g = tape.gradient()\n\n'
            "    AttributeError: 'ShardedVariable' object has no attribute 'handle'\n",
            "'ShardedVariable' object has no attribute 'handle'",
        ),
        (
            "Attempt to convert a value (PerReplica:{\n  0: <tf.Tensor 0x7f12ab>\n}) with an "
            "unsupported type",
            "Attempt to convert a value (PerReplica:{...}) with an unsupported type",
        ),
        ("worker at 127.0.0.1:41234 lost [Op:__inference_train_step_1234]",
         "worker at HOST:PORT lost [Op:__inference_train_step_N]"),
        ("", "(no message)"),
    ],
)  # fmt: skip
def test_clean_message_keeps_the_line_that_says_what_went_wrong(message: str, expected: str):
    assert support_cases.clean_message(RuntimeError(message)) == expected


# Options, comparisons, annotations ------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"strategies": ("mirored",)}, ValueError, "Unknown strategy 'mirored': choose one of"),
        ({"strategies": ["mirrored"]}, TypeError, "strategies must be a tuple, got list"),
        ({"isolate": "process"}, ValueError, "Unknown isolate 'process': choose one of case,"),
        ({"parallel": 0}, ValueError, "parallel must be a positive integer, got 0"),
        ({"timeout": float("nan")}, ValueError, "timeout must be a finite number, got nan"),
        ({"timeout": 0.5}, ValueError, "timeout must be at least 1.0, got 0.5"),
    ],
)  # fmt: skip
def test_bad_options_are_refused_with_what_was_wrong(options, error, message) -> None:
    with pytest.raises(error, match=message):
        support_table.Options(**options)


def test_differences_name_the_case_and_skip_what_was_not_measured() -> None:
    reference = table(multi_worker__fit="fails")
    assert support_table.differences(table(multi_worker__fit="fails"), reference) == []
    changed = table(tpu__fit="n/a")  # not measured here: not a difference
    assert support_table.differences(changed, reference) == [
        "MultiWorkerMirroredStrategy, 2 processes, Model.fit: fails (ValueError) -> works"
    ]
    changed["keras"] = "3.100.0"
    assert support_table.differences(changed, reference)[0] == "Keras version: 3.99.0 -> 3.100.0"


def test_annotate_gives_each_known_failure_its_alternative() -> None:
    annotated = support_table.annotate(table(mirrored__loop="fails", one_device__fit="fails"))
    assert annotated["cases"]["mirrored"]["loop"]["instead"].endswith(
        "optimizer.build(model.trainable_variables) (the loop + optimizer.build column)"
    )
    assert "instead" not in annotated["cases"]["one_device"]["fit"]  # no known alternative
    assert "instead" not in annotated["cases"]["mirrored"]["fit"]  # it works


def test_write_reference_keeps_other_tables(tmp_path: Path) -> None:
    path = tmp_path / "table.json"
    other = table()
    other.update(flavor="tf-keras", key="tf-keras / TensorFlow 2.99.0")
    support_table.write_reference(other, path)
    support_table.write_reference(table(), path)
    tables = json.loads(path.read_text())
    assert sorted(tables) == ["keras3 / TensorFlow 2.99.0", "tf-keras / TensorFlow 2.99.0"]
    stack = support.Stack("keras3", "2.99.0")
    assert support.nearest_reference(stack, path)["keras"] == "3.99.0"


@pytest.mark.skipif(
    bool(glob.glob("/dev/accel*") + glob.glob("/dev/nvidia[0-9]*")), reason="TPU/GPU"
)
def test_tpu_and_nccl_are_not_available_here() -> None:
    assert "no TPU on this machine" in support_table.not_available_reason("tpu")
    assert "NVIDIA GPUs only" in support_table.not_available_reason("nccl")
    assert support_table.not_available_reason("mirrored") is None


# The committed reference ----------------------------------------------------------------------


def test_committed_reference_is_complete() -> None:
    assert REFERENCE, "tpuhelpers/support_table.json is missing: run `nox -s support_table`"
    for key, committed in REFERENCE.items():
        stack = support.Stack(**{k: committed[k] for k in ("flavor", "tensorflow", "wheel")})
        assert key == stack.key
        assert set(committed["cases"]) == set(support.STRATEGIES)
        for strategy_key, results in committed["cases"].items():
            assert set(results) == set(support.APIS)
            for api, found in results.items():
                assert found["status"] in support_table.STATUSES
                needed = {"fails": {"error", "message", "instead"}, "n/a": {"reason"}}
                assert needed.get(found["status"], set()) <= set(found), (strategy_key, api)
        assert support_table.annotate(committed) == committed, (
            "run `tools.runs.support_table annotate`"
        )


def test_this_stack_has_a_committed_table_of_its_own() -> None:
    assert "note" not in support.nearest_reference()


# Measured for real ----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_crashing_case_does_not_take_the_others_down(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(support_cases.CRASH_ENV, "default:fit")
    options = support_table.Options(isolate="strategy", timeout=120)
    results, stack = support_table.measure_strategy("default", options)
    assert results["fit"] == {
        "status": "fails",
        "error": "crash",
        "message": "the process was killed by SIGABRT",
    }
    assert results["loop"] == results["loop_built"] == {"status": "works"}
    assert stack["flavor"] in ("keras3", "tf-keras")


@pytest.mark.slow
def test_the_table_measured_now_matches_the_committed_one() -> None:
    """Every case again (one process per strategy, 2 at a time), against the reference that
    `nox -s support_table` wrote with one process per case."""
    measured = support_table.measure(support_table.Options(isolate="strategy"))
    reference = support.load_reference()[measured["key"]]
    assert support_table.differences(measured, reference) == [], support.format_table(measured)
