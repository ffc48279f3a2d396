"""Tests for tpuhelpers.cloud_jobs (offline spec checks) and tpuhelpers.cloud_costs."""

from __future__ import annotations

import math
import time

import pytest

from tpuhelpers import cloud_costs, cloud_jobs
from tpuhelpers.cloud_jobs import JobSpecError, TpuVmSpec, legacy_example


def legacy_with(name: str, change) -> dict:
    """A legacy example with `change(trainingInput)` applied."""
    config = legacy_example(name)
    change(config["trainingInput"])
    return config


def accelerator(kind, count):
    return lambda ti: ti["workerConfig"].update(acceleratorConfig={"type": kind, "count": count})


# --- Legacy AI Platform Training -----------------------------------------------------------------


def test_the_guide_has_nine_examples_in_its_order():
    assert cloud_jobs.LEGACY_EXAMPLES == (
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


@pytest.mark.parametrize("name", cloud_jobs.LEGACY_EXAMPLES)
def test_every_legacy_example_validates(name):
    cloud_jobs.validate_training_input(legacy_example(name))


def test_legacy_example_is_a_fresh_copy_and_names_are_checked():
    legacy_example("pod_tpu_v3")["trainingInput"]["workerCount"] = 5
    assert legacy_example("pod_tpu_v3")["trainingInput"]["workerCount"] == 1
    with pytest.raises(ValueError, match="Unknown legacy example 'mnist': choose one of basic"):
        legacy_example("mnist")


def test_the_examples_keep_versions_as_strings():
    ti = legacy_example("custom_container_tpu_v2")["trainingInput"]
    assert ti["workerConfig"]["tpuTfVersion"] == "2.11"
    assert legacy_example("basic_tpu_mnist")["trainingInput"]["runtimeVersion"] == "2.11"


LEGACY_RULES = [
    ("basic_tpu_mnist", lambda ti: ti.update(scaleTier="STANDARD_1"), r"scaleTier.*'STANDARD_1'"),
    ("basic_tpu_mnist", lambda ti: ti.update(region="asia-east1"), r"TPUs\) 'asia-east1'"),
    ("basic_tpu_mnist", lambda ti: ti.update(runtimeVersion="2.10"), r"runtimeVersion .* '2.10'"),
    ("compute_engine_tpu_v2", lambda ti: ti.update(parameterServerCount=1), "no parameter serv"),
    ("compute_engine_tpu_v2", lambda ti: ti.update(parameterServerType="n1-standard-4"), "no par"),
    ("compute_engine_tpu_v2", lambda ti: ti.pop("masterType"), r"masterType: None"),
    ("compute_engine_tpu_v2", lambda ti: ti.update(masterType="e2-big"), r"masterType: 'e2-big'"),
    ("compute_engine_tpu_v2", lambda ti: ti.update(workerType="standard"), r"workerType 'standa"),
    ("compute_engine_tpu_v2", lambda ti: ti.update(workerCount=2), r"worker\) 2: choose one of 1"),
    ("compute_engine_tpu_v2", accelerator("TPU_V4", 8), r"acceleratorConfig.type 'TPU_V4'"),
    ("compute_engine_tpu_v2", accelerator("TPU_V2", 16), r"of TPU_V2 16: choose one of 8\."),
    ("pod_tpu_v2", accelerator("TPU_V2_POD", 64), r"64: choose one of 32, 128, 256, 512"),
    ("pod_tpu_v3", accelerator("TPU_V3_POD", 512), r"512: choose one of 32, 128, 256\."),
    ("legacy_master_tpu_v2", lambda ti: ti.update(workerConfig={
        "acceleratorConfig": {"type": "TPU_V2", "count": 8}}), "takes no acceleratorConfig"),
    ("pytorch_xla_1_11", lambda ti: ti["workerConfig"].update(tpuTfVersion="pytorch-1.9"),
     r"tpuTfVersion 'pytorch-1.9': choose one of pytorch-1.11"),
    ("custom_container_tpu_v2", lambda ti: ti["workerConfig"].pop("tpuTfVersion"),
     r"tpuTfVersion None: choose one of 1.15"),
    ("custom_container_tpu_v2", lambda ti: ti["workerConfig"].update(tpuTfVersion="3.0"),
     r"tpuTfVersion '3.0'"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "change", "pattern"), LEGACY_RULES)
def test_legacy_rules(name, change, pattern):
    with pytest.raises(JobSpecError, match=pattern):
        cloud_jobs.validate_training_input(legacy_with(name, change))


def test_every_broken_rule_is_reported_at_once():
    def three(ti):
        ti.update(region="asia-east1", workerCount=2)
        ti["workerConfig"]["acceleratorConfig"]["count"] = 16

    with pytest.raises(JobSpecError) as info:
        cloud_jobs.validate_training_input(legacy_with("compute_engine_tpu_v2", three))
    assert len(info.value.problems) == 3 == len(str(info.value).splitlines())


LEGACY_TYPES = [
    ([1, 2], r"config must be a mapping, got list"),
    ({}, r"config: missing trainingInput"),
    ({"trainingInput": "BASIC_TPU"}, r"config.trainingInput must be a mapping, got str"),
    ({"trainingInput": {"scaleTier": ["BASIC_TPU"]}}, r"scaleTier must be a str, got list"),
    ({"trainingInput": {"args": "--lr=0.1"}}, r"args must be a list of strings .* got str '--lr"),
    ({"trainingInput": {"args": ["--epochs", 10]}}, r"args must be a list of strings"),
    ({"trainingInput": {"runtimeVersion": 2.1}}, r"got the number 2.1: .*quote it"),
    ({"trainingInput": {"pythonVersion": 3}}, r"pythonVersion must be a string, got the number 3"),
    ({"trainingInput": {"workerCount": "1"}}, r"workerCount must be a int, got str '1'"),
    ({"trainingInput": {"workerCount": True}}, r"workerCount must be a int, got bool"),
    ({"trainingInput": {"workerConfig": ["x"]}}, r"workerConfig must be a mapping, got list"),
    ({"trainingInput": {"workerConfig": {"acceleratorConfig": "TPU_V2"}}},
     r"workerConfig.acceleratorConfig must be a mapping, got str"),
    ({"trainingInput": {"workerConfig": {"tpuTfVersion": 2.11}}}, r"tpuTfVersion: '2.10'"),
    ({"trainingInput": {"workercount": 1}}, r"workercount: unknown field; allowed: scaleTier"),
]  # fmt: skip


@pytest.mark.parametrize(("config", "pattern"), LEGACY_TYPES)
def test_every_field_type_is_checked_with_a_message(config, pattern):
    with pytest.raises(JobSpecError, match=pattern):
        cloud_jobs.validate_training_input(config)


# --- YAML ----------------------------------------------------------------------------------------


def test_unquoted_version_in_yaml_is_refused_with_the_fix():
    config = cloud_jobs.load_yaml(
        "trainingInput:\n  scaleTier: BASIC_TPU\n  runtimeVersion: 2.10\n"
    )
    assert config["trainingInput"]["runtimeVersion"] == 2.1  # the trap itself
    with pytest.raises(JobSpecError, match=r"runtimeVersion must be a string.*2\.1.*quote it"):
        cloud_jobs.validate_training_input(config)


def test_an_alias_bomb_is_refused_quickly():
    lines = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for level in range(1, 10):
        lines.append(f"{chr(97 + level)}: &{chr(97 + level)} [" + ", ".join(
            [f"*{chr(96 + level)}"] * 9) + "]")  # fmt: skip
    start = time.perf_counter()
    with pytest.raises(JobSpecError, match=r"line 2: YAML aliases \(\*name\) are not allowed"):
        cloud_jobs.load_yaml("\n".join(lines), "bomb.yaml")
    assert time.perf_counter() - start < 1


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("x" * (cloud_jobs.MAX_YAML_BYTES + 1), r"over 65536 bytes"),
        ("base: &b {a: 1}\nother:\n  <<: *b\n", r"line 3: YAML aliases"),
        ("a: [1, 2\n", r"is not valid YAML"),
        (b"scaleTier: BASIC_TPU", r"must be a str, got bytes"),
    ],
)
def test_load_yaml_refuses(text, pattern):
    with pytest.raises((JobSpecError, TypeError), match=pattern):
        cloud_jobs.load_yaml(text)


