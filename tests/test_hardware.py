"""Hardware detection: decision logic with fakes (TPU, GPU), the CPU paths for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools.runs import bench
from tpuhelpers import hardware
from tpuhelpers.tpu import Platform, TpuTarget, parse_tpu_config, skip_tpu_metadata_query

JOB_CONFIG = json.dumps({"tpu_node_name": "job-tpu", "zone": "us-central1-b", "project": "p"})


class NotReady(Exception):
    """Stands in for TensorFlow's NotFoundError in the fakes."""


class FakeClock:
    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


def fake_platform(
    environ=None, device_files=(), gpus=0, connect=None, clock=None, tpu_wheel=None
) -> Platform:
    def refuse(target):
        raise AssertionError(f"unexpected connection to {target}")

    return Platform(
        environ=environ or {},
        tpu_device_files=lambda: list(device_files),
        num_gpus=lambda: gpus,
        tpu_wheel=lambda: tpu_wheel,
        connect=connect or refuse,
        not_ready_errors=lambda: (ValueError, NotReady),
        sleep=(clock or FakeClock()).sleep,
    )


def flaky_connect(failures: int, error: type[Exception] = NotReady):
    calls = []

    def connect(target):
        calls.append(target)
        if len(calls) <= failures:
            raise error(f"TPU {target.tpu} not ready (call {len(calls)})")
        return "resolver"

    return connect, calls


# Where the TPU is ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "files", "expected_tpu", "wait"),
    [
        (
            {"TPU_CONFIG": JOB_CONFIG, "COLAB_TPU_ADDR": "1.2.3.4:8470"},
            ["/dev/accel0"],
            "job-tpu",
            True,
        ),
        ({"COLAB_TPU_ADDR": "1.2.3.4:8470", "TPU_NAME": "x"}, [], "grpc://1.2.3.4:8470", False),
        ({"TPU_NAME": "local"}, [], "local", False),
        ({}, ["/dev/accel0"], "local", False),
        ({}, ["/dev/vfio/0"], "local", False),
    ],
)
def test_find_tpu_follows_the_documented_order(environ, files, expected_tpu, wait):
    target = hardware.find_tpu(platform=fake_platform(environ, files))
    assert target.tpu == expected_tpu
    assert target.wait is wait


def test_find_tpu_argument_wins_and_names_zone_and_project():
    platform = fake_platform({"TPU_CONFIG": JOB_CONFIG})
    target = hardware.find_tpu("my-tpu", "europe-west4-a", "proj", platform)
    assert (target.tpu, target.zone, target.project) == ("my-tpu", "europe-west4-a", "proj")
    assert "my-tpu" in target.source and "europe-west4-a" in target.source
    grpc = hardware.find_tpu("grpc://10.0.0.2:8470", platform=platform)
    assert grpc.tpu == "grpc://10.0.0.2:8470" and "grpc://10.0.0.2:8470" in grpc.source


def test_no_tpu_anywhere():
    assert hardware.find_tpu(platform=fake_platform()) is None


def test_tpu_config_is_parsed_into_a_waiting_target():
    target = parse_tpu_config(JOB_CONFIG)
    assert target == TpuTarget(
        tpu="job-tpu", zone="us-central1-b", project="p", source=target.source, wait=True
    )
    assert "managed training job" in target.source


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{tpu_node_name: x}", "TPU_CONFIG is not valid JSON"),
        ("[1, 2]", "must be a JSON object like .*, got list"),
        ('{"tpu_node_name": "x", "zone": "z"}', "TPU_CONFIG lacks project"),
        ('{"zone": "z"}', "TPU_CONFIG lacks tpu_node_name, project"),
    ],
)
def test_bad_tpu_config_says_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message) as caught:
        parse_tpu_config(text)
    assert "tpu_node_name" in str(caught.value)  # says what is expected


def test_bad_tpu_config_in_the_environment_fails_get_strategy():
    platform = fake_platform({"TPU_CONFIG": "not json"})
    with pytest.raises(ValueError, match="TPU_CONFIG is not valid JSON"):
        hardware.get_strategy(platform=platform)


