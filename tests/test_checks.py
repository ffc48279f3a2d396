"""The shared argument checks: what they accept, and that each refusal says what was wrong."""

import pytest

from tpuhelpers import checks


def test_positive_int_accepts_ints():
    assert checks.positive_int(3, "n") == 3


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "two", None, "1e3", "4"])
def test_positive_int_refuses_and_names_the_argument(value):
    with pytest.raises(ValueError, match=r"^workers must be a positive integer"):
        checks.positive_int(value, "workers")


def test_positive_int_maximum_says_the_bound_and_the_hint():
    with pytest.raises(ValueError, match=r"at most 64, got 100000\. Use fewer"):
        checks.positive_int(100000, "TPUHELPERS_CPU_REPLICAS", maximum=64, hint="Use fewer.")


@pytest.mark.parametrize("value", [float("inf"), float("nan"), "3", True, -1])
def test_finite_number_refuses(value):
    with pytest.raises(ValueError, match="hours must be"):
        checks.finite_number(value, "hours")


def test_one_of_and_of_type():
    assert checks.one_of("tpu", ("tpu", "cpu"), "accelerator") == "tpu"
    with pytest.raises(ValueError, match="Unknown accelerator 'xpu': choose one of tpu, cpu"):
        checks.one_of("xpu", ("tpu", "cpu"), "accelerator")
    with pytest.raises(TypeError, match="region must be a str, got list"):
        checks.of_type(["us-central1"], str, "region")
    with pytest.raises(TypeError, match="count must be a int, got bool"):
        checks.of_type(True, int, "count")


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "is empty"), ("{", "not valid JSON"), ("[1]", "must be a JSON object"), (None, "empty")],
)
def test_json_object_errors_say_what_and_show_an_example(text, message):
    with pytest.raises(ValueError, match=message) as error:
        checks.json_object(text, "TF_CONFIG", '{"cluster": {}}')
    assert "TF_CONFIG" in str(error.value) and '{"cluster": {}}' in str(error.value)
