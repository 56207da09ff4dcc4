"""What a newcomer sees by default: the legacy constructors' intended casts are NPT009, off by default; NPT003 says
what a copy costs where the code says the shape; every message and fix keeps the tensor's device and dtype."""

from __future__ import annotations

import subprocess
import sys

import pytest

from np2torch_lint.cli import main
from np2torch_lint.engine import analyse_text
from np2torch_lint.fixer import fix_text
from np2torch_lint.fixes import FixStyle

from helpers import run_main

HEADER = "import numpy as np\nimport torch\n"
ALIAS = HEADER + ("cuda = torch.cuda.is_available()\n"
                  "FloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n")
CAST = HEADER + "z = torch.FloatTensor(np.random.normal(0, 1, (64, 100)))\n"


def messages(text: str, code: str) -> list[str]:
    return [finding.message for finding in analyse_text(text, "x.py").findings if finding.code == code]


def codes_reported(capsys, path, *options: str) -> list[str]:
    _, out, _ = run_main(main, capsys, "--no-cache", *options, str(path))
    return [line.split()[1] for line in out.splitlines()]


def test_a_legacy_constructors_cast_is_not_reported_by_default(write, capsys):
    path = write("gan.py", CAST)
    assert codes_reported(capsys, path) == []
    assert codes_reported(capsys, path, "--extend-select", "NPT009") == ["NPT009"]
    assert codes_reported(capsys, path, "--select", "NPT009") == ["NPT009"]


def test_an_opt_in_rule_is_selected_by_its_code_never_by_a_prefix(write, capsys, tmp_path):
    path = write("gan.py", CAST + "torch.tensor(np.zeros(3, dtype=np.float32))\ntorch.tensor(np.zeros(3)).float()\n")
    assert codes_reported(capsys, path) == ["NPT010"]  # the plain copy (NPT003) and the cast (NPT009) are opt-in
    assert codes_reported(capsys, path, "--select", "NPT") == ["NPT010"]
    assert codes_reported(capsys, path, "--select", "NPT0") == ["NPT010"]
    (tmp_path / "pyproject.toml").write_text('[tool.np2torch-lint]\nselect = ["NPT", "NPT009"]\n')
    assert codes_reported(capsys, path) == ["NPT009", "NPT010"]
    assert codes_reported(capsys, path, "--extend-select", "NPT003", "--ignore", "NPT009") == ["NPT003", "NPT010"]


@pytest.mark.parametrize(("options", "expected"), [
    ((), []),  # flake8's default selection of every installed plugin leaves the opt-in rule out
    (("--select", "NPT"), []),
    (("--extend-select", "NPT009"), ["NPT009"]),
    (("--select", "NPT009"), ["NPT009"]),
    (("--select", "NPT009", "--ignore", "NPT009"), []),
])
def test_flake8_reports_the_opt_in_rule_only_where_its_code_is_named(write, options, expected):
    path = write("gan.py", CAST)
    result = subprocess.run([sys.executable, "-m", "flake8", *options, str(path)], capture_output=True, text=True)
    assert [line.split()[1] for line in result.stdout.splitlines()] == expected, result.stderr


def test_a_cuda_alias_message_is_a_sentence_that_keeps_the_device():
    (message,) = messages(ALIAS + "z = FloatTensor(np.random.normal(0, 1, (64, 100)))\n", "NPT009")
    assert message == ("FloatTensor, which is torch.cuda.FloatTensor or torch.FloatTensor, silently copies this "
                       "float64 array (51 kB) into float32: say so with torch.as_tensor(array, dtype=torch.float32, "
                       "device=...) on the device FloatTensor stands for, or keep FloatTensor")
    assert "()" not in message.split(":")[0]  # no "FloatTensor (here ...)()"


def test_torch_cuda_constructors_are_told_and_fixed_with_their_device():
    text = HEADER + "z = torch.cuda.FloatTensor(np.zeros(3))\n"
    (message,) = messages(text, "NPT009")
    assert message.endswith('torch.as_tensor(array, dtype=torch.float32, device="cuda")')
    inline = fix_text(text, "x.py", style=FixStyle.INLINE).text
    assert inline.endswith('z = torch.as_tensor(np.zeros(3), dtype=torch.float32, device="cuda")\n')  # not torch.cuda.
    helpers = fix_text(text, "x.py", style=FixStyle.HELPERS).text
    assert helpers.endswith('z = from_numpy(np.zeros(3), dtype=torch.float32, device="cuda")\n')


def test_a_constructor_picked_at_run_time_gets_no_fix_that_would_pick_a_device():
    text = ALIAS + "z = FloatTensor(np.zeros(3))\n"
    assert fix_text(text, "x.py", style=FixStyle.INLINE, unsafe=True).text == text


@pytest.mark.parametrize("code", ["torch.tensor(np.zeros((1000, 1000), dtype=np.float32))",
                                  "torch.tensor(np.random.rand(10000, 1000).astype(np.float32))"])
def test_a_copy_of_known_shape_says_what_it_costs_and_one_of_unknown_shape_does_not(code):
    (message,) = messages(HEADER + code + "\n", "NPT003")
    if "zeros" in code:
        assert message.startswith("torch.tensor() copies the whole array (4 MB): ")
    else:
        assert message.startswith("torch.tensor() copies the whole array: ")  # a method's result: no shape known
    assert message.endswith("would share its memory, if neither is written afterwards")


@pytest.mark.parametrize(("made", "size"), [("np.zeros((10000, 1000))", "80 MB"), ("np.empty(3)", "24 bytes"),
                                            ("np.ones((2, 3, 4), dtype=np.int32)", "96 bytes"),
                                            ("np.random.randn(500, 500)", "2 MB"),
                                            ("np.random.normal(0, 1, size=(256, 128))", "262 kB"),
                                            ("np.full((1024, 1024, 3), 7, dtype=np.uint8)", "3.1 MB")])
def test_the_size_of_a_copy_comes_from_the_shape_and_dtype_the_code_says(made, size):
    (message,) = messages(HEADER + f"torch.Tensor({made})\n", "NPT009")
    assert f" array ({size}) into float32" in message


def test_a_float64_default_is_left_to_npt004_and_a_float64_cast_later_to_npt010():
    undecided = HEADER + "t = torch.tensor(np.linspace(0, 1, 100))\n"
    assert [f.code for f in analyse_text(undecided, "x.py").findings] == ["NPT004"]
    decided = HEADER + "t = torch.tensor(np.linspace(0, 1, 100)).float()\n"  # two copies where one would do
    assert [f.code for f in analyse_text(decided, "x.py").findings] == ["NPT010"]
    default_changed = "torch.set_default_dtype(torch.float64)\n" + undecided.split("\n", 2)[2]
    assert [f.code for f in analyse_text(HEADER + default_changed, "x.py").findings] == ["NPT003"]


@pytest.mark.cuda
def test_the_fixed_torch_cuda_constructor_makes_the_same_tensor_on_the_gpu():
    import numpy as np
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    text = HEADER + "a = np.arange(6.0)\nz = torch.cuda.FloatTensor(a)\n"
    before: dict = {}
    after: dict = {}
    exec(compile(text, "before.py", "exec"), before)  # noqa: S102 - our own test program
    exec(compile(fix_text(text, "x.py", style=FixStyle.INLINE).text, "after.py", "exec"), after)  # noqa: S102
    assert after["z"].device == before["z"].device and after["z"].dtype == before["z"].dtype == torch.float32
    assert torch.equal(after["z"].cpu(), before["z"].cpu()) and isinstance(after["a"], np.ndarray)