# --- TPU VMs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        TpuVmSpec("my-v5e", "us-west4-a", "v5litepod-8", "v2-alpha-tpuv5-lite"),
        TpuVmSpec("my-v6e", "us-east5-b", "v6e-8", "v2-alpha-tpuv6e"),
        TpuVmSpec("tf", "us-central1-b", "v2-8", "tpu-vm-tf-2.16.1-pjrt"),
        TpuVmSpec("tf-se", "us-central1-b", "v3-8", "tpu-vm-tf-2.16.1-se"),
        TpuVmSpec("old", "europe-west4-a", "v3-32", "tpu-vm-tf-2.11.1-pod"),
        TpuVmSpec("base", "us-central2-b", "v4-8", "tpu-ubuntu2204-base"),
    ],
)
def test_current_tpu_vms_validate(spec):
    cloud_jobs.validate_tpu_vm(spec)


GOOD_VM = TpuVmSpec("my-tpu", "us-west4-a", "v5litepod-8", "v2-alpha-tpuv5-lite")
TPU_VM_RULES = [
    ({"name": "my-tpu\n"}, r"name: 'my-tpu\\n'"),
    ({"name": "My_TPU"}, r"name: 'My_TPU'; allowed"),
    ({"name": "a" * 64}, r"name: 'a+'"),
    ({"zone": "us-west4-a\n"}, r"zone: 'us-west4-a\\n' is not a zone"),
    ({"zone": "us-west4"}, r"zone: 'us-west4' is not a zone"),
    ({"accelerator_type": "v5litepod-3"}, r"accelerator_type: 'v5litepod-3'; allowed: v2-\[8, 32"),
    ({"accelerator_type": "v7-8"}, r"accelerator_type: 'v7-8'"),
    ({"accelerator_type": "v2-08"}, r"'v2-08'; allowed: .* \(written as e.g. v2-8: ASCII digits"),
    ({"accelerator_type": "v2-\uff18"}, r"'v2-\uff18'; allowed: .*ASCII digits, no leading 0"),
    ({"accelerator_type": "v2-+8"}, r"accelerator_type: 'v2-\+8'"),
    ({"version": "tpu-ubuntu2204-base"}, r"does not run on v5litepod-8; allowed: v2-alpha-tpuv5-l"),
    ({"version": "tpu-vm-tf-2.16.1"}, r"allowed: tpu-vm-tf-2.16.1-pjrt\."),
    ({"version": "tpu-vm-tf-2.11.1-pjrt"}, r"allowed: tpu-vm-tf-2.11.1\."),
    ({"accelerator_type": "v5litepod-16", "version": "tpu-vm-tf-2.16.1-pjrt"},
     r"allowed: tpu-vm-tf-2.16.1-pod-pjrt\."),
    ({"accelerator_type": "v2-8", "version": "tpu-vm-tf-2.11.1-pod"},
     r"allowed: tpu-vm-tf-2.11.1\."),
    ({"version": "tpu-vm-tf-2.16.1-pjrt\n"}, r"does not run on"),
    ({"name": 7}, r"TpuVmSpec.name must be a str, got int 7"),
    ({"zone": ["us-west4-a"]}, r"TpuVmSpec.zone must be a str, got list"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "pattern"), TPU_VM_RULES)
