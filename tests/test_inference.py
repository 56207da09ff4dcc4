"""The analysis' own rules, checked against the libraries they describe (numpy is installed for the tests)."""

from __future__ import annotations

import itertools

import libcst as cst
import numpy as np
import pytest

from np2torch_lint.analysis import analyze
from np2torch_lint.analysis.dtypes import promote_numpy
from np2torch_lint.analysis.values import Kind, Value, join

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
          "float64", "complex64", "complex128"]


@pytest.mark.parametrize(("a", "b"), list(itertools.combinations_with_replacement(DTYPES, 2)))
def test_array_promotion_matches_numpy(a, b):
    assert promote_numpy(a, b) == np.result_type(np.dtype(a), np.dtype(b)).name


def converted_dtype(source: str) -> tuple[str | None, bool]:
    """The dtype and float64-by-default flag the analysis gives the array in ``torch.from_numpy(<source>)``."""
    facts = analyze(cst.parse_module(f"import numpy as np\nimport torch\nu8 = np.zeros(3, np.uint8)\n"
                                     f"f32 = np.zeros(3, np.float32)\ntorch.from_numpy({source})\n"))
    [conversion] = facts.numpy_to_tensor
    return conversion.source.dtype, conversion.source.float64_by_default


@pytest.mark.parametrize("source", [
    "np.random.rand(3)", "np.random.randn(2, 2)", "np.zeros(3)", "np.ones((2, 2))", "np.empty(3)",
    "np.full(3, 1.0)", "np.array([1.5, 2])", "np.linspace(0, 1, 5)", "np.arange(0., 1., .1)", "np.eye(2)",
    "np.identity(2)", "u8 / 255", "u8 / 255.0", "np.sqrt(np.arange(3))", "np.random.default_rng().random(3)",
    "np.random.default_rng().standard_normal(3)", "np.arange(3) * 0.5", "f32 * np.zeros(1)",
    "np.concatenate([f32, np.zeros(1)])", "f32 + np.arange(3)",
])
def test_numpy_default_float64_is_known_and_matches_numpy(source):
    dtype, by_default = converted_dtype(source)
    namespace = {"np": np, "u8": np.zeros(3, np.uint8), "f32": np.zeros(3, np.float32)}
    assert np.asarray(eval(source, namespace)).dtype.name == dtype == "float64"
    assert by_default


@pytest.mark.parametrize("source", [
    "np.array([1, 2])", "np.arange(3)", "np.full(2, 1)", "np.random.randint(0, 3, 4)", "f32 * 0.5", "f32 + 1.0",
    "f32 / 3", "np.zeros_like(f32)", "np.stack([f32, f32])", "np.clip(f32, 0, 1)", "f32.astype(np.float64)",
    "np.zeros(3, dtype=np.float64)", "np.random.rand(3).astype('float32')", "u8 // 2",
])
def test_other_dtypes_match_numpy_and_are_not_defaults(source):
    dtype, by_default = converted_dtype(source)
    namespace = {"np": np, "u8": np.zeros(3, np.uint8), "f32": np.zeros(3, np.float32)}
    assert dtype == np.asarray(eval(source, namespace)).dtype.name
    assert not by_default


@pytest.mark.parametrize(("source", "dtype"), [
    ("u8.astype(np.float)", "float64"), ("u8.astype(np.int)", "int64"), ("u8.astype(np.bool)", "bool"),
])
def test_numpys_removed_names_of_pythons_types_are_those_types(source, dtype):
    """``np.float`` was ``float`` until NumPy 1.24 removed it: float64 as a dtype, not torch's float32."""
    builtin = source.replace("np.", "")
    assert converted_dtype(source) == converted_dtype(builtin) == (dtype, False)
    assert np.asarray(eval(builtin, {"u8": np.zeros(3, np.uint8)})).dtype.name == dtype