# Connecting, with retries on a fake clock ----------------------------------------------------


def test_managed_job_tpu_is_retried_until_ready():
    connect, calls = flaky_connect(failures=3)
    clock = FakeClock()
    target = parse_tpu_config(JOB_CONFIG)
    resolver = hardware.connect_tpu(target, platform=fake_platform(connect=connect, clock=clock))
    assert resolver == "resolver"
    assert len(calls) == 4
    assert clock.sleeps == [10.0, 10.0, 10.0]


def test_tpu_that_never_becomes_ready_gives_a_clear_error():
    connect, calls = flaky_connect(failures=100)
    clock = FakeClock()
    target = parse_tpu_config(JOB_CONFIG)
    platform = fake_platform(connect=connect, clock=clock)
    with pytest.raises(hardware.TpuConnectionError) as caught:
        hardware.connect_tpu(target, attempts=5, delay=2.5, platform=platform)
    message = str(caught.value)
    assert "job-tpu" in message and "after 5 attempts, 2.5 s apart" in message
    assert "NotReady: TPU job-tpu not ready (call 5)" in message
    assert len(calls) == 5 and clock.sleeps == [2.5] * 4
    assert isinstance(caught.value.__cause__, NotReady)


def test_default_attempts_are_bounded_for_a_managed_job():
    connect, calls = flaky_connect(failures=1000)
    platform = fake_platform(connect=connect)
    with pytest.raises(hardware.TpuConnectionError, match="after 40 attempts"):
        hardware.connect_tpu(parse_tpu_config(JOB_CONFIG), platform=platform)
    assert len(calls) == 40


def test_a_named_tpu_is_tried_once_by_default():
    connect, calls = flaky_connect(failures=1)
    with pytest.raises(hardware.TpuConnectionError, match="after 1 attempt\\."):
        hardware.connect_tpu(TpuTarget("my-tpu"), platform=fake_platform(connect=connect))
    assert len(calls) == 1


def test_real_errors_are_not_retried_or_hidden():
    connect, calls = flaky_connect(failures=1, error=KeyError)
    target = parse_tpu_config(JOB_CONFIG)
    with pytest.raises(KeyError):
        hardware.connect_tpu(target, platform=fake_platform(connect=connect))
    assert len(calls) == 1


@pytest.mark.parametrize("attempts", [0, -1, 1.5])
def test_attempts_must_be_positive(attempts):
    with pytest.raises(ValueError, match="attempts must be a positive integer"):
        hardware.connect_tpu(TpuTarget("x"), attempts=attempts, platform=fake_platform())


def test_tpu_local_without_a_tpu_fails_late_and_is_reported(run_python):
    # The real trap: the resolver accepts tpu='local'; initialization raises NotFoundError.
    code = """
        from tpuhelpers import hardware
        try:
            hardware.connect_tpu(hardware.TpuTarget(tpu="local", source="tpu='local'"))
        except hardware.TpuConnectionError as error:
            print(type(error.__cause__).__name__)
            print(error)
    """
    out = run_python(code, clean_env(TF_CPP_MIN_LOG_LEVEL="2")).stdout
    cause, message = out.splitlines()[0], out.splitlines()[1]
    # tensorflow-cpu raises NotFoundError or InvalidArgumentError, tensorflow-tpu InternalError.
    assert cause in ("NotFoundError", "InvalidArgumentError", "InternalError")
    assert "Could not connect to the TPU (tpu='local') after 1 attempt" in message


# Choosing the hardware ------------------------------------------------------------------------


def test_auto_prefers_tpu_then_gpu_then_cpu():
    tpu = TpuTarget("local")
    assert hardware.choose_kind("auto", tpu, fake_platform(gpus=2)) == "tpu"
    assert hardware.choose_kind("auto", None, fake_platform(gpus=2)) == "gpu"
    assert hardware.choose_kind("auto", None, fake_platform(gpus=1)) == "gpu"
    assert hardware.choose_kind("auto", None, fake_platform()) == "cpu"
    assert hardware.choose_kind("cpu", tpu, fake_platform(gpus=4)) == "cpu"


