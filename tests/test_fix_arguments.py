"""A fix that rewrites a call carries every argument of it, or is not offered."""

from __future__ import annotations

import pytest

from np2torch_lint.engine import analyse_text
from np2torch_lint.fixer import fix_text
from np2torch_lint.fixes import FixStyle

ARRAYS = ("import numpy as np\nimport torch\n\ndevice = torch.device('cuda')\n"
          "arrays = [np.zeros((4, 3), dtype=np.float32) for _ in range(2)]\n")
PER_ITEM = "[torch.from_numpy(a).to(device) for a in arrays]"


@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
@pytest.mark.parametrize("stacking", [
    f"torch.stack({PER_ITEM}, out=buffer)",  # the batch would be another tensor than ``buffer``
    f"torch.stack({PER_ITEM}, 1, out=buffer)",
    f"torch.stack({PER_ITEM}, *more)",
    f"torch.stack({PER_ITEM}, dim=pick_dim())",  # evaluated before the device after the rewrite, not after it
], ids=["out", "dim and out", "star", "dim from a call"])
def test_a_stacking_fix_that_cannot_carry_an_argument_is_not_offered(stacking, style):
    analysis = analyse_text(ARRAYS + f"batch = {stacking}\n", "x.py", style=style)
    assert [finding.code for finding in analysis.findings] == ["NPT005"]
    assert analysis.findings[0].fix is None


@pytest.mark.parametrize(("style", "stacking", "fixed"), [
    (FixStyle.HELPERS, f"torch.stack({PER_ITEM}, dim=0)", "stack_to_device(arrays, device)"),
    (FixStyle.HELPERS, f"torch.stack({PER_ITEM}, -0)", "stack_to_device(arrays, device)"),
    (FixStyle.HELPERS, f"torch.stack({PER_ITEM}, dim=1)", "torch.from_numpy(np.stack(arrays, axis=1)).to(device)"),
    (FixStyle.INLINE, f"torch.stack({PER_ITEM}, -1)", "torch.from_numpy(np.stack(arrays, axis=-1)).to(device)"),
    (FixStyle.INLINE, f"torch.stack(tensors={PER_ITEM}, dim=self.dim)",
     "torch.from_numpy(np.stack(arrays, axis=self.dim)).to(device)"),
    (FixStyle.HELPERS, "torch.stack([t.to(device) for t in tensors], dim=2)",
     "torch.stack(tensors, dim=2).to(device)"),
], ids=["dim 0 is the helper's", "positional -0", "dim 1: the plain idiom", "positional dim",
        "tensors= and an attribute", "tensors"])
def test_a_stacking_fix_stacks_along_the_same_dim(style, stacking, fixed):
    text = ARRAYS + "tensors = [torch.from_numpy(a) for a in arrays]\n" + f"batch = {stacking}\n"
    assert fix_text(text, "x.py", style=style, unsafe=True).text.endswith(f"batch = {fixed}\n")


@pytest.mark.parametrize(("call", "fixed"), [
    ("w.numpy(flag)", "w.detach().numpy(flag)"),  # force= may be True: to_numpy would copy where numpy shares
    ("w.numpy(**options)", "w.detach().numpy(**options)"),
    ("w.numpy(force=False)", "to_numpy(w)"),  # the default: nothing is lost
])
def test_the_helpers_style_keeps_an_argument_to_numpy_that_to_numpy_cannot_take(call, fixed):
    text = f"import torch\nw = torch.ones(2, requires_grad=True)\nx = {call}\n"
    assert fix_text(text, "x.py", style=FixStyle.HELPERS).text.endswith(f"x = {fixed}\n")


LISTS = ("import numpy as np\nimport torch\n\nxs = [np.zeros(3, dtype=np.float32), np.ones(3, dtype=np.float32)]\n"
         "a = np.zeros(3, dtype=np.float32)[::-1]\n")


@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
@pytest.mark.parametrize(("call", "fixed"), [
    ("torch.tensor(xs, requires_grad=True)", "torch.tensor(np.stack(xs), requires_grad=True)"),  # NPT006
    ("torch.as_tensor(xs, torch.float32, 'cuda')", "torch.as_tensor(np.stack(xs), torch.float32, 'cuda')"),
    ("torch.tensor(xs, device='cuda', pin_memory=False)",
     "torch.tensor(np.stack(xs), device='cuda', pin_memory=False)"),
    ("torch.as_tensor(a, torch.float32)", "torch.as_tensor(np.ascontiguousarray(a), torch.float32)"),  # NPT008
    ("torch.tensor(a, requires_grad=True)", "torch.tensor(np.ascontiguousarray(a), requires_grad=True)"),
])
def test_the_other_rules_fixes_keep_every_argument(call, fixed, style):
    """Positional and keyword arguments a runtime helper cannot take keep the call they were given to."""
    assert fix_text(LISTS + f"t = {call}\n", "x.py", style=style, unsafe=True).text.endswith(f"t = {fixed}\n")
