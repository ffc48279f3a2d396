"""Tests for tpuhelpers.cloud_jobs: legacy AI Platform configs, TPU VMs, Vertex AI, costs."""

from __future__ import annotations

import copy
import json
import re

import matplotlib
import pytest
import yaml

from tpuhelpers import cloud_jobs as cj
from tpuhelpers.cloud_jobs import JobSpecError

matplotlib.use("Agg")


def seed(name: str) -> dict:
    return cj.seed_example(name)


def broken(name: str, **changes) -> dict:
    """A seed example with some trainingInput fields changed (None removes a field)."""
    config = seed(name)
    ti = config["trainingInput"]
    for key, value in changes.items():
        if value is None:
            ti.pop(key, None)
        else:
            ti[key] = value
    return config


def rejects(config, *patterns: str) -> str:
    with pytest.raises(JobSpecError) as info:
        cj.validate_training_input(config)
    for pattern in patterns:
        assert re.search(pattern, str(info.value)), str(info.value)
    return str(info.value)


# --- Every example of the seed guide --------------------------------------------------------------


def test_the_seed_guide_has_nine_examples():
    assert cj.SEED_EXAMPLES == (
        "basic_tpu_mnist",
        "legacy_master_tpu_v2",
        "compute_engine_tpu_v2",
        "compute_engine_tpu_v3",
        "pod_tpu_v2",
        "pod_tpu_v3",
        "pytorch_xla_1_11",
        "custom_container_tpu_v2",
        "custom_container_tpu_v3",
    )


@pytest.mark.parametrize("name", cj.SEED_EXAMPLES)
def test_every_seed_example_validates(name):
    config = seed(name)
    cj.validate_training_input(config)
    cj.validate_training_input(config["trainingInput"])  # the inner mapping alone works too


def test_seed_custom_container_keeps_the_guides_unquoted_version():
    ti = seed("custom_container_tpu_v2")["trainingInput"]
    assert ti["workerConfig"]["tpuTfVersion"] == 2.11  # a float in YAML, read as "2.11"


def test_unknown_seed_example_names_the_allowed_ones():
    with pytest.raises(JobSpecError, match="seed example 'mnist' does not exist; allowed: basic"):
        cj.seed_example("mnist")


def test_mnist_command_reproduces_the_seed_guide():
    argv = cj.legacy_submit_command(
        "tpu_mnist_1",
        seed("basic_tpu_mnist"),
        package_path="official",
        staging_bucket="gs://BUCKET_NAME",
    )
    assert cj.format_command(argv) == (
        "gcloud ai-platform jobs submit training tpu_mnist_1 \\\n"
        "  --staging-bucket=gs://BUCKET_NAME \\\n"
        "  --package-path=official \\\n"
        "  --module-name=official.vision.image_classification.mnist_main \\\n"
        "  --runtime-version=2.11 \\\n"
        "  --python-version=3.7 \\\n"
        "  --scale-tier=BASIC_TPU \\\n"
        "  --region=us-central1 \\\n"
        "  -- \\\n"
        "  --distribution_strategy=tpu \\\n"
        "  --data_dir=gs://tfds-data/datasets \\\n"
        "  --model_dir=gs://BUCKET_NAME/tpu_mnist_1_output"
    )
    assert cj.legacy_config_file(seed("basic_tpu_mnist")) is None


@pytest.mark.parametrize("name", cj.SEED_EXAMPLES[1:])
def test_config_file_examples_go_through_config(name):
    argv = cj.legacy_submit_command("job", seed(name), region="europe-west4")
    assert argv == [
        "gcloud", "ai-platform", "jobs", "submit", "training", "job",
        "--region=europe-west4", "--config=config.yaml",
    ]  # fmt: skip
    assert cj.legacy_config_file(seed(name)) == seed(name)  # the guide's file, unchanged


def test_submit_command_needs_a_region():
    with pytest.raises(JobSpecError, match=r"region: None; pass the job's region.*us-central1"):
        cj.legacy_submit_command("job", seed("compute_engine_tpu_v2"))


