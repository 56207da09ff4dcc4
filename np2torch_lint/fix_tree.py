"""The tree of a fixed text without parsing it again: the old tree with each replaced node swapped for the node
printed in its place, and the statements the added imports touch parsed anew.

A pass of the fixer writes each replacement as LibCST prints the node it built, at the target's place; the old
tree with that node in the target's place prints the same text. Only the ancestors of the swapped nodes are
rebuilt (``with_changes``), so the cost follows the fixes, not the file. The imports are text edits among the
top-level statements: the head of the file up to the last statement they touch is parsed on its own (it is
small: isort's first import block). Wherever that cannot be done exactly (a node not found in its parent, a form
feed in an indentation, a head that would not be the same statements) there is no tree, and the fixer parses.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping, Sequence

import libcst as cst

from .files import SourceError
from .parsing import parse
from .positions import Span


def fixed_tree(module: cst.Module, text: str, new_text: str, parents: Mapping[int, cst.CSTNode],
               swaps: Sequence[tuple[cst.CSTNode, cst.CSTNode]], spans: Mapping[cst.CSTNode, Span],
               edits: Sequence[tuple[int, int, str]], import_edits: Sequence[tuple[int, int, str]],
               rebuilt: dict[int, cst.CSTNode] | None = None) -> cst.Module | None:
    """``module`` (of ``text``) with each ``(old, new)`` of ``swaps`` swapped and the head that ``import_edits``
    (among ``edits``, every text edit of the pass) change parsed from ``new_text``; None where it cannot be made
    exactly (parse then). ``rebuilt``, when given, gets each rebuilt ancestor by the ``id`` of the one it
    replaces."""
    if "\f" in text:  # LibCST prints such an indentation otherwise than the text has it
        return None
    try:
        tree = _swapped(module, parents, swaps, {} if rebuilt is None else rebuilt)
    except (_NotFound, cst.CSTValidationError):
        return None
    if tree is None:
        return None
    if import_edits:
        return _with_new_head(module, tree, text, new_text, spans, edits, import_edits)
    return tree


class _NotFound(Exception):
    pass


def _swapped(module: cst.Module, parents: Mapping[int, cst.CSTNode],
             swaps: Sequence[tuple[cst.CSTNode, cst.CSTNode]], rebuilt_nodes: dict[int, cst.CSTNode]
             ) -> cst.Module | None:
    """The tree with every swap made, each changed ancestor rebuilt once, the deepest first."""
    nodes: dict[int, cst.CSTNode] = {}  # every swapped node and ancestor of one, by id
    depth: dict[int, int] = {id(module): 0}
    nodes[id(module)] = module
    changes: dict[int, dict[int, cst.CSTNode]] = {}  # id(parent) -> {id(old child): new child}
    swapped = set()
    for old, new in swaps:
        swapped.add(id(old))
        parent = parents.get(id(old))
        if parent is None:
            return None
        changes.setdefault(id(parent), {})[id(old)] = new
        # the depth of each node on the way up (iteratively: an ``elif`` chain is thousands deep)
        chain = [old]
        while id(chain[-1]) not in depth:
            up = parents.get(id(chain[-1]))
            if up is None:
                return None  # not under this module
            chain.append(up)
        for node in reversed(chain[:-1]):
            above = parents[id(node)]
            depth[id(node)] = depth[id(above)] + 1
            nodes[id(node)] = node
    # every node noted lies on the way from a swapped one up to the module: each is rebuilt after its children
    for node_id in sorted(nodes, key=depth.__getitem__, reverse=True):
        if node_id in swapped:
            if node_id in changes:
                return None  # a swapped node inside another: not what a pass makes
            continue
        node = nodes[node_id]
        rebuilt = _with_children(node, changes[node_id])
        rebuilt_nodes[node_id] = rebuilt
        if node is module:
            return rebuilt  # type: ignore[return-value]
        changes.setdefault(id(parents[node_id]), {})[node_id] = rebuilt
    return None


def _with_children(node: cst.CSTNode, new_children: Mapping[int, cst.CSTNode]) -> cst.CSTNode:
    """``node`` with each of its children named in ``new_children`` (by id) replaced."""
    fields = {}
    found = 0
    for each in dataclasses.fields(node):
        value = getattr(node, each.name)
        if isinstance(value, cst.CSTNode):
            if id(value) in new_children:
                fields[each.name] = new_children[id(value)]
                found += 1
        elif isinstance(value, (tuple, list)) and value:
            hits = sum(1 for item in value if id(item) in new_children)
            if hits:
                fields[each.name] = type(value)(new_children.get(id(item), item) for item in value)
                found += hits
    if found != len(new_children):
        raise _NotFound
    return node.with_changes(**fields)


def _with_new_head(module: cst.Module, tree: cst.Module, text: str, new_text: str, spans: Mapping[cst.CSTNode, Span],
                   edits: Sequence[tuple[int, int, str]], import_edits: Sequence[tuple[int, int, str]]
                   ) -> cst.Module | None:
    """``tree`` with its header and first statements, through the last one an import edit changes, parsed from
    ``new_text``. A new line inserted between two statements changes neither (each keeps its own leading lines),
    so the parse stops there; the first statement always goes with the header."""
    body = module.body
    if not body:
        cut, count = len(text), 0
    else:
        if body[0] not in spans:
            return None
        cut, count = spans[body[0]].end, 1
    for start, end, _ in import_edits:
        placed = not body
        for index, statement in enumerate(body):
            span = spans.get(statement)
            if span is None:
                continue
            if start < span.end and end > span.start:
                through, at = index + 1, span.end  # in it: parsed with it
            elif start == end == span.end:
                through, at = index + 1, start  # after it
            elif start == end == span.start:
                through, at = index, start  # before it (and before its own leading lines)
            else:
                continue
            placed = True
            if (through, at) > (count, cut):
                count, cut = through, at
        if not placed:
            return None  # before a comment that heads the file, or some other place: parse it all
    # each edit lies wholly before or after the cut (the cut is between top-level statements)
    if any(start < cut < end for start, end, _ in edits):
        return None
    new_cut = cut + sum(len(new) - (end - start) for start, end, new in edits if end <= cut)
    try:
        head = parse(new_text[:new_cut])
    except SourceError:
        return None  # parsing the whole text says where and why
    # the head's blocks (rare among imports) were read with the head's own idea of the file's indentation
    blocks = not all(isinstance(statement, cst.SimpleStatementLine) for statement in head.body)
    if head.footer or head.default_newline != module.default_newline or (
            blocks and head.default_indent != module.default_indent):
        return None
    return tree.with_changes(header=head.header, body=[*head.body, *tree.body[count:]])
