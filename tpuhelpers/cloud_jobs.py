"""Cloud TPU job specifications, built and checked offline, and what a run costs.

Everything here is plain data (dicts, small dataclasses) written as YAML or JSON, plus the
matching command lines. Nothing calls the cloud; neither the Cloud SDK nor TensorFlow is needed.

* The legacy AI Platform Training job (the service was shut down on 2025-01-31):
  `validate_training_input` checks an old `config.yaml` against every rule of the AI Platform TPU
  guide, `legacy_submit_command` writes its `gcloud ai-platform jobs submit training` line, and
  `seed_example` returns each example config of that guide.
* A Cloud TPU VM: `TpuVmSpec`, `validate_tpu_vm` and `tpu_vm_create_command`
  (`gcloud compute tpus tpu-vm create`).
* A Vertex AI custom job with one TPU worker pool: `vertex_custom_job_spec`,
  `validate_vertex_job_spec` and `vertex_create_command` (`gcloud ai custom-jobs create`).
* `translate_legacy` turns a legacy config into the last two, with plain-language notes for what
  has no equivalent.
* `estimate_cost` prices a run from `tpu_prices.yaml` (per-second billing, host VM billed apart);
  `plot_cost_comparison` draws what an N-hour run costs in each option.

Every bad input raises `JobSpecError`, whose message names the field, the bad value and what is
allowed.

Sources, read on 2026-11-22 (re-check them before trusting a table below):

* AI Platform Training, "Training with TPUs" (German edition; this repository's seed document
  `shared/seeds/003_cd39d86e00ce871b.txt`):
  https://cloud.google.com/ai-platform/training/docs/using-tpus?hl=de
* `gcloud compute tpus tpu-vm create` (flags `--zone`, `--accelerator-type`, `--version`, `--spot`,
  `--preemptible`): https://cloud.google.com/sdk/gcloud/reference/compute/tpus/tpu-vm/create
* TPU software versions (`tpu-ubuntu2204-base`, `v2-alpha-tpuv5-lite`, `v2-alpha-tpuv6e`, the
  `tpu-vm-tf-x.y.z[-pod][-pjrt|-se]` naming): https://cloud.google.com/tpu/docs/runtimes
* TensorFlow TPU VM versions (tpu-vm-tf-2.7.3 ... 2.16.1; `-pjrt`/`-se` from 2.15.0 on):
  https://cloud.google.com/tpu/docs/supported-tpu-versions
* TPU regions and zones: https://cloud.google.com/tpu/docs/regions-zones
* Preemptible TPUs: https://cloud.google.com/tpu/docs/preemptible
* v5e slice shapes (1x1 ... 16x16): https://cloud.google.com/tpu/docs/supported-tpu-configurations
* Vertex AI `MachineSpec` (`machineType`, `acceleratorType` TPU_V2 / TPU_V3 / TPU_V4_POD /
  TPU_V5_LITEPOD, `acceleratorCount`, `tpuTopology`):
  https://cloud.google.com/vertex-ai/docs/reference/rest/v1/MachineSpec
* Vertex AI TPU worker pools (`cloud-tpu` with 8 cores or a pod size, `ct5lp-hightpu-*` with a
  topology, one pool with one replica): https://cloud.google.com/vertex-ai/docs/training/configure-compute
  and https://cloud.google.com/vertex-ai/docs/training/training-with-tpu-vm
* Vertex AI `pythonPackageSpec` / `containerSpec`:
  https://cloud.google.com/vertex-ai/docs/training/configure-container-settings
"""

from __future__ import annotations

import copy
import json
import math
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

PRICES_PATH = Path(__file__).with_name("tpu_prices.yaml")

# --- The legacy AI Platform Training rules (seed document 003) -------------------------------
AI_PLATFORM_TPU_REGIONS = ("us-central1", "europe-west4")
AI_PLATFORM_TPU_RUNTIME_VERSIONS = (
    "1.15", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.11",
)  # fmt: skip
TPU_SCALE_TIERS = ("BASIC_TPU", "CUSTOM")
TPU_WORKER_TYPE = "cloud_tpu"
TPU_CORE_COUNTS: dict[str, tuple[int, ...]] = {
    "TPU_V2": (8,),
    "TPU_V3": (8,),
    "TPU_V2_POD": (32, 128, 256, 512),
    "TPU_V3_POD": (32, 128, 256),
}
LEGACY_MACHINE_TYPES = (
    "standard", "large_model", "complex_model_s", "complex_model_m", "complex_model_l",
    "standard_gpu", "complex_model_m_gpu", "complex_model_l_gpu", "standard_p100",
    "complex_model_m_p100", "standard_v100", "large_model_v100", "complex_model_m_v100",
    "complex_model_l_v100",
)  # fmt: skip
_COMPUTE_ENGINE_MACHINE = re.compile(r"^n1-(standard|highmem|highcpu)-\d+$")
PYTORCH_XLA_IMAGES = {
    "gcr.io/cloud-ml-public/training/pytorch-xla.1-11": "pytorch-1.11",
    "gcr.io/cloud-ml-public/training/pytorch-xla.1-10": "pytorch-1.10",
    "gcr.io/cloud-ml-public/training/pytorch-xla.1-9": "pytorch-1.9",
    "gcr.io/cloud-ml-public/training/pytorch-xla.1-7": "pytorch-1.7",
    "gcr.io/cloud-ml-public/training/pytorch-xla.1-6": "pytorch-1.6",
}
_PYTORCH_XLA_PREFIX = "gcr.io/cloud-ml-public/training/pytorch-xla"

# --- Cloud TPU VMs ------------------------------------------------------------------------------
# Slice sizes per generation (the number after the dash: TensorCores for v2-v4, chips for v5e and
# v6e). Larger than 8 means more than one host.
TPU_VM_SIZES: dict[str, tuple[int, ...]] = {
    "v2": (8, 32, 128, 256, 512),
    "v3": (8, 32, 64, 128, 256, 512, 1024, 2048),
    "v4": (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096),
    "v5litepod": (1, 4, 8, 16, 32, 64, 128, 256),
    "v6e": (1, 4, 8, 16, 32, 64, 128, 256),
}
# Base images for PyTorch and JAX (install the framework yourself), per generation.
TPU_VM_BASE_IMAGES = {
    "tpu-ubuntu2204-base": ("v2", "v3", "v4"),
    "v2-alpha-tpuv5-lite": ("v5litepod",),
    "v2-alpha-tpuv6e": ("v6e",),
}
# Zones that offer v2 and v3 (regions-zones page); "pod" means any size above 8.
TPU_VM_ZONES = {
    "v2-8": ("us-central1-b", "us-central1-c", "europe-west4-a", "asia-east1-c"),
    "v2-pod": ("us-central1-a", "europe-west4-a"),
    "v3-8": ("us-central1-a", "us-central1-b", "europe-west4-a"),
    "v3-pod": ("europe-west4-a",),
}
CAPACITY_FLAGS = {"on-demand": None, "spot": "--spot", "preemptible": "--preemptible"}
# The newest patch of each TensorFlow minor version with a TPU VM image, for legacy runtimes.
TPU_VM_TF_PATCHES = {"2.7": "2.7.4", "2.8": "2.8.4", "2.9": "2.9.3", "2.11": "2.11.1"}
_TF_RUNTIME = re.compile(
    r"^tpu-vm-tf-(?P<major>\d+)\.(?P<minor>\d+)\.(?P<patch>\d+)(?P<pod>-pod)?(?P<api>-pjrt|-se)?$"
)
_TPU_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
_ZONE = re.compile(r"^[a-z]+-[a-z]+\d+-[a-z]$")

