"""``pytest --np2torch-audit`` on a small test project (run by pytester, in a subprocess of its own)."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

DATASET = """
import numpy as np
import torch


class Frames:
    def __init__(self, arrays):
        self.arrays = arrays

    def __getitem__(self, index):
        return torch.tensor(self.arrays[index])
"""
TESTS = """
import numpy as np
from frames import Frames


def test_frames_are_tensors():
    frames = Frames([np.zeros(4, dtype=np.float32) for _ in range(3)])
    assert [frames[i].shape[0] for i in range(3)] == [4, 4, 4]


def test_nothing_to_see():
    assert True
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(frames=DATASET, test_frames=TESTS)
    return pytester


def test_the_plugin_is_off_unless_asked_and_imports_no_torch(pytester):
    pytester.makepyfile(test_plain="import sys\n\n\ndef test_plain():\n    assert 'torch' not in sys.modules\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "np2torch-audit" not in result.stdout.str()


def test_the_plugin_reports_each_site_with_its_tests(project):
    result = project.runpytest_subprocess("--np2torch-audit", "--np2torch-audit-format", "json",
                                          "--np2torch-audit-output", "audit.json", "--np2torch-audit-compare",
                                          "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert result.ret == 0  # the audit reports; the tests decide the outcome
    result.stdout.fnmatch_lines(["*= np2torch-audit =*", "1 finding written to audit.json"])
    (finding,) = json.loads((project.path / "audit.json").read_text(encoding="utf-8"))
    assert (finding["filename"], finding["line"], finding["code"]) == ("frames.py", 10, "NPT003")
    assert finding["message"] == ("torch.tensor() copied a NumPy array here (3 times, 48 B in all, 16 B each): "
                                  "torch.from_numpy() or torch.as_tensor() shares its memory [not found statically]")
    assert finding["properties"]["tests"] == ["test_frames.py::test_frames_are_tensors"]
    assert finding["properties"]["static"] is False  # an unannotated parameter: the linter cannot know
