"""Offline checks of Cloud TPU job specs against the rules in `cloud_rules.yaml`."""

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from tpuhelpers.checks import of_type, one_of

MAX_YAML_BYTES = 64 * 1024
_TF_VERSION = re.compile(r"tpu-vm-tf-(?P<v>(\d+)\.(\d+)\.\d+)(?P<pod>-pod)?(?P<api>-pjrt|-se)?")
_KINDS = {"str": str, "int": int, "bool": bool, "mapping": Mapping, "list": list, "version": str}


class JobSpecError(ValueError):
    """A job spec breaks rules: one line per broken rule, in the message and in `problems`."""

    def __init__(self, problems: str | list[str]) -> None:
        self.problems = [problems] if isinstance(problems, str) else problems
        super().__init__("\n".join(self.problems))


def load_yaml(text: str, source: str = "YAML text") -> Any:
    """Parses a job spec's YAML; a JobSpecError if over `MAX_YAML_BYTES`, an alias, or not YAML."""
    if len(of_type(text, str, source).encode()) > MAX_YAML_BYTES:
        raise JobSpecError(f"{source} is over {MAX_YAML_BYTES} bytes: is it really a job spec?")
    try:
        aliases = [e for e in yaml.parse(text, yaml.SafeLoader) if isinstance(e, yaml.AliasEvent)]
        if not aliases:
            return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise JobSpecError(f"{source} is not valid YAML: {error}") from None
    where = f"{source}, line {aliases[0].start_mark.line + 1}"
    raise JobSpecError(f"{where}: YAML aliases (*name) are not allowed; write the value out.")


def load_data(name: str) -> Any:
    """Reads a YAML data file of this package, e.g. `cloud_rules.yaml` or `tpu_prices.yaml`."""
    return load_yaml(Path(__file__).with_name(name).read_text(encoding="utf-8"), name)


RULES = load_data("cloud_rules.yaml")
LEGACY, TPU_VM, VERTEX, _SCHEMAS = (RULES[k] for k in ("legacy", "tpu_vm", "vertex", "schemas"))
_EXAMPLES = load_data("legacy_jobs.yaml")
LEGACY_EXAMPLES = tuple(_EXAMPLES)  # the AI Platform TPU guide's example jobs, in its order


def legacy_example(name: str) -> dict[str, Any]:
    """Returns a fresh copy of one of the guide's example configs (`{"trainingInput": ...}`)."""
    return copy.deepcopy(_EXAMPLES[one_of(name, LEGACY_EXAMPLES, "legacy example")])


def _type_problems(data: Any, schema: str | Mapping[str, Any], path: str) -> list[str]:
    """One line per field that `schema` (fields, or a name in `schemas`) lacks or types wrong."""
    schema = _SCHEMAS[schema] if isinstance(schema, str) else schema
    if not isinstance(data, Mapping):
        return [f"{path} must be a mapping, got {type(data).__name__} {data!r}."]
    problems = []
    for key, value in data.items():
        where, kind = f"{path}.{key}", schema.get(key)
        if kind is None:
            problems.append(f"{where}: unknown field; allowed: {', '.join(schema)}.")
        elif isinstance(kind, dict) or kind in _SCHEMAS:
            problems += _type_problems(value, kind, where)
        elif kind == "version" and isinstance(value, int | float) and not isinstance(value, bool):
            number = f"the number {value!r}: YAML reads 2.10 as 2.1; quote it, e.g. {key}: '2.10'"
            problems.append(f"{where} must be a string, got {number}.")
        elif kind == "strings":
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                got = f"got {type(value).__name__} {value!r}"
                problems.append(f"{where} must be a list of strings such as ['--lr=0.1'], {got}.")
        else:
            problems += _problem(of_type, value, _KINDS[kind], where)
    return problems


def _problem(check: Callable[..., Any], *args: Any) -> list[str]:
    """Runs one of `tpuhelpers.checks` and returns its message as a list of problems."""
    try:
        check(*args)
    except (TypeError, ValueError) as error:
        return [str(error)]
    return []


def _raise_if(problems: list[str]) -> None:
    if problems:
        raise JobSpecError(problems)


def validate_training_input(config: Mapping[str, Any]) -> None:
    """Checks a legacy AI Platform TPU job's parsed `config.yaml`; a JobSpecError lists problems."""
    _raise_if(_type_problems(config, "config", "config"))
    _raise_if([] if "trainingInput" in config else ["config: missing trainingInput."])
    ti, problems = config["trainingInput"], []
    tier, master = ti.get("scaleTier"), ti.get("masterType")
    for field, rule in LEGACY["one_of"].items():  # the table of fixed values, in the rules file
        allowed = LEGACY[rule["allowed"]] if isinstance(rule["allowed"], str) else rule["allowed"]
        if rule.get("tier", tier) == tier:
            problems += _problem(one_of, ti.get(field, rule.get("default")), allowed, rule["what"])
    if ti.get("parameterServerCount") or "parameterServerType" in ti:
        problems.append("parameterServerCount: a TPU job has no parameter servers; remove them.")
    named = master in LEGACY["masters"] or re.fullmatch(r"n1-\w+-\d+", str(master))
    if tier == "CUSTOM" and not named:
        masters = ", ".join(LEGACY["masters"])
        problems.append(f"masterType: {master!r}; allowed: n1 types (n1-highcpu-16), {masters}.")
    worker, counts = ti.get("workerConfig", {}), LEGACY["core_counts"]
    if (accel := worker.get("acceleratorConfig")) is not None:  # the TPU worker's accelerator
        kind, count = accel.get("type"), accel.get("count")
        problems += _problem(one_of, kind, counts, "acceleratorConfig.type")
        if kind in counts:
            problems += _problem(one_of, count, counts[kind], f"TPU core count of {kind}")
        if master in LEGACY["masters"]:
            problems.append(f"masterType: {master!r} takes no acceleratorConfig; use an n1 type.")
    if "imageUri" in worker:  # a container on the TPU worker names its framework's version
        torch = LEGACY["pytorch_xla_images"].get(worker["imageUri"])
        allowed = [torch] if torch else LEGACY["runtime_versions"]
        problems += _problem(one_of, worker.get("tpuTfVersion"), allowed, "tpuTfVersion")
    _raise_if(problems)


