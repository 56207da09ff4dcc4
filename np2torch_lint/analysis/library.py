"""Applying library models (``models.py``) at calls and attribute reads: a row's spec becomes a ``Value``.

The kinds and attributes of a spec each have one meaning here; ``docs/inference.md`` lists them. Kinds with an
effect beyond their value (``to-numpy`` records a fact, ``move`` may mark a per-item transfer...) are handled by
named methods of the analysis, which the table below points to.
"""

from __future__ import annotations

import libcst as cst

from .arguments import STARRED, Args
from .definitions import BoundCall, FunctionInfo
from .dtypes import is_float, is_integral
from .facts import TensorToNumpy
from .models import Model
from .numpy_semantics import (
    array_of_scalar,
    literal_data_dtype,
    numpy_promoted,
    returns_array,
    to_complex_result,
    to_float_result,
    to_real_part,
)
from .torch_semantics import device_on_accelerator
from .values import (NONE, OTHER, UNKNOWN, Kind, Value, bool_literal, device_test_of, either_all, join_all,
                     parts_of)

_NUMBER_FAMILY = {"bool": "bool", "float16": "float", "float32": "float", "float64": "float", "complex64": "complex",
                  "complex128": "complex"}


class LibraryMixin:
    """Applies a model row to a call's arguments (and receiver), or to the owner of an attribute."""

    def _apply_model(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                     receiver: Value | None = None) -> Value:
        kind = model.kind
        if receiver is None and kind in ("same", "tensor") and qualname.startswith("torch.") and args.positional and (
                _placed_on_accelerator(args.positional[0])) and not ("converts" in model.params or (
                "created" in model.flags)):
            # ``torch.max(net(x.cuda()), 1)`` of what an unknown network gave: torch's operations take only tensors,
            # so it is one, where its inputs were (as ``.detach()`` on it says, ``CallsMixin._placed_like_inputs``)
            first = args.positional[0]
            args = Args([Value(Kind.TENSOR, on_accelerator=True, device_test=first.device_test,
                               loop_item=first.loop_item), *args.positional[1:]],
                        args.keywords, args.positional_nodes, args.keyword_nodes)
        if node is not None and ("converts-tensors" in model.flags or "dispatches-to-tensor" in model.flags):
            self._tensors_numpy_converts(node, qualname, args, "converts-tensors" in model.flags)
        if kind == "ndarray" or kind == "numpy-value":
            return self._array_result(node, qualname, model, args, receiver)
        if "decides-dtype" in model.flags and kind != "same":
            self.facts.dtypes_may_be_decided(args.tensors())  # ``gradcheck(f, (x,))``: float64 on purpose
        if kind == "same":
            return self._changed_receiver(model, args, receiver)
        if kind == "sequence" and "elements-of" in model.params:
            index = int(model.params["elements-of"])
            if index >= len(args.positional):  # ``deque(maxlen=n)``: a new, empty one
                return UNKNOWN if any(key.startswith("*") for key in args.keywords) else Value(Kind.SEQUENCE, items=())
            return Value(Kind.SEQUENCE, element=self._element_of(args.positional[index]))
        if kind == "sequence" and "items-like" in model.params:
            return _arrays_like(args)
        if kind == "tensor":
            return self._tensor_result(node, qualname, model, args, receiver)
        if kind == "tuple" and any(item.param("dtype-param") is not None for item in model.items):
            return self._tuple_with_dtype(model, args)
        handler = _EFFECTS.get(kind)
        if handler is not None:
            return getattr(self, handler)(node, qualname, model, args, receiver)
        return value_of_model(model)

    def _attribute_model(self, owner: Value, model: Model) -> Value:
        if model.kind == "wrapped":  # ``self.env`` of a wrapper: what it was built around
            return owner.wrapped or UNKNOWN
        if model.kind == "same":
            return self._changed_receiver(model, Args([], {}, []), owner)
        if model.kind == "device" and "keeps-device" in model.flags:
            # ``x.device``: where ``x`` is, under the device test that put it there (``if gpu >= 0: x = x.cuda()``)
            return Value(Kind.DEVICE, on_accelerator=owner.on_accelerator,
                         device_test=owner.device_test if owner.on_accelerator else None)
        if model.kind == "device-name":
            return device_name(owner)
        if model.kind == "tensor" and "keeps-device" in model.flags:
            # ``dist.mean`` of a distribution built from CUDA tensors: where its owner is
            return self._tensor_result(None, "", model, Args([], {}, []), owner)
        return value_of_model(model)

    # -- arrays

    def _array_result(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                      receiver: Value | None) -> Value:
        kind = Kind.NDARRAY if model.kind == "ndarray" else Kind.NUMPY_VALUE
        first = args.first
        explicit = self._dtype_given(model, args)
        if "converts-tensors" in model.flags and first is not None and first.kind is Kind.TENSOR and (
                "from-data" in model.params):
            return Value(Kind.NDARRAY, dtype=first.dtype)  # ``np.asarray(t)``: ``t.numpy()``, recorded above
        if "from-data" in model.params:
            return self._array_from_data(node, model, args, explicit)
        size = model.param("size-param")
        gives_array = size is None or returns_array(args, -1 if size == "*" else int(size))
        if gives_array is None:
            return UNKNOWN  # an array or one number, as the starred arguments turn out
        if explicit is not None:
            return Value(kind if gives_array else Kind.NUMPY_VALUE, dtype=explicit)
        if "fill" in model.params:
            index = int(model.params["fill"])
            return array_of_scalar(args.positional[index] if len(args.positional) > index
                                   else args.keywords.get("fill_value"))
        if "from-bounds" in model.flags:
            bounds = args.positional[:3]
            if any(v.kind is Kind.NUMBER and v.dtype == "float" for v in bounds):
                return Value(Kind.NDARRAY, dtype="float64", float64_by_default=True)
            if bounds and all(v.kind is Kind.NUMBER and v.dtype == "int" for v in bounds):
                return Value(Kind.NDARRAY, dtype="int64")
            return Value(Kind.NDARRAY)
        if "promote-items" in model.params:
            if first is None:
                return UNKNOWN
            elements = list(first.items) if first.items is not None else [first.element or UNKNOWN]
            return numpy_promoted(elements, Kind.NDARRAY)
        if "dtype-of" in model.params:
            source = self._model_source(model.params["dtype-of"], args, receiver)
            if source is not None and source.is_numpy:
                return source.but(kind=Kind.NDARRAY, items=None, element=None)
            return Value(Kind.NDARRAY, dtype=source.dtype if source is not None and source.kind is Kind.TENSOR
                         else None)
        for name in ("complex-of", "real-of"):
            if name in model.params:
                source = self._model_source(model.params[name], args, receiver)
                if source is None or not source.is_numpy:
                    return UNKNOWN  # np.real(tensor) and friends: torch's own answer
                return to_complex_result(source) if name == "complex-of" else to_real_part(source)
        for name in ("like", "float-of"):
            if name in model.params:
                source = self._model_source(model.params[name], args, receiver)
                if name == "float-of" and source is not None and source.kind is Kind.NUMBER and source.dtype in (
                        "int", "float"):
                    # ``np.log(0.01)``: a Python number in, one NumPy float64 scalar out, by NumPy's default
                    return Value(Kind.NUMPY_VALUE, dtype="float64", float64_by_default=True)
                if source is None or not source.is_numpy:
                    return UNKNOWN  # np.transpose(tensor) and friends call the tensor's own method
                kind = _reduced_kind(model, source)
                if name == "float-of":
                    return to_float_result(source, reduction=kind is Kind.NUMPY_VALUE)
                result = source.but(kind=kind, items=None, element=None)
                return widened(result) if "widens-ints" in model.flags else result
        if "promote" in model.flags:
            if first is None or not first.is_numpy:
                return UNKNOWN
            result = numpy_promoted([v for v in args.positional if v.is_numpy or v.kind is Kind.NUMBER], kind)
            if "floats" in model.flags and (is_integral(result.dtype)):
                return result.but(dtype="float64", float64_by_default=True)  # true division of integers
            return result
        if not gives_array:
            if "numpy-scalar" in model.flags:
                return Value(Kind.NUMPY_VALUE, dtype=model.dtype)
            family = "float" if "float64-default" in model.flags else _NUMBER_FAMILY.get(model.dtype or "", "int")
            return Value(Kind.NUMBER, dtype=family)
        return value_of_model(model)

    def _dtype_given(self, model: Model, args: Args) -> str | None:
        """The dtype the call passes where the row's ``dtype-param`` says (a position, or ``kw``: only ``dtype=``):
        None where the row has none or the call passes none, "?" where it is unknown."""
        dtype_param = model.param("dtype-param")
        return None if dtype_param is None else self._dtype_argument(
            args, None if dtype_param == "kw" else int(dtype_param))

    def _tuple_with_dtype(self, model: Model, args: Args) -> Value:
        """A tuple one of whose arrays takes the call's ``dtype`` (``soundfile.read(path, dtype="float32")``)."""
        items = []
        for item in model.items:
            explicit = self._dtype_given(item, args)
            value = value_of_model(item)
            items.append(value if explicit is None else value.but(
                dtype=None if explicit == "?" else explicit, float64_by_default=False))
        made = value_of_model(model)
        return made.but(unpacked=tuple(items)) if made.unpacked is not None else made.but(items=tuple(items))

    def _array_from_data(self, node: cst.Call | None, model: Model, args: Args, explicit: str | None) -> Value:
        """``np.array(data)``: a literal's dtype, an array's own, a sequence of arrays', an image's."""
        first = args.first
        if explicit is not None:
            return Value(Kind.NDARRAY, dtype=explicit)
        if first is None:
            return UNKNOWN
        if node is not None and node.args and node.args[0].keyword is None:
            literal_dtype = literal_data_dtype(node.args[0].value)
            if literal_dtype is not None:
                return Value(Kind.NDARRAY, dtype=literal_dtype, float64_by_default=literal_dtype == "float64")
        if first.is_numpy:
            return first.but(kind=Kind.NDARRAY, items=None, element=None)
        if first.kind is Kind.SEQUENCE and first.element is not None and first.element.is_numpy:
            return first.element.but(kind=Kind.NDARRAY, items=None)
        if first.kind is Kind.INSTANCE and first.qualname:
            as_array = self.models.call(first.qualname + ".__array__")
            if as_array is not None:
                return value_of_model(as_array)
        return Value(Kind.NDARRAY)

    def _tensors_numpy_converts(self, node: cst.Call, qualname: str, args: Args, given_ones_too: bool) -> None:
        """A NumPy function given tensors converts each with ``Tensor.__array__``, which calls ``t.numpy()``: the
        tensors given (unless ``given_ones_too`` is false: the function hands a tensor to its own method) and those
        in a list or tuple given. One fact for them all, with where each is written for the fixes."""
        tensors: list[Value] = []
        arguments: list[tuple[int | str, int | None]] = []
        in_sequence = False
        nodes = args.positional_nodes
        given = [*((position, value, nodes[position] if position < len(nodes) else None)
                   for position, value in enumerate(args.positional)),
                 *((name, value, args.keyword_nodes.get(name)) for name, value in args.keywords.items()
                   if not name.startswith("*"))]  # ``accuracy_score(y_true=labels, y_pred=predictions)`` too
        for position, value, written in given:
            if value.kind is Kind.TENSOR:
                if given_ones_too:
                    tensors.append(value)
                    arguments.append((position, None))
            elif value.kind is Kind.SEQUENCE:
                held = _tensors_held(value)
                if held:
                    tensors.extend(held)
                    in_sequence = True
                    arguments.extend((position, item) for item in _tensor_items(written, value))
        if tensors:
            tensor = tensors[0] if len(tensors) == 1 else join_all(tensors) or tensors[0]
            self.facts.tensor_to_numpy.append(TensorToNumpy(node, qualname, tensor, self.grad_enabled,
                                                            tuple(arguments), in_sequence))

    def _model_source(self, where: str, args: Args, receiver: Value | None) -> Value | None:
        if where == "self":
            return receiver
        index = int(where)
        return args.positional[index] if len(args.positional) > index else None

    # -- the receiver, changed

    def _changed_receiver(self, model: Model, args: Args, receiver: Value | None) -> Value:
        base = receiver if receiver is not None else args.first
        if base is None:
            return UNKNOWN
        if "unknown-dtype" in model.flags:  # ``.real`` of a complex array is real: the dtype is not kept
            base = base.but(dtype=None, float64_by_default=False, float64_origins=frozenset())
        if base.kind is Kind.TENSOR:
            if receiver is None:  # ``torch.max(t, 1)``: the rest of the arguments are the method's (``t.max(1)``)
                args = Args(args.positional[1:], args.keywords, args.positional_nodes[1:], args.keyword_nodes)
            return self._changed_tensor(model, args, base)
        if base.is_numpy:
            explicit = self._dtype_given(model, args)
            if explicit is not None:
                return base.but(dtype=explicit, float64_by_default=False, items=None)
            kind = _reduced_kind(model, base)
            if "float-of" in model.params:
                return to_float_result(base, reduction=kind is Kind.NUMPY_VALUE)
            result = base.but(kind=kind, items=None)
            return widened(result) if "widens-ints" in model.flags else result
        if base.kind is Kind.NN_MODULE and model.dtype is not None:
            return base.but(dtype=model.dtype)  # ``model.double()``: its parameters are float64 now
        return base

    def _changed_tensor(self, model: Model, args: Args, tensor: Value) -> Value:
        flags = model.flags
        if "args-give-tuple" in flags and (args.positional or args.keywords) and not args.tensors():
            # ``t.max(dim=0)`` gives (values, indices), both where ``t`` is; ``t.max(other)`` is elementwise
            values = tensor.but(loop_item=None, transfer=None, items=None)
            indices = values.but(dtype="int64", float64_by_default=False, float64_origins=frozenset(),
                                 requires_grad=False)
            return Value(Kind.SEQUENCE, items=(values, indices))
        result = tensor
        if "autograd" in flags:
            others = args.tensors()
            if others:
                combined = self._tensor_arithmetic(tensor, *others)
                # (``_tensor_arithmetic`` keeps its first tensor's transfer: this one's)
                result = combined.but(loop_item=tensor.loop_item, parameter=tensor.parameter,
                                      moves_parameter=tensor.moves_parameter)
            elif tensor.requires_grad:
                result = tensor.but(requires_grad=self._result_requires_grad([tensor]))
        if "decides-dtype" in flags:
            self.facts.dtype_decided.update(tensor.float64_origins)
            result = result.but(float64_origins=frozenset())
        if model.dtype is not None:
            differentiable = is_float(model.dtype) or model.dtype.startswith("complex")
            result = result.but(dtype=model.dtype, requires_grad=result.requires_grad if differentiable else False)
        if "dtype-of-arg" in model.params:
            index = int(model.params["dtype-of-arg"])
            other = args.positional[index] if len(args.positional) > index else None
            result = result.but(dtype=other.dtype if other is not None and other.kind is Kind.TENSOR else None)
        if "no-grad" in flags:
            # ``Variable(t, requires_grad=True)``: the legacy wrapper is ``t.detach()`` unless it is told otherwise
            asked = args.keywords.get("requires_grad")
            result = result.but(requires_grad=False if asked is None else bool_literal(asked))
        if "clears-origins" in flags:
            result = result.but(float64_origins=frozenset())
        return result

    # -- tensors

    def _tensor_result(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                       receiver: Value | None) -> Value:
        if "converts" in model.params:
            if node is None:
                return UNKNOWN
            return self._numpy_to_tensor(node, qualname, model, args)
        if "created" in model.flags:
            return self._created_tensor(args)
        if "autograd" in model.flags:
            tensors = args.tensors()
            if not tensors:
                return UNKNOWN
            return self._tensor_arithmetic(*tensors).but(dtype=None, loop_item=None, transfer=None)
        pending_copy = device_test = None
        if "keeps-device" in model.flags and receiver is not None:
            on_accelerator, pending_copy, device_test = (receiver.on_accelerator, receiver.pending_copy,
                                                         receiver.device_test)
        elif "device-param" in model.params:
            where = model.params["device-param"]
            device = args.keywords.get("device") or (
                None if where == "kw" or len(args.positional) <= int(where) else args.positional[int(where)])
            on_accelerator = device_on_accelerator(device)
            device_test = device.device_test if device is not None and on_accelerator else None
        else:
            on_accelerator = either_all(v.on_accelerator for v in args.tensors()) if args.tensors() else None
            device_test = device_test_of(args.tensors())
        if "cpu" in model.flags:
            on_accelerator = False
        if "accelerator" in model.flags:
            on_accelerator = True
        dtype = model.dtype if model.param("dtype-param") is None else self._dtype_given(model, args)
        return Value(Kind.TENSOR, dtype=dtype, requires_grad=False if "no-grad" in model.flags else None,
                     on_accelerator=on_accelerator, pending_copy=pending_copy,
                     device_test=device_test if on_accelerator or pending_copy is not None else None)

    def _parameter(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                   receiver: Value | None) -> Value:
        first = args.first
        flag_value = args.keywords.get("requires_grad") or (
            args.positional[1] if len(args.positional) > 1 else None)
        requires_grad = True if flag_value is None else bool_literal(flag_value)
        base = first if first is not None and first.kind is Kind.TENSOR else Value(Kind.TENSOR)
        return base.but(requires_grad=requires_grad, float64_origins=frozenset(), loop_item=None, transfer=None)

    def _device(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                receiver: Value | None) -> Value:
        first = args.first
        on_accelerator = device_on_accelerator(first) if first else None
        return Value(Kind.DEVICE, on_accelerator=on_accelerator,
                     device_test=first.device_test if first is not None and on_accelerator else None)

    def _sets_default_dtype(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                            receiver: Value | None) -> Value:
        first = args.first
        # ``torch.set_default_tensor_type(torch.cuda.FloatTensor)`` moves the default tensor to CUDA but keeps
        # float32: float64 is no more wanted than before
        self.facts.note_default_setter(first is not None and self._default_type_dtype(first) == "float32")
        return NONE

    def _default_type_dtype(self, value: Value) -> str | None:
        """The dtype a default dtype or tensor type names: ``torch.float32``, ``torch.cuda.FloatTensor``, or
        ``"torch.FloatTensor"``."""
        named = value.literal if value.kind is Kind.STRING else value.qualname if value.kind is Kind.REF else None
        model = self.models.call(named) if named else None
        if model is not None and model.dtype is not None and "legacy" in model.flags:
            return model.dtype
        return self._dtype_of_value(value)

    # -- wrappers

    def _instance(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                  receiver: Value | None) -> Value:
        """An object of a library class; a wrapper keeps (``keeps=N``) or wraps (``wraps=N``) a known object."""
        kept = _known_object(args, model.param("keeps"))
        if kept is not None:  # ``gym.wrappers.RecordEpisodeStatistics(vector_env)``: still that vector env
            return kept
        made = Value(Kind.INSTANCE, qualname=model.of, wrapped=_known_object(args, model.param("wraps")))
        if "device-of-args" in model.flags:  # ``Categorical(logits=q.cuda())``: its samples are drawn there
            # (a network's output on an accelerator, ``mu, sigma = self.actor(state)``, is as good as a tensor there)
            tensors = args.tensors() + [v for v in args.all_values() if v.kind is Kind.UNKNOWN and v.on_accelerator]
            on_accelerator = either_all(v.on_accelerator for v in tensors) if tensors else None
            made = made.but(on_accelerator=on_accelerator,
                            device_test=device_test_of(tensors) if on_accelerator else None)
        return made

    def _model_wrapped(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                       receiver: Value | None) -> Value:
        """``wrapper.step(a)``, ``super().step(a)``: the same method of the object the wrapper was built around."""
        inner = receiver.wrapped if receiver is not None else None
        if inner is None or node is None or not isinstance(node.func, cst.Attribute):
            return UNKNOWN
        result = self._call_method(node, node.func, inner, node.func.attr.value, args)
        changed = model.param("changes")
        if changed is not None and result.items is not None and int(changed) < len(result.items):
            index = int(changed)  # ``TransformReward``: the reward is whatever the wrapper's function gives
            result = result.but(items=(*result.items[:index], UNKNOWN, *result.items[index + 1:]))
        return result

    def _model_partial(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                       receiver: Value | None) -> Value:
        """``functools.partial(f, x, k=v)`` of a function of the file (or of a method taken from an object): a
        callable that calls it with these arguments first. Of anything else: unknown."""
        if not args.positional or any(key.startswith("*") for key in args.keywords):
            return UNKNOWN
        callee, given = args.positional[0].definition, tuple(args.positional[1:])
        keywords = tuple(args.keywords.items())
        if isinstance(callee, FunctionInfo):
            return Value(Kind.FUNCTION, definition=BoundCall(callee, None, given, keywords))
        if isinstance(callee, BoundCall):
            return Value(Kind.FUNCTION, definition=BoundCall(
                callee.function, callee.receiver, callee.positional + given, callee.keywords + keywords))
        return UNKNOWN

    # -- modules

    def _nn_module(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                   receiver: Value | None) -> Value:
        if "no-params" in model.flags:
            has_params: bool | None = False
        elif "params-of-args" in model.flags:
            children = _module_children(args)
            has_params = True if any(c.has_params for c in children) else (
                False if children and all(c.has_params is False for c in children) else None)
        else:
            has_params = True
        device = args.keywords.get("device")
        dtype = self._dtype_argument(args, None) if "dtype" in args.keywords else None
        made = Value(Kind.NN_MODULE, qualname=qualname, has_params=has_params, dtype=dtype,
                     on_accelerator=device_on_accelerator(device) if device is not None else False)
        if "params-of-args" in model.flags and children:
            # ``nn.ModuleList([a, b])``: ``layers[i]`` and ``for layer in layers`` give one of them (an empty one,
            # none yet: what is appended, ``containers.py``)
            known = all(child.kind is Kind.NN_MODULE for child in children)
            made = made.but(element=(join_all(children) or UNKNOWN) if known else UNKNOWN)
        return made


