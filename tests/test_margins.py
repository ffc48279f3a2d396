"""tools.runs.margins: a notebook's accuracy over seeds, and how far it is from its check."""

import nbformat
import pytest

from tools.runs import margins
from tools.runs.notebooks import ROOT


@pytest.mark.parametrize(
    ("text", "seeds"),
    [("1-4", [1, 2, 3, 4]), ("1,2,5", [1, 2, 5]), ("1-3, 7", [1, 2, 3, 7]), ("2,2-3", [2, 3])],
)
def test_seeds_are_ranges_or_lists(text, seeds):
    assert margins.parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["4-1", "a", "", "1-", "1,,2", "٣", "1-²"])
def test_a_bad_seed_list_says_how_to_write_one(text):
    with pytest.raises(margins.MarginsError, match="write for example 1-8 or 1,2,5"):
        margins.parse_seeds(text)


@pytest.mark.parametrize("text", ["1-100000000000", "0-100", "4294967296", "1-60,61-101"])
def test_a_seed_list_too_long_or_too_large_is_refused_before_it_takes_memory(text):
    with pytest.raises(margins.MarginsError, match="at most 100 of them"):
        margins.parse_seeds(text)


def test_settings_are_yaml_values_and_a_bad_one_says_how_to_write_it():
    assert margins.parse_settings(["FILTERS=32", "LEARNING_RATE=0.001", "ACCELERATOR=cpu"]) == {
        "FILTERS": 32,
        "LEARNING_RATE": 0.001,
        "ACCELERATOR": "cpu",
    }
    with pytest.raises(margins.MarginsError, match="write NAME=VALUE"):
        margins.parse_settings(["FILTERS"])


def test_the_accuracy_lines_of_the_real_notebooks_are_found():
    # The notebooks' own print statements, as they print them (progress bars have no percentage).
    text = (
        "\x1b[1m150/150\x1b[0m - loss: 0.2733 - accuracy: 0.9214\n"
        "test accuracy: 97.56% (minimum 97%)\n"
        "test accuracy with steps_per_execution=50: 97.60%\n"
        "test accuracy after 300 steps in mixed_bfloat16: 98.04% of 10000\n"
        "accuracy in bfloat16: 97.40% (float32: 97.42%)\n"
        "throughput: 559 examples/s\n"
    )
    found = {m["label"].strip(): float(m["value"]) for m in margins.ACCURACY_LINE.finditer(text)}
    assert found == {
        "test accuracy": 97.56,
        "test accuracy with steps_per_execution=50": 97.60,
        "test accuracy after 300 steps in mixed_bfloat16": 98.04,
        "accuracy in bfloat16": 97.40,
    }


def test_the_summary_gives_the_lowest_run_and_its_margin():
    runs = {1: {"test accuracy": 0.9756}, 2: {"test accuracy": 0.9694}, 3: {}}
    (line,) = margins.summary(runs, 0.97)
    assert line.startswith("test accuracy: lowest 96.94%, mean 97.25%, highest 97.56%")
    assert "over 2 seed(s); margin over 97%: -0.06 points" in line


def test_the_parameters_cell_of_a_real_notebook_is_read():
    defaults = margins.parameter_defaults(ROOT / "notebooks/en/04_custom_training_loop.ipynb")
    assert defaults["SEED"] == 42 and defaults["MIN_TEST_ACCURACY"] is None  # sized: see below
    assert defaults["STEPS_PER_EPOCH"] is None and defaults["ACCELERATOR"] == "auto"