@dataclass(frozen=True)
class TpuVmSpec:
    """`gcloud compute tpus tpu-vm create NAME --zone --accelerator-type --version`'s values."""

    name: str
    zone: str
    accelerator_type: str
    version: str


def validate_tpu_vm(spec: TpuVmSpec) -> None:
    """Checks a TPU VM's name, zone, type and version; a JobSpecError lists every broken rule."""
    _raise_if(_type_problems(asdict(spec), "tpu_vm", "TpuVmSpec"))
    problems, (generation, _, size) = [], spec.accelerator_type.rpartition("-")
    in_rules = TPU_VM["sizes"].get(generation, ())
    if not re.fullmatch(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?", spec.name):
        problems.append(f"name: {spec.name!r}; allowed: a-z, 0-9, '-', a letter first, <= 63.")
    if not re.fullmatch(r"[a-z]+-[a-z]+[0-9]+-[a-z]", spec.zone):
        problems.append(f"zone: {spec.zone!r} is not a zone; allowed: e.g. us-west4-a.")
    if not re.fullmatch("[1-9][0-9]*", size) or int(size) not in in_rules:
        known = "; ".join(f"{gen}-{sizes}" for gen, sizes in TPU_VM["sizes"].items())
        form = "(written as e.g. v2-8: ASCII digits, no leading 0)"
        problems.append(f"accelerator_type: {spec.accelerator_type!r}; allowed: {known} {form}.")
        size = ""
    tf = _TF_VERSION.fullmatch(spec.version)
    if tf and size:  # -pod on several hosts; -pjrt or -se from TensorFlow 2.15 on
        pod = "-pod" if int(size) > 8 else ""
        api = (tf["api"] or "-pjrt") if (int(tf[2]), int(tf[3])) >= (2, 15) else ""
        if (tf["pod"] or "", tf["api"] or "") != (pod, api):
            fit = f"{spec.version!r} does not fit {spec.accelerator_type}"
            problems.append(f"version: {fit}; allowed: tpu-vm-tf-{tf['v']}{pod}{api}.")
    elif not tf and generation not in TPU_VM["base_images"].get(spec.version, ()):
        right = [image for image, gens in TPU_VM["base_images"].items() if generation in gens]
        fit = f"version: {spec.version!r} does not run on {spec.accelerator_type}"
        problems.append(f"{fit}; allowed: {', '.join(right)}, tpu-vm-tf-X.Y.Z[-pod][-pjrt].")
    _raise_if(problems)


def _machine_ok(machine: Mapping[str, Any]) -> bool:
    """Whether a Vertex AI machineSpec is a TPU configuration Vertex AI knows."""
    if machine.get("machineType") == "cloud-tpu":
        kind = machine.get("acceleratorType", "").removeprefix("TPU_").lower()
        return kind in ("v2", "v3") and machine.get("acceleratorCount") in TPU_VM["sizes"][kind]
    family, _, hosts = machine.get("machineType", "").rpartition("-")
    topologies = VERTEX["topologies"].get(hosts, ())
    return family in VERTEX["families"] and machine.get("tpuTopology") in topologies


def validate_vertex_job_spec(spec: Mapping[str, Any]) -> None:
    """Checks a Vertex AI `CustomJobSpec` with a TPU worker pool; a JobSpecError lists problems."""
    _raise_if(_type_problems(spec, "custom_job", "spec"))
    pools, where = spec.get("workerPoolSpecs"), "workerPoolSpecs[0]"
    if len(pools or ()) != 1:
        raise JobSpecError(f"workerPoolSpecs: {len(pools or ())} pools; a TPU job has exactly one.")
    _raise_if(_type_problems(pools[0], "worker_pool", where))
    pool, problems = pools[0], []
    if not _machine_ok(pool.get("machineSpec", {})):
        allowed = f"cloud-tpu, TPU_V2 or TPU_V3 x 8 or a pod size, or {VERTEX['families']}-<hosts>t"
        machine = f"{where}.machineSpec: {pool.get('machineSpec')!r}"
        problems.append(f"{machine}; allowed: {allowed} with tpuTopology {VERTEX['topologies']}.")
    problems += _problem(one_of, pool.get("replicaCount", 1), (1,), f"{where}.replicaCount")
    code = [key for key in ("containerSpec", "pythonPackageSpec") if key in pool]
    if len(code) != 1:
        problems.append(f"{where}: give exactly one of containerSpec and pythonPackageSpec.")
    elif missing := [key for key in VERTEX["required"][code[0]] if not pool[code[0]].get(key)]:
        problems.append(f"{where}.{code[0]}: missing {', '.join(missing)}.")
    _raise_if(problems)