def test_tpu_vm_rules(changes, pattern):
    spec = TpuVmSpec(**{**GOOD_VM.__dict__, **changes})
    with pytest.raises(JobSpecError, match=pattern):
        cloud_jobs.validate_tpu_vm(spec)


# --- Vertex AI -----------------------------------------------------------------------------------


def vertex(machine=None, **pool) -> dict:
    machine = machine or {"machineType": "ct5lp-hightpu-8t", "tpuTopology": "2x4"}
    pool = pool or {"containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/trainer:v1"}}
    return {"workerPoolSpecs": [{"machineSpec": machine, "replicaCount": 1, **pool}]}


@pytest.mark.parametrize(
    "machine",
    [
        {"machineType": "cloud-tpu", "acceleratorType": "TPU_V2", "acceleratorCount": 8},
        {"machineType": "cloud-tpu", "acceleratorType": "TPU_V3", "acceleratorCount": 32},
        {"machineType": "ct5lp-hightpu-1t", "tpuTopology": "1x1"},
        {"machineType": "ct5lp-hightpu-4t", "tpuTopology": "4x4"},
        {"machineType": "ct6e-standard-8t", "tpuTopology": "2x4"},
    ],
)
def test_vertex_tpu_machines_validate(machine):
    cloud_jobs.validate_vertex_job_spec(vertex(machine))


