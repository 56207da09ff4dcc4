"""Calls: arguments, dispatch to what is called, builtins, modules' outputs and methods."""

from __future__ import annotations

import libcst as cst

from . import known_apis as api
from .arguments import Args
from .host_sync import PENDING_ARRAY
from .torch_semantics import device_on_accelerator
from .values import NONE, UNKNOWN, Kind, Value, bool_literal, either_all, join, ref

RUNTIME = "np2torch_lint.runtime."


class CallsMixin:
    """Calls: arguments, dispatch to what is called, builtins, modules' outputs and methods."""

    def _call(self, node: cst.Call) -> Value:
        func = node.func
        if isinstance(func, cst.Attribute):
            receiver = self.eval(func.value)
            method = func.attr.value
            if receiver.kind is not Kind.REF:
                if (self.class_context is not None and isinstance(func.value, cst.Name)
                        and func.value.value == self.class_context.self_name):
                    receiver = self.class_context.attributes.get(method, UNKNOWN)
                    return self._call_value(node, receiver, self._eval_args(node, None))
                args = self._eval_args(node, None)
                return self._call_method(node, func, receiver, method, args)
            callee = ref(f"{receiver.qualname}.{method}")
        else:
            callee = self.eval(func)
        qualname = callee.qualname if callee.kind is Kind.REF else None
        return self._call_value(node, callee, self._eval_args(node, qualname))

    def _eval_args(self, node: cst.Call, callee: str | None) -> Args:
        collects = callee in api.COLLECTORS
        stacks_one_argument = callee == "torch.stack" and len(node.args) >= 1 and isinstance(
            node.args[0].value, (cst.ListComp, cst.GeneratorExp))
        positional: list[Value] = []
        positional_nodes: list[cst.BaseExpression] = []
        keywords: dict[str, Value] = {}
        for arg in node.args:
            saved_stacking, self.stacking_call = self.stacking_call, None
            if stacks_one_argument and arg is node.args[0]:
                self.stacking_call = node
            try:
                if collects and isinstance(arg.value, cst.GeneratorExp):
                    value = self._comprehension(arg.value, collected=True)
                else:
                    value = self.eval(arg.value)
            finally:
                self.stacking_call = saved_stacking
            if arg.keyword is not None:
                keywords[arg.keyword.value] = value
            elif arg.star:
                keywords["*" + arg.star] = value
            else:
                positional.append(value)
                positional_nodes.append(arg.value)
        return Args(positional, keywords, positional_nodes)

    def _call_value(self, node: cst.Call, callee: Value, args: Args) -> Value:
        self._host_sync_call(node, callee, args)
        kind = callee.kind
        if kind is Kind.REF:
            result = self._call_qualname(node, callee.qualname or "", args)
            if result.loop_item is None and (result.is_numpy or result.kind is Kind.TENSOR):
                # ``np.asarray(a)``, ``torch.relu(t)``: made from a loop's item, it is that item's too
                item = next((v.loop_item for v in args.positional if v.loop_item is not None and (
                    v.is_numpy or v.kind in (Kind.TENSOR, Kind.UNKNOWN))), None)
                if item is not None:
                    result = result.but(loop_item=item)
            return result
        if kind is Kind.NN_MODULE:
            return self._module_output(callee, args)
        if kind is Kind.NN_MODULE_CLASS:
            return Value(Kind.NN_MODULE, has_params=True, on_accelerator=False)
        return UNKNOWN

    def _call_builtin(self, name: str, args: Args) -> Value:
        first = args.first
        if name in ("list", "tuple", "sorted", "reversed") and first is not None:
            return Value(Kind.SEQUENCE, element=self._element_of(first))
        if name == "zip":
            parts = tuple(self._element_of(v) for v in args.positional)
            return Value(Kind.SEQUENCE, element=Value(Kind.SEQUENCE, items=parts))
        if name == "enumerate" and first is not None:
            index = Value(Kind.NUMBER, dtype="int")
            return Value(Kind.SEQUENCE, element=Value(Kind.SEQUENCE, items=(index, self._element_of(first))))
        if name == "range":
            return Value(Kind.SEQUENCE, element=Value(Kind.NUMBER, dtype="int"))
        if name in ("len", "int", "float", "bool", "str", "repr", "print", "isinstance", "hash", "id"):
            return Value(Kind.NUMBER, dtype={"float": "float", "bool": "bool"}.get(name, "int"))
        return UNKNOWN

    def _module_output(self, module: Value, args: Args) -> Value:
        inputs = args.all_values()
        tensors = [v for v in inputs if v.kind is Kind.TENSOR]
        if self.grad_enabled is False:
            requires_grad: bool | None = False
        elif module.has_params:
            requires_grad = True if self.grad_enabled else None
        elif module.has_params is False:  # a loss or activation: its inputs decide
            requires_grad = self._result_requires_grad(tensors, inputs_known=len(tensors) == len(inputs))
        else:
            requires_grad = None
        on_accelerator = either_all([module.on_accelerator, *(v.on_accelerator for v in tensors)])
        return Value(Kind.TENSOR, requires_grad=requires_grad, on_accelerator=on_accelerator)

    def _call_qualname(self, node: cst.Call, qualname: str, args: Args) -> Value:
        if qualname.startswith("numpy."):
            return self._numpy_call_layout(node, qualname, args, self._call_numpy(node, qualname, args))
        if qualname.startswith("torch."):
            return self._call_torch(node, qualname, args)
        if qualname.startswith("builtins."):
            return self._call_builtin(qualname[len("builtins."):], args)
        if qualname.startswith(RUNTIME):
            return self._call_runtime_helper(node, qualname[len(RUNTIME):], args)
        if qualname.startswith("torchvision.models.") and qualname.rsplit(".", 1)[1][:1].islower():
            return Value(Kind.NN_MODULE, has_params=True, on_accelerator=False)
        return UNKNOWN

    def _call_runtime_helper(self, node: cst.Call, name: str, args: Args) -> Value:
        """np2torch_lint.runtime's helpers, which the fixes write: the analysis must see through them too."""
        if name == "from_numpy":
            return self._numpy_to_tensor(node, "np2torch_lint.runtime.from_numpy", args)
        if name in ("to_numpy", "to_numpy_async"):
            first = args.first
            dtype = first.dtype if first is not None else None
            return Value(Kind.NDARRAY, dtype=dtype) if name == "to_numpy" else Value(
                Kind.OTHER, qualname=PENDING_ARRAY, dtype=dtype)
        if name == "stack_to_device":
            device = args.keywords.get("device") or (args.positional[1] if len(args.positional) > 1 else None)
            return Value(Kind.TENSOR, requires_grad=False, on_accelerator=device_on_accelerator(device),
                         dtype=self._dtype_argument(args, None))
        return UNKNOWN

    # numpy

    def _call_method(self, node: cst.Call, func: cst.Attribute, receiver: Value, method: str,
                     args: Args) -> Value:
        decided = self._host_sync_method(node, func, receiver, method, args)
        if decided is not None:
            return decided
        kind = receiver.kind
        if kind is Kind.TENSOR:
            result = self._tensor_method(node, receiver, method, args)
            if method in ("requires_grad_", "detach_") and isinstance(func.value, cst.Name):
                self.scope.names[func.value.value] = result  # in place: the name now holds the changed tensor
            return result
        if receiver.is_numpy:
            return self._numpy_method_layout(func, receiver, method, args,
                                             self._numpy_method(node, receiver, method, args))
        if kind is Kind.NN_MODULE:
            return self._module_method(func, receiver, method, args)
        if kind is Kind.NUMPY_GENERATOR:
            return self._generator_method(receiver, method, args)
        if kind is Kind.SEQUENCE:
            if method == "append" and args.first is not None:
                self._note_collected(args.first, "append")
                if isinstance(func.value, cst.Name):
                    element = args.first.but(loop_item=None, transfer=None)
                    self.scope.names[func.value.value] = receiver.but(
                        items=None, element=element if receiver.element is None else join(receiver.element, element))
            return NONE if method in ("append", "extend", "insert") else UNKNOWN
        if kind is Kind.UNKNOWN and method == "append" and args.first is not None:
            self._note_collected(args.first, "append")  # ``self.batches.append(x.cuda())``: still collected
        return UNKNOWN

    def _module_method(self, func: cst.Attribute, module: Value, method: str, args: Args) -> Value:
        if method in ("to", "cuda", "cpu"):
            moved = module.but(on_accelerator=self._destination_on_accelerator(method, args, module.on_accelerator))
            if isinstance(func.value, cst.Name):
                self.scope.names[func.value.value] = moved  # nn.Module.to() moves in place and returns self
            return moved
        if method == "requires_grad_":
            flag = bool_literal(args.first) if args.first is not None else True
            changed = module.but(has_params=False if flag is False else module.has_params)
            if isinstance(func.value, cst.Name):
                self.scope.names[func.value.value] = changed
            return changed
        if method in ("train", "eval", "float", "double", "half", "bfloat16", "share_memory"):
            return module
        if method == "forward":
            return self._module_output(module, args)
        if method == "parameters":
            return Value(Kind.SEQUENCE, element=Value(Kind.TENSOR, requires_grad=module.has_params,
                                                      on_accelerator=module.on_accelerator))
        return UNKNOWN