# --- One test per legacy rule -------------------------------------------------------------------


def test_rule_scale_tier_must_give_a_tpu():
    rejects(
        broken("basic_tpu_mnist", scaleTier="BASIC_GPU"),
        r"scaleTier: 'BASIC_GPU' gives no Cloud TPU; allowed: BASIC_TPU, CUSTOM\.",
    )


def test_rule_region_must_have_tpus():
    rejects(
        broken("basic_tpu_mnist", region="asia-east1"),
        r"region: 'asia-east1' has no TPUs .*; allowed: us-central1, europe-west4\.",
    )


def test_rule_runtime_version_must_be_available_for_tpus():
    rejects(
        broken("basic_tpu_mnist", runtimeVersion="2.10"),
        r"runtimeVersion: '2.10' is not available for TPUs; allowed: 1.15, 2.1, .*2.9, 2.11\.",
    )


def test_rule_no_parameter_server_next_to_a_tpu_worker():
    message = rejects(
        broken(
            "compute_engine_tpu_v2", parameterServerType="n1-standard-4", parameterServerCount=2
        ),
        r"parameterServerCount: 2 with parameterServerType 'n1-standard-4', but a job with a "
        r"Cloud TPU worker may have no parameter servers",
        r"rejects parameterServerCount > 0\); allowed: 0, or leave both",
    )
    assert "\n" not in message  # one problem, one line


def test_rule_custom_tier_needs_a_master_type():
    rejects(
        broken("compute_engine_tpu_v2", masterType=None),
        r"masterType: missing; scaleTier CUSTOM needs a master machine type",
    )


def test_rule_master_type_must_be_a_machine_type():
    rejects(
        broken("compute_engine_tpu_v2", masterType="n1-mega-16"),
        r"masterType: 'n1-mega-16' is not a machine type; allowed: a Compute Engine n1 type",
    )


def test_rule_worker_type_must_be_cloud_tpu():
    rejects(
        broken("compute_engine_tpu_v2", workerType="n1-standard-8"),
        r"workerType: 'n1-standard-8' is not a TPU worker; allowed: cloud_tpu\.",
    )


def test_rule_exactly_one_tpu_worker():
    rejects(
        broken("legacy_master_tpu_v2", workerCount=2),
        r"workerCount: 2; a TPU job has exactly one TPU worker; allowed: 1\.",
    )


def test_rule_unknown_tpu_type():
    config = seed("compute_engine_tpu_v2")
    config["trainingInput"]["workerConfig"]["acceleratorConfig"]["type"] = "TPU_V4"
    rejects(
        config,
        r"acceleratorConfig.type: 'TPU_V4' is not a TPU type .*; "
        r"allowed: TPU_V2, TPU_V3, TPU_V2_POD, TPU_V3_POD\.",
    )


@pytest.mark.parametrize(
    ("kind", "count", "allowed"),
    [
        ("TPU_V2", 16, "8"),
        ("TPU_V3", 32, "8"),
        ("TPU_V2_POD", 64, "32, 128, 256, 512"),
        ("TPU_V3_POD", 512, "32, 128, 256"),
    ],
)
def test_rule_core_count_must_be_allowed(kind, count, allowed):
    config = seed("compute_engine_tpu_v2")
    config["trainingInput"]["workerConfig"]["acceleratorConfig"] = {"type": kind, "count": count}
    rejects(
        config,
        rf"acceleratorConfig.count: {count} TPU cores is not allowed for {kind}; "
        rf"allowed: {allowed}\.",
    )


def test_rule_accelerator_config_needs_a_compute_engine_master():
    rejects(
        broken("compute_engine_tpu_v3", masterType="complex_model_m"),
        r"masterType: 'complex_model_m' is a legacy machine type, which gives TPU v2 only and "
        r"takes no acceleratorConfig",
    )