def test_forced_tpu_that_is_missing_lists_what_is_available():
    with pytest.raises(hardware.AcceleratorNotFoundError) as caught:
        hardware.get_strategy("tpu", platform=fake_platform(gpus=2))
    assert "no TPU was found" in str(caught.value)
    assert "Available: 2 GPUs, the CPU" in str(caught.value)


def test_forced_gpu_that_is_missing_lists_what_is_available():
    platform = fake_platform({"COLAB_TPU_ADDR": "1.2.3.4:8470"})
    with pytest.raises(hardware.AcceleratorNotFoundError) as caught:
        hardware.get_strategy("gpu", platform=platform)
    assert "sees no GPU" in str(caught.value)
    assert "Available: a TPU (legacy Colab TPU node at grpc://1.2.3.4:8470), the CPU" in str(
        caught.value
    )


@pytest.mark.parametrize("name", ["xpu", "TPUs", ""])
def test_unknown_accelerator_names_the_choices(name):
    with pytest.raises(ValueError, match="choose one of auto, tpu, gpu, cpu"):
        hardware.get_strategy(name, platform=fake_platform())


def test_unknown_accelerator_from_the_environment_names_the_variable():
    platform = fake_platform({hardware.ACCELERATOR_ENV: "quantum"})
    with pytest.raises(ValueError, match="TPUHELPERS_ACCELERATOR"):
        hardware.get_strategy(platform=platform)


@pytest.mark.parametrize("value", [0, -2, 1.5, "two", "1.0", True])
def test_cpu_replicas_must_be_a_positive_integer(value):
    with pytest.raises(ValueError, match="cpu_replicas must be a positive integer"):
        hardware.get_strategy("cpu", cpu_replicas=value, platform=fake_platform())


def test_cpu_replicas_from_the_environment_are_checked():
    platform = fake_platform({hardware.CPU_REPLICAS_ENV: "zero"})
    with pytest.raises(ValueError, match="TPUHELPERS_CPU_REPLICAS must be a positive integer"):
        hardware.get_strategy("cpu", platform=platform)


def test_a_tpu_found_by_looking_around_that_does_not_answer_falls_back():
    connect, _ = flaky_connect(failures=1)
    platform = fake_platform({}, ["/dev/accel0"], connect=connect)
    strategy = hardware.get_strategy(platform=platform)
    report = hardware.describe(strategy)
    assert report.kind == "CPU" and report.num_replicas == 1
    assert "TPU not usable, fell back" in report.notes[0]


def test_a_forced_or_named_tpu_that_does_not_answer_is_an_error():
    connect, _ = flaky_connect(failures=1)
    platform = fake_platform({}, ["/dev/accel0"], connect=connect)
    with pytest.raises(hardware.TpuConnectionError):
        hardware.get_strategy("tpu", platform=platform)
    connect, _ = flaky_connect(failures=1)
    with pytest.raises(hardware.TpuConnectionError):
        hardware.get_strategy(tpu="my-tpu", platform=fake_platform(connect=connect))


def test_cpu_default_strategy_is_described_and_cached():
    strategy = hardware.get_strategy("cpu", cpu_replicas=1, platform=fake_platform())
    assert hardware.get_strategy("cpu", platform=fake_platform()) is strategy
    report = hardware.describe(strategy)
    assert (report.kind, report.num_replicas, report.devices) == ("CPU", 1, ["CPU:0"])
    assert "Replicas:  1" in str(report)
    assert bench.accelerator_device() == "/CPU:0"


# The CPU split, for real, in fresh processes --------------------------------------------------


def clean_env(**extra: str) -> dict[str, str]:
    """A minimal environment, keeping TPU_SKIP_MDS_QUERY (set by `nox -s tpu_stack`)."""
    keep = {k: v for k, v in os.environ.items() if k == "TPU_SKIP_MDS_QUERY"}
    return {"PATH": "/usr/bin:/bin", **keep, **extra}


