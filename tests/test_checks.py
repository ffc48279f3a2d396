"""The shared argument checks: what they accept, and that each refusal says what was wrong."""

import pytest

from tpuhelpers import checks


def test_positive_int_accepts_ints():
    assert checks.integer(3, "n") == 3


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "two", None, "1e3", "4"])
def test_positive_int_refuses_and_names_the_argument(value):
    with pytest.raises(ValueError, match=r"^workers must be a positive integer"):
        checks.integer(value, "workers")


def test_positive_int_maximum_says_the_bound_and_the_hint():
    with pytest.raises(ValueError, match=r"at most 64, got 100000\. Use fewer"):
        checks.integer(100000, "TPUHELPERS_CPU_REPLICAS", maximum=64, hint="Use fewer.")


@pytest.mark.parametrize("value", [float("inf"), float("nan"), "3", True, -1])
def test_finite_number_refuses(value):
    with pytest.raises(ValueError, match="hours must be"):
        checks.number(value, "hours")


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


# One integer parser: ASCII digits only, numpy integers too (issue: '٣' and '²' pass isdigit()).
@pytest.mark.parametrize(
    ("value", "text", "expected"),
    [
        (3, False, 3),
        ("7", True, 7),
        (" 12\n", True, 12),
        (__import__("numpy").int64(5), False, 5),
        (__import__("numpy").uint8(2), False, 2),
    ],
)
def test_integer_accepts_ints_numpy_integers_and_ascii_digits_as_text(value, text, expected):
    result = checks.integer(value, "n", text=text)
    assert result == expected and type(result) is int


@pytest.mark.parametrize("value", ["٣", "²", "１２", "1_000", "0x10", "3.0", "", " ", "-"])
def test_integer_refuses_other_digits_and_forms_even_as_text(value):
    with pytest.raises(ValueError, match=r"^CPU_REPLICAS must be a positive integer, got "):
        checks.integer(value, "CPU_REPLICAS", text=True)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((5, "STEPS", 10), r"^STEPS must be an integer of at least 10, got 5\."),
        ((-1, "SEED", 0), r"^SEED must be a non-negative integer, got -1\."),
        ((9, "ARRAY_SIZE", 2, 8), r"^ARRAY_SIZE must be at most 8, got 9\."),
        ((0, "KILL", 21, 59), r"^KILL must be an integer of at least 21 and at most 59, got 0\."),
    ],
)
def test_integer_names_the_parameter_the_value_and_the_range(args, message):
    with pytest.raises(ValueError, match=message):
        checks.integer(*args)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "must be a finite number, got nan"),
        ("0.1", "must be a finite number, got '0.1'"),
        (True, "must be a finite number, got True"),
        (0.0, r"must be at least 1e-08, got 0\.0"),
        (2.0, r"must be at most 1\.0, got 2\.0"),
    ],
)
def test_number_names_the_parameter_the_value_and_the_range(value, message):
    with pytest.raises(ValueError, match="^LEARNING_RATE " + message):
        checks.number(value, "LEARNING_RATE", 1e-8, 1.0)
    assert checks.number(__import__("numpy").float32(0.5), "x", 0, 1) == 0.5


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1:2222", "127.0.0.1:2222"),
        ("localhost:2222", "127.0.0.1:2222"),  # one port under two names is one address
        ("LOCALHOST:80", "127.0.0.1:80"),
        ("[::1]:8470", "[::1]:8470"),
        ("10.0.0.2:08470", "10.0.0.2:8470"),
    ],
)
def test_address_spells_loopback_one_way(value, expected):
    assert checks.address(value, "addr") == expected


@pytest.mark.parametrize(
    "value", ["127.0.0.1:٣٣", "127.0.0.1:²", "127.0.0.1:0", "h:65536", "h:", ":80", "a b:1", 80]
)
def test_address_refuses_bad_hosts_and_ports(value):
    with pytest.raises(ValueError, match=r"^addr must be host:port \(e\.g\. 127\.0\.0\.1:2222"):
        checks.address(value, "addr")


@pytest.mark.parametrize(
    ("kind", "expected"), [("CPU", 8), ("cpu", 8), ("TPU", 256), ("gpu", 256), ("tpu", 256)]
)
def test_for_hardware_takes_the_default_of_the_hardware_found_and_says_so(kind, expected, capsys):
    assert checks.for_hardware(None, "FILTERS", kind, accelerator=256, cpu=8) == expected
    said = capsys.readouterr().out
    assert said.startswith(f"FILTERS = {expected}: the default on a {kind.upper()}"), said
    assert "256 on a TPU or GPU, 8 on a CPU" in said


@pytest.mark.parametrize("kind", ["CPU", "TPU"])
def test_for_hardware_keeps_what_the_reader_set(kind, capsys):
    assert checks.for_hardware(64, "FILTERS", kind, accelerator=256, cpu=8) == 64
    assert capsys.readouterr().out.startswith("FILTERS = 64: set in the parameters")


def test_for_hardware_refuses_an_unknown_kind():
    with pytest.raises(
        ValueError, match="Unknown hardware kind 'QUANTUM': choose one of TPU, GPU, CPU"
    ):
        checks.for_hardware(None, "FILTERS", "quantum", accelerator=256, cpu=8)


def test_divides_names_the_parameter_the_hardware_and_the_nearest_values():
    assert checks.divides(256, "GLOBAL_BATCH_SIZE", 8, "8 replicas") == 256
    message = (
        "GLOBAL_BATCH_SIZE=255 does not divide over 2 replicas on the CPU: use a multiple of 2"
    )
    with pytest.raises(ValueError, match=f"^{message}, e.g. 254 or 256.$"):
        checks.divides(255, "GLOBAL_BATCH_SIZE", 2, "2 replicas on the CPU")
    with pytest.raises(ValueError, match=r"e\.g\. 8\.$"):
        checks.divides(3, "BATCH_SIZE", 8, "8 TPU devices")