def test_rule_pytorch_image_needs_its_tpu_tf_version():
    config = seed("pytorch_xla_1_11")
    del config["trainingInput"]["workerConfig"]["tpuTfVersion"]
    rejects(
        config,
        r"workerConfig.tpuTfVersion: missing, but the PyTorch/XLA image "
        r"gcr.io/cloud-ml-public/training/pytorch-xla.1-11 needs the matching version; "
        r"allowed: pytorch-1.11\.",
    )


def test_rule_pytorch_image_and_version_must_match():
    config = seed("pytorch_xla_1_11")
    config["trainingInput"]["workerConfig"]["tpuTfVersion"] = "pytorch-1.9"
    rejects(config, r"tpuTfVersion: 'pytorch-1.9', but .*pytorch-xla.1-11 .*allowed: pytorch-1.11")


def test_rule_unknown_pytorch_image():
    config = seed("pytorch_xla_1_11")
    image = "gcr.io/cloud-ml-public/training/pytorch-xla.1-8"
    config["trainingInput"]["masterConfig"]["imageUri"] = image
    config["trainingInput"]["workerConfig"]["imageUri"] = image
    rejects(
        config, rf"imageUri: '{re.escape(image)}' is not a PyTorch/XLA image .*pytorch-xla.1-11"
    )


def test_rule_custom_container_needs_tpu_tf_version():
    config = seed("custom_container_tpu_v2")
    del config["trainingInput"]["workerConfig"]["tpuTfVersion"]
    rejects(
        config,
        r"workerConfig.tpuTfVersion: missing; a custom container on the TPU worker needs the "
        r"runtime version .*; allowed: 1.15, .*2.11\.",
    )


def test_rule_custom_container_tpu_tf_version_must_be_a_tpu_runtime():
    config = seed("custom_container_tpu_v3")
    config["trainingInput"]["workerConfig"]["tpuTfVersion"] = "2.12"
    rejects(config, r"tpuTfVersion: '2.12' is not a runtime version available for TPUs")


def test_every_broken_rule_is_reported_at_once():
    config = broken("compute_engine_tpu_v2", region="us-east1", workerCount=4)
    message = rejects(config, r"^trainingInput has 2 problems:\n- region: .*\n- workerCount: 4")
    with pytest.raises(JobSpecError) as info:
        cj.validate_training_input(config)
    assert len(info.value.problems) == 2
    assert isinstance(info.value, ValueError) and message


def test_config_must_be_a_mapping():
    with pytest.raises(JobSpecError, match="config must be a mapping, got list"):
        cj.validate_training_input([])
    with pytest.raises(JobSpecError, match="trainingInput must be a mapping, got str"):
        cj.validate_training_input({"trainingInput": "CUSTOM"})


# --- Cloud TPU VMs --------------------------------------------------------------------------------


def vm(**changes) -> cj.TpuVmSpec:
    values = dict(name="demo-tpu", zone="europe-west4-a", accelerator_type="v3-8")
    values.update(version="tpu-vm-tf-2.16.1-pjrt")
    values.update(changes)
    return cj.TpuVmSpec(**values)


def test_tpu_vm_command_matches_the_preemptible_guide():
    spec = vm(version="tpu-vm-tf-2.17.1-pjrt", capacity="preemptible")
    assert cj.tpu_vm_create_command(spec) == [
        "gcloud", "compute", "tpus", "tpu-vm", "create", "demo-tpu", "--zone=europe-west4-a",
        "--accelerator-type=v3-8", "--version=tpu-vm-tf-2.17.1-pjrt", "--preemptible",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "spec",
    [
        vm(accelerator_type="v5litepod-8", zone="us-west4-a", version="v2-alpha-tpuv5-lite"),
        vm(accelerator_type="v6e-8", zone="us-east5-b", version="v2-alpha-tpuv6e", capacity="spot"),
        vm(accelerator_type="v3-32", version="tpu-vm-tf-2.16.1-pod-pjrt"),
        vm(accelerator_type="v2-8", zone="us-central1-b", version="tpu-ubuntu2204-base"),
        vm(accelerator_type="v4-32", zone="us-central2-b", version="tpu-vm-tf-2.14.1-pod"),
    ],
)
def test_current_tpu_vm_specs_validate(spec):
    cj.validate_tpu_vm(spec)
    assert cj.tpu_vm_create_command(spec)[-1 if spec.capacity == "on-demand" else -2].startswith(
        "--version="
    )


