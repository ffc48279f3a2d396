"""Measures the support table: which training API works with which strategy, on this stack.

The distributed-training guide says which strategy supports `Model.fit` and custom training
loops ("Supported", "Experimental support", ...). This tool runs a few training steps of each
combination it can build on this machine (`tools.runs.support_cases`) and records what happened in
`tpuhelpers/support_table.json`, keyed by Keras flavor, TensorFlow version and wheel, so that an
upgrade shows up as a diff in review. Run it from the repository root::

    python -m tools.runs.support_table write    # every case, one fresh process each
    python -m tools.runs.support_table check    # again, compared with the committed table
    python -m tools.runs.support_table show mirrored parameter_server
    python -m tools.runs.support_table annotate # rewrite the committed tables' "instead" notes

Each case runs in its own Python process, so that a crash, a hang or a broken runtime state in
one case cannot affect the others. `--isolate strategy` runs the cases of one strategy in one
process instead (about half the CPU time); a process that dies is restarted for the cases it did
not finish. `nox -s support_table` writes the entry of each supported stack.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import glob
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.runs import support_cases
from tpuhelpers import checks, support

ROOT = Path(__file__).resolve().parents[2]
STATUSES = ("works", "fails", "n/a")
BUILD = "create the optimizer's variables in the scope first: optimizer.build(model."
#: What to do instead, where a case fails under Keras 3 (stored with the failure as `instead`).
ALTERNATIVES = {
    ("default", "fit"): "compile with jit_compile=False: the tensorflow-tpu wheel's XLA cannot "
    "compile for a CPU, and Keras compiles the default strategy's step with XLA",
    ("mirrored_spe4", "fit"): "training.fix_steps_per_execution(model) after compile, or "
    "steps_per_execution=1",
    "loop": BUILD + "trainable_variables) (the loop + optimizer.build column)",
    ("multi_worker", "fit"): "the custom loop with optimizer.build in the scope (notebook 07), "
    "or tf-keras",
    ("parameter_server", "fit"): "the ClusterCoordinator custom loop (notebook 08), or tf-keras "
    "with DatasetCreator",
    ("parameter_server_sharded", "fit"): "the ClusterCoordinator custom loop on the variables' "
    "shards (notebook 08), or tf-keras with DatasetCreator",
    ("parameter_server_sharded", "loop"): "take the gradients with respect to the shards "
    "(weight.value.variables) and build the optimizer on them (notebook 08)",
}
_CASE_SCRIPT = (
    "import sys\nsys.path.insert(0, {root!r})\n"
    "from tools.runs import support_table\nsupport_table.main(sys.argv[1:])\n"
)


@dataclass(frozen=True)
class Options:
    """How to measure: which strategies (default: all), `isolate` (`"case"`: a fresh process
    per case; `"strategy"`: one per strategy), how many strategies at once, seconds a process
    may take."""

    strategies: tuple[str, ...] = tuple(support.STRATEGIES)
    isolate: str = "case"
    parallel: int = 2
    timeout: float = 180.0

    def __post_init__(self) -> None:
        for key in checks.of_type(self.strategies, tuple, "strategies"):
            checks.one_of(key, support.STRATEGIES, "strategy")
        checks.one_of(self.isolate, ("case", "strategy"), "isolate")
        checks.integer(self.parallel, "parallel")
        checks.number(self.timeout, "timeout", minimum=1.0)


def alternative(strategy_key: str, api: str) -> str | None:
    """The working alternative to a case that fails under Keras 3, or None."""
    if strategy_key == "parameter_server_sharded" and api == "loop_built":
        api = "loop"
    return ALTERNATIVES.get((strategy_key, api)) or (
        ALTERNATIVES["loop"] if api == "loop" else None
    )


def not_available_reason(strategy_key: str) -> str | None:
    """Why a strategy cannot run on this machine, or None if it can (decided without TF)."""
    if strategy_key == "tpu":
        from tpuhelpers import hardware

        if hardware.find_tpu() is None:
            return (
                "no TPU on this machine (no TPU_NAME, TPU_CONFIG, COLAB_TPU_ADDR or "
                "/dev/accel* device)"
            )
    if strategy_key == "nccl" and not glob.glob("/dev/nvidia[0-9]*"):
        return "NcclAllReduce runs on NVIDIA GPUs only; this machine has none"
    return None


def estimator_status() -> dict[str, Any]:
    """The guide's Estimator row: is `tf.estimator` still there?"""
    if importlib.util.find_spec("tensorflow_estimator") is None:
        return {"status": "n/a", "reason": "tf.estimator was removed in TensorFlow 2.16"}
    return {"status": "works", "reason": "tensorflow-estimator is installed"}


