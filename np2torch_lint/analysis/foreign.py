"""Another module's functions read with this call's arguments, and the facts that reading finds in that module.

A call of a function of another module of the project gives what that module's summary says it returns for
unknown arguments. When the call passes something the analysis knows (a tensor on a device, a float64 array, a
string such as ``"auto"``), the body is read instead, from that module's own tree, with its globals as its summary
says and its parameters bound to the call's arguments, as a function of this file is (``summaries.py``). What
the read finds in that module's code (a ``.numpy()`` of a tensor this call passes) is that module's finding, through
this call: it is kept apart, per module (``Facts.foreign``), and reported in that module's file
(``engine.contributed_diagnostics``).
"""

from __future__ import annotations

import libcst as cst

from .arguments import Args
from .control_flow import NOT_A_GRAD_MODE
from .definitions import ClassInfo, FunctionInfo
from .facts import CallSite, Facts
from .scope import Scope
from .values import Kind, Value

_NOT_READ = object()


class ForeignMixin:
    """Reading another module's function bodies; routing what they find to that module's facts."""

    def _readable(self, info: FunctionInfo, args: Args, receiver: Value | None = None) -> FunctionInfo | None:
        """Another module's function as this analysis can read its body with these arguments, or None: the call
        passes nothing known and is not made on an object constructed here or whose lists this analysis filled (its
        summary says as much), or its body cannot be found (a function defined in a branch, a module that does not
        parse, an import cycle)."""
        if info.origin is None or self.project is None:
            return None
        if not (_passes_something_known(args) or self._known_object(receiver)):
            return None
        cached = self.readable_functions.get(info, _NOT_READ)
        if cached is not _NOT_READ:
            return cached  # type: ignore[return-value]
        node = self._foreign_definition(info)
        readable = None
        if node is not None and not info.opaque:
            module_path, _ = info.origin
            readable = self._function_from(node, info, self._foreign_scope(self.project.foreign_module(module_path)))
        self.readable_functions[info] = readable
        return readable

    def _known_object(self, receiver: Value | None) -> bool:
        """An object of another module's class that this analysis constructed, or whose lists it filled (through
        its methods read with a call's arguments): its other methods are read on it, arguments or not."""
        definition = receiver.definition if receiver is not None else None
        return isinstance(definition, ClassInfo) and (
            definition.specializes is not None or self._filled_here(definition))

    def _foreign_definition(self, info: FunctionInfo) -> cst.FunctionDef | None:
        """The ``def`` of another module's function in that module's own tree, or None where it cannot be found."""
        if info.origin is None or self.project is None:
            return None
        module_path, names = info.origin
        foreign = self.project.foreign_module(module_path)
        return foreign.definitions.get(names) if foreign is not None else None

    def _foreign_scope(self, foreign) -> Scope:  # foreign: project.ForeignModule
        """The module's globals as its summary says, one copy per analysis (a sync writes into the scopes it
        walks)."""
        scope = self.foreign_scopes.get(foreign.path)
        if scope is None:
            scope = self.foreign_scopes[foreign.path] = Scope(None, dict(foreign.names))
        return scope

    def _function_from(self, node: cst.FunctionDef, info: FunctionInfo, scope: Scope) -> FunctionInfo:
        """A function of another module as its ``def`` defines it, its defaults, annotations and decorators read
        in that module's globals (whatever they record goes: it is no call)."""
        made: list[FunctionInfo] = []

        def define() -> None:
            saved_scope, saved_module = self.scope, self.current_module
            self.scope, self.current_module = scope, info.origin[0]  # type: ignore[index]
            try:
                grad_enabled = None
                for decorator in node.decorators:
                    mode = self._grad_mode_of(decorator.decorator, as_decorator=True)
                    if mode is not NOT_A_GRAD_MODE:
                        grad_enabled = mode
                defaults, annotations = self._parameter_values(node.params)
                returns = self._value_of_annotation(node.returns.annotation) if node.returns is not None else (
                    info.returns)
            finally:
                self.scope, self.current_module = saved_scope, saved_module
            made.append(FunctionInfo(node, scope, defaults, annotations, returns, grad_enabled, info.role,
                                     info.owner, info.opaque, module=info.origin[0]))  # type: ignore[index]

        self.read_unreachable(define)
        self.definitions.append(made[0])
        return made[0]

    def _facts_of(self, module: object | None) -> Facts:
        """Where facts about ``module``'s code go: this read's own, or those it keeps for that other module."""
        if module == self.current_module:
            return self.facts
        found = self.facts.foreign.get(module)
        if found is None:
            found = self.facts.foreign[module] = self._fresh_facts()
        return found

    def _absorb_read(self, found: Facts, module: object | None, site: CallSite) -> None:
        """What reading a body of ``module`` with the arguments of the call at ``site`` recorded, and what the reads
        it made recorded of other modules, each to its module's facts. What holds in another module's code through
        its own helpers (``hits(...)`` inside the body read) names this call: the one a reader of that module can
        follow to the values."""
        self._facts_of(module).absorb_call(found, site, outermost=module != self.current_module)
        for other, facts in found.foreign.items():
            self._facts_of(other).absorb_call(facts, site)


def _passes_something_known(args: Args) -> bool:
    return any(_known(value) for value in args.positional) or any(
        _known(value) for key, value in args.keywords.items() if not key.startswith("*"))


def _known(value: Value) -> bool:
    # (one of several things chosen at run time, ``model = VAE(args)`` of a class imported on each branch, is known)
    return value.kind is not Kind.UNKNOWN or value.choices is not None