def test_spot_adds_the_spot_flag():
    assert cj.tpu_vm_create_command(vm(capacity="spot"))[-1] == "--spot"


@pytest.mark.parametrize(
    ("changes", "pattern"),
    [
        ({"name": "My_TPU"}, r"name: 'My_TPU'; allowed: lowercase letters, digits and hyphens"),
        ({"capacity": "cheap"}, r"capacity: 'cheap'; allowed: on-demand, spot, preemptible\."),
        ({"accelerator_type": "v3-16"}, r"accelerator_type: 'v3-16' is not a TPU type; allowed:"),
        ({"accelerator_type": "v9-8"}, r"allowed: v2-\{8, 32, 128, 256, 512\}; v3-\{8, 32,"),
        ({"zone": "europe-west4"}, r"zone: 'europe-west4' is not a zone name"),
        (
            {
                "accelerator_type": "v3-32",
                "zone": "us-central1-a",
                "version": "tpu-ubuntu2204-base",
            },
            r"zone: v3-32 is not offered in us-central1-a; allowed: europe-west4-a\.",
        ),
        (
            {"version": "v2-alpha-tpuv6e"},
            r"version: 'v2-alpha-tpuv6e' is not the base image for v3; "
            r"allowed: tpu-ubuntu2204-base or a tpu-vm-tf",
        ),
        (
            {"accelerator_type": "v3-32"},
            r"version: 'tpu-vm-tf-2.16.1-pjrt' is for a single host, but the slice has several "
            r"hosts; allowed: the -pod variant, 'tpu-vm-tf-2.16.1-pod-pjrt'\.",
        ),
        (
            {"version": "tpu-vm-tf-2.16.1-pod-pjrt"},
            r"is for a multi-host slice, but this TPU has one host; "
            r"allowed: 'tpu-vm-tf-2.16.1-pjrt'\.",
        ),
        (
            {"version": "tpu-vm-tf-2.16.1"},
            r"lacks the runtime suffix .*; allowed: tpu-vm-tf-2.16.1-pjrt or tpu-vm-tf-2.16.1-se\.",
        ),
        (
            {"version": "tpu-vm-tf-2.11.1-pjrt"},
            r"TensorFlow before 2.15 has only the stream executor .*allowed: 'tpu-vm-tf-2.11.1'",
        ),
        ({"version": "2.11"}, r"version: '2.11' is not a TPU software version; allowed:"),
    ],
)
def test_tpu_vm_rules(changes, pattern):
    with pytest.raises(JobSpecError, match=pattern):
        cj.tpu_vm_create_command(vm(**changes))


def test_parse_tpu_type():
    assert cj.parse_tpu_type("v5litepod-16") == ("v5litepod", 16)


# --- Vertex AI ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tpu_type", "machine_spec"),
    [
        ("v2-8", {"machineType": "cloud-tpu", "acceleratorType": "TPU_V2", "acceleratorCount": 8}),
        (
            "v3-32",
            {"machineType": "cloud-tpu", "acceleratorType": "TPU_V3", "acceleratorCount": 32},
        ),
        ("v5litepod-1", {"machineType": "ct5lp-hightpu-1t", "tpuTopology": "1x1"}),
        ("v5litepod-4", {"machineType": "ct5lp-hightpu-4t", "tpuTopology": "2x2"}),
        ("v5litepod-8", {"machineType": "ct5lp-hightpu-8t", "tpuTopology": "2x4"}),
        ("v5litepod-32", {"machineType": "ct5lp-hightpu-4t", "tpuTopology": "4x8"}),
        ("v6e-8", {"machineType": "ct6e-standard-8t", "tpuTopology": "2x4"}),
    ],
)
def test_vertex_machine_specs(tpu_type, machine_spec):
    assert cj.vertex_machine_spec(tpu_type) == machine_spec