# --- Vertex AI ----------------------------------------------------------------------------------
VERTEX_TPU_GENERATIONS = ("v2", "v3", "v5litepod", "v6e")
_VERTEX_HOST_PREFIX = {"v5litepod": "ct5lp-hightpu", "v6e": "ct6e-standard"}
_VERTEX_SINGLE_HOST = {1: ("1t", "1x1"), 4: ("4t", "2x2"), 8: ("8t", "2x4")}
_VERTEX_MULTI_HOST = {16: "4x4", 32: "4x8", 64: "8x8", 128: "8x16", 256: "16x16"}

# --- Placeholders the translation cannot fill in ------------------------------------------------
PREBUILT_IMAGE_PLACEHOLDER = "PREBUILT_TPU_TRAINING_IMAGE_URI"
PACKAGE_URI_PLACEHOLDER = "gs://BUCKET_NAME/trainer-0.1.tar.gz"
MODULE_PLACEHOLDER = "PYTHON_MODULE"
TORCH_XLA_IMAGE_PLACEHOLDER = "gcr.io/YOUR_PROJECT_ID/your-torch-xla-2-image:your-tag"


class JobSpecError(ValueError):
    """A job specification breaks a rule; the message says which field, why, and what is allowed.

    Attributes:
        problems: One line per broken rule.
    """

    def __init__(self, problems: str | Sequence[str], what: str = "job specification") -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            lines = "\n".join(f"- {problem}" for problem in self.problems)
            message = f"{what} has {len(self.problems)} problems:\n{lines}"
        super().__init__(message)


def _allowed(values: Iterable[Any]) -> str:
    return ", ".join(str(value) for value in values)


def _version(value: Any) -> str | None:
    """Reads a version written unquoted in YAML (2.11 is a float there) as a string."""
    return None if value is None else str(value)


# =================================================================================================
# Writing specs and commands
# =================================================================================================


def to_yaml(data: Any) -> str:
    """Writes a spec as YAML, keys in their given order; versions stay quoted strings."""
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True)


def to_json(data: Any) -> str:
    """Writes a spec as indented JSON (for tools that want JSON, such as REST requests)."""
    return json.dumps(data, indent=2) + "\n"


def format_command(argv: Sequence[str]) -> str:
    """Formats a command for a shell, one flag per line, as the Google Cloud guides print them.

    Args:
        argv: The command as a list of arguments.

    Returns:
        A bash command with `\\` line continuations; every argument is shell-quoted.
    """
    lines: list[list[str]] = [[]]
    for arg in argv:
        if arg.startswith("-") and lines[-1]:
            lines.append([])
        lines[-1].append(shlex.quote(arg))
    return " \\\n  ".join(" ".join(line) for line in lines)


# =================================================================================================
# Legacy AI Platform Training
# =================================================================================================

# The seed guide's examples, verbatim. The MNIST job was a command line, which gcloud turned
# into these trainingInput fields; the others are the guide's config.yaml files.
_SEED_CONFIGS = {
    "basic_tpu_mnist": """\
trainingInput:
  scaleTier: BASIC_TPU
  region: us-central1
  runtimeVersion: '2.11'
  pythonVersion: '3.7'
  pythonModule: official.vision.image_classification.mnist_main
  args:
  - --distribution_strategy=tpu
  - --data_dir=gs://tfds-data/datasets
  - --model_dir=gs://BUCKET_NAME/tpu_mnist_1_output
""",
    "legacy_master_tpu_v2": """\
trainingInput:
  scaleTier: CUSTOM
  masterType: complex_model_m
  workerType: cloud_tpu
  workerCount: 1
""",
    "compute_engine_tpu_v2": """\
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-highcpu-16
  workerType: cloud_tpu
  workerCount: 1
  workerConfig:
    acceleratorConfig:
      type: TPU_V2
      count: 8
""",
    "compute_engine_tpu_v3": """\
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-highcpu-16
  workerType: cloud_tpu
  workerCount: 1
  workerConfig:
    acceleratorConfig:
      type: TPU_V3
      count: 8
""",
    "pod_tpu_v2": """\
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-highcpu-16
  workerType: cloud_tpu
  workerCount: 1
  workerConfig:
    acceleratorConfig:
      type: TPU_V2_POD
      count: 128
""",
    "pod_tpu_v3": """\
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-highcpu-16
  workerType: cloud_tpu
  workerCount: 1
  workerConfig:
    acceleratorConfig:
      type: TPU_V3_POD
      count: 32
""",
    "pytorch_xla_1_11": """\
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-highcpu-16
  masterConfig:
    imageUri: gcr.io/cloud-ml-public/training/pytorch-xla.1-11
  workerType: cloud_tpu
  workerCount: 1
  workerConfig:
    imageUri: gcr.io/cloud-ml-public/training/pytorch-xla.1-11
    tpuTfVersion: pytorch-1.11
    acceleratorConfig:
      type: TPU_V2
      count: 8
""",
    "custom_container_tpu_v2": """\
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-highcpu-16
  masterConfig:
    imageUri: gcr.io/YOUR_PROJECT_ID/your-master-image-name:your-master-tag-name
  workerType: cloud_tpu
  workerCount: 1
  workerConfig:
    imageUri: gcr.io/YOUR_PROJECT_ID/your-worker-image-name:your-worker-tag-name
    tpuTfVersion: 2.11
    acceleratorConfig:
      type: TPU_V2
      count: 8
""",
    "custom_container_tpu_v3": """\
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-highcpu-16
  masterConfig:
    imageUri: gcr.io/YOUR_PROJECT_ID/your-master-image-name:your-master-tag-name
  workerType: cloud_tpu
  workerCount: 1
  workerConfig:
    imageUri: gcr.io/YOUR_PROJECT_ID/your-worker-image-name:your-worker-tag-name
    tpuTfVersion: 2.11
    acceleratorConfig:
      type: TPU_V3
      count: 8
""",
}