@pytest.mark.parametrize("source", [
    "u8 * n", "np.arange(3) * n", "f32 * n", "np.random.rand(3) * n", "n * np.zeros(2, np.float16)", "b + n",
    "b + 1", "b + 1.5", "b + True",
])
def test_a_number_parameter_gives_the_dtype_numpy_gives_for_any_number_or_none(source):
    """``def f(n=0)``: ``n`` is a Python number, an int, a float or a bool as the caller passes it."""
    facts = analyze(cst.parse_module(f"import numpy as np\nimport torch\nu8 = np.zeros(3, np.uint8)\n"
                                     f"f32 = np.zeros(3, np.float32)\nb = np.array([True])\n"
                                     f"def f(n=0):\n    torch.from_numpy({source})\n"))
    [conversion] = facts.numpy_to_tensor
    namespace = {"np": np, "u8": np.zeros(3, np.uint8), "f32": np.zeros(3, np.float32), "b": np.array([True])}
    results = {np.asarray(eval(source, {**namespace, "n": n})).dtype.name for n in (2, 0.5, True)}
    assert conversion.source.dtype in ({None} if len(results) > 1 else results | {None})
    if len(results) == 1:
        assert conversion.source.dtype is not None, f"{source} is {results} whatever the number"


def test_unknown_values_stay_unknown():
    facts = analyze(cst.parse_module("import torch\ndef f(t, a):\n    t.numpy()\n    torch.tensor(a)\n"))
    assert facts.tensor_to_numpy == [] and facts.numpy_to_tensor == []


def test_a_value_bound_in_one_branch_only_keeps_that_branch():
    facts = analyze(cst.parse_module(
        "import torch\nif c:\n    y = torch.ones(1, requires_grad=True)\ny.numpy()\n"))
    [conversion] = facts.tensor_to_numpy
    assert conversion.tensor.kind is Kind.TENSOR and conversion.tensor.requires_grad is True


# Array layout (NPT008): what the analysis says of negative strides and read-only arrays, checked against NumPy.
# Each source is (the expression, whether the analysis must know its strides, whether it must know its flag).
LAYOUT_SOURCES = [
    ("a[::-1]", True, False), ("a[:, :, ::-1]", True, False), ("a[..., ::-1]", True, False),
    ("a[0, ::-1]", True, False), ("a[::-1, 0]", True, False), ("a[::-1][1:]", True, False),
    ("a[::-1][None]", True, False), ("a[::-1].T", True, False), ("a[::-1].transpose(2, 0, 1)", True, False),
    ("np.flip(a)", True, False), ("np.flip(a, axis=1)", True, False), ("np.flipud(a)", True, False),
    ("np.fliplr(a)", True, False), ("np.rot90(a)", True, False), ("np.rot90(a, 2)", True, False),
    ("np.rot90(a, -1)", True, False), ("np.rot90(a, 4)", False, False), ("np.asarray(a[::-1])", True, False),
    ("np.transpose(a[::-1])", True, False), ("np.squeeze(a[::-1])", True, False),
    ("np.expand_dims(a[::-1], 0)", True, False), ("a[::-1].swapaxes(0, 1)", True, False),
    ("a[::-1].copy()", True, True), ("np.array(a[::-1])", True, True), ("np.copy(a[::-1])", True, True),
    ("np.ascontiguousarray(a[::-1])", True, False), ("a[::-1].astype(np.float32)", True, True),
    ("a[::-1].flatten()", True, True), ("np.stack([a[::-1]])", True, True), ("a[:, ::2]", False, False),
    ("a[::-1][::-1]", False, False), ("a[:, ::-1][:, 0]", False, False), ("a[[1, 0]]", False, False),
    ("np.abs(a[::-1])", False, False), ("a[::-1] * 2", False, False), ("a[::-1].reshape(-1)", False, False),
    ("np.broadcast_to(a, (2, 2, 3, 4))", False, True), ("np.broadcast_to(a[::-1], (2, 2, 3, 4))", True, True),
    ("np.broadcast_to(a, (2, 2, 3, 4))[0]", False, True), ("np.frombuffer(b'\\x00' * 8)", True, True),
    ("np.frombuffer(a.tobytes())", True, True), ("np.frombuffer(bytearray(8))", True, False),
    ("np.memmap('m.dat', dtype=np.float32, mode='r')", True, True), ("np.memmap('m.dat', mode='r+')", True, True),
    ("np.memmap('m.dat', dtype=np.float32, mode='c')", True, True), ("np.load('x.npy', mmap_mode='r')", True, True),
    ("np.load('x.npy', mmap_mode='r+')", True, True),
    ("np.lib.stride_tricks.sliding_window_view(a, 2, axis=0)", False, True),
    ("np.array(np.broadcast_to(a, (2, 2, 3, 4)), copy=False)", False, True),
    ("np.array(a[::-1], copy=None)", True, False),
    ("np.array(a[::-1], copy=True)", False, False), ("np.array(a[::-1], np.float64, copy=False)", False, False),
]