def _module_children(args: Args) -> list[Value]:
    """The modules a container module is built from: its arguments, and the items of the lists, tuples and dicts
    given or spread (``nn.Sequential(*layers)``, ``nn.ModuleList([a, b])``); a collection the analysis knows nothing
    of stands for itself (unknown)."""
    children = []
    given = [*args.all_values(), *(v for k, v in args.keywords.items() if k == STARRED)]
    for value in given:
        if value.kind in (Kind.SEQUENCE, Kind.MAPPING) and (value.items is not None or value.element is not None):
            parts = [*(value.items or ()), *(() if value.element is None else (value.element,))]
            children.extend(parts if parts and not value.open_ended else [*parts, value])
        else:
            children.append(value)
    return children


def _tensors_held(sequence: Value) -> list[Value]:
    """The tensors a list or tuple holds, as far as known: its items, or what iterating over it gives, and those of
    the lists and tuples it holds (NumPy converts a nested list's rows item by item: ``np.array(rows)`` of
    ``rows.append([x0, y0, score])``)."""
    held = []
    for part in parts_of(sequence):
        if part.kind is Kind.TENSOR:
            held.append(part)
        elif part.kind is Kind.SEQUENCE:
            held.extend(_tensors_held(part))
    return held


def _placed_on_accelerator(value: Value) -> bool:
    """An unknown value made from tensors that may be on an accelerator (``_placed_like_inputs``)."""
    return value.kind is Kind.UNKNOWN and value.choices is None and bool(value.on_accelerator)


