"""The library models against the libraries: every NumPy and torch row's examples run for real, and what the
analysis says of each result (kind, dtype, requires_grad, device, module parameters) must be true of it.

A row the examples do not cover fails the coverage test, so the table cannot drift from NumPy and torch.
"""

from __future__ import annotations

import io  # noqa: F401 - the examples use it
import re
import sys
import tempfile
from pathlib import Path

import libcst as cst
import numpy as np
import pytest
import torch

import np2torch_lint  # noqa: F401 - the examples call np2torch_lint.runtime
import np2torch_lint.runtime  # noqa: F401
from np2torch_lint.analysis import Analyzer
from np2torch_lint.analysis.models import builtin_models, parse_spec, ModelError
from np2torch_lint.analysis.values import Kind, Value

from helpers import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXAMPLES = tomllib.loads((REPO / "tests" / "data" / "model_examples.toml").read_text(encoding="utf-8"))
MODELS = builtin_models()
CHECKED_PREFIXES = ("numpy.", "torch.", "np2torch_lint.")

# Names the examples use; the analysis sees the same assignments, so it knows what each one is.
PRELUDE = """\
import io
import numpy as np
import torch
import np2torch_lint.runtime
f64 = np.random.rand(3)
f32 = np.ones(3, dtype=np.float32)
i64 = np.arange(3)
i32 = np.arange(3, dtype=np.int32)
u8 = np.zeros((4, 4, 3), dtype=np.uint8)
b = np.array([True, False, True])
t = torch.ones(3)
tg = torch.ones(3, requires_grad=True)
ts = torch.ones((), requires_grad=True)
tm = torch.ones(2, 2, requires_grad=True)
ti = torch.arange(3)
rng = np.random.default_rng(0)
rs = np.random.RandomState(0)
lin = torch.nn.Linear(3, 2)
grad_tensor = torch.ones(3, requires_grad=True)
grad_tensor.sum().backward()
"""
_FILES = tempfile.TemporaryDirectory()
_folder = Path(_FILES.name)
np.arange(4, dtype=np.float64).tofile(_folder / "floats.bin")
(_folder / "bytes.bin").write_bytes(bytes(16))
np.save(_folder / "array.npy", np.arange(3.0))
FILES = {"float_file": str(_folder / "floats.bin"), "byte_file": str(_folder / "bytes.bin"),
         "npy_file": str(_folder / "array.npy")}


def _cases(table: str) -> list[tuple[str, str]]:
    return [(qualname, example) for qualname, examples in EXAMPLES[table].items() for example in examples]


def _analyzer(expression: str) -> Analyzer:
    names = "".join(f"{name} = {path!r}\n" for name, path in FILES.items())
    analyzer = Analyzer()
    analyzer.analyze(cst.parse_module(PRELUDE + names + f"RESULT = {expression}\n"))
    return analyzer


def _analysed(expression: str) -> Value:
    return _analyzer(expression).module_scope.names["RESULT"]


def _run(expression: str) -> object:
    namespace: dict[str, object] = dict(FILES)
    exec(PRELUDE + f"RESULT = {expression}\n", namespace)  # noqa: S102 - our own example code
    return namespace["RESULT"]


def _dtype_name(value: object) -> str:
    dtype = value.dtype  # type: ignore[attr-defined]
    if isinstance(dtype, torch.dtype):
        return str(dtype).removeprefix("torch.")
    return "bool" if dtype == np.bool_ else np.dtype(dtype).name