@pytest.mark.parametrize(("source", "strides_known", "flag_known"), LAYOUT_SOURCES, ids=[s for s, *_ in LAYOUT_SOURCES])
def test_negative_strides_and_read_only_arrays_match_numpy(source, strides_known, flag_known, tmp_path, monkeypatch):
    facts = analyze(cst.parse_module(f"import numpy as np\nimport torch\na = np.arange(24.).reshape(2, 3, 4)\n"
                                     f"torch.from_numpy({source})\n"))
    [conversion] = facts.numpy_to_tensor
    monkeypatch.chdir(tmp_path)
    np.arange(6, dtype=np.float32).tofile("m.dat")
    np.save("x.npy", np.arange(6, dtype=np.float32))
    array = eval(source, {"np": np, "a": np.arange(24.).reshape(2, 3, 4)})
    negative, read_only = conversion.source.negative_strides, conversion.source.read_only
    assert (negative is not None) is strides_known and (read_only is not None) is flag_known
    if negative is not None:
        assert negative == any(stride < 0 for stride in array.strides)
    if read_only is not None:
        assert read_only == (not array.flags.writeable)


KEPT_READS = '''
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        return self.weights.numpy()

    def build(self):
        self.weights = torch.zeros(3, requires_grad=True)

    def export(self):
        return self.weights.numpy()
'''


def test_a_method_is_read_again_only_when_an_attribute_it_read_changed_after_its_kept_read(monkeypatch):
    from np2torch_lint.analysis.interpreter import Analyzer
    from np2torch_lint.engine import lint_text

    reads: list[str] = []
    run_body = Analyzer._run_body

    def counting(self, info, *args, **kwargs):
        reads.append(info.name)
        return run_body(self, info, *args, **kwargs)

    monkeypatch.setattr(Analyzer, "_run_body", counting)
    found = [(d.code, d.line) for d in lint_text(KEPT_READS, "net.py")]
    # forward read self.weights before build assigned it: read again, and reported; export is reported once
    assert found == [("NPT001", 7), ("NPT001", 13)]
    assert reads.count("forward") == 2 and reads.count("export") == 1 and reads.count("build") == 1


BACK_EDGES = '''
import torch

def f(xs, model):
    out = None
    for x in xs:
        read_once(x)
        y = model(x)
    for x in xs:
        if out is not None:
            out.numpy()
        read_twice(x)
        out = torch.zeros(3, requires_grad=True)
'''


def test_a_loop_body_is_read_again_only_when_its_back_edge_changes_a_name_it_reads_first(monkeypatch):
    from np2torch_lint.analysis.interpreter import Analyzer
    from np2torch_lint.engine import lint_text

    calls: list[str] = []
    call = Analyzer._call

    def counting(self, node):
        if isinstance(node.func, cst.Name):
            calls.append(node.func.value)
        return call(self, node)

    monkeypatch.setattr(Analyzer, "_call", counting)
    found = [(d.code, d.line) for d in lint_text(BACK_EDGES, "loops.py")]
    # ``y`` is bound before it is read: the first loop's back edge changes nothing it reads; ``out`` comes round
    assert calls.count("read_once") == 1 and calls.count("read_twice") == 2
    assert found == [("NPT001", 11)]