def _tensor_items(expression: cst.BaseExpression | None, sequence: Value) -> list[int | None]:
    """The items of a list or tuple display that hold tensors (none when it is not a display written out item by
    item, or when its items and the values known of them do not line up)."""
    if not isinstance(expression, (cst.List, cst.Tuple)) or sequence.items is None:
        return []
    elements = expression.elements
    if len(elements) != len(sequence.items) or any(isinstance(e, cst.StarredElement) for e in elements):
        return []
    return [index for index, item in enumerate(sequence.items) if item.kind is Kind.TENSOR]


def _known_object(args: Args, position: str | None) -> Value | None:
    """The argument at ``position`` when it is an object the analysis knows the class of (a library's or the
    file's): what a wrapper built around it delegates to."""
    if position is None or len(args.positional) <= int(position):
        return None
    given = args.positional[int(position)]
    return given if given.kind is Kind.INSTANCE else None


def _arrays_like(args: Args) -> Value:
    """``np.meshgrid(x, y)``: one array per positional argument, each of that argument's dtype (no promotion)."""
    if any(key.startswith("*") for key in args.keywords):
        return Value(Kind.SEQUENCE)  # ``np.meshgrid(*axes)``: how many, and of what, is not known
    return Value(Kind.SEQUENCE, items=tuple(
        Value(Kind.NDARRAY, dtype=given.dtype, float64_by_default=given.float64_by_default) if given.is_numpy
        else Value(Kind.NDARRAY) for given in args.positional))