def test_vertex_container_job_and_command():
    spec = cj.vertex_custom_job_spec("v5litepod-8", image_uri="gcr.io/p/train:1", args=["--e=2"])
    assert spec == {
        "workerPoolSpecs": [
            {
                "machineSpec": {"machineType": "ct5lp-hightpu-8t", "tpuTopology": "2x4"},
                "replicaCount": 1,
                "containerSpec": {"imageUri": "gcr.io/p/train:1", "args": ["--e=2"]},
            }
        ]
    }
    assert cj.vertex_create_command("my job", "us-west4") == [
        "gcloud", "ai", "custom-jobs", "create",
        "--region=us-west4", "--display-name=my job", "--config=vertex_job.yaml",
    ]  # fmt: skip
    assert "'--display-name=my job'" in cj.format_command(cj.vertex_create_command("my job", "x"))


def test_vertex_rejects_a_generation_it_does_not_take():
    with pytest.raises(JobSpecError, match=r"'v4-8': Vertex AI custom training takes TPU v2, v3"):
        cj.vertex_machine_spec("v4-8")


def test_vertex_needs_exactly_one_way_to_run_code():
    with pytest.raises(JobSpecError, match=r"code: give either image_uri .* or executor_image_uri"):
        cj.vertex_custom_job_spec("v2-8", image_uri="i", python_module="m")
    with pytest.raises(JobSpecError, match=r"code: give either image_uri"):
        cj.vertex_custom_job_spec("v2-8")


def good_vertex_spec() -> dict:
    return cj.vertex_custom_job_spec(
        "v3-8", executor_image_uri="img", package_uris=["gs://b/p.tar.gz"], python_module="t.task"
    )


@pytest.mark.parametrize(
    ("mutate", "pattern"),
    [
        (
            lambda s: s["workerPoolSpecs"].append(copy.deepcopy(s["workerPoolSpecs"][0])),
            r"workerPoolSpecs: 2 pools; a TPU job on Vertex AI has exactly one worker pool",
        ),
        (
            lambda s: s["workerPoolSpecs"][0].update(replicaCount=4),
            r"replicaCount: 4; a TPU worker pool has one replica .*allowed: 1\.",
        ),
        (
            lambda s: s["workerPoolSpecs"][0]["machineSpec"].update(acceleratorCount=16),
            r"machineSpec: .*'acceleratorCount': 16.* is not a TPU configuration of Vertex AI",
        ),
        (
            lambda s: s["workerPoolSpecs"][0].update(containerSpec={"imageUri": "i"}),
            r"give exactly one of containerSpec and pythonPackageSpec",
        ),
        (
            lambda s: s["workerPoolSpecs"][0]["pythonPackageSpec"].pop("pythonModule"),
            r"pythonPackageSpec: missing pythonModule",
        ),
        (
            lambda s: s["workerPoolSpecs"][0].update(
                pythonPackageSpec=None, containerSpec={"args": ["--x"]}
            ),
            r"containerSpec.imageUri: missing; allowed: an image URI\.",
        ),
        (lambda s: s.pop("workerPoolSpecs"), r"workerPoolSpecs: None pools"),
    ],
)
def test_vertex_rules(mutate, pattern):
    spec = good_vertex_spec()
    mutate(spec)
    with pytest.raises(JobSpecError, match=pattern):
        cj.validate_vertex_job_spec(spec)


# --- Legacy -> current, on every seed example -----------------------------------------------------

