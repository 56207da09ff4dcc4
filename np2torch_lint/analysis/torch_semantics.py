"""What torch's functions and tensor methods give."""

from __future__ import annotations

import libcst as cst

from . import known_apis as api
from .arguments import DOUBLE_STARRED, STARRED, Args
from .dtypes import BUILTIN_DTYPES, DTYPE_NAMES
from .facts import NumpyToTensor, TensorToNumpy
from .numpy_semantics import float64_by_default, numpy_source_dtype
from .syntax import binds_name, names_a_device, names_a_dtype
from .models import Model
from .values import OTHER, UNKNOWN, Kind, ParameterMove, Value, bool_literal, device_test_of


class TorchMixin:
    """What torch's functions and tensor methods give."""

    def _created_tensor(self, args: Args) -> Value:
        device = args.keywords.get("device")
        like = args.first if args.first is not None and args.first.kind is Kind.TENSOR else None
        requires_grad = bool_literal(args.keywords["requires_grad"]) if "requires_grad" in args.keywords else False
        on_accelerator = device_on_accelerator(device) if device is not None else (
            like.on_accelerator if like is not None else False)
        source = device if device is not None else like
        return Value(Kind.TENSOR, dtype=self._dtype_argument(args, None), requires_grad=requires_grad,
                     on_accelerator=on_accelerator,
                     device_test=source.device_test if source is not None and on_accelerator else None)

    def _numpy_to_tensor(self, node: cst.Call, qualname: str, model: Model, args: Args,
                         choices: dict[str, Model] | None = None) -> Value:
        """``torch.tensor(a)``, ``torch.from_numpy(a)``, legacy ``torch.FloatTensor(a)``...; ``choices`` when the
        constructor is one of several picked at run time."""
        models = list(choices.values()) if choices else [model]
        legacy_dtypes = {m.dtype if "legacy" in m.flags else None for m in models}
        legacy_dtype = legacy_dtypes.pop() if len(legacy_dtypes) == 1 else None
        on_accelerator_choices = {"accelerator" in m.flags for m in models}
        made_on_accelerator = on_accelerator_choices.pop() if len(on_accelerator_choices) == 1 else None
        source = args.first or args.keywords.get("data") or UNKNOWN
        keywords = frozenset(k for k in args.keywords if not k.startswith("*"))
        dtype_value = args.keywords.get("dtype")
        if qualname == "torch.as_tensor" and dtype_value is None and len(args.positional) > 1:
            dtype_value = args.positional[1]
        if dtype_value is None and DOUBLE_STARRED in args.keywords:
            # ``torch.tensor(a, **ctx)``: the dict's ``dtype``, where its keys are known; else it may give one
            spread = args.spread().keywords
            dtype_value = spread.get("dtype", UNKNOWN if DOUBLE_STARRED in spread else None)
        dtype = None if dtype_value is None else (self._dtype_of_value(dtype_value) or "?")
        device = args.keywords.get("device")
        if qualname == "torch.as_tensor" and device is None and len(args.positional) > 2:
            device = args.positional[2]
        if source.kind is Kind.TENSOR:
            # ``as_tensor(t)`` is ``t``; ``tensor(t)`` copies and detaches (it warns)
            result = source if qualname != "torch.tensor" else source.but(requires_grad=False)
            return result.but(dtype=source.dtype if dtype is None else (None if dtype == "?" else dtype))
        source_is_numpy = _holds_numpy(source)
        if source_is_numpy:
            self.facts.numpy_to_tensor.append(NumpyToTensor(
                node, qualname, source, keywords, dtype, device, self.copy_tests > 0, legacy_dtype,
                made_on_accelerator, tuple(choices) if choices else ()))
        if legacy_dtype is not None:
            result_dtype: str | None = legacy_dtype
        elif dtype is not None:
            result_dtype = None if dtype == "?" else dtype
        else:
            result_dtype = numpy_source_dtype(source) if source_is_numpy else None
        origins: frozenset[cst.Call] = frozenset()
        if (dtype is None and legacy_dtype is None and source_is_numpy
                and result_dtype == "float64" and float64_by_default(source)
                and not (qualname == "torch.from_numpy" and source.kind is not Kind.NDARRAY)):
            self.facts.note_float64(node, qualname)
            origins = frozenset({node})
        requires_grad = bool_literal(args.keywords["requires_grad"]) if "requires_grad" in args.keywords else False
        on_accelerator = device_on_accelerator(device) if device is not None else False
        if made_on_accelerator is not False:
            on_accelerator = True  # ``torch.cuda.FloatTensor(a)``, or a constructor that may be one
        made = Value(Kind.TENSOR, dtype=result_dtype, requires_grad=requires_grad, on_accelerator=on_accelerator,
                     float64_origins=origins, loop_item=source.loop_item, parameter=source.parameter)
        if (on_accelerator and made_on_accelerator is not None and source.on_accelerator is not True
                and not (source.kind is Kind.UNKNOWN and source.loop_item is not None)
                and not self._made_before_the_loop(node)):
            # data copied to the device by the constructor: a transfer, like ``.to(device)`` of a host tensor (data
            # made in the body each step, such as an env's rewards; a loop's unknown items may be whole batches)
            made = self._transfer_in_loop(made, node, source.but(on_accelerator=False))
        return made

    # calls with effects (see library._EFFECTS)

    def _model_to_numpy(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                        tensor: Value | None) -> Value:
        if tensor is None or tensor.kind is not Kind.TENSOR:
            return UNKNOWN
        force = "force" in args.keywords and bool_literal(args.keywords["force"]) is not False
        if not force and node is not None:
            self.facts.tensor_to_numpy.append(TensorToNumpy(node, "numpy", tensor, self.grad_enabled))
        if tensor.float64_origins and node is not None and isinstance(node.func, cst.Attribute):
            # ``torch.sigmoid(torch.from_numpy(x)).numpy()``: a float64 tensor that goes straight back to NumPy,
            # through torch's functions of it alone, meets no float32 weights or data on the way
            self.facts.dtype_decided.update(origin for origin in tensor.float64_origins
                                            if self._straight_from(node.func.value, origin))
        return Value(Kind.NDARRAY, dtype=tensor.dtype)

    def _straight_from(self, expression: cst.BaseExpression, conversion: cst.Call) -> bool:
        """Whether ``expression`` computes from ``conversion`` alone: it is that call, or a tensor method without
        arguments of such an expression (``t.exp()``), or one of torch's functions given only such an expression
        (``torch.sigmoid(t)``; not a network's ``model(t)``)."""
        while expression is not conversion:
            if not isinstance(expression, cst.Call):
                return False
            func = expression.func
            if isinstance(func, cst.Attribute) and not expression.args:
                expression = func.value
            elif len(expression.args) == 1 and not expression.args[0].keyword and not expression.args[0].star and (
                    _is_torch_function(self.eval_quietly(func))):
                expression = expression.args[0].value
            else:
                return False
        return True

    def _model_move(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                    tensor: Value | None) -> Value:
        if tensor is None or tensor.kind is not Kind.TENSOR or node is None:
            return UNKNOWN
        destination = "accelerator" if "accelerator" in model.flags else "cpu" if "cpu" in model.flags else None
        return self._tensor_move(node, tensor, destination, args)

    def _model_move_module(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                           module: Value | None) -> Value:
        if module is None:
            return UNKNOWN
        method = qualname.rsplit(".", 1)[1]
        destination = {"cuda": "accelerator", "cpu": "cpu"}.get(method)
        dtype = module.dtype
        for value in (*args.positional, args.keywords.get("dtype")):
            if value is not None and self._dtype_of_value(value):
                dtype = self._dtype_of_value(value)  # ``model.to(torch.float64)``
        on_accelerator = self._destination_on_accelerator(destination, args, module.on_accelerator)
        return module.but(dtype=dtype, on_accelerator=on_accelerator,
                          device_test=_moved_device_test(module, destination, args, on_accelerator))

    def _model_requires_grad(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                             receiver: Value | None) -> Value:
        if receiver is None:
            return UNKNOWN
        flag = bool_literal(args.first) if args.first is not None else True
        if receiver.kind is Kind.NN_MODULE:
            return receiver.but(has_params=False if flag is False else receiver.has_params)
        return receiver.but(requires_grad=flag)

    def _model_retype(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                      tensor: Value | None) -> Value:
        if tensor is None or not (args.positional or args.keywords):
            return OTHER  # ``t.type()`` without arguments is the type's name
        self.facts.dtype_decided.update(tensor.float64_origins)
        retyped = tensor.but(dtype=None, float64_origins=frozenset())
        given = args.first or args.keywords.get("dtype")
        name = None if given is None else given.qualname if given.kind is Kind.REF else given.literal
        legacy = self.models.call(name) if name and name.startswith("torch.") else None
        if legacy is not None and "legacy" in legacy.flags:
            # ``t.type(torch.FloatTensor)`` (or ``"torch.FloatTensor"``) is a CPU tensor of that type, wherever ``t``
            # was; ``torch.cuda.FloatTensor`` one on the GPU
            on_accelerator = "accelerator" in legacy.flags
            return retyped.but(dtype=legacy.dtype, on_accelerator=on_accelerator, pending_copy=None,
                               device_test=tensor.device_test if on_accelerator else None)
        return retyped

    def _tensor_move(self, node: cst.Call, tensor: Value, destination: str | None, args: Args) -> Value:
        """``t.to(...)`` (destination None), ``t.cpu()``, ``t.cuda()``/``t.xpu()``... (\"cpu\", \"accelerator\")."""
        dtype: str | None = tensor.dtype
        decided = maybe = False
        if destination is None:
            for value in (*args.positional, args.keywords.get("dtype"), args.keywords.get("other")):
                if value is None:
                    continue
                if value.kind is Kind.REF and self._dtype_of_value(value):
                    dtype, decided = self._dtype_of_value(value), True
                elif value.kind is Kind.TENSOR:
                    dtype, decided = value.dtype, True
                elif value.kind in (Kind.UNKNOWN, Kind.OTHER) and any(
                        v is value and not names_a_device(n) for v, n in zip(args.positional, args.positional_nodes)):
                    # ``.to(x)``: x may be a dtype (``.to(other.dtype)``), unless it is named as a device
                    dtype, maybe = None, True
            if "dtype" in args.keywords:
                decided = True
            if STARRED in args.keywords or DOUBLE_STARRED in args.keywords:
                dtype, maybe = None, True  # ``.to(*self.to_args, **self.to_kwargs)`` may pass a dtype
        if decided:
            self.facts.dtype_decided.update(tensor.float64_origins)
        elif maybe:
            self.facts.dtype_maybe_decided.update(tensor.float64_origins)
        decided = decided or maybe
        on_accelerator = self._destination_on_accelerator(destination, args, tensor.on_accelerator)
        moved = tensor.but(dtype=dtype, on_accelerator=on_accelerator,
                           float64_origins=frozenset() if decided else tensor.float64_origins,
                           device_test=_moved_device_test(tensor, destination, args, on_accelerator))
        loop = self._current_loop()
        per_item_device = loop is not None and any(value.loop_item == loop.id for value in args.all_values())
        # a ``torch.device`` of unknown type (``device: torch.device``, ``x.device``) may be an accelerator, as an
        # unknown ``device`` parameter may; it counts where the moved items are stacked (detectron2 moves images
        # of different sizes to ``self.device``, a ``pixel_mean.device``, and pads them)
        to_accelerator = on_accelerator or (on_accelerator is None and destination is None
                                            and _names_unknown_device(args))
        if to_accelerator and not per_item_device:  # (``for blob, dev in zip(blobs, devices)``: one batch per device)
            moved = self._transfer_in_loop(moved, node, tensor, needs_stack=not on_accelerator)
        if on_accelerator is False:
            moved = moved.but(moves_parameter=None)  # back on the host: ``.cpu()``
        elif to_accelerator and tensor.on_accelerator is not True:
            moved = moved.but(moves_parameter=self._parameter_move(tensor, destination, args, on_accelerator))
        return moved

    def _made_before_the_loop(self, node: cst.Call) -> bool:
        """``torch.tensor(grid_x, device=device)`` in a loop that never assigns ``grid_x``: the same data copied
        each time round, which moving once before the loop fixes; not items or steps to stack."""
        loop = self._current_loop()
        data = node.args[0].value if node.args and node.args[0].keyword is None else None
        return (loop is not None and isinstance(data, cst.Name) and isinstance(loop.node, (cst.For, cst.While))
                and not binds_name(loop.node, data.value))

    def _transfer_in_loop(self, moved: Value, node: cst.Call, source: Value, needs_stack: bool = True) -> Value:
        """``moved``, made on an accelerator by ``node`` from ``source``, marked as one transfer per item of the loop
        it is in (``source`` is the item, or made from it), or per step (a host value made in the body each time
        round: ``frames.append(torch.from_numpy(Y).to(d))``); NPT005 reads it where what is moved is collected."""
        loop = self._current_loop()
        if loop is None or source.on_accelerator is True:
            return moved
        if source.loop_item == loop.id:
            return moved.but(transfer=node, transfer_needs_stack=needs_stack)
        if source.on_accelerator is False and source.loop_item is None and not loop.not_a_collection:
            return moved.but(transfer=node, transfer_needs_stack=True, transfer_per_step=True, loop_item=loop.id)
        return moved

    def _parameter_move(self, tensor: Value, destination: str | None, args: Args,
                        on_accelerator: bool | None) -> ParameterMove | None:
        """In a function's body: ``frame.to(device)`` of its parameter ``frame`` (or of a tensor made from it), to
        its parameter ``device`` as it was given, or to an accelerator named in the body."""
        function = self.function_info
        if tensor.parameter is None or function is None or tensor.parameter[0] is not function:
            return None
        device: str | None = None
        if destination is None:
            node = args.keyword_nodes.get("device") or next(
                (n for v, n in zip(args.positional, args.positional_nodes)
                 if not (v.kind is Kind.REF and self._dtype_of_value(v)) and not (
                     v.kind is Kind.UNKNOWN and names_a_dtype(n))), None)
            value = self.scope.lookup(node.value) if isinstance(node, cst.Name) else None
            if value is not None and value.parameter == (function, node.value):
                device = node.value
            elif on_accelerator is not True or (node is not None and self._mentions_a_parameter(node, function)):
                return None  # a device made in the body from a parameter (``devices[k]``): which one is not followed
        return ParameterMove(function, tensor.parameter[1], device, item_kind_unknown=False,
                             needs_stack=not on_accelerator)

    def _destination_on_accelerator(self, destination: str | None, args: Args, current: bool | None
                                    ) -> bool | None:
        if destination == "accelerator":
            return True
        if destination == "cpu":
            return False
        device = args.keywords.get("device")
        if device is not None:
            return device_on_accelerator(device)
        for value, node in zip(args.positional, args.positional_nodes):
            if value.kind is Kind.REF and self._dtype_of_value(value):
                continue  # ``.to(torch.float32)``: the device stays
            if value.kind in (Kind.UNKNOWN, Kind.OTHER) and names_a_dtype(node):
                continue  # ``.to(dtype)``, ``.to(x.dtype)``
            return device_on_accelerator(value)
        return current

    def _mentions_a_parameter(self, node: cst.CSTNode, function: object) -> bool:
        if isinstance(node, cst.Name):
            value = self.scope.lookup(node.value)
            return value is not None and value.parameter is not None and value.parameter[0] is function
        return any(self._mentions_a_parameter(child, function) for child in node.children)

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


