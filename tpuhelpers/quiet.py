"""Silence TensorFlow's start-up and deprecation noise, so notebook output shows what matters."""

from __future__ import annotations

import logging
import os
import warnings


def quiet_tensorflow() -> None:
    """Hides TensorFlow's start-up lines and warnings (not errors); call before it is imported."""
    from tpuhelpers import tpu  # imports no TensorFlow

    if note := tpu.skip_tpu_metadata_query():  # tensorflow-tpu without a TPU chip
        print("Note:", note)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # C++: errors only
    # TF_ENABLE_ONEDNN_OPTS=0 would also hide the oneDNN notice, but halves CPU training speed.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    for module in ("tensorflow", "keras", "tf_keras", "tensorflow_datasets", "absl"):
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=module)
        warnings.filterwarnings("ignore", category=FutureWarning, module=module)
    warnings.filterwarnings("ignore", category=UserWarning, module="keras")
    from absl import logging as absl_logging  # installed with TensorFlow

    absl_logging.set_verbosity(absl_logging.ERROR)
    tf = tpu.import_tensorflow()
    tf.get_logger().setLevel(logging.ERROR)
    tf.autograph.set_verbosity(0)