def parse_results(lines: Iterable[str]) -> dict[Any, dict[str, Any]]:
    """The results a case process printed, by API; its stack under the key `None`."""
    results: dict[Any, dict[str, Any]] = {}
    for line in lines:
        if line.startswith(support_cases.MARKER):
            record = json.loads(line[len(support_cases.MARKER) :])
            results[record.pop("api")] = record
        elif line.startswith(support_cases.ENV_MARKER):
            results[None] = json.loads(line[len(support_cases.ENV_MARKER) :])
    return results


def _run_multi_worker(args: list[str], timeout: float) -> tuple[dict, str]:
    """Runs cases of MultiWorkerMirroredStrategy in a local cluster of 2 worker processes."""
    from tpuhelpers import cluster

    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder, "support_case.py")
        script.write_text(_CASE_SCRIPT.format(root=str(ROOT)), encoding="utf-8")
        with cluster.start(script, 2, cluster.Options(args=tuple(args))) as job:
            try:
                job.wait(timeout)
                problem = ""
            except cluster.LaunchError as error:
                problem = str(error).splitlines()[0]
            first = next((task for task in job.lines if str(task) == "worker 0"), None)
            return parse_results(job.lines.get(first, [])), problem


def run_processes(strategy_key: str, apis: list[str], timeout: float) -> tuple[dict, str]:
    """Runs some cases of one strategy in one process (two for MultiWorkerMirrored).

    Returns:
        The results by API (see `parse_results`), and what went wrong with the process, if
        anything.
    """
    from tpuhelpers.cluster import describe_exit

    args = ["case", strategy_key, *apis]
    if strategy_key == "multi_worker":
        return _run_multi_worker(args, timeout)
    environ = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "TF_NUM_INTEROP_THREADS": "2"}
    command = [sys.executable, "-m", "tools.runs.support_table", *args]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=environ, cwd=ROOT
        )
    except subprocess.TimeoutExpired as error:
        output = error.stdout or b""
        text = output.decode() if isinstance(output, bytes) else output
        return parse_results(text.splitlines()), f"timed out after {timeout:g} s"
    problem = "" if done.returncode == 0 else f"the process {describe_exit(done.returncode)}"
    return parse_results(done.stdout.splitlines()), problem


def measure_strategy(strategy_key: str, options: Options) -> tuple[dict, dict | None]:
    """Measures every API under one strategy; returns the results and the stack seen."""
    apis = list(support.APIS)
    reason = not_available_reason(strategy_key)
    if reason:
        return {api: {"status": "n/a", "reason": reason} for api in apis}, None
    results: dict[str, dict[str, Any]] = {}
    stack = None
    while pending := [api for api in apis if api not in results]:
        batch = pending if options.isolate == "strategy" else pending[:1]
        found, problem = run_processes(strategy_key, batch, options.timeout)
        stack = found.pop(None, stack)
        results.update({api: found[api] for api in batch if api in found})
        missing = [api for api in batch if api not in found]
        if missing:  # the process died or hung during the first missing case
            message = problem or "the process ended without a result"
            results[missing[0]] = {"status": "fails", "error": "crash", "message": message}
    return {api: results[api] for api in apis}, stack


def environment() -> dict[str, str]:
    """The stack, from a subprocess (TensorFlow is not imported here)."""
    code = (
        "import dataclasses, json; from tpuhelpers import support; "
        "print(json.dumps(dataclasses.asdict(support.current_stack())))"
    )
    environ = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    command = [sys.executable, "-c", code]
    output = subprocess.run(command, capture_output=True, text=True, check=True, env=environ)
    return json.loads(output.stdout.strip().splitlines()[-1])