@pytest.mark.parametrize("replicas", [2, 4])
def test_cpu_split_gives_that_many_replicas(replicas, run_python):
    out = run_python(
        f"""
        from tpuhelpers import hardware
        strategy = hardware.get_strategy("cpu", cpu_replicas={replicas})
        import tensorflow as tf
        per_replica = strategy.run(
            lambda: tf.distribute.get_replica_context().replica_id_in_sync_group + 1)
        total = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
        print(strategy.num_replicas_in_sync, int(total), hardware.describe(strategy).devices)
    """,
        clean_env(TF_CPP_MIN_LOG_LEVEL="2"),
    ).stdout
    count, total, devices = out.split(maxsplit=2)
    assert int(count) == replicas
    assert int(total) == replicas * (replicas + 1) // 2  # a real all-reduce over the replicas
    assert devices.strip() == str([f"CPU:{i}" for i in range(replicas)])


def test_cpu_split_from_the_environment(run_python):
    out = run_python(
        """
        import os
        os.environ["TPUHELPERS_CPU_REPLICAS"] = "3"
        from tpuhelpers import hardware
        print(hardware.get_strategy().num_replicas_in_sync)
    """,
        clean_env(TF_CPP_MIN_LOG_LEVEL="2"),
    ).stdout
    assert out.strip() == "3"


def test_cpu_split_after_the_runtime_started_says_restart_the_kernel(run_python):
    out = run_python(
        """
        import tensorflow as tf
        from tpuhelpers import hardware
        tf.constant(1.0) + 1  # starts the runtime
        try:
            hardware.get_strategy("cpu", cpu_replicas=2)
        except hardware.CpuSplitError as error:
            print(error)
        print(hardware.split_cpu(1))  # the layout it already has is fine
    """,
        clean_env(TF_CPP_MIN_LOG_LEVEL="2"),
    ).stdout
    assert "runtime already started with 1 CPU device" in out
    assert "Restart the kernel" in out
    assert "/device:CPU:0" in out


def test_quiet_tensorflow_hides_startup_and_info_lines():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import tpuhelpers; tpuhelpers.quiet_tensorflow()\n"
            "from tpuhelpers import hardware\n"
            "hardware.get_strategy('cpu', cpu_replicas=2)\nprint('done')",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    assert "INFO" not in result.stderr and "cpu_feature_guard" not in result.stderr


# The TPU wheel on a machine without TPU chips ----------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "files", "wheel", "skips"),
    [
        ({}, [], "2.19.1", True),  # the wheel, no chip, nothing pointing at a TPU
        ({}, [], None, False),  # tensorflow-cpu: nothing to do
        ({}, ["/dev/vfio/0"], "2.19.1", False),  # a TPU VM: the wheel needs the metadata
        ({"TPU_SKIP_MDS_QUERY": "0"}, [], "2.19.1", False),  # the user's own choice is kept
        ({"TPU_NAME": "my-tpu"}, [], "2.19.1", False),
        ({"TPU_CONFIG": JOB_CONFIG}, [], "2.19.1", False),
    ],
)
def test_skip_tpu_metadata_query_only_where_no_tpu_can_be(environ, files, wheel, skips):
    environ = dict(environ)
    before = dict(environ)
    note = skip_tpu_metadata_query(environ, lambda: files, lambda: wheel)
    if skips:
        assert environ == {**before, "TPU_SKIP_MDS_QUERY": "1"}
        assert note.startswith("tensorflow-tpu 2.19.1 is installed, but this machine has no TPU")
        assert "TPU_SKIP_MDS_QUERY=1" in note
    else:
        assert (environ, note) == (before, None)


def test_forced_tpu_with_only_the_tpu_wheel_says_the_wheel_is_not_a_tpu():
    with pytest.raises(hardware.AcceleratorNotFoundError) as caught:
        hardware.get_strategy("tpu", platform=fake_platform(tpu_wheel="2.19.1"))
    message = str(caught.value)
    assert "tensorflow-tpu 2.19.1 is installed, but this machine has no TPU chip" in message
    assert "the wheel alone is not a TPU" in message
    assert "Available: the CPU" in message


