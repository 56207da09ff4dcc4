"""Each rule on a runnable program where the linter is silent, and the right thing for each getting no report."""

from __future__ import annotations

import runpy

import pytest

from np2torch_lint.audit import audit
from np2torch_lint.engine import lint_text
from programs import PROGRAMS, expected, run

FINDING_PROGRAMS = ["npt003_dataset_items.py", "npt004_config_targets.py", "npt004_dataset_batches.py",
                    "npt005_moved_items.py", "npt006_replay_frames.py"]
RIGHT_PROGRAMS = ["npt003_shared_items.py", "npt004_decided_dtypes.py", "npt005_batched_moves.py",
                  "npt006_stacked_frames.py"]


def static_findings(name: str) -> set[tuple[str, int]]:
    path = PROGRAMS / name
    return {(d.code, d.line) for d in lint_text(path.read_text(encoding="utf-8"), str(path))}


@pytest.mark.parametrize("name", FINDING_PROGRAMS)
def test_the_audit_reports_what_the_linter_cannot_see(name):
    marks = expected(PROGRAMS / name)
    assert marks and not set(marks) & static_findings(name)  # the point of the program: the linter is silent
    findings = run(PROGRAMS / name).findings
    assert {(f.code, f.line) for f in findings} == set(marks)
    for finding in findings:
        counts = marks[(finding.code, finding.line)]
        assert finding.filename == str(PROGRAMS / name)
        assert finding.count == counts["count"], finding
        if "bytes" in counts:
            assert finding.nbytes == counts["bytes"], finding


@pytest.mark.parametrize("name", RIGHT_PROGRAMS)
def test_programs_that_do_the_right_thing_get_no_report(name):
    assert not expected(PROGRAMS / name)
    assert run(PROGRAMS / name).findings == []


@pytest.fixture(autouse=True)
def _in_the_repository(monkeypatch):
    monkeypatch.chdir(PROGRAMS.parents[2])


def line_of(name: str, text: str) -> int:
    lines = (PROGRAMS / name).read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


def test_npt004_names_where_the_float64_met_float32():
    (finding,) = run(PROGRAMS / "npt004_config_targets.py").findings
    (met,) = finding.properties["met"]
    meeting = line_of("npt004_config_targets.py", "# promoted to float64 here")
    assert (met["line"], met["how"], met["count"]) == (meeting, "float32: promoted to float64", 3)
    assert f"met float32 at tests/data/audit/npt004_config_targets.py:{meeting} (promoted to float64, 3 times)" \
        in finding.message  # shown relative to the current folder, as the linter shows paths


def test_npt004_of_a_data_loader_batch_says_the_dataset_returns_float64():
    (finding,) = run(PROGRAMS / "npt004_dataset_batches.py").findings
    assert finding.message.startswith("a DataLoader batch collated here from float64 NumPy arrays met float32")
    assert "make the dataset return float32" in finding.message
    assert finding.properties["met"][0]["how"] == "float32: raised RuntimeError"


def test_the_dtype_error_carries_the_rule_and_where_the_tensor_was_made(write):
    program = write("made.py", "import numpy as np, torch\n"
                               "x = torch.from_numpy(np.zeros((2, 3)))\n"
                               "torch.nn.Linear(3, 1)(x)\n")
    with pytest.raises(RuntimeError, match="same dtype") as raised, audit() as report:
        runpy.run_path(str(program))
    assert raised.value.__notes__ == [f"np2torch-audit: NPT004: this float64 tensor was made from NumPy data at "
                                      f"{program}:2: pass dtype=torch.float32 or call .float() (or spell float64 "
                                      "out)"]
    assert [(f.code, f.line, f.count) for f in report.findings] == [("NPT004", 2, 1)]


def test_npt005_counts_the_copies_kept_together_per_batch():
    (finding,) = run(PROGRAMS / "npt005_moved_items.py").findings
    assert finding.properties == {"kept_together": 8, "batches": 3, "mean_bytes": 64}


def test_npt006_times_each_conversion():
    (finding,) = run(PROGRAMS / "npt006_replay_frames.py").findings
    assert finding.seconds > 0 and finding.properties["arrays"] == 8
    assert "converted them element by element here (3 times" in finding.message


def test_npt001_error_carries_the_rule_and_the_fix():
    marks = expected(PROGRAMS / "npt001_logged_loss.py")
    assert not set(marks) & static_findings("npt001_logged_loss.py")
    with pytest.raises(RuntimeError, match="requires grad") as raised, audit() as report:
        runpy.run_path(str(PROGRAMS / "npt001_logged_loss.py"), run_name="__main__")
    assert [((f.code, f.line), f.count) for f in report.findings] == [((code, line), counts["count"])
                                                                      for (code, line), counts in marks.items()]
    (note,) = raised.value.__notes__
    assert note.startswith("np2torch-audit: NPT001 at ") and note.endswith(": call .detach() first (or "
                                                                           "np2torch_lint.runtime.to_numpy(t), "
                                                                           "which copies)")


def test_npt003_the_legacy_constructor_casting_an_array_is_a_copy_and_sharing_is_not(write):
    program = write("legacy.py", "import numpy as np, torch\n"
                                 "cast = torch.Tensor(np.zeros(3))\n"  # float64 into float32: a copy
                                 "shared = torch.Tensor(np.zeros(3, dtype=np.float32))\n"
                                 "shaped = torch.Tensor(2, 3)\n"
                                 "class Marked(torch.Tensor):\n"
                                 "    pass\n"
                                 "marked = Marked(np.zeros(2, dtype=np.float32))\n")
    with audit() as report:
        scope = runpy.run_path(str(program))
    (finding,) = report.findings
    assert (finding.code, finding.line, finding.count, finding.nbytes) == ("NPT003", 2, 1, 24)
    assert finding.message.startswith("torch.Tensor() silently copied a float64 array into float32 here")
    assert scope["shaped"].shape == (2, 3) and type(scope["marked"]).__name__ == "Marked"