def annotate(table: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `table` whose failures carry the working alternative as `instead`."""
    cases: dict[str, dict[str, Any]] = {}
    for key, found in table["cases"].items():
        cases[key] = {}
        for api, result in found.items():
            result = {k: v for k, v in result.items() if k != "instead"}
            if result["status"] == "fails" and alternative(key, api):
                result["instead"] = alternative(key, api)
            cases[key][api] = result
    return {**table, "cases": cases}


def measure(options: Options | None = None) -> dict[str, Any]:
    """Measures the support table on this machine (default `Options()`: every strategy).

    Returns:
        `{"key", "flavor", "tensorflow", "keras", "wheel", "cases": {strategy: {api: result}},
        "estimator": result}`; a result has `status` (`works`, `fails`, `n/a`) and `error`,
        `message` and, where known, `instead` for a failure, or `reason` for n/a.
    """
    options = checks.of_type(options or Options(), Options, "options")
    with concurrent.futures.ThreadPoolExecutor(max_workers=options.parallel) as pool:
        futures = {key: pool.submit(measure_strategy, key, options) for key in options.strategies}
        done = {key: future.result() for key, future in futures.items()}
    found = next((stack for _, stack in done.values() if stack), None) or environment()
    stack = support.Stack(**found)
    table = {"key": stack.key, **dataclasses.asdict(stack)}
    table |= {"cases": {key: results for key, (results, _) in done.items()}}
    return annotate(table | {"estimator": estimator_status()})


def format_table(table: Mapping[str, Any]) -> str:
    """A table as text: a row per strategy, a column per API; then the errors and unmeasured
    cases. It is stored with the table, for `tpuhelpers.support.format_table`."""
    STRATEGIES, APIS = support.STRATEGIES, support.APIS  # noqa: N806 - the package's tables
    width = max(map(len, STRATEGIES.values()))
    lines = [f"Measured with {table['key']} (Keras {table['keras']})", ""]
    lines += [f"{'strategy':<{width}}" + "".join(f"  {label:<28}" for label in APIS.values())]
    errors, reasons = [], {}
    for key, label in STRATEGIES.items():
        found = table["cases"].get(key, {})
        cells = ""
        for api, result in ((api, found[api]) for api in APIS if api in found):
            error = f" ({result['error']})" if "error" in result else ""
            cells += f"  {result['status'] + error:<28}"
            if "message" in result:
                errors += [f"  {label}, {APIS[api]}: {result['message']}"]
                errors += [f"      instead: {result['instead']}"] if "instead" in result else []
            reasons.update({label: result["reason"]} if "reason" in result else {})
        lines += [f"{label:<{width}}{cells}"] if cells else []
    lines = [line.rstrip() for line in lines]
    if errors:
        lines += ["", "Errors (first line), and what works instead:", *errors]
    if reasons:
        lines += ["", "Not measured here:", *(f"  {k}: {v}" for k, v in reasons.items())]
    return "\n".join(lines)


def write_reference(table: Mapping[str, Any], path: Path = support.REFERENCE) -> None:
    """Stores `table` (and its text) under its key, keeping the tables of other stacks."""
    tables = support.load_reference(path)
    tables[table["key"]] = {k: v for k, v in table.items() if k not in ("key", "note")}
    tables[table["key"]]["text"] = format_table({**table, "note": None})
    path.write_text(json.dumps(tables, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _cell(result: Mapping[str, Any]) -> str:
    return f"fails ({result['error']})" if result["status"] == "fails" else result["status"]


def differences(measured: Mapping[str, Any], reference: Mapping[str, Any]) -> list[str]:
    """Cases whose status or error class differs from the reference, one line each.

    Cases not measured here (n/a on this machine, or left out) are not compared.
    """
    found = []
    if measured.get("keras") != reference.get("keras"):
        found.append(f"Keras version: {reference.get('keras')} -> {measured.get('keras')}")
    for key, results in measured["cases"].items():
        for api, result in results.items():
            before = reference["cases"].get(key, {}).get(api)
            if result["status"] == "n/a" or before is None or before["status"] == "n/a":
                continue
            if (result["status"], result.get("error")) != (before["status"], before.get("error")):
                label = f"{support.STRATEGIES[key]}, {support.APIS[api]}"
                found.append(f"{label}: {_cell(before)} -> {_cell(result)}")
    return found


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("write", "check", "show"):
        command = commands.add_parser(name)
        command.add_argument("--isolate", choices=["case", "strategy"], default="case")
        command.add_argument("--parallel", type=int, default=2)
        command.add_argument("strategies", nargs="*", help="default: all")
    commands.add_parser("annotate", help="rewrite the committed tables' 'instead' notes")
    case = commands.add_parser("case", help="(internal) run cases in this process")
    case.add_argument("strategy", choices=list(support.STRATEGIES))
    case.add_argument("apis", nargs="+", choices=list(support.APIS))
    return parser


def main(argv: list[str] | None = None) -> int:
    """`write` regenerates the reference; `check` compares with it; `show` prints; `annotate`
    rewrites the alternatives of the committed tables; `case` runs cases (internal)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "case":
        support_cases.case_main(args.strategy, args.apis)
        return 0
    if args.command == "annotate":
        for key, table in support.load_reference().items():
            write_reference(annotate({"key": key, **table}))
        print(f"wrote {support.REFERENCE}")
        return 0
    if args.command == "write" and args.strategies:
        parser.error("write measures every strategy: give no strategy names")
    strategies = tuple(args.strategies or support.STRATEGIES)
    start = time.perf_counter()
    table = measure(Options(strategies, args.isolate, args.parallel))
    print(format_table(table))
    print(f"\n({time.perf_counter() - start:.0f} s)")
    if args.command == "write":
        write_reference(table)
        print(f"wrote {support.REFERENCE}")
    elif args.command == "check":
        reference = support.load_reference().get(table["key"])
        if reference is None:
            print(f"no committed table for {table['key']}: run `write` and review the diff")
            return 1
        found = differences(table, reference)
        print("\n".join(found) if found else "same as the committed reference")
        return 1 if found else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
