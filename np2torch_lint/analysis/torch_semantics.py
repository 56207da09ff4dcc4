"""What torch's functions and tensor methods give."""

from __future__ import annotations

import libcst as cst

from . import known_apis as api
from .arguments import Args
from .dtypes import BUILTIN_DTYPES, DTYPE_NAMES, is_float
from .facts import NumpyToTensor, TensorToNumpy
from .numpy_semantics import float64_by_default, numpy_source_dtype
from .syntax import names_a_device, names_a_dtype
from .values import NONE, OTHER, UNKNOWN, Kind, Value, bool_literal, either_all


class TorchMixin:
    """What torch's functions and tensor methods give."""

    def _call_torch(self, node: cst.Call, qualname: str, args: Args) -> Value:
        first = args.first
        if qualname in ("torch.from_numpy", "torch.as_tensor", "torch.tensor", "torch.asarray") or (
                qualname in api.LEGACY_TENSOR_TYPES):
            return self._numpy_to_tensor(node, qualname, args)
        if qualname in api.PARAMETER:
            flag_value = args.keywords.get("requires_grad") or (
                args.positional[1] if len(args.positional) > 1 else None)
            requires_grad = True if flag_value is None else bool_literal(flag_value)
            base = first if first is not None and first.kind is Kind.TENSOR else Value(Kind.TENSOR)
            return base.but(requires_grad=requires_grad, float64_origins=frozenset(), loop_item=None,
                            transfer=None)
        if qualname == "torch.device":
            return Value(Kind.DEVICE, on_accelerator=device_on_accelerator(first) if first else None)
        if qualname in api.DATALOADERS:
            return Value(Kind.DATALOADER)
        if qualname in ("torch.set_default_dtype", "torch.set_default_tensor_type"):
            self.facts.sets_default_dtype = True
            return NONE
        if qualname in api.GRAD_MODE_SETTERS:
            return OTHER
        module_class = qualname[len("torch.nn."):] if qualname.startswith("torch.nn.") else ""
        if module_class and "." not in module_class and module_class[:1].isupper():
            return self._nn_module(module_class, args)
        name = qualname[len("torch."):]
        if name in api.TORCH_CREATORS:
            return self._created_tensor(args)
        if qualname in api.TORCH_INDEX_OR_BOOL:
            return Value(Kind.TENSOR, requires_grad=False, on_accelerator=either_all(
                v.on_accelerator for v in args.tensors()))
        tensors = args.tensors()
        if tensors:  # any other torch function of tensors: an op that autograd tracks
            return self._tensor_arithmetic(*tensors).but(dtype=None, loop_item=None, transfer=None)
        return UNKNOWN

    def _nn_module(self, class_name: str, args: Args) -> Value:
        if class_name in api.PARAMETER_FREE_MODULES:
            has_params: bool | None = False
        elif class_name in api.MODULE_CONTAINERS:
            children = args.all_values()
            has_params = True if any(c.has_params for c in children) else (
                False if children and all(c.has_params is False for c in children) else None)
        else:
            has_params = True
        device = args.keywords.get("device")
        return Value(Kind.NN_MODULE, has_params=has_params,
                     on_accelerator=device_on_accelerator(device) if device is not None else False)

    def _created_tensor(self, args: Args) -> Value:
        device = args.keywords.get("device")
        like = args.first if args.first is not None and args.first.kind is Kind.TENSOR else None
        requires_grad = bool_literal(args.keywords["requires_grad"]) if "requires_grad" in args.keywords else False
        on_accelerator = device_on_accelerator(device) if device is not None else (
            like.on_accelerator if like is not None else False)
        return Value(Kind.TENSOR, dtype=self._dtype_argument(args, None), requires_grad=requires_grad,
                     on_accelerator=on_accelerator)

    def _numpy_to_tensor(self, node: cst.Call, qualname: str, args: Args) -> Value:
        source = args.first or args.keywords.get("data") or UNKNOWN
        keywords = frozenset(k for k in args.keywords if not k.startswith("*"))
        dtype_value = args.keywords.get("dtype")
        if qualname == "torch.as_tensor" and dtype_value is None and len(args.positional) > 1:
            dtype_value = args.positional[1]
        dtype = None if dtype_value is None else (self._dtype_of_value(dtype_value) or "?")
        device = args.keywords.get("device")
        if qualname == "torch.as_tensor" and device is None and len(args.positional) > 2:
            device = args.positional[2]
        if source.kind is Kind.TENSOR:
            # ``as_tensor(t)`` is ``t``; ``tensor(t)`` copies and detaches (it warns)
            result = source if qualname != "torch.tensor" else source.but(requires_grad=False)
            return result.but(dtype=source.dtype if dtype is None else (None if dtype == "?" else dtype))
        source_is_numpy = source.is_numpy or (source.kind is Kind.SEQUENCE and (any(
            v.is_numpy for v in source.items) if source.items is not None else (
                source.element is not None and source.element.is_numpy)))
        if source_is_numpy:
            self.facts.numpy_to_tensor.append(NumpyToTensor(
                node, qualname, source, keywords, dtype, device, self.copy_tests > 0))
        if qualname in api.LEGACY_TENSOR_TYPES:
            result_dtype: str | None = api.LEGACY_TENSOR_TYPES[qualname]
        elif dtype is not None:
            result_dtype = None if dtype == "?" else dtype
        else:
            result_dtype = numpy_source_dtype(source) if source_is_numpy else None
        origins: frozenset[cst.Call] = frozenset()
        if (dtype is None and qualname not in api.LEGACY_TENSOR_TYPES and source_is_numpy
                and result_dtype == "float64" and float64_by_default(source)
                and not (qualname == "torch.from_numpy" and source.kind is not Kind.NDARRAY)):
            self.facts.float64_conversions[node] = qualname
            origins = frozenset({node})
        requires_grad = bool_literal(args.keywords["requires_grad"]) if "requires_grad" in args.keywords else False
        on_accelerator = device_on_accelerator(device) if device is not None else False
        if qualname.startswith("torch.cuda."):
            on_accelerator = True
        return Value(Kind.TENSOR, dtype=result_dtype, requires_grad=requires_grad, on_accelerator=on_accelerator,
                     float64_origins=origins, loop_item=source.loop_item)

    # methods

    def _tensor_method(self, node: cst.Call, tensor: Value, method: str, args: Args) -> Value:
        if method == "numpy":
            force = "force" in args.keywords and bool_literal(args.keywords["force"]) is not False
            if not force:
                self.facts.tensor_to_numpy.append(TensorToNumpy(node, "numpy", tensor, self.grad_enabled))
            return Value(Kind.NDARRAY, dtype=tensor.dtype)
        if method in ("detach", "detach_"):
            return tensor.but(requires_grad=False)
        if method in ("cpu", "cuda", "to"):
            return self._tensor_move(node, tensor, method, args)
        if method in api.TENSOR_DTYPE_METHODS:
            dtype = api.TENSOR_DTYPE_METHODS[method]
            self.facts.dtype_decided.update(tensor.float64_origins)
            return tensor.but(dtype=dtype, float64_origins=frozenset(),
                              requires_grad=tensor.requires_grad if is_float(dtype) else False)
        if method == "type" and (args.positional or args.keywords):
            self.facts.dtype_decided.update(tensor.float64_origins)
            return tensor.but(dtype=None, float64_origins=frozenset())
        if method == "requires_grad_":
            flag = bool_literal(args.first) if args.first is not None else True
            return tensor.but(requires_grad=flag)
        if method in api.TENSOR_INDEX_OR_BOOL:
            return Value(Kind.TENSOR, requires_grad=False, on_accelerator=tensor.on_accelerator,
                         pending_copy=tensor.pending_copy)
        if method in api.TENSOR_NOT_ARRAYS:
            return OTHER
        if method in ("max", "min", "median", "mode", "sort", "topk", "kthvalue") and (
                args.positional or args.keywords):
            return UNKNOWN  # with a dim these return (values, indices)
        if method in api.TENSOR_SAME or method in ("max", "min", "median"):
            others = args.tensors()
            if others:
                combined = self._tensor_arithmetic(tensor, *others)
                return combined.but(loop_item=tensor.loop_item, transfer=tensor.transfer)
            return tensor.but(requires_grad=self._result_requires_grad([tensor]) if tensor.requires_grad
                              else tensor.requires_grad)
        return UNKNOWN

    def _tensor_move(self, node: cst.Call, tensor: Value, method: str, args: Args) -> Value:
        dtype: str | None = tensor.dtype
        decided = False
        if method == "to":
            for value in (*args.positional, args.keywords.get("dtype"), args.keywords.get("other")):
                if value is None:
                    continue
                if value.kind is Kind.REF and self._dtype_of_value(value):
                    dtype, decided = self._dtype_of_value(value), True
                elif value.kind is Kind.TENSOR:
                    dtype, decided = value.dtype, True
                elif value.kind is Kind.UNKNOWN and any(
                        v is value and not names_a_device(n) for v, n in zip(args.positional, args.positional_nodes)):
                    dtype, decided = None, True  # ``.to(x)``: x may be a dtype, unless it is named as a device
            if "dtype" in args.keywords:
                decided = True
        if decided:
            self.facts.dtype_decided.update(tensor.float64_origins)
        on_accelerator = self._destination_on_accelerator(method, args, tensor.on_accelerator)
        moved = tensor.but(dtype=dtype, on_accelerator=on_accelerator,
                           float64_origins=frozenset() if decided else tensor.float64_origins)
        loop = self._current_loop()
        if (on_accelerator and loop is not None and tensor.loop_item == loop.id
                and tensor.on_accelerator is not True):
            moved = moved.but(transfer=node)
        return moved

    def _destination_on_accelerator(self, method: str, args: Args, current: bool | None) -> bool | None:
        if method == "cuda":
            return True
        if method == "cpu":
            return False
        device = args.keywords.get("device")
        if device is not None:
            return device_on_accelerator(device)
        for value, node in zip(args.positional, args.positional_nodes):
            if value.kind is Kind.REF and self._dtype_of_value(value):
                continue  # ``.to(torch.float32)``: the device stays
            if value.kind is Kind.UNKNOWN and names_a_dtype(node):
                continue  # ``.to(dtype)``
            return device_on_accelerator(value)
        return current

    # dtype arguments

    def _dtype_argument(self, args: Args, position: int | None) -> str | None:
        """The canonical dtype given by ``dtype=`` (or at ``position``): None when not given; "?" when unknown."""
        value = args.keywords.get("dtype")
        if value is None and position is not None and len(args.positional) > position:
            value = args.positional[position]
        if value is None or value.kind is Kind.NONE:
            return None
        return self._dtype_of_value(value) or "?"

    def _dtype_of_value(self, value: Value) -> str | None:
        if value.kind is Kind.REF and value.qualname:
            module, _, name = value.qualname.rpartition(".")
            if module in ("numpy", "torch"):
                return DTYPE_NAMES.get(name)
            if module == "builtins":
                return BUILTIN_DTYPES.get(name)
            return None
        if value.kind is Kind.STRING and value.literal:
            # strings are NumPy's: "float" means float64 there, as the builtin does
            return BUILTIN_DTYPES.get(value.literal) or DTYPE_NAMES.get(value.literal)
        return None


def device_on_accelerator(value: Value | None) -> bool | None:
    """Whether a ``device=``/``.to()`` argument may name an accelerator. Unknown devices may."""
    if value is None:
        return None
    if value.kind is Kind.DEVICE:
        return value.on_accelerator
    if value.kind is Kind.STRING:
        if value.literal is None:
            return True
        if value.literal.startswith("cpu"):
            return False
        if value.literal.startswith(api.ACCELERATOR_DEVICE_PREFIXES):
            return True
        return None  # "meta" and other devices: not the accelerator NPT002 speaks of
    if value.kind is Kind.NONE:
        return False
    if value.kind is Kind.NUMBER and value.dtype == "int":
        return True
    if value.kind is Kind.TENSOR:
        return value.on_accelerator
    if value.kind in (Kind.UNKNOWN, Kind.REF):
        return True  # a parameter, ``args.device``, an imported ``DEVICE``: it may name an accelerator
    return None