def check_claims(claim: Value, actual: object, where: str) -> None:
    """Everything ``claim`` says must hold of ``actual``; unknown facts (None) claim nothing."""
    kind = claim.kind
    assert kind is not Kind.UNKNOWN, f"{where}: the analysis knows nothing of it; the example shows no row"
    if kind is Kind.NDARRAY:
        assert isinstance(actual, np.ndarray), f"{where}: claimed an ndarray, got {type(actual).__name__}"
    elif kind is Kind.NUMPY_VALUE:
        assert isinstance(actual, (np.ndarray, np.generic)), f"{where}: claimed NumPy, got {type(actual).__name__}"
    elif kind is Kind.NUMBER:
        assert type(actual) in (int, float, bool, complex), f"{where}: claimed a Python number, got {type(actual)}"
        if claim.dtype is not None:
            assert type(actual).__name__ == claim.dtype, f"{where}: claimed a Python {claim.dtype}"
        return
    elif kind is Kind.TENSOR:
        assert isinstance(actual, torch.Tensor), f"{where}: claimed a tensor, got {type(actual).__name__}"
        if claim.requires_grad is not None:
            assert actual.requires_grad == claim.requires_grad, f"{where}: requires_grad is {actual.requires_grad}"
        if claim.on_accelerator is False:
            assert actual.device.type == "cpu", f"{where}: claimed the CPU, got {actual.device}"
    elif kind is Kind.NN_MODULE:
        assert isinstance(actual, torch.nn.Module), f"{where}: claimed a module, got {type(actual).__name__}"
        trainable = any(p.requires_grad for p in actual.parameters())
        if claim.has_params is not None:
            assert trainable == claim.has_params, f"{where}: has trainable parameters: {trainable}"
        return
    elif kind is Kind.INSTANCE:
        module_name, _, class_name = (claim.qualname or "").rpartition(".")
        expected = getattr(sys.modules.get(module_name) or __import__(module_name, fromlist=[class_name]),
                           class_name)
        assert isinstance(actual, expected), f"{where}: claimed a {claim.qualname}, got {type(actual).__name__}"
        return
    elif kind is Kind.SEQUENCE:
        assert isinstance(actual, (list, tuple)) or hasattr(actual, "__iter__"), f"{where}: claimed a sequence"
        if claim.items is not None and isinstance(actual, (list, tuple)):
            assert claim.open_ended or len(actual) == len(claim.items), f"{where}: {len(actual)} items"
            for index, (item, real) in enumerate(zip(claim.items, actual)):
                if item.kind is not Kind.UNKNOWN:
                    check_claims(item, real, f"{where}[{index}]")
        return
    elif kind is Kind.DEVICE:
        assert isinstance(actual, torch.device), f"{where}: claimed a device, got {type(actual).__name__}"
        if claim.on_accelerator is False:
            assert actual.type == "cpu"
        return
    elif kind is Kind.NONE:
        assert actual is None, f"{where}: claimed None, got {actual!r}"
        return
    elif kind is Kind.OTHER:
        assert not isinstance(actual, (np.ndarray, torch.Tensor)), f"{where}: claimed neither array nor tensor"
        return
    elif kind is Kind.DATALOADER:
        assert isinstance(actual, torch.utils.data.DataLoader), f"{where}: claimed a DataLoader"
        return
    if claim.dtype is not None:
        assert _dtype_name(actual) == claim.dtype, f"{where}: claimed {claim.dtype}, got {_dtype_name(actual)}"
    if claim.float64_by_default:
        assert _dtype_name(actual) == "float64", f"{where}: claimed NumPy's default float64"


@pytest.mark.parametrize(("qualname", "example"), _cases("calls") + _cases("attributes"),
                         ids=lambda value: value if " " not in value else None)
def test_what_the_model_says_is_what_the_library_does(qualname: str, example: str):
    backend, _, rest = example.partition(": ")
    if rest and backend in ACCELERATOR_BACKENDS:  # "cuda: t.cuda()", "xpu: t.xpu()": runs where that device is
        if not _backend_available(backend):
            pytest.skip(f"needs a {backend} device")
        example = rest.replace("f32", "torch.ones(3).numpy()")
    check_claims(_analysed(example), _run(example), f"{qualname}: {example}")


#: the accelerators whose examples say so ("xpu: t.xpu()"); each runs only where torch has that device, as the
#: CUDA ones do (another backend's method does not exist, or raises, on a CUDA machine).
ACCELERATOR_BACKENDS = ("cuda", "xpu", "npu", "hpu", "mlu", "musa", "ipu", "mtia")


def _backend_available(backend: str) -> bool:
    module = getattr(torch, backend, None)
    is_available = getattr(module, "is_available", None)
    return hasattr(torch.Tensor, backend) and callable(is_available) and bool(is_available())


def _checked_rows(rows: dict) -> list[str]:
    """The rows to run: NumPy's, torch's and our runtime's, except those that claim nothing ("unknown")."""
    return sorted(name for name, model in rows.items() if name.startswith(CHECKED_PREFIXES) and model.kind != "unknown")


_NUMPY_REFUSES_GRAD = "Can't call numpy() on Tensor that requires grad"


def _converted_tensor_grads(expression: str) -> list[bool | None]:
    """What the analysis says of the tensors the example's own call (the outermost) converts to NumPy."""
    analyzer = _analyzer(expression)
    return [fact.tensor.requires_grad for fact in analyzer.facts.tensor_to_numpy
            if cst.Module([]).code_for_node(fact.node) == expression]


@pytest.mark.parametrize(("qualname", "example"), _cases("converts-tensors"))
def test_numpy_converts_the_tensors_the_models_say_it_does(qualname: str, example: str):
    with pytest.raises(RuntimeError, match=re.escape(_NUMPY_REFUSES_GRAD)):
        _run(example)
    assert _converted_tensor_grads(example) == [True], f"{qualname}: {example} converts a tensor that requires grad"


@pytest.mark.parametrize(("qualname", "example"), _cases("dispatches-to-tensor"))
def test_numpy_hands_a_tensor_to_its_own_method_where_the_models_say_so(qualname: str, example: str):
    try:
        _run(example)
    except RuntimeError as error:
        assert _NUMPY_REFUSES_GRAD not in str(error), f"{qualname}: {example} converts the tensor"
    except (TypeError, ValueError):
        pass  # torch's method refuses NumPy's keywords: another error than the rules' (np.sum(t) fails on any tensor)
    assert _converted_tensor_grads(example) == []