def test_a_sized_minimum_is_compared_at_its_cpu_value():
    notebook = ROOT / "notebooks/en/04_custom_training_loop.ipynb"
    assert margins.cpu_default(notebook, "MIN_TEST_ACCURACY") == 0.95
    with pytest.raises(margins.MarginsError, match="no for_hardware"):
        margins.cpu_default(ROOT / "notebooks/en/01_tpu_initialization.ipynb", "MIN_TEST_ACCURACY")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["notebooks/en/01_tpu_initialization.ipynb"], "has no SEED or no MIN_TEST_ACCURACY"),
        (["notebooks/en/99_missing.ipynb"], "no such notebook"),
        (["notebooks/en/04_custom_training_loop.ipynb", "--seeds", "9-1"], "rising range"),
        (["notebooks/en/04_custom_training_loop.ipynb", "--set", "FILTERS"], "NAME=VALUE"),
    ],
)
def test_bad_input_stops_before_running_anything(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as stop:
        margins.main([*argv, "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_each_seed_runs_in_a_real_kernel_with_the_check_switched_off(tmp_path, capsys):
    # A stand-in notebook whose "accuracy" depends on the seed and which asserts its minimum:
    # the tool must inject SEED, switch the check off (MIN_TEST_ACCURACY=0) and report the margin
    # over the notebook's own minimum.
    cells = [
        nbformat.v4.new_code_cell("SEED = 42\nMIN_TEST_ACCURACY = 0.97\nSCALE = 1.0"),
        nbformat.v4.new_code_cell(
            "accuracy = 0.95 + SEED / 100 * SCALE\n"
            "print(f'test accuracy: {accuracy:.2%} (minimum {MIN_TEST_ACCURACY:.0%})')\n"
            "assert accuracy >= MIN_TEST_ACCURACY"
        ),
    ]
    cells[0].metadata["tags"] = ["parameters"]
    notebook = tmp_path / "xx" / "stand_in.ipynb"
    notebook.parent.mkdir()
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": kernel}), notebook)
    out = tmp_path / "out"
    assert (
        margins.main([str(notebook), "--seeds", "1,3", "--set", "SCALE=1", "--out", str(out)]) == 0
    )
    printed = capsys.readouterr().out
    assert "seed 1: test accuracy 96.00%" in printed  # below 97%, yet the run finished
    assert "seed 3: test accuracy 98.00%" in printed
    assert "lowest 96.00%, mean 97.00%, highest 98.00%" in printed
    assert "margin over 97%: -1.00 points" in printed
    assert (out / "seed-1" / "xx" / "stand_in.ipynb").exists()


def _stand_in(path, parameters=True):
    cell = nbformat.v4.new_code_cell("SEED = 42\nMIN_TEST_ACCURACY = 0.97")
    if parameters:
        cell.metadata["tags"] = ["parameters"]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    return path


def test_a_notebook_without_a_parameters_cell_is_named(tmp_path, capsys):
    # Before: a bare StopIteration from `next(...)`.
    notebook = _stand_in(tmp_path / "xx" / "plain.ipynb", parameters=False)
    with pytest.raises(margins.MarginsError, match="plain.ipynb: no code cell is tagged"):
        margins.parameter_defaults(notebook)
    with pytest.raises(SystemExit) as stop:
        margins.main([str(notebook), "--out", str(tmp_path / "out")])
    assert stop.value.code == 2 and "tagged `parameters`" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["user", "input"])
def test_an_output_folder_it_did_not_make_or_that_holds_the_input_is_refused(
    tmp_path, capsys, where
):
    # Before: the executed copies went into any folder, over the files there.
    notebook = _stand_in(tmp_path / "xx" / "stand_in.ipynb")
    if where == "user":
        out = tmp_path / "mine"
        (out / "seed-1" / "xx").mkdir(parents=True)
        (out / "seed-1" / "xx" / "stand_in.ipynb").write_text("keep me")
        message = "was not made by tools.runs.margins"
    else:
        out, message = tmp_path, "holds the input"
    with pytest.raises(SystemExit) as stop:
        margins.main([str(notebook), "--seeds", "1", "--out", str(out)])
    assert stop.value.code == 2 and message in capsys.readouterr().err
    if where == "user":
        assert (out / "seed-1" / "xx" / "stand_in.ipynb").read_text() == "keep me"