EXPECTED_TRANSLATIONS = {
    # name: (accelerator type, zone, TPU VM version, kind of code on Vertex AI)
    "basic_tpu_mnist": ("v2-8", "us-central1-b", "tpu-vm-tf-2.11.1", "pythonPackageSpec"),
    "legacy_master_tpu_v2": ("v2-8", "us-central1-b", "tpu-vm-tf-2.11.1", "pythonPackageSpec"),
    "compute_engine_tpu_v2": ("v2-8", "us-central1-b", "tpu-vm-tf-2.11.1", "pythonPackageSpec"),
    "compute_engine_tpu_v3": ("v3-8", "us-central1-a", "tpu-vm-tf-2.11.1", "pythonPackageSpec"),
    "pod_tpu_v2": ("v2-128", "us-central1-a", "tpu-vm-tf-2.11.1-pod", "pythonPackageSpec"),
    "pod_tpu_v3": ("v3-32", "europe-west4-a", "tpu-vm-tf-2.11.1-pod", "pythonPackageSpec"),
    "pytorch_xla_1_11": ("v2-8", "us-central1-b", "tpu-ubuntu2204-base", "containerSpec"),
    "custom_container_tpu_v2": ("v2-8", "us-central1-b", "tpu-vm-tf-2.11.1", "containerSpec"),
    "custom_container_tpu_v3": ("v3-8", "us-central1-a", "tpu-vm-tf-2.11.1", "containerSpec"),
}


@pytest.mark.parametrize("name", cj.SEED_EXAMPLES)
def test_translation_of_every_seed_example(name):
    tpu_type, zone, version, code = EXPECTED_TRANSLATIONS[name]
    result = cj.translate_legacy(
        seed(name), job_id="tpu_mnist_1", region="us-central1", runtime_version="2.11"
    )
    assert result.tpu_vm == cj.TpuVmSpec("tpu-mnist-1", zone, tpu_type, version)
    assert result.tpu_vm_command == cj.tpu_vm_create_command(result.tpu_vm)
    assert result.tpu_vm_command[6:9] == [
        f"--zone={zone}",
        f"--accelerator-type={tpu_type}",
        f"--version={version}",
    ]
    pool = result.vertex_spec["workerPoolSpecs"][0]
    assert pool["machineSpec"] == cj.vertex_machine_spec(tpu_type)
    assert code in pool
    cj.validate_vertex_job_spec(result.vertex_spec)
    assert result.vertex_command[4] == f"--region={zone.rsplit('-', 1)[0]}"
    assert any("No master VM" in note for note in result.notes)
    assert any("TPUClusterResolver(tpu='local')" in note for note in result.notes)
    assert yaml.safe_load(cj.to_yaml(result.vertex_spec)) == result.vertex_spec


def test_translation_moves_a_v3_pod_to_the_only_zone_that_has_it():
    result = cj.translate_legacy(seed("pod_tpu_v3"), region="us-central1")
    assert any(
        "v3-32 is not offered in us-central1; the TPU VM goes to europe-west4-a" in note
        for note in result.notes
    )


def test_translation_keeps_the_master_container_and_says_why():
    result = cj.translate_legacy(seed("custom_container_tpu_v2"), region="europe-west4")
    pool = result.vertex_spec["workerPoolSpecs"][0]
    assert pool["containerSpec"]["imageUri"].endswith("your-master-image-name:your-master-tag-name")
    assert any("the worker's image" in note and "is dropped" in note for note in result.notes)
    assert any("tpuTfVersion has no field on Vertex AI" in note for note in result.notes)
    assert result.tpu_vm.zone == "europe-west4-a"


def test_translation_of_pytorch_says_torch_xla_1_does_not_run_on_tpu_vms():
    result = cj.translate_legacy(seed("pytorch_xla_1_11"), region="us-central1")
    pool = result.vertex_spec["workerPoolSpecs"][0]
    assert pool["containerSpec"]["imageUri"] == cj.TORCH_XLA_IMAGE_PLACEHOLDER
    assert any("PyTorch/XLA 1.x" in note and "torch_xla 2.x" in note for note in result.notes)