def _names_unknown_device(args: Args) -> bool:
    """``.to(device)`` where ``device`` is a ``torch.device`` whose type is unknown."""
    device = args.keywords.get("device") or args.first
    return device is not None and device.kind is Kind.DEVICE and device.on_accelerator is None


def _moved_device_test(moved: Value, destination: str | None, args: Args, on_accelerator: bool | None) -> str | None:
    """The test under which a tensor or module moved (``.to(device)``, ``.cuda()``, ``.cpu()``) is on an
    accelerator, when only a device chosen under one took it there (``device = "cuda" if use_cuda else "cpu"``)."""
    if not on_accelerator:
        return None
    if destination == "accelerator":
        return moved.device_test if moved.on_accelerator else None  # ``.cuda()`` moves it whatever the test
    devices = [value for value in args.all_values() if value.device_test is not None]
    if not devices:
        return moved.device_test if moved.on_accelerator else None
    return device_test_of([moved, *devices]) if moved.on_accelerator else (
        devices[0].device_test if all(d.device_test == devices[0].device_test for d in devices) else None)


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
    if value.kind is Kind.NUMBER and value.dtype in ("int", None):
        return True  # a device index (a number that is not an int is no device)
    if value.kind is Kind.TENSOR:
        return value.on_accelerator
    if value.kind in (Kind.UNKNOWN, Kind.REF):
        return True  # a parameter, ``args.device``, an imported ``DEVICE``: it may name an accelerator
    return None


def _holds_numpy(value: Value, depth: int = 0) -> bool:
    """NumPy data, or a list (of lists, a few levels deep) with NumPy data in it."""
    if value.is_numpy:
        return True
    if value.kind is not Kind.SEQUENCE or depth > 3:
        return False
    if value.items is not None:
        return any(_holds_numpy(item, depth + 1) for item in value.items)
    return value.element is not None and _holds_numpy(value.element, depth + 1)


def _is_torch_function(callee: Value) -> bool:
    """One of torch's own top-level functions (``torch.sigmoid``): not a ``torch.nn`` class, whose objects hold
    weights, nor anything deeper."""
    return callee.kind is Kind.REF and callee.qualname is not None and callee.qualname.startswith("torch.") and (
        callee.qualname.count(".") == 1)