def test_vertex_python_package_validates():
    package = {"executorImageUri": "img", "packageUris": ["gs://b/t.tar.gz"], "pythonModule": "m"}
    cloud_jobs.validate_vertex_job_spec(vertex(pythonPackageSpec=package))


VERTEX_RULES = [
    ([1], r"spec must be a mapping, got list"),
    ({"workerPoolSpecs": []}, r"workerPoolSpecs: 0 pools; a TPU job has exactly one"),
    ({"workerPoolSpecs": [{}, {}]}, r"workerPoolSpecs: 2 pools"),
    ({"workerPoolSpecs": {"machineSpec": {}}}, r"spec.workerPoolSpecs must be a list, got dict"),
    ({"workerPoolSpecs": ["pool"]}, r"workerPoolSpecs\[0\] must be a mapping, got str"),
    (vertex({"machineType": "cloud-tpu", "acceleratorType": "TPU_V4", "acceleratorCount": 8}),
     r"machineSpec: .*TPU_V4.*allowed: cloud-tpu"),
    (vertex({"machineType": "cloud-tpu", "acceleratorType": "TPU_V2", "acceleratorCount": 16}),
     r"machineSpec: "),
    (vertex({"machineType": "ct5lp-hightpu-8t", "tpuTopology": "4x4"}), r"machineSpec: "),
    (vertex({"machineType": "n1-standard-8", "tpuTopology": "2x4"}), r"machineSpec: "),
    (vertex({"machineType": "ct5lp-hightpu-8t", "acceleratorCount": "8"}),
     r"acceleratorCount must be a int, got str"),
    (vertex(containerSpec={"imageUri": "i", "args": "--lr=0.1"}),
     r"containerSpec.args must be a list of strings .* got str '--lr=0.1'"),
    (vertex(containerSpec={}), r"containerSpec: missing imageUri"),
    (vertex(pythonPackageSpec={"pythonModule": "m"}),
     r"pythonPackageSpec: missing executorImageUri, packageUris"),
    (vertex(containerSpec={"imageUri": "i"}, pythonPackageSpec={"pythonModule": "m"}),
     r"exactly one of containerSpec and pythonPackageSpec"),
    (vertex(diskSpec={}), r"exactly one of containerSpec"),
    (vertex(containerSpec={"imageUri": "i"}, replicaCount=2), r"replicaCount 2: choose one of 1"),
    (vertex(containerSpec={"image": "i"}), r"containerSpec.image: unknown field"),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "pattern"), VERTEX_RULES)
def test_vertex_rules(spec, pattern):
    with pytest.raises(JobSpecError, match=pattern):
        cloud_jobs.validate_vertex_job_spec(spec)


# --- Costs ---------------------------------------------------------------------------------------