def test_translation_without_a_tensorflow_version_uses_the_base_image_and_says_so():
    result = cj.translate_legacy(seed("compute_engine_tpu_v2"), region="us-central1")
    assert result.tpu_vm.version == "tpu-ubuntu2204-base"
    assert any("pass runtime_version='2.11'" in note for note in result.notes)


def test_translation_of_tensorflow_1_15_says_there_is_no_tpu_vm_image():
    result = cj.translate_legacy(broken("basic_tpu_mnist", runtimeVersion="1.15"))
    assert result.tpu_vm.version == "tpu-ubuntu2204-base"
    assert any("TensorFlow 1.15 has no TPU VM software version" in note for note in result.notes)


def test_translation_checks_the_runtime_version_it_is_given():
    with pytest.raises(JobSpecError, match=r"runtime_version: '2.10' was not an AI Platform TPU"):
        cj.translate_legacy(
            seed("compute_engine_tpu_v2"), region="us-central1", runtime_version="2.10"
        )


def test_translation_needs_a_region():
    with pytest.raises(JobSpecError, match=r"region: None; pass the job's region"):
        cj.translate_legacy(seed("compute_engine_tpu_v2"))


def test_translation_refuses_a_broken_config():
    with pytest.raises(JobSpecError, match="workerCount: 3"):
        cj.translate_legacy(broken("legacy_master_tpu_v2", workerCount=3), region="us-central1")


# --- YAML and JSON --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", cj.SEED_EXAMPLES)
def test_yaml_round_trip_of_every_seed_example(name):
    config = seed(name)
    text = cj.to_yaml(config)
    assert yaml.safe_load(text) == config
    assert text.startswith("trainingInput:\n  scaleTier: ")  # keys keep the guide's order


def test_versions_are_written_quoted():
    text = cj.to_yaml({"trainingInput": {"runtimeVersion": "2.11", "pythonVersion": "3.7"}})
    assert "runtimeVersion: '2.11'" in text and "pythonVersion: '3.7'" in text


def test_json_round_trip_of_a_vertex_spec_and_a_tpu_vm():
    spec = good_vertex_spec()
    assert json.loads(cj.to_json(spec)) == spec
    tpu = vm()
    assert cj.TpuVmSpec(**yaml.safe_load(cj.to_yaml(tpu.to_dict()))) == tpu


# --- Costs: hand-computed from tpu_prices.yaml ----------------------------------------------------


def test_price_table_is_dated_and_sourced():
    prices = cj.load_prices()
    assert prices["as_of"] == "2026-11-22"
    assert prices["billing_increment_seconds"] == 1
    assert "seed-002" in prices["sources"]
    assert prices["tpu"]["v2-8"]["us-central1"]["on_demand"] == 4.50
    assert prices["tpu"]["v2-8"]["europe-west4"]["preemptible"] == 1.485
    assert prices["tpu"]["v2-8"]["asia-east1"]["on_demand"] == 5.22
    for row in prices["tpu"].values():
        for region in row.values():
            assert region["source"]


def test_ninety_minutes_bill_one_and_a_half_hours():
    cost = cj.estimate_cost("v2-8", "us-central1", 1.5, host_machine_type="n1-standard-2")
    assert cost.billed_seconds == 5400
    assert cost.tpu_usd == pytest.approx(4.50 * 1.5)  # 6.75
    assert cost.host_usd == pytest.approx(0.0950 * 1.5)  # 0.1425
    assert cost.total_usd == pytest.approx(6.8925)
    assert cost.capacity == "on-demand"


def test_one_second_costs_a_3600th_of_the_hourly_price():
    cost = cj.estimate_cost("v2-8", "us-central1", 1 / 3600)
    assert cost.billed_seconds == 1
    assert cost.tpu_usd == pytest.approx(4.50 / 3600)
    assert cost.host_usd == 0