def value_of_model(model: Model) -> Value:
    """What a row gives with nothing to read from arguments: its kind, dtype and flags."""
    kind = model.kind
    float64_by_default = "float64-default" in model.flags
    dtype = "float64" if float64_by_default and model.dtype is None else model.dtype
    if kind == "ndarray":
        return Value(Kind.NDARRAY, dtype=dtype, float64_by_default=float64_by_default)
    if kind == "numpy-value":
        return Value(Kind.NUMPY_VALUE, dtype=dtype, float64_by_default=float64_by_default)
    if kind == "number":
        return Value(Kind.NUMBER, dtype=_NUMBER_FAMILY.get(model.dtype or "", "int") if model.dtype else None)
    if kind == "tensor":
        on_accelerator = True if "accelerator" in model.flags else False if "cpu" in model.flags else None
        return Value(Kind.TENSOR, dtype=model.dtype, requires_grad=False if "no-grad" in model.flags else None,
                     on_accelerator=on_accelerator)
    if kind == "parameter":
        return Value(Kind.TENSOR, requires_grad=True)
    if kind == "module":
        return Value(Kind.NN_MODULE, has_params=False if "no-params" in model.flags else True)
    if kind == "instance":
        return Value(Kind.INSTANCE, qualname=model.of)
    if kind == "tuple":
        items = tuple(value_of_model(item) for item in model.items)
        if "or-item" in model.params:  # the tuple or one of its items: only ``a, b = ...`` says it is the tuple
            return Value(Kind.UNKNOWN, unpacked=items)
        if model.open_ended:
            return Value(Kind.SEQUENCE, items=items, open_ended=True)
        return Value(Kind.SEQUENCE, items=items, element=None)
    if kind == "sequence":
        return Value(Kind.SEQUENCE, element=value_of_model(model.items[0]) if model.items else None)
    if kind == "device":
        return Value(Kind.DEVICE)
    if kind == "dataloader":
        return Value(Kind.DATALOADER)
    if kind == "device-name":
        return Value(Kind.STRING)
    if kind == "other" or kind == "grad-mode":
        return OTHER
    if kind == "none":
        return NONE
    return UNKNOWN