def test_price_table_is_dated_and_sourced():
    assert cloud_costs.PRICES["as_of"] == "2026-11-26"
    for rows in (cloud_costs.PRICES["tpu"], cloud_costs.PRICES["host_vm"]):
        for regions in rows.values():
            for price in regions.values():
                source = price["source"]
                assert source in cloud_costs.PRICES["sources"] or source.startswith("seed-002")
                assert 0 < price["preemptible"] < price["on_demand"]


@pytest.mark.parametrize(
    ("tpu_type", "chips", "per_chip_hour"),
    [("v5litepod-1", 1, 1.20), ("v5litepod-8", 8, 1.20), ("v6e-1", 1, 2.70), ("v6e-8", 8, 2.70),
     ("v5p-8", 4, 4.20)],
)  # fmt: skip
def test_tpu_vm_rows_are_chips_times_the_price_per_chip_hour(tpu_type, chips, per_chip_hour):
    """The TPU VM rows price the whole slice, host included: one hour is chips x $/chip-hour."""
    cost = cloud_costs.estimate_cost(tpu_type, "us-central1", 1.0)
    assert cost.tpu_usd == pytest.approx(chips * per_chip_hour)
    assert cost.host_usd == 0


def test_cost_of_an_epoch_from_a_measured_rate():
    """An epoch of 60,000 examples at 1,000 examples/s is 60 s: 60 / 3600 of a v6e-8's hour."""
    cost = cloud_costs.estimate_cost("v6e-8", "us-central1", 60_000 / 1_000 / 3600)
    assert cost.billed_seconds == 60
    assert cost.total_usd == pytest.approx(21.60 / 60)


def test_ninety_minutes_of_a_v2_8_with_its_host():
    cost = cloud_costs.estimate_cost("v2-8", "us-central1", 1.5, host_machine_type="n1-standard-2")
    assert cost.billed_seconds == 5400
    assert cost.tpu_usd == pytest.approx(6.75)
    assert cost.host_usd == pytest.approx(0.1425)
    assert cost.total_usd == pytest.approx(6.8925)


def test_billing_is_per_started_second():
    assert cloud_costs.estimate_cost("v2-8", "us-central1", 1 / 3600).tpu_usd == pytest.approx(
        4.5 / 3600
    )
    assert cloud_costs.estimate_cost("v2-8", "us-central1", 1.5 / 3600).billed_seconds == 2
    assert cloud_costs.estimate_cost("v2-8", "us-central1", 0).total_usd == 0


def test_preemptible_prices_tpu_and_host():
    cost = cloud_costs.estimate_cost(
        "v3-8", "us-central1", 10, preemptible=True, host_machine_type="n1-highcpu-16"
    )
    assert (cost.tpu_usd, cost.host_usd) == pytest.approx((24.0, 1.2))


@pytest.mark.parametrize(
    ("args", "kwargs", "pattern"),
    [
        (("v2-8", "us-central1", math.inf), {}, r"hours must be a finite number, got inf"),
        (("v2-8", "us-central1", math.nan), {}, r"hours must be a finite number, got nan"),
        (("v2-8", "us-central1", -1), {}, r"hours must be at least 0.0, got -1"),
        (("v2-8", "us-central1", "2"), {}, r"hours must be a finite number, got '2'"),
        (("v2-8", "us-central1", True), {}, r"hours must be a finite number, got True"),
        (("v4-8", "us-central1", 1), {}, r"Unknown tpu with a price in tpu_prices.yaml 'v4-8'"),
        (("v3-8", "europe-west4", 1), {}, r"Unknown region with a price for v3-8 'europe-west4'"),
        (("v2-8", "europe-west4", 1), {"host_machine_type": "n1-standard-2"},
         r"Unknown region with a price for n1-standard-2"),
        (("v2-8", "us-central1", 1), {"host_machine_type": "e2-small"}, r"host_vm .* 'e2-small'"),
    ],
)  # fmt: skip
def test_cost_errors(args, kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        cloud_costs.estimate_cost(*args, **kwargs)
