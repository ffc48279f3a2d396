"""The benchmark runs end to end (tiny settings) and counts FLOPs as REFERENCE.md measured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tools.runs import bench


def test_flops_of_the_guides_model():
    # REFERENCE.md: about 0.76 GFLOP forward, 2.3 GFLOP per training example at 256 filters.
    flops = bench.training_flops_per_example(bench.create_model(256))
    assert flops / 3 == pytest.approx(0.758e9, rel=0.01)
    assert flops == pytest.approx(2.27e9, rel=0.01)


@pytest.mark.slow
def test_bench_writes_table_json_and_chart(tmp_path):
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.runs.bench",
            "--filters",
            "4",
            "--batch",
            "16",
            "--replicas",
            "2",
            "--steps",
            "4",
            "--steps-per-execution",
            "2",
            "--repeats",
            "2",
            "--out",
            str(tmp_path / "bench"),  # a folder it makes and marks
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[1],  # tools/ is run from the repository root
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "multi-step loop, 2 steps per call" in completed.stdout
    figures = json.loads((tmp_path / "bench" / "bench_f4_b16_r2.json").read_text())
    assert figures["settings"]["replicas"] == 2
    assert [row["style"] for row in figures["results"]] == [
        "fit, steps_per_execution=1",
        "fit, steps_per_execution=2",
        "custom loop, 1 step per call",
        "multi-step loop, 2 steps per call",
    ]
    for row in figures["results"]:
        assert row["examples_per_second"] > 0 and 0 < row["model_flops_utilization"] < 1
        runs = row["runs_examples_per_second"]
        assert len(runs) == 2 and min(runs) <= row["examples_per_second"] <= max(runs)
    assert (tmp_path / "bench" / "bench_f4_b16_r2.png").stat().st_size > 1000


def test_spread_is_relative_to_the_median():
    assert bench.spread([90.0, 100.0, 120.0]) == "-10%/+20%"
    assert bench.spread([50.0]) == "+0%/+0%"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"steps": 5, "steps_per_execution": 2}, "must be a multiple of steps_per_execution"),
        ({"steps_per_execution": 0}, "steps_per_execution must be a positive integer"),
        ({"steps": -1}, "steps must be a positive integer"),
        ({"repeats": 0}, "repeats must be a positive integer"),
    ],
)
def test_bench_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bench.run(**kwargs)


def test_an_output_path_that_is_a_file_is_refused_before_measuring(tmp_path, capsys):
    # Before: the whole benchmark ran, then its JSON and PNG were lost.
    from tools.runs import bench

    target = tmp_path / "bench.txt"
    target.write_text("keep me")
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--out", str(target), "--steps", "1"])
    assert exit_info.value.code == 2
    assert f"--out {target} is not a writable folder" in capsys.readouterr().err
    assert target.read_text() == "keep me"


@pytest.mark.parametrize("value", ["-1", "4294967296", "1.5", "x"])
def test_a_seed_numpy_refuses_is_refused_by_the_command_line(value, tmp_path, capsys):
    # Before: `--seed -1` measured nothing and failed inside numpy.
    from tools.runs import bench

    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--seed", value, "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    assert "write an integer from 0 to 4294967295" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_an_output_folder_the_bench_did_not_make_is_refused_before_measuring(tmp_path, capsys):
    from tools.runs import bench

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "bench_f32_b200_r1.json").write_text("keep me")
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--out", str(mine), "--steps", "1"])
    assert exit_info.value.code == 2
    assert f"{mine} was not made by tools.runs.bench" in capsys.readouterr().err
    assert (mine / "bench_f32_b200_r1.json").read_text() == "keep me"


@pytest.mark.parametrize(
    ("times", "steps", "message"),
    [
        ([1.0, 1.0], [4, 8], "No rate from 4 steps in 0 s"),  # a clock that did not move
        ([2.0, 1.0], [4, 8], "No rate from 4 steps in -1 s"),  # times out of order
        ([1.0, 2.0], [8, 8], "No rate from 0 steps in 1 s"),  # no step between them
    ],
)
def test_a_rate_from_times_that_do_not_grow_is_refused(times, steps, message):
    # Before: a ZeroDivisionError, or a negative rate.
    with pytest.raises(ValueError, match=message):
        bench.examples_per_second(times, steps, 256)
    assert bench.examples_per_second([1.0, 3.0], [4, 8], 256) == 512