TREE_IN_CYCLES = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.child = Net.make()

    @staticmethod
    def make():
        return Net()

    def forward(self, x, scale=lambda v: v * 2):
        for item in x:
            x = self.child(scale(item))
        return x

def helper(net=Net()):
    return net
'''


def _tree_objects_left_for_the_collector() -> list[cst.CSTNode]:
    import gc

    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return [each for each in gc.garbage if isinstance(each, cst.CSTNode)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_a_files_tree_is_freed_when_dropped_not_by_the_garbage_collector(tmp_path):
    import gc

    from np2torch_lint.commands import lint
    from np2torch_lint.config import load_settings

    (tmp_path / "pyproject.toml").write_text("[tool.np2torch-lint]\n")
    (tmp_path / "net.py").write_text(TREE_IN_CYCLES)
    (tmp_path / "train.py").write_text("from net import Net, helper\nmodel = helper(Net())\n")
    gc.collect()
    gc.disable()
    try:
        analyze(cst.parse_module(TREE_IN_CYCLES))
        assert _tree_objects_left_for_the_collector() == []
        lint([str(tmp_path)], load_settings(tmp_path / "pyproject.toml"))  # the project's analyses, too
        assert _tree_objects_left_for_the_collector() == []
    finally:
        gc.enable()


@pytest.mark.parametrize(("other", "kept"), [
    (Value(Kind.TENSOR, on_accelerator=False), True),  # ``else: r = torch.FloatTensor(r)``: this step's, on the host
    (Value(Kind.TENSOR, on_accelerator=True), False),  # a tensor already there (a cat of the moved one, miles-credit)
    (Value(Kind.TENSOR), False),  # anywhere
])
def test_a_step_moved_on_one_path_stays_moved_where_the_other_path_made_it_on_the_host(other: Value, kept: bool):
    transfer = cst.parse_expression("r.cuda()")
    moved = Value(Kind.TENSOR, on_accelerator=True, loop_item=7, transfer=transfer, transfer_needs_stack=True,
                  transfer_per_step=True)
    for joined in (join(moved, other), join(other, moved)):
        assert (joined.transfer is transfer, joined.loop_item == 7) == (kept, kept)


@pytest.mark.parametrize(("source", "reads_after"), [
    ("if c:\n    r = move(r)\nelse:\n    r = host(r)\nkeep(r)\n", 1),  # the else branch does not run after the move
    ("if c:\n    r = host(r)\nelse:\n    r = move(r)\nkeep(r)\n", 1),
    ("if (r := move(r)) is not None:\n    use(r)\nelse:\n    other(r)\nkeep(r)\n", 3),  # both run after the test
    ("r = move(r)\nif c:\n    use(r)\nelif d:\n    other(r)\nkeep(r)\n", 3),
])
def test_the_reads_after_a_move_leave_out_the_branch_that_does_not_run_after_it(source: str, reads_after: int):
    from libcst import matchers

    from np2torch_lint.analysis.calls import _reads_after

    body = cst.parse_module(source)
    [move] = matchers.findall(body, matchers.Call(func=matchers.Name("move")))
    assert len(_reads_after(body, move, "r")) == reads_after


@pytest.mark.parametrize(("setters", "wants_float64"), [
    ("torch.set_default_tensor_type(torch.cuda.FloatTensor)", False),
    ("torch.set_default_tensor_type('torch.FloatTensor')\ntorch.set_default_dtype(torch.float32)", False),
    ("torch.set_default_dtype(torch.float64)", True),
    ("torch.set_default_tensor_type(torch.cuda.FloatTensor)\ntorch.set_default_dtype(torch.double)", True),
    ("torch.set_default_dtype(chosen)", True),
])
def test_a_default_that_names_float32_does_not_make_float64_wanted(setters, wants_float64):
    facts = analyze(cst.parse_module(f"import torch\n{setters}\n"))
    assert facts.sets_default_dtype
    assert facts.may_want_float64 is wants_float64