SEED_EXAMPLES = tuple(_SEED_CONFIGS)
"""Names of the seed guide's example configs, in the guide's order."""


def seed_example_yaml(name: str) -> str:
    """Returns one of the seed guide's example configs as the YAML text the guide prints.

    Args:
        name: One of `SEED_EXAMPLES`.

    Raises:
        JobSpecError: Unknown name.
    """
    if name not in _SEED_CONFIGS:
        raise JobSpecError(
            f"seed example {name!r} does not exist; allowed: {_allowed(SEED_EXAMPLES)}."
        )
    return _SEED_CONFIGS[name]


def seed_example(name: str) -> dict[str, Any]:
    """Returns one of the seed guide's example configs, parsed (a fresh copy each call)."""
    return yaml.safe_load(seed_example_yaml(name))


def _training_input(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """Accepts a whole config ({"trainingInput": {...}}) or just its trainingInput."""
    if not isinstance(config, Mapping):
        raise JobSpecError(f"config must be a mapping, got {type(config).__name__}.")
    inner = config.get("trainingInput", config)
    if not isinstance(inner, Mapping):
        raise JobSpecError(f"trainingInput must be a mapping, got {type(inner).__name__}.")
    return inner


def _accelerator_config(ti: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return (ti.get("workerConfig") or {}).get("acceleratorConfig")


def validate_training_input(config: Mapping[str, Any]) -> None:
    """Checks a legacy AI Platform Training TPU job config against every rule of the TPU guide.

    The rules: a TPU scale tier (`BASIC_TPU` or `CUSTOM`); a region with TPUs; a runtime version
    available for TPUs; no parameter servers; for `CUSTOM`, a master machine type, `workerType:
    cloud_tpu` and `workerCount: 1`; an `acceleratorConfig` only with a Compute Engine master and
    with an allowed core count (`TPU_V2`/`TPU_V3`: 8; `TPU_V2_POD`: 32, 128, 256, 512;
    `TPU_V3_POD`: 32, 128, 256); a container on the TPU worker needs `tpuTfVersion`: the runtime
    version holding its TensorFlow, or for a PyTorch/XLA image its matching `pytorch-X.Y`.

    Args:
        config: The parsed `config.yaml` (with or without the top-level `trainingInput` key).

    Raises:
        JobSpecError: Every broken rule, one line each.
    """
    ti = _training_input(config)
    problems: list[str] = []
    tier = ti.get("scaleTier")
    if tier not in TPU_SCALE_TIERS:
        problems.append(
            f"scaleTier: {tier!r} gives no Cloud TPU; allowed: {_allowed(TPU_SCALE_TIERS)}."
        )
    region = ti.get("region")
    if region is not None and region not in AI_PLATFORM_TPU_REGIONS:
        problems.append(
            f"region: {region!r} has no TPUs for AI Platform Training; "
            f"allowed: {_allowed(AI_PLATFORM_TPU_REGIONS)}."
        )
    runtime = _version(ti.get("runtimeVersion"))
    if runtime is not None and runtime not in AI_PLATFORM_TPU_RUNTIME_VERSIONS:
        problems.append(
            f"runtimeVersion: {runtime!r} is not available for TPUs; "
            f"allowed: {_allowed(AI_PLATFORM_TPU_RUNTIME_VERSIONS)}."
        )
    ps_count, ps_type = ti.get("parameterServerCount", 0), ti.get("parameterServerType")
    if ps_count not in (0, "0", None) or ps_type:
        bad = f"parameterServerCount: {ps_count!r}" + (
            f" with parameterServerType {ps_type!r}" if ps_type else ""
        )
        problems.append(
            f"{bad}, but a job with a Cloud TPU worker may have no parameter servers (the "
            "service rejects parameterServerCount > 0); allowed: 0, or leave both "
            "parameterServerCount and parameterServerType out."
        )
    if tier == "CUSTOM":
        problems += _custom_tier_problems(ti)
    problems += _container_problems(ti)
    if problems:
        raise JobSpecError(problems, what="trainingInput")


def _custom_tier_problems(ti: Mapping[str, Any]) -> list[str]:
    master, problems = ti.get("masterType"), []
    if master is None:
        problems.append(
            "masterType: missing; scaleTier CUSTOM needs a master machine type, e.g. "
            "n1-highcpu-16 (Compute Engine) or complex_model_m (legacy)."
        )
    elif master not in LEGACY_MACHINE_TYPES and not _COMPUTE_ENGINE_MACHINE.match(str(master)):
        problems.append(
            f"masterType: {master!r} is not a machine type; allowed: a Compute Engine n1 type "
            f"(n1-standard-N, n1-highmem-N, n1-highcpu-N) or a legacy type "
            f"({_allowed(LEGACY_MACHINE_TYPES)})."
        )
    if ti.get("workerType") != TPU_WORKER_TYPE:
        problems.append(
            f"workerType: {ti.get('workerType')!r} is not a TPU worker; allowed: {TPU_WORKER_TYPE}."
        )
    if ti.get("workerCount") not in (1, "1"):
        problems.append(
            f"workerCount: {ti.get('workerCount')!r}; a TPU job has exactly one TPU worker; "
            "allowed: 1."
        )
    accel = _accelerator_config(ti)
    if accel is not None:
        kind, count = accel.get("type"), accel.get("count")
        if kind not in TPU_CORE_COUNTS:
            problems.append(
                f"workerConfig.acceleratorConfig.type: {kind!r} is not a TPU type AI Platform "
                f"Training knows; allowed: {_allowed(TPU_CORE_COUNTS)}."
            )
        elif str(count) not in {str(allowed) for allowed in TPU_CORE_COUNTS[kind]}:
            problems.append(
                f"workerConfig.acceleratorConfig.count: {count!r} TPU cores is not allowed for "
                f"{kind}; allowed: {_allowed(TPU_CORE_COUNTS[kind])}."
            )
        if master in LEGACY_MACHINE_TYPES:
            problems.append(
                f"masterType: {master!r} is a legacy machine type, which gives TPU v2 only and "
                "takes no acceleratorConfig; allowed with acceleratorConfig: a Compute Engine "
                "machine type such as n1-highcpu-16."
            )
    return problems


def _container_problems(ti: Mapping[str, Any]) -> list[str]:
    worker = ti.get("workerConfig") or {}
    worker_image = worker.get("imageUri")
    master_image = (ti.get("masterConfig") or {}).get("imageUri")
    tpu_tf = _version(worker.get("tpuTfVersion"))
    torch_images = [
        i for i in (worker_image, master_image) if i and i.startswith(_PYTORCH_XLA_PREFIX)
    ]
    problems = []
    for image in dict.fromkeys(torch_images):
        if image not in PYTORCH_XLA_IMAGES:
            problems.append(
                f"imageUri: {image!r} is not a PyTorch/XLA image AI Platform Training supports "
                f"on TPUs; allowed: {_allowed(PYTORCH_XLA_IMAGES)}."
            )
    if torch_images and torch_images[0] in PYTORCH_XLA_IMAGES:
        expected = PYTORCH_XLA_IMAGES[torch_images[0]]
        if tpu_tf != expected:
            found = "missing" if tpu_tf is None else f"{tpu_tf!r}"
            problems.append(
                f"workerConfig.tpuTfVersion: {found}, but the PyTorch/XLA image "
                f"{torch_images[0]} needs the matching version; allowed: {expected}."
            )
    elif worker_image and not torch_images:
        if tpu_tf is None:
            problems.append(
                "workerConfig.tpuTfVersion: missing; a custom container on the TPU worker needs "
                "the runtime version holding the container's TensorFlow, so that the TPU is "
                f"prepared for it; allowed: {_allowed(AI_PLATFORM_TPU_RUNTIME_VERSIONS)}."
            )
        elif tpu_tf not in AI_PLATFORM_TPU_RUNTIME_VERSIONS:
            problems.append(
                f"workerConfig.tpuTfVersion: {tpu_tf!r} is not a runtime version available for "
                f"TPUs; allowed: {_allowed(AI_PLATFORM_TPU_RUNTIME_VERSIONS)}."
            )
    return problems


def _job_region(ti: Mapping[str, Any], region: str | None) -> str:
    region = ti.get("region") or region
    if region not in AI_PLATFORM_TPU_REGIONS:
        raise JobSpecError(
            f"region: {region!r}; pass the job's region (the config does not name one); "
            f"allowed: {_allowed(AI_PLATFORM_TPU_REGIONS)}."
        )
    return region


_FLAG_KEYS = ("region", "runtimeVersion", "pythonVersion", "pythonModule", "args")


def legacy_config_file(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The part of a legacy config that `gcloud ai-platform jobs submit training` takes as a file.

    Region, runtime and Python versions, module and arguments become flags; a config holding
    nothing else (such as the seed's BASIC_TPU MNIST job) needs no file.

    Returns:
        `{"trainingInput": {...}}` for `--config`, or None.
    """
    ti = _training_input(config)
    rest = {key: value for key, value in ti.items() if key not in _FLAG_KEYS}
    if set(rest) <= {"scaleTier"}:
        return None
    return {"trainingInput": copy.deepcopy(rest)}


def legacy_submit_command(
    job_id: str,
    config: Mapping[str, Any],
    *,
    package_path: str | None = None,
    staging_bucket: str | None = None,
    region: str | None = None,
    config_path: str = "config.yaml",
) -> list[str]:
    """Writes the `gcloud ai-platform jobs submit training` command for a legacy config.

    Args:
        job_id: The job's name.
        config: The legacy config; it is validated first.
        package_path: The local package directory gcloud uploads (`--package-path`).
        staging_bucket: Where gcloud uploads it (`--staging-bucket`).
        region: The job's region, when the config does not name one (gcloud needs `--region`).
        config_path: Where `legacy_config_file(config)` is saved, if it is needed.

    Returns:
        The command as a list of arguments (see `format_command`).

    Raises:
        JobSpecError: The config breaks a rule, or no region is known.
    """
    validate_training_input(config)
    ti = _training_input(config)
    region = _job_region(ti, region)
    argv = ["gcloud", "ai-platform", "jobs", "submit", "training", job_id]
    flags = (
        ("--staging-bucket", staging_bucket),
        ("--package-path", package_path),
        ("--module-name", ti.get("pythonModule")),
        ("--runtime-version", _version(ti.get("runtimeVersion"))),
        ("--python-version", _version(ti.get("pythonVersion"))),
    )
    argv += [f"{flag}={value}" for flag, value in flags if value is not None]
    needs_file = legacy_config_file(config) is not None
    if not needs_file:
        argv.append(f"--scale-tier={ti['scaleTier']}")
    argv.append(f"--region={region}")
    if needs_file:
        argv.append(f"--config={config_path}")
    if ti.get("args"):
        argv += ["--", *map(str, ti["args"])]
    return argv


# =================================================================================================
# Cloud TPU VMs
# =================================================================================================


@dataclass(frozen=True)
class TpuVmSpec:
    """A Cloud TPU VM to create.

    Attributes:
        name: The TPU's name: lowercase letters, digits and hyphens.
        zone: Where to create it, e.g. `us-central1-b`.
        accelerator_type: Generation and size, e.g. `v2-8`, `v3-32`, `v5litepod-8`, `v6e-8`.
        version: The TPU software version, e.g. `tpu-vm-tf-2.16.1-pjrt` or `tpu-ubuntu2204-base`.
        capacity: `on-demand`, `spot` or `preemptible`.
    """

    name: str
    zone: str
    accelerator_type: str
    version: str
    capacity: str = "on-demand"

    def to_dict(self) -> dict[str, str]:
        """The spec as plain data."""
        return asdict(self)


def parse_tpu_type(accelerator_type: str) -> tuple[str, int]:
    """Splits an accelerator type such as `v3-32` into its generation and size.

    Raises:
        JobSpecError: Not a known generation or size.
    """
    generation, _, size = str(accelerator_type).rpartition("-")
    if (
        generation not in TPU_VM_SIZES
        or not size.isdigit()
        or int(size) not in TPU_VM_SIZES[generation]
    ):
        known = "; ".join(f"{gen}-{{{_allowed(sizes)}}}" for gen, sizes in TPU_VM_SIZES.items())
        raise JobSpecError(
            f"accelerator_type: {accelerator_type!r} is not a TPU type; allowed: {known}."
        )
    return generation, int(size)


def _tf_runtime_problems(version: str, multi_host: bool) -> list[str]:
    match = _TF_RUNTIME.match(version)
    assert match is not None
    problems = []
    if multi_host and not match["pod"]:
        fixed = version.replace(match["api"] or "", "") + "-pod" + (match["api"] or "")
        problems.append(
            f"version: {version!r} is for a single host, but the slice has several hosts; "
            f"allowed: the -pod variant, {fixed!r}."
        )
    if not multi_host and match["pod"]:
        problems.append(
            f"version: {version!r} is for a multi-host slice, but this TPU has one host; "
            f"allowed: {version.replace('-pod', '')!r}."
        )
    tf_minor = (int(match["major"]), int(match["minor"]))
    if tf_minor >= (2, 15) and not match["api"]:
        problems.append(
            f"version: {version!r} lacks the runtime suffix TensorFlow 2.15 and later need; "
            f"allowed: {version}-pjrt or {version}-se."
        )
    if tf_minor < (2, 15) and match["api"]:
        problems.append(
            f"version: {version!r}: TensorFlow before 2.15 has only the stream executor runtime; "
            f"allowed: {version.replace(match['api'], '')!r}."
        )
    return problems


def validate_tpu_vm(spec: TpuVmSpec) -> None:
    """Checks a TPU VM spec: name, accelerator type, zone, software version and capacity.

    Zones are checked against the regions-zones table for v2 and v3 (what legacy jobs translate
    to); for newer generations only the zone's form is checked.

    Raises:
        JobSpecError: Every broken rule, one line each.
    """
    problems = []
    if not _TPU_NAME.match(spec.name):
        problems.append(
            f"name: {spec.name!r}; allowed: lowercase letters, digits and hyphens, starting with a "
            "letter, at most 63 characters."
        )
    if spec.capacity not in CAPACITY_FLAGS:
        problems.append(f"capacity: {spec.capacity!r}; allowed: {_allowed(CAPACITY_FLAGS)}.")
    try:
        generation, size = parse_tpu_type(spec.accelerator_type)
    except JobSpecError as error:
        raise JobSpecError([*problems, str(error)], what="TPU VM spec") from None
    if not _ZONE.match(spec.zone):
        problems.append(f"zone: {spec.zone!r} is not a zone name; allowed: e.g. us-central1-b.")
    elif generation in ("v2", "v3"):
        key = f"{generation}-{'8' if size == 8 else 'pod'}"
        if spec.zone not in TPU_VM_ZONES[key]:
            problems.append(
                f"zone: {spec.accelerator_type} is not offered in {spec.zone}; "
                f"allowed: {_allowed(TPU_VM_ZONES[key])}."
            )
    if spec.version in TPU_VM_BASE_IMAGES:
        if generation not in TPU_VM_BASE_IMAGES[spec.version]:
            right = [name for name, gens in TPU_VM_BASE_IMAGES.items() if generation in gens]
            problems.append(
                f"version: {spec.version!r} is not the base image for {generation}; "
                f"allowed: {_allowed(right)} or a tpu-vm-tf-x.y.z TensorFlow version."
            )
    elif _TF_RUNTIME.match(spec.version):
        problems += _tf_runtime_problems(spec.version, multi_host=size > 8)
    else:
        problems.append(
            f"version: {spec.version!r} is not a TPU software version; allowed: "
            f"{_allowed(TPU_VM_BASE_IMAGES)}, or tpu-vm-tf-x.y.z[-pod][-pjrt|-se] for TensorFlow."
        )
    if problems:
        raise JobSpecError(problems, what="TPU VM spec")


def tpu_vm_create_command(spec: TpuVmSpec) -> list[str]:
    """Writes the `gcloud compute tpus tpu-vm create` command for a spec (validated first).

    Raises:
        JobSpecError: The spec breaks a rule.
    """
    validate_tpu_vm(spec)
    argv = ["gcloud", "compute", "tpus", "tpu-vm", "create", spec.name]
    argv += [
        f"--zone={spec.zone}",
        f"--accelerator-type={spec.accelerator_type}",
        f"--version={spec.version}",
    ]
    flag = CAPACITY_FLAGS[spec.capacity]
    return argv + ([flag] if flag else [])


# =================================================================================================
# Vertex AI custom jobs
# =================================================================================================


def vertex_machine_spec(accelerator_type: str) -> dict[str, Any]:
    """The Vertex AI `machineSpec` for a TPU type.

    `v2-N` and `v3-N` become `cloud-tpu` with `acceleratorType` TPU_V2/TPU_V3 and N cores; v5e
    (`v5litepod-N`) becomes a `ct5lp-hightpu-1t/4t/8t` machine type with a `tpuTopology` (one
    host up to 8 chips, `-4t` hosts beyond). v6e (`v6e-N`) follows the same pattern with the
    `ct6e-standard-*` machine types; that mapping is inferred, not read from a page: re-check it.

    Raises:
        JobSpecError: Not a TPU type Vertex AI custom training takes.
    """
    generation, size = parse_tpu_type(accelerator_type)
    if generation in ("v2", "v3"):
        accelerator = f"TPU_{generation.upper()}"
        return {
            "machineType": "cloud-tpu",
            "acceleratorType": accelerator,
            "acceleratorCount": size,
        }
    if generation in _VERTEX_HOST_PREFIX:
        suffix, topology = _VERTEX_SINGLE_HOST.get(size, ("4t", _VERTEX_MULTI_HOST.get(size)))
        return {
            "machineType": f"{_VERTEX_HOST_PREFIX[generation]}-{suffix}",
            "tpuTopology": topology,
        }
    raise JobSpecError(
        f"accelerator_type: {accelerator_type!r}: Vertex AI custom training takes TPU "
        f"{_allowed(VERTEX_TPU_GENERATIONS)}; allowed: e.g. v2-8, v3-8, v5litepod-8, v6e-8."
    )


def _vertex_machine_specs() -> list[dict[str, Any]]:
    return [
        vertex_machine_spec(f"{gen}-{size}")
        for gen in VERTEX_TPU_GENERATIONS
        for size in TPU_VM_SIZES[gen]
    ]


def vertex_custom_job_spec(
    accelerator_type: str,
    *,
    image_uri: str | None = None,
    executor_image_uri: str | None = None,
    package_uris: Sequence[str] = (),
    python_module: str | None = None,
    args: Sequence[str] = (),
) -> dict[str, Any]:
    """Builds a Vertex AI `CustomJobSpec` with one TPU worker pool of one replica.

    Give either `image_uri` (a custom container) or `executor_image_uri`, `package_uris` and
    `python_module` (a Python package run in a prebuilt container). The result is what
    `gcloud ai custom-jobs create --config` reads.

    Raises:
        JobSpecError: A bad TPU type, or not exactly one way to run the code.
    """
    pool: dict[str, Any] = {"machineSpec": vertex_machine_spec(accelerator_type), "replicaCount": 1}
    package = executor_image_uri or package_uris or python_module
    if bool(image_uri) == bool(package):
        raise JobSpecError(
            "code: give either image_uri (a custom container) or executor_image_uri, "
            "package_uris and python_module (a Python package in a prebuilt container); "
            f"got image_uri={image_uri!r}, executor_image_uri={executor_image_uri!r}."
        )
    if image_uri:
        pool["containerSpec"] = {"imageUri": image_uri, **({"args": list(args)} if args else {})}
    else:
        pool["pythonPackageSpec"] = {
            "executorImageUri": executor_image_uri,
            "packageUris": list(package_uris),
            "pythonModule": python_module,
            **({"args": list(args)} if args else {}),
        }
    spec = {"workerPoolSpecs": [pool]}
    validate_vertex_job_spec(spec)
    return spec


def validate_vertex_job_spec(spec: Mapping[str, Any]) -> None:
    """Checks a Vertex AI `CustomJobSpec` that uses TPUs.

    With a TPU VM there must be one worker pool with one replica, a TPU `machineSpec` Vertex AI
    knows, and either a `containerSpec.imageUri` or a complete `pythonPackageSpec`.

    Raises:
        JobSpecError: Every broken rule, one line each.
    """
    pools = spec.get("workerPoolSpecs")
    if not isinstance(pools, list) or len(pools) != 1:
        count = len(pools) if isinstance(pools, list) else pools
        raise JobSpecError(
            f"workerPoolSpecs: {count!r} pools; a TPU job on Vertex AI has exactly one worker "
            "pool; allowed: 1."
        )
    pool, problems = pools[0], []
    if pool.get("replicaCount") not in (1, "1"):
        problems.append(
            f"workerPoolSpecs[0].replicaCount: {pool.get('replicaCount')!r}; a TPU worker pool "
            "has one replica (a bigger slice is a bigger accelerator type); allowed: 1."
        )
    machine = pool.get("machineSpec")
    if machine not in _vertex_machine_specs():
        problems.append(
            f"workerPoolSpecs[0].machineSpec: {machine!r} is not a TPU configuration of Vertex AI; "
            "allowed: machineType cloud-tpu with acceleratorType TPU_V2 (acceleratorCount 8, 32, "
            "128, 256, 512) or TPU_V3 (8, 32, 64, ... 2048), or machineType "
            "ct5lp-hightpu-1t/4t/8t or ct6e-standard-1t/4t/8t with tpuTopology 1x1, 2x2, 2x4, "
            "4x4, 4x8, 8x8, 8x16, 16x16 (as vertex_machine_spec returns)."
        )
    container, package = pool.get("containerSpec"), pool.get("pythonPackageSpec")
    if bool(container) == bool(package):
        problems.append(
            "workerPoolSpecs[0]: give exactly one of containerSpec and pythonPackageSpec."
        )
    elif container and not container.get("imageUri"):
        problems.append(
            "workerPoolSpecs[0].containerSpec.imageUri: missing; allowed: an image URI."
        )
    elif package:
        missing = [
            k for k in ("executorImageUri", "packageUris", "pythonModule") if not package.get(k)
        ]
        if missing:
            problems.append(
                f"workerPoolSpecs[0].pythonPackageSpec: missing {', '.join(missing)}; a Python "
                "package needs executorImageUri, packageUris and pythonModule."
            )
    if problems:
        raise JobSpecError(problems, what="CustomJobSpec")


def vertex_create_command(
    display_name: str, region: str, *, config_path: str = "vertex_job.yaml"
) -> list[str]:
    """Writes `gcloud ai custom-jobs create` for a `CustomJobSpec` saved at `config_path`."""
    return [
        "gcloud", "ai", "custom-jobs", "create",
        f"--region={region}", f"--display-name={display_name}", f"--config={config_path}",
    ]  # fmt: skip


# =================================================================================================
# Legacy -> current
# =================================================================================================


@dataclass
class Translation:
    """A legacy AI Platform TPU job written for today's services.

    Attributes:
        tpu_vm: The equivalent Cloud TPU VM.
        tpu_vm_command: Its `gcloud compute tpus tpu-vm create` command.
        vertex_spec: The equivalent Vertex AI `CustomJobSpec`.
        vertex_command: Its `gcloud ai custom-jobs create` command.
        notes: What changed, what has no equivalent, and which placeholders to fill in.
    """

    tpu_vm: TpuVmSpec
    tpu_vm_command: list[str]
    vertex_spec: dict[str, Any]
    vertex_command: list[str]
    notes: list[str] = field(default_factory=list)


def _legacy_tpu_type(ti: Mapping[str, Any]) -> str:
    accel = _accelerator_config(ti)
    if accel is None:
        return "v2-8"  # BASIC_TPU, or a legacy master with a cloud_tpu worker
    generation = "v3" if accel["type"].startswith("TPU_V3") else "v2"
    return f"{generation}-{int(accel['count'])}"


def _tpu_vm_zone(tpu_type: str, region: str, notes: list[str]) -> str:
    generation, size = parse_tpu_type(tpu_type)
    zones = TPU_VM_ZONES[f"{generation}-{'8' if size == 8 else 'pod'}"]
    in_region = [zone for zone in zones if zone.startswith(region + "-")]
    if in_region:
        return in_region[0]
    notes.append(
        f"{tpu_type} is not offered in {region}; the TPU VM goes to {zones[0]} instead, and its "
        "data should follow it."
    )
    return zones[0]


def _tpu_vm_version(
    ti: Mapping[str, Any], runtime_version: str | None, multi_host: bool, notes: list[str]
) -> str:
    worker = ti.get("workerConfig") or {}
    tf = (
        _version(worker.get("tpuTfVersion"))
        or _version(ti.get("runtimeVersion"))
        or runtime_version
    )
    if tf and tf.startswith("pytorch-"):
        notes.append(
            f"tpuTfVersion {tf} belongs to PyTorch/XLA 1.x on TPU nodes, which TPU VMs do not run: "
            "use tpu-ubuntu2204-base and install torch and torch_xla 2.x (PJRT runtime)."
        )
        return "tpu-ubuntu2204-base"
    if tf is None:
        notes.append(
            "The config names no TensorFlow version (it was given with --runtime-version); "
            "tpu-ubuntu2204-base is used: pass runtime_version='2.11' (or yours) to get the "
            "matching tpu-vm-tf image."
        )
        return "tpu-ubuntu2204-base"
    if tf not in TPU_VM_TF_PATCHES:
        notes.append(
            f"TensorFlow {tf} has no TPU VM software version (those start at 2.7): upgrade the "
            "code to TensorFlow 2.7 or later, or install TensorFlow and libtpu yourself on "
            "tpu-ubuntu2204-base, which is used here."
        )
        return "tpu-ubuntu2204-base"
    return f"tpu-vm-tf-{TPU_VM_TF_PATCHES[tf]}" + ("-pod" if multi_host else "")


def _vertex_code(ti: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
    master_image = (ti.get("masterConfig") or {}).get("imageUri")
    worker_image = (ti.get("workerConfig") or {}).get("imageUri")
    args = [str(arg) for arg in ti.get("args", ())]
    image = master_image or worker_image
    if image and image.startswith(_PYTORCH_XLA_PREFIX):
        notes.append(
            f"The PyTorch/XLA 1.x image {image} does not run on TPU VMs: build a container "
            f"with torch_xla 2.x and put its URI where {TORCH_XLA_IMAGE_PLACEHOLDER} stands."
        )
        return {"image_uri": TORCH_XLA_IMAGE_PLACEHOLDER, "args": args}
    if image:
        if master_image and worker_image and master_image != worker_image:
            notes.append(
                f"Vertex AI runs one container on the TPU VM: the master's image ({master_image}), "
                f"which holds the training code, is kept; the worker's image ({worker_image}) only "
                "served the TPU node and is dropped."
            )
        notes.append(
            "tpuTfVersion has no field on Vertex AI: the container itself must install the "
            "TensorFlow build for TPU VMs and its libtpu (see training-with-tpu-vm)."
        )
        return {"image_uri": image, "args": args}
    code = {
        "executor_image_uri": PREBUILT_IMAGE_PLACEHOLDER,
        "package_uris": ti.get("packageUris") or [PACKAGE_URI_PLACEHOLDER],
        "python_module": ti.get("pythonModule") or MODULE_PLACEHOLDER,
        "args": args,
    }
    notes.append(
        f"Fill in {PREBUILT_IMAGE_PLACEHOLDER}: a Vertex AI prebuilt training container with TPU "
        "support for your TensorFlow version."
        + (
            f" gcloud's --package-path upload becomes a package you build and copy to Cloud "
            f"Storage ({PACKAGE_URI_PLACEHOLDER})."
            if not ti.get("packageUris")
            else ""
        )
        + (
            f" {MODULE_PLACEHOLDER} is the module once given with --module-name."
            if not ti.get("pythonModule")
            else ""
        )
    )
    return code


def translate_legacy(
    config: Mapping[str, Any],
    *,
    job_id: str = "tpu-job",
    region: str | None = None,
    runtime_version: str | None = None,
) -> Translation:
    """Writes a legacy AI Platform TPU job for Cloud TPU VMs and for Vertex AI.

    Args:
        config: The legacy config; it is validated first.
        job_id: The legacy job name; underscores become hyphens for the TPU VM's name.
        region: The job's region, when the config does not say (it was a command-line flag).
        runtime_version: The TensorFlow runtime version, when the config does not say.

    Returns:
        The TPU VM and Vertex AI equivalents, and notes on what has no equivalent.

    Raises:
        JobSpecError: The config breaks a rule, or no region is known.
    """
    validate_training_input(config)
    ti = _training_input(config)
    region = _job_region(ti, region)
    if runtime_version is not None and runtime_version not in AI_PLATFORM_TPU_RUNTIME_VERSIONS:
        raise JobSpecError(
            f"runtime_version: {runtime_version!r} was not an AI Platform TPU runtime version; "
            f"allowed: {_allowed(AI_PLATFORM_TPU_RUNTIME_VERSIONS)}."
        )
    machine_fields = [
        f"{key} {ti[key]}" for key in ("scaleTier", "masterType", "workerType", "workerCount")
        if key in ti
    ]  # fmt: skip
    notes = [
        "No master VM and no separate TPU worker: on a TPU VM your code runs on the TPU's own "
        "host, whose CPUs and memory come with the TPU type; these settings have no "
        f"equivalent: {', '.join(machine_fields)}.",
        "Inside the job, connect with TPUClusterResolver(tpu='local') instead of "
        "TPUClusterResolver() with no arguments (which read the TPU_CONFIG AI Platform set).",
    ]
    if ti.get("pythonVersion"):
        notes.append(
            f"pythonVersion {ti['pythonVersion']} has no field: the TPU VM image (Ubuntu 22.04) "
            "or your container decides the Python version."
        )
    tpu_type = _legacy_tpu_type(ti)
    multi_host = parse_tpu_type(tpu_type)[1] > 8
    zone = _tpu_vm_zone(tpu_type, region, notes)
    version = _tpu_vm_version(ti, runtime_version, multi_host, notes)
    name = re.sub(r"[^a-z0-9-]", "-", job_id.lower()).strip("-") or "tpu-job"
    tpu_vm = TpuVmSpec(name=name, zone=zone, accelerator_type=tpu_type, version=version)
    vertex_spec = vertex_custom_job_spec(tpu_type, **_vertex_code(ti, notes))
    return Translation(
        tpu_vm=tpu_vm,
        tpu_vm_command=tpu_vm_create_command(tpu_vm),
        vertex_spec=vertex_spec,
        vertex_command=vertex_create_command(job_id, zone.rsplit("-", 1)[0]),
        notes=notes,
    )


# =================================================================================================
# Cost
# =================================================================================================


@lru_cache(maxsize=4)
def _load_prices(path: str) -> dict[str, Any]:
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def load_prices(path: str | Path | None = None) -> dict[str, Any]:
    """Reads the price table (default: the package's `tpu_prices.yaml`); a fresh copy each call."""
    return copy.deepcopy(_load_prices(str(path or PRICES_PATH)))


@dataclass(frozen=True)
class CostBreakdown:
    """What one run costs, split into the TPU and its host VM.

    Attributes:
        tpu_type: e.g. `v2-8`.
        region: e.g. `us-central1`.
        capacity: `on-demand` or `preemptible`.
        billed_seconds: The run's length, rounded up to whole seconds (billing is per second).
        tpu_hourly_usd: The TPU's price per hour.
        tpu_usd: The TPU's cost for the run.
        host_machine_type: The host VM billed apart, or None.
        host_hourly_usd: The host VM's price per hour (0 without a host).
        host_usd: The host VM's cost for the run.
        prices_as_of: The date of the price table.
    """

    tpu_type: str
    region: str
    capacity: str
    billed_seconds: int
    tpu_hourly_usd: float
    tpu_usd: float
    host_machine_type: str | None
    host_hourly_usd: float
    host_usd: float
    prices_as_of: str

    @property
    def total_usd(self) -> float:
        """TPU plus host VM."""
        return self.tpu_usd + self.host_usd

    def __str__(self) -> str:
        hours = f"{self.billed_seconds / 3600:g} h"
        lines = [
            f"{self.tpu_type} in {self.region}, {self.capacity}, billed {self.billed_seconds} s "
            f"(prices as of {self.prices_as_of}):",
            f"  {'TPU ' + self.tpu_type:<22} ${self.tpu_hourly_usd:.4f}/h x {hours} = "
            f"${self.tpu_usd:,.2f}",
        ]
        if self.host_machine_type or self.host_hourly_usd:
            host = f"host {self.host_machine_type or 'VM'}"
            lines.append(
                f"  {host:<22} ${self.host_hourly_usd:.4f}/h x {hours} = ${self.host_usd:,.2f}"
            )
        lines.append(f"  {'total':<22} ${self.total_usd:,.2f}")
        return "\n".join(lines)


def _hourly(table: Mapping[str, Any], kind: str, name: str, region: str, capacity: str) -> float:
    if name not in table:
        raise JobSpecError(
            f"{kind}: {name!r} has no price in tpu_prices.yaml; priced: {_allowed(table)}."
        )
    if region not in table[name]:
        raise JobSpecError(
            f"region: {region!r} has no price for {kind} {name}; priced: {_allowed(table[name])}."
        )
    return float(table[name][region][capacity.replace("-", "_")])


def estimate_cost(
    tpu_type: str,
    region: str,
    hours: float,
    *,
    preemptible: bool = False,
    host_machine_type: str | None = None,
    host_hourly_usd: float | None = None,
    prices: Mapping[str, Any] | None = None,
) -> CostBreakdown:
    """Estimates what a run costs: the TPU plus, billed apart, its host VM, per second.

    Args:
        tpu_type: A priced TPU type, e.g. `v2-8`.
        region: A priced region, e.g. `us-central1`.
        hours: The run's length; billed in whole seconds, rounded up.
        preemptible: Price the TPU (and the host VM) as preemptible instead of on-demand.
        host_machine_type: A host VM priced in the table, e.g. `n1-standard-2`.
        host_hourly_usd: The host VM's hourly price, for a machine or region the table lacks.
        prices: A price table (default: `load_prices()`).

    Returns:
        The breakdown.

    Raises:
        JobSpecError: A negative or non-numeric duration, or a type or region without a price.
    """
    if isinstance(hours, bool) or not isinstance(hours, int | float) or not hours >= 0:
        raise JobSpecError(f"hours: {hours!r}; allowed: a number >= 0.")
    prices = prices if prices is not None else _load_prices(str(PRICES_PATH))
    capacity = "preemptible" if preemptible else "on-demand"
    tpu_hourly = _hourly(prices["tpu"], "tpu_type", tpu_type, region, capacity)
    if host_hourly_usd is not None:
        host_hourly = float(host_hourly_usd)
    elif host_machine_type is not None:
        try:
            host_hourly = _hourly(
                prices["host_vm"], "host_machine_type", host_machine_type, region, capacity
            )  # noqa: E501
        except JobSpecError as error:
            raise JobSpecError(
                f"{error} Or pass host_hourly_usd= from the Compute Engine pricing page."
            ) from None
    else:
        host_hourly = 0.0
    billed = math.ceil(round(hours * 3600, 6))
    return CostBreakdown(
        tpu_type=tpu_type,
        region=region,
        capacity=capacity,
        billed_seconds=billed,
        tpu_hourly_usd=tpu_hourly,
        tpu_usd=tpu_hourly * billed / 3600,
        host_machine_type=host_machine_type,
        host_hourly_usd=host_hourly,
        host_usd=host_hourly * billed / 3600,
        prices_as_of=str(prices.get("as_of", "unknown")),
    )


DEFAULT_COST_OPTIONS = (
    ("v2-8", "us-central1", False),
    ("v2-8", "us-central1", True),
    ("v3-8", "us-central1", False),
    ("v3-8", "us-central1", True),
)


def plot_cost_comparison(
    hours: float,
    options: Sequence[tuple[str, str, bool]] = DEFAULT_COST_OPTIONS,
    *,
    host_machine_type: str | None = "n1-standard-2",
    prices: Mapping[str, Any] | None = None,
    ax: Any = None,
) -> Any:
    """Draws what a run of `hours` costs in each option, TPU and host VM stacked.

    Args:
        hours: The run's length.
        options: `(tpu_type, region, preemptible)` for each bar.
        host_machine_type: The host VM added to every bar, or None for the TPU alone.
        prices: A price table (default: `load_prices()`).
        ax: A matplotlib Axes to draw on (default: a new figure).

    Returns:
        The matplotlib Figure.

    Raises:
        JobSpecError: An option without a price.
    """
    import matplotlib.pyplot as plt

    costs = [
        estimate_cost(
            t, r, hours, preemptible=p, host_machine_type=host_machine_type, prices=prices
        )
        for t, r, p in options
    ]
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.7 * len(costs) + 1.6))
    rows = range(len(costs))
    labels = [f"{c.tpu_type}, {c.region}\n{c.capacity}" for c in costs]
    ax.barh(rows, [c.tpu_usd for c in costs], color="#4285f4", label="Cloud TPU")
    if host_machine_type:
        ax.barh(rows, [c.host_usd for c in costs], left=[c.tpu_usd for c in costs],
                color="#fbbc04", label=f"host VM ({host_machine_type}), billed apart")  # fmt: skip
    top = max(c.total_usd for c in costs) or 1.0
    for row, cost in zip(rows, costs, strict=True):
        label = f"${cost.total_usd:,.2f}"
        if cost.host_usd:
            label += f"  (host VM ${cost.host_usd:,.2f})"
        ax.text(cost.total_usd + top * 0.01, row, label, va="center", parse_math=False)
    ax.set_yticks(list(rows), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, top * 1.4)
    ax.set_xlabel("US dollars")
    ax.set_title(f"A {hours:g}-hour training run, billed per second")
    ax.legend(loc="lower right", fontsize="small")
    ax.figure.text(
        0.01, 0.01, f"Prices: tpuhelpers/tpu_prices.yaml, as of {costs[0].prices_as_of} "
        "(TPU Node era list prices)", fontsize="x-small", color="gray",
    )  # fmt: skip
    ax.figure.tight_layout(rect=(0, 0.04, 1, 1))
    return ax.figure


__all__ = [
    "AI_PLATFORM_TPU_REGIONS",
    "AI_PLATFORM_TPU_RUNTIME_VERSIONS",
    "PYTORCH_XLA_IMAGES",
    "SEED_EXAMPLES",
    "TPU_CORE_COUNTS",
    "CostBreakdown",
    "JobSpecError",
    "TpuVmSpec",
    "Translation",
    "estimate_cost",
    "format_command",
    "legacy_config_file",
    "legacy_submit_command",
    "load_prices",
    "parse_tpu_type",
    "plot_cost_comparison",
    "seed_example",
    "seed_example_yaml",
    "to_json",
    "to_yaml",
    "tpu_vm_create_command",
    "translate_legacy",
    "validate_training_input",
    "validate_tpu_vm",
    "validate_vertex_job_spec",
    "vertex_create_command",
    "vertex_custom_job_spec",
    "vertex_machine_spec",
]