def test_a_started_second_is_billed_whole():
    assert cj.estimate_cost("v2-8", "us-central1", 0.5 / 3600).billed_seconds == 1
    assert cj.estimate_cost("v2-8", "us-central1", 0).total_usd == 0


def test_preemptible_prices_tpu_and_host():
    cost = cj.estimate_cost(
        "v3-8", "us-central1", 10, preemptible=True, host_machine_type="n1-highcpu-16"
    )
    assert cost.tpu_usd == pytest.approx(24.0)
    assert cost.host_usd == pytest.approx(1.2)
    assert cost.capacity == "preemptible"
    assert cj.estimate_cost("v2-8", "europe-west4", 10, preemptible=True).tpu_usd == pytest.approx(
        14.85
    )
    assert cj.estimate_cost("v2-8", "asia-east1", 2).tpu_usd == pytest.approx(10.44)


def test_host_price_can_be_given_for_a_region_the_table_lacks():
    cost = cj.estimate_cost("v2-8", "asia-east1", 3, host_hourly_usd=0.11)
    assert cost.host_usd == pytest.approx(0.33)
    assert cost.host_machine_type is None


def test_cost_breakdown_prints_every_part():
    text = str(cj.estimate_cost("v2-8", "us-central1", 1.5, host_machine_type="n1-standard-2"))
    assert text == (
        "v2-8 in us-central1, on-demand, billed 5400 s (prices as of 2026-11-22):\n"
        "  TPU v2-8               $4.5000/h x 1.5 h = $6.75\n"
        "  host n1-standard-2     $0.0950/h x 1.5 h = $0.14\n"
        "  total                  $6.89"
    )


@pytest.mark.parametrize(
    ("args", "kwargs", "pattern"),
    [
        (
            ("v5p-8", "us-central1", 1),
            {},
            r"tpu_type: 'v5p-8' has no price .*; priced: v2-8, v3-8\.",
        ),
        (
            ("v2-8", "us-east1", 1),
            {},
            r"region: 'us-east1' has no price for tpu_type v2-8; "
            r"priced: us-central1, europe-west4, asia-east1\.",
        ),
        (
            ("v2-8", "europe-west4", 1),
            {"host_machine_type": "n1-standard-2"},
            r"region: 'europe-west4' has no price for host_machine_type n1-standard-2; .*"
            r"Or pass host_hourly_usd=",
        ),
        (("v2-8", "us-central1", -1), {}, r"hours: -1; allowed: a number >= 0\."),
        (("v2-8", "us-central1", "2"), {}, r"hours: '2'; allowed: a number >= 0\."),
        (("v2-8", "us-central1", True), {}, r"hours: True; allowed"),
    ],
)
def test_cost_errors(args, kwargs, pattern):
    with pytest.raises(JobSpecError, match=pattern):
        cj.estimate_cost(*args, **kwargs)


def test_cost_chart_has_one_bar_pair_and_label_per_option():
    figure = cj.plot_cost_comparison(24)
    ax = figure.axes[0]
    assert len(ax.patches) == 2 * len(cj.DEFAULT_COST_OPTIONS)  # TPU and host VM, stacked
    labels = [text.get_text() for text in ax.texts]
    v2_on_demand = cj.estimate_cost("v2-8", "us-central1", 24, host_machine_type="n1-standard-2")
    assert f"${v2_on_demand.total_usd:,.2f}  (host VM ${v2_on_demand.host_usd:,.2f})" in labels
    assert "24-hour" in ax.get_title()
    matplotlib.pyplot.close(figure)


def test_cost_chart_without_host_across_regions():
    options = [("v2-8", region, False) for region in ("us-central1", "europe-west4", "asia-east1")]
    figure = cj.plot_cost_comparison(1, options, host_machine_type=None)
    assert len(figure.axes[0].patches) == 3
    assert "$5.22" in [text.get_text() for text in figure.axes[0].texts]
    matplotlib.pyplot.close(figure)