def test_every_row_that_reads_tensors_has_examples_of_it():
    rows = {name: model for name, model in MODELS.calls.items() if name.startswith("numpy.")}
    converting = {name for name, model in rows.items() if model.flags & {"converts-tensors", "dispatches-to-tensor"}}
    assert sorted(converting - set(EXAMPLES["converts-tensors"])) == []
    dispatching = {name for name, model in rows.items() if "dispatches-to-tensor" in model.flags}
    assert sorted(dispatching ^ set(EXAMPLES["dispatches-to-tensor"])) == []
    assert sorted(set(EXAMPLES["converts-tensors"]) - converting) == []


def test_every_numpy_and_torch_row_has_an_example():
    missing = [name for name in _checked_rows(MODELS.calls) if not EXAMPLES["calls"].get(name)]
    missing += [name for name in _checked_rows(MODELS.attributes) if not EXAMPLES["attributes"].get(name)]
    assert missing == []


def test_examples_name_only_rows_that_exist():
    assert sorted(set(EXAMPLES["calls"]) - set(MODELS.calls)) == []
    assert sorted(set(EXAMPLES["attributes"]) - set(MODELS.attributes)) == []


@pytest.mark.parametrize("qualname", [name for name in _checked_rows(MODELS.calls)
                                      if MODELS.calls[name].names("parameters") and "*" not in name])
def test_module_rows_name_the_parameters_and_buffers_torch_makes(qualname: str):
    model = MODELS.calls[qualname]
    module = _run(EXAMPLES["calls"][qualname][0])
    assert {name for name, _ in module.named_parameters(recurse=False)} == set(model.names("parameters"))
    assert {name for name, _ in module.named_buffers(recurse=False)} == set(model.names("buffers"))


@pytest.mark.parametrize("spec", ["ndarray[uint8", "array[uint8]", "ndarray[dtype-param=x]", "ndarray[purple]",
                                  "instance", "instance(1bad)", "tensor(ndarray)", "ndarray[or-item=0]",
                                  "tuple(ndarray, other)[or-item=2]", "tuple(ndarray, ...)[or-item=0]"])
def test_malformed_specs_are_refused_with_a_reason(spec: str):
    with pytest.raises(ModelError, match="spec|unknown|allowed|take|needs"):
        parse_spec(spec)


def test_specs_read_as_documented():
    model = parse_spec("ndarray[float64-default, dtype-param=1, size-param=*]")
    assert (model.kind, model.dtype, model.flags) == ("ndarray", None, frozenset({"float64-default"}))
    assert dict(model.params) == {"dtype-param": "1", "size-param": "*"}
    step = parse_spec("tuple(ndarray[uint8], number, ...)")
    assert step.open_ended and [item.kind for item in step.items] == ["ndarray", "number"]
    assert parse_spec("instance(gymnasium.Env)").of == "gymnasium.Env"


def test_a_row_chosen_by_a_string_argument_applies_only_to_that_string():
    def step_reward(call: str) -> Kind:
        source = f"import envpool\nimport numpy as np\n_, RESULT, *rest = {call}.step(np.zeros(2))\n"
        analyzer = Analyzer()
        analyzer.analyze(cst.parse_module(source))
        return analyzer.module_scope.names["RESULT"].kind

    assert step_reward('envpool.make("Pong-v5", env_type="gym")') is Kind.NDARRAY
    assert step_reward('envpool.make("Pong-v5", "gymnasium")') is Kind.NDARRAY
    assert step_reward('envpool.make("Pong-v5", env_type="dm")') is Kind.UNKNOWN
    assert step_reward('envpool.make("Pong-v5", env_type=kind)') is Kind.UNKNOWN


def test_a_tuple_or_its_item_is_the_tuple_only_when_unpacked_into_as_many_names():
    def observation(statement: str) -> Kind:
        analyzer = Analyzer()
        analyzer.analyze(cst.parse_module(f"import gym\nenv = gym.make('CartPole-v1')\n{statement}\n"))
        return analyzer.module_scope.names["RESULT"].kind

    assert observation("RESULT, _ = env.reset()") is Kind.NDARRAY
    assert observation("RESULT, info = env.reset(seed=0)") is Kind.NDARRAY
    assert observation("(RESULT, _), done = env.reset(), False") is Kind.NDARRAY
    assert observation("RESULT = env.reset()") is Kind.UNKNOWN  # gym < 0.26: the observation alone
    assert observation("RESULT = env.reset()[0]") is Kind.UNKNOWN
    assert observation("RESULT, *rest = env.reset()") is Kind.UNKNOWN
    assert observation("RESULT, _, _ = env.reset()") is Kind.UNKNOWN


def test_a_malformed_row_name_chosen_by_an_argument_is_refused():
    with pytest.raises(ModelError, match="chosen by an argument"):
        builtin_models().with_rows({"mylib.make[env_type]": "ndarray"}, "pyproject.toml")