def test_auto_with_only_the_tpu_wheel_falls_back_to_2_cpu_replicas_with_a_note(run_python):
    out = run_python(
        """
        from tpuhelpers import hardware
        platform = hardware.Platform(
            environ={}, tpu_device_files=lambda: [], num_gpus=lambda: 0, tpu_wheel=lambda: "2.19.1"
        )
        report = hardware.describe(hardware.get_strategy(platform=platform))
        print(report.kind, report.num_replicas)
        print(report.notes)
    """,
        clean_env(TF_CPP_MIN_LOG_LEVEL="2"),
    ).stdout
    kind_replicas, notes = out.strip().splitlines()
    assert kind_replicas == "CPU 2"
    assert notes == str(
        [
            "tensorflow-tpu 2.19.1 is installed, but this machine has no TPU chip (no "
            "/dev/accel* or /dev/vfio/N device): using the CPU split into 2 replicas (this "
            "wheel's XLA has no CPU backend)."
        ]
    )


def test_with_only_the_tpu_wheel_and_the_runtime_started_it_says_to_compile_without_xla(run_python):
    out = run_python(
        """
        import tensorflow as tf
        from tpuhelpers import hardware
        tf.constant(1) + 1  # the runtime starts with one CPU device
        platform = hardware.Platform(
            environ={}, tpu_device_files=lambda: [], num_gpus=lambda: 0, tpu_wheel=lambda: "2.19.1"
        )
        report = hardware.describe(hardware.get_strategy(platform=platform))
        print(report.num_replicas, report.notes[0].split(": using ")[1])
    """,
        clean_env(TF_CPP_MIN_LOG_LEVEL="2"),
    ).stdout
    assert out.strip() == (
        "1 the CPU; compile Keras models with jit_compile=False (this wheel's XLA has no CPU "
        "backend)."
    )


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_get_strategy_refuses_another_keras_backend_with_the_fix(backend, run_python):
    out = run_python(
        """
        from tpuhelpers import hardware, jax_setup
        try:
            hardware.get_strategy("cpu")
        except jax_setup.KerasBackendError as error:
            print(error)
        """,
        clean_env(KERAS_BACKEND=backend),
    ).stdout
    assert out.startswith(f"KERAS_BACKEND is already set to {backend!r}, not 'tensorflow'")
    assert "os.environ.pop('KERAS_BACKEND')" in out


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("10.0.0.2:8470", "grpc://10.0.0.2:8470"),
        ("grpc://10.0.0.2:8470", "grpc://10.0.0.2:8470"),  # no second prefix
        (" 10.0.0.2:8470\n", "grpc://10.0.0.2:8470"),
        ("[::1]:8470", "grpc://[::1]:8470"),
    ],
)
def test_colab_tpu_addr_is_normalised(value, expected):
    target = hardware.find_tpu(platform=fake_platform({"COLAB_TPU_ADDR": value}))
    assert target.tpu == expected


@pytest.mark.parametrize(
    "value", ["10.0.0.2", "grpc://", "10.0.0.2:99999", "a b:1", "grpc://x:8470/"]
)
def test_bad_tpu_addresses_are_refused_with_the_expected_form(value):
    with pytest.raises(ValueError, match=r"COLAB_TPU_ADDR must be host:port \(e\.g\."):
        hardware.find_tpu(platform=fake_platform({"COLAB_TPU_ADDR": value}))


def test_an_attempt_that_hangs_is_bounded_in_time():
    import threading

    release = threading.Event()
    platform = fake_platform({}, connect=lambda target: release.wait(30))
    target = hardware.TpuTarget("grpc://10.0.0.2:8470", source="a TPU that never answers")
    start = time.monotonic()
    with pytest.raises(hardware.TpuConnectionError, match=r"after 2 attempts.*TimeoutError"):
        hardware.connect_tpu(target, attempts=2, delay=0, attempt_timeout=0.2, platform=platform)
    release.set()
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("value", ["65", "100000", 1000])
def test_cpu_replicas_beyond_the_limit_are_refused(value):
    with pytest.raises(ValueError, match=r"at most 64"):
        hardware.get_strategy("cpu", cpu_replicas=value, platform=fake_platform({}))


