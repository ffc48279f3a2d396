"""The measured support table: its bookkeeping, the committed reference, and a fresh measurement."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

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
    return {
        "key": support.table_key("keras3", "2.99.0"),
        "flavor": "keras3",
        "tensorflow": "2.99.0",
        "keras": "3.99.0",
        "cases": cases,
        "estimator": support.estimator_status(),
    }


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
    assert support.clean_message(RuntimeError(message)) == expected


# Comparisons and formatting -------------------------------------------------------------------


def test_guide_comparison_verdicts() -> None:
    measured = table(
        mirrored_spe4__fit="fails",
        mirrored__loop="fails",
        multi_worker__fit="fails",
        tpu__fit="n/a",
        tpu__loop="n/a",
        tpu__loop_built="n/a",
    )
    rows = {(r["api"], r["strategy"]): r for r in support.guide_comparison(measured)}
    fit, loop, estimator = "Model.fit", "Custom training loop", "Estimator API"
    assert rows[fit, "MirroredStrategy"]["short"] == "partly"
    assert rows[fit, "MirroredStrategy"]["verdict"] == "differs"
    assert rows[loop, "MirroredStrategy"]["short"] == "with a fix"
    assert rows[fit, "MultiWorkerMirroredStrategy"]["verdict"] == "differs"
    assert rows[loop, "MultiWorkerMirroredStrategy"]["verdict"] == "agrees"
    assert rows[fit, "CentralStorageStrategy"]["verdict"] == "agrees"
    assert rows[fit, "TPUStrategy"]["verdict"] == "not measured"
    assert len(rows) == 15
    if measured["estimator"]["status"] == "n/a":  # TensorFlow 2.16 and later
        assert rows[estimator, "TPUStrategy"]["verdict"] == "agrees"  # "Not supported"
        assert rows[estimator, "MirroredStrategy"]["verdict"] == "differs"  # "Limited"


def test_differences_name_the_case_and_skip_what_was_not_measured() -> None:
    reference = table(multi_worker__fit="fails")
    assert support.differences(table(multi_worker__fit="fails"), reference) == []
    changed = table(tpu__fit="n/a")  # not measured here: not a difference
    assert support.differences(changed, reference) == [
        "MultiWorkerMirroredStrategy, 2 processes, Model.fit: fails (ValueError) -> works"
    ]
    changed["keras"] = "3.100.0"
    assert support.differences(changed, reference)[0] == "Keras version: 3.99.0 -> 3.100.0"


def test_format_table_orders_rows_and_lists_errors() -> None:
    measured = table(
        mirrored__loop="fails", nccl__fit="n/a", nccl__loop="n/a", nccl__loop_built="n/a"
    )
    measured["cases"] = dict(reversed(measured["cases"].items()))  # JSON order does not matter
    text = support.format_table(measured)
    labels = [line.split("  ")[0] for line in text.splitlines()[3:13]]
    assert labels == list(support.STRATEGIES.values())
    assert "MirroredStrategy, 2 CPU devices, custom loop (guide): it broke" in text
    assert "Not measured here:\n  MirroredStrategy + NcclAllReduce: not here" in text


def test_write_reference_keeps_other_tables(tmp_path: Path) -> None:
    path = tmp_path / "table.json"
    other = table()
    other["key"] = support.table_key("tf-keras", "2.99.0")
    support.write_reference(other, path)
    support.write_reference(table(), path)
    assert sorted(json.loads(path.read_text())) == [
        "keras3 / TensorFlow 2.99.0",
        "tf-keras / TensorFlow 2.99.0",
    ]
    assert support.reference_for("keras3 / TensorFlow 2.99.0", path)["keras"] == "3.99.0"


def test_a_missing_reference_says_how_to_make_it(tmp_path: Path) -> None:
    with pytest.raises(support.SupportTableError, match=r"no table for 'keras3 / TensorFlow 9.9'"):
        support.reference_for("keras3 / TensorFlow 9.9", tmp_path / "none.json")
    with pytest.raises(support.SupportTableError, match="nox -s support_table"):
        support.reference_for("keras3 / TensorFlow 9.9")


@pytest.mark.parametrize(
    ("flavor", "version", "wheel", "shown"),
    [
        ("keras3", "2.99.0", "tensorflow-cpu", "keras3 / TensorFlow 2.99.0"),  # its own table
        ("keras3", "2.97.1", "tensorflow", "keras3 / TensorFlow 2.98.0"),  # the oldest newer
        ("keras3", "3.1.0", "tensorflow", "keras3 / TensorFlow 2.99.0"),  # the newest older
        ("keras3", "2.99.0", "tensorflow-tpu", "keras3 / TensorFlow 2.98.0 (tensorflow-tpu)"),
        ("tf-keras", "2.20.0", "tensorflow", "tf-keras / TensorFlow 2.16.1"),
        ("keras4", "2.99.0", "tensorflow", "keras3 / TensorFlow 2.99.0"),  # another flavor
    ],
)
def test_a_stack_without_a_table_gets_the_nearest_with_a_note(
    tmp_path, flavor, version, wheel, shown
):
    path = tmp_path / "table.json"
    for key_flavor, key_version, key_wheel in [
        ("keras3", "2.99.0", "tensorflow"),
        ("keras3", "2.98.0", "tensorflow"),
        ("keras3", "2.98.0", "tensorflow-tpu"),
        ("tf-keras", "2.16.1", "tensorflow"),
    ]:
        entry = table()
        entry.update(flavor=key_flavor, tensorflow=key_version, wheel=key_wheel)
        entry["key"] = support.table_key(key_flavor, key_version, key_wheel)
        support.write_reference(entry, path)
    stack = {"flavor": flavor, "tensorflow": version, "wheel": wheel}
    found = support.nearest_reference(stack, path)
    assert found["key"] == shown
    text = support.format_table(found)
    if shown == support.table_key(flavor, version, wheel):
        assert "note" not in found and not text.startswith("Note")
    else:
        key = support.table_key(flavor, version, wheel)
        assert text.startswith(
            f"Note: No table was measured for {key}: showing the nearest, {shown}."
        )


def test_nearest_reference_without_any_table_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(support.SupportTableError, match="nox -s support_table"):
        stack = {"flavor": "keras3", "tensorflow": "2.21.0", "wheel": "tensorflow"}
        support.nearest_reference(stack, tmp_path / "none.json")


def test_measure_refuses_unknown_names() -> None:
    with pytest.raises(ValueError, match=r"unknown strategies \['mirored'\]"):
        support.measure(["mirored"])
    with pytest.raises(ValueError, match="isolate must be 'case' or 'strategy'"):
        support.measure(["default"], isolate="process")


@pytest.mark.skipif(
    bool(glob.glob("/dev/accel*") + glob.glob("/dev/nvidia[0-9]*")), reason="TPU/GPU"
)
def test_tpu_and_nccl_are_not_available_here() -> None:
    assert "no TPU on this machine" in support.not_available_reason("tpu")
    assert "NVIDIA GPUs only" in support.not_available_reason("nccl")
    assert support.not_available_reason("mirrored") is None


# The committed reference ----------------------------------------------------------------------


def test_committed_reference_is_complete() -> None:
    assert REFERENCE, "tpuhelpers/support_table.json is missing: run `nox -s support_table`"
    for key, committed in REFERENCE.items():
        wheel = committed.get("wheel", "tensorflow")
        assert key == support.table_key(committed["flavor"], committed["tensorflow"], wheel)
        assert set(committed["cases"]) == set(support.STRATEGIES)
        for strategy_key, api, found in support.cases({"key": key, **committed}):
            assert found["status"] in support.STATUSES
            needed = {"fails": {"error", "message"}, "n/a": {"reason"}}.get(found["status"], set())
            assert needed <= set(found), (strategy_key, api, found)
            if found["status"] == "fails":  # the notebook shows what works instead
                assert support.alternative(strategy_key, api), (strategy_key, api)


# Measured for real ----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_crashing_case_does_not_take_the_others_down(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(support.CRASH_ENV, "default:fit")
    results, versions = support._measure_strategy("default", list(support.APIS), "strategy", 120)
    assert results["fit"] == {
        "status": "fails",
        "error": "crash",
        "message": "the process was killed by SIGABRT",
    }
    assert results["loop"] == results["loop_built"] == {"status": "works"}
    assert versions["flavor"] in ("keras3", "tf-keras")


@pytest.mark.slow
def test_the_table_measured_now_matches_the_committed_one() -> None:
    """Every case again (one process per strategy, 2 at a time), against the reference that
    `nox -s support_table` wrote with one process per case."""
    measured = support.measure(isolate="strategy")
    reference = support.reference_for(measured["key"])
    assert support.differences(measured, reference) == [], support.format_table(measured)