def device_name(device: Value) -> Value:
    """``x.device.type`` as a string that names the same place: "cpu" for the host (``torch.tensor([0.]).device.type``
    in a helper that returns where new tensors go), a name of an accelerator, under the same device test, where the
    device may be one, and no device NPT002 speaks of where it is neither."""
    if device.on_accelerator is False:
        return Value(Kind.STRING, literal="cpu")
    if device.on_accelerator:
        return Value(Kind.STRING, device_test=device.device_test)
    return OTHER


def _reduced_kind(model: Model, value: Value) -> Kind:
    """A reduction without an axis gives one NumPy scalar; with one, an array unless the input was 1-D, which the
    analysis cannot tell, so a NumPy value either way. Other functions keep what they were given."""
    if "reduces" in model.flags:
        return Kind.NUMPY_VALUE
    return Kind.NDARRAY if value.kind is Kind.NDARRAY else Kind.NUMPY_VALUE


def widened(value: Value) -> Value:
    """``sum``, ``prod``, ``cumsum`` of small integers and booleans accumulate in 64 bits, as NumPy does."""
    dtype = value.dtype
    if dtype in ("bool", "int8", "int16", "int32"):
        return value.but(dtype="int64")
    if dtype in ("uint8", "uint16", "uint32"):
        return value.but(dtype="uint64")
    return value


#: kinds whose effect goes beyond a value: the method of the analysis that applies them.
_EFFECTS = {
    "parameter": "_parameter",
    "device": "_device",
    "module": "_nn_module",
    "sets-default-dtype": "_sets_default_dtype",
    "to-numpy": "_model_to_numpy",
    "move": "_model_move",
    "move-module": "_model_move_module",
    "requires-grad": "_model_requires_grad",
    "retype": "_model_retype",
    "module-output": "_model_module_output",
    "parameters": "_model_parameters",
    "instance": "_instance",
    "wrapped": "_model_wrapped",
    "partial": "_model_partial",
}