def test_a_colab_tpu_address_where_nothing_listens_falls_back_in_seconds(run_python):
    # Before: one attempt blocked inside TensorFlow's connection for about 400 s.
    start = time.monotonic()
    out = run_python(
        """
        import os
        os.environ["COLAB_TPU_ADDR"] = "127.0.0.1:1"
        from tpuhelpers import hardware
        print(hardware.describe(hardware.get_strategy()))
        """,
        clean_env(TF_CPP_MIN_LOG_LEVEL="2"),
    ).stdout
    assert time.monotonic() - start < 120
    assert "Hardware:  CPU" in out and "TPU not usable, fell back" in out
    assert "127.0.0.1:1" in out


def test_the_helper_bounds_the_tpu_wheels_import_before_importing_tensorflow(tmp_path, run_python):
    # The TPU wheel's metadata alone (a .dist-info on the path): where it is installed and no
    # TPU is in sight, every import of TensorFlow by the helper sets TPU_SKIP_MDS_QUERY first.
    info = tmp_path / "tensorflow_tpu-2.19.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorflow-tpu\nVersion: 2.19.1\n")
    out = run_python(
        """
        import os, sys
        from tpuhelpers import tpu
        assert "tensorflow" not in sys.modules
        tpu.import_tensorflow()
        print(os.environ.get("TPU_SKIP_MDS_QUERY"))
        """,
        clean_env(TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=str(tmp_path)),
    ).stdout
    assert out.strip() == "1"


def test_no_module_of_the_helper_imports_tensorflow_directly():
    found = [
        f"{path.name}:{number}"
        for path in sorted((Path(hardware.__file__).parent).glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if line.strip() == "import tensorflow as tf" and path.name != "tpu.py"
    ]
    assert not found, f"import TensorFlow through tpu.import_tensorflow(): {found}"


def test_a_tpu_address_that_accepts_and_never_answers_says_what_it_waits_for(monkeypatch, capsys):
    # Before: an attempt waited its whole bound (120 s, 130 s with the probe) without a word.
    import socket

    from tpuhelpers import checks

    monkeypatch.setattr(checks, "NOTE_SECONDS", 0.2)
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def connect(target):  # as TensorFlow does: connects, then waits for an answer that never comes
        with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
            client.settimeout(None)
            return client.recv(1)

    target = hardware.find_tpu(platform=fake_platform({"COLAB_TPU_ADDR": f"127.0.0.1:{port}"}))
    start = time.monotonic()
    with (
        server,
        pytest.raises(hardware.TpuConnectionError, match=r"TimeoutError: no answer within"),
    ):
        hardware.connect_tpu(target, attempt_timeout=1.0, platform=fake_platform(connect=connect))
    assert time.monotonic() - start < 3
    said = capsys.readouterr().out.splitlines()
    assert len(said) >= 3, said
    where = f"legacy Colab TPU node at grpc://127.0.0.1:{port}"
    assert said[0] == f"Waiting for the TPU to answer ({where}): 0 s of 1 s."


def test_a_tpu_config_without_the_google_api_client_names_what_to_install():
    # Before: TensorFlow's raw RuntimeError, naming neither the TPU nor the packages.
    calls = []

    def connect(target):
        calls.append(target)
        raise RuntimeError(
            "Missing runtime dependency on the Google API client. "
            "Run `pip install cloud-tpu-client` to fix."
        )

    target = parse_tpu_config(JOB_CONFIG)
    with pytest.raises(hardware.TpuConnectionError) as caught:
        hardware.connect_tpu(target, platform=fake_platform(connect=connect))
    message = str(caught.value)
    assert "Cloud TPU 'job-tpu' in us-central1-b, project p" in message
    assert "pip install google-api-python-client oauth2client" in message
    assert len(calls) == 1  # not retried 40 times


def test_other_runtime_errors_of_a_connection_are_not_hidden():
    def connect(target):
        raise RuntimeError("something else")

    with pytest.raises(RuntimeError, match="^something else$"):
        hardware.connect_tpu(TpuTarget("x"), platform=fake_platform(connect=connect))
