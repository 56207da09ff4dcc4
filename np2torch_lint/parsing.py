"""Parse one source text safely: the cheap prefilter (``could_have_findings``), the guards against code that
would crash LibCST's native parser, and the thread with a deep stack that parsing, linting and fixing run on.

The analysis of a file (``engine``) and the project's bookkeeping (``project``) both parse, so this lives apart from
both: ``project`` needs it without the module that drives whole runs.
"""

from __future__ import annotations

import ast
import gc
import re
import sys
import threading
import warnings
from contextlib import contextmanager, suppress
from typing import Callable, Iterator, TypeVar

import libcst as cst

from .files import SourceError, line_and_column

T = TypeVar("T")

# LibCST's native parser recurses on the C stack and crashes the process (it cannot raise) on very deep code: a
# few thousand nested brackets, or a chain of 100k ``a + a + ...``; a chain of 20k ``a.a.a`` takes it minutes.
# Python itself refuses more than 200 nested brackets, so files that could hide such code are checked with
# Python's own parser first, and parsing runs on a thread with a large stack.
MAX_SOURCE_CHARS = 10 * 2**20
MAX_NESTING = 1000
MAX_CHAIN_TERMS = 3000  # ``a + a + ... + a``: about what CPython compiles (with its default recursion limit)
_DEEP_STACK_BYTES = 512 * 2**20
_LONG_STRETCH = 2000
_BRACKET = re.compile(r"[][(){}]")
#: what can make an expression one level deeper without a bracket: an operator, a dot, a keyword that nests.
#: A long line or bracketed stretch with fewer of them cannot hide a deep chain (data literals, long calls, and
#: docstrings are common and need no second parse); brackets and blocks add at most a few hundred levels more
_NESTING_TOKEN = re.compile(r"[-+*/%@&|^~<>.]|\b(?:not|lambda|if|await|yield|for|async|and|or|in|is)\b")
_NESTING_TOKENS = 500
_CONTINUATIONS = 200
_LONG_CONTINUATION = re.compile(r"(?:\\\r?\n[^\n]*){%d}" % _CONTINUATIONS)


_PROJECT_MARKERS = ("torch", "numpy", ".cuda(", ".to(", "import *")


def could_have_findings(text: str, project: bool = False) -> bool:
    """Every rule needs a tensor, and in a file on its own a tensor needs torch imported: a file that never says
    "torch" is clean. In a project a tensor may come from another module: a file needs reading when it says
    "torch" or "numpy" (``.numpy()``), moves something (``.cuda(``, ``.to(``), or star-imports (a package's
    ``from models import *`` may bring its ``np`` and ``nn``)."""
    if not project:
        return "torch" in text
    return any(marker in text for marker in _PROJECT_MARKERS)


def parse(text: str, *, tabs_expanded: bool = False) -> cst.Module:
    """The module of ``text``. With ``tabs_expanded``, code whose indentation mixes tabs and spaces in a way
    Python accepts and LibCST's native parser does not (LibCST issue 829: a tab after spaces, or spaces after a
    tab where the block's other lines use spaces) is parsed with each indentation's tabs expanded as Python
    counts them, to the next multiple of 8: the module then prints that text, not ``text`` (only the start of
    some lines differs, which ``positions.locate`` maps back). For reading only; the fixer, which writes the
    module back, keeps the error."""
    _refuse_what_would_crash_the_parser(text)
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        expanded = _with_tabs_expanded(text) if indentation_has_tabs(text) and python_accepts(text) else None
        if expanded is not None and tabs_expanded:
            return expanded
        raise SourceError(_syntax_error_reason(text, error, refused_for_tabs=expanded is not None)) from None
    except (RecursionError, MemoryError) as error:  # pathological nesting or size
        raise SourceError(f"too deeply nested or too large to parse ({type(error).__name__})") from None
    except UnicodeEncodeError as error:  # a lone surrogate, from an editor's or a notebook's JSON
        line, column = line_and_column(text, error.start)
        raise SourceError(f"a lone surrogate (\\u{ord(text[error.start]):04x}) at {line}:{column}, which Python "
                          "source cannot hold") from None


#: the indentation of a line that holds a tab (a form feed resets Python's count of columns: such lines stay as
#: they are)
_TAB_IN_INDENTATION = re.compile(r"^[ ]*\t[ \t]*", re.M)


def indentation_has_tabs(text: str) -> bool:
    """Whether a line's indentation holds a tab: only then may ``parse`` have expanded some (a tab elsewhere, in a
    string or between tokens, is kept)."""
    return "\t" in text and _TAB_IN_INDENTATION.search(text) is not None


def _with_tabs_expanded(text: str) -> cst.Module | None:
    with suppress(cst.ParserSyntaxError):
        return cst.parse_module(_TAB_IN_INDENTATION.sub(lambda indentation: indentation.group().expandtabs(8), text))
    return None


def _syntax_error_reason(text: str, error: cst.ParserSyntaxError, refused_for_tabs: bool = False) -> str:
    """Python's own words for a syntax error (clearer than LibCST's), or LibCST's when Python accepts the code;
    ``refused_for_tabs``: LibCST parses it once its indentation's tabs are expanded, which only reading may do."""
    if refused_for_tabs:
        return ("LibCST cannot parse its indentation, which mixes tabs and spaces as Python allows: it is linted "
                "with the tabs expanded, but cannot be fixed until they are replaced")
    try:
        _python_parse(text)
    except SyntaxError as python_error:
        return f"{python_error.msg} at {python_error.lineno}:{python_error.offset}"
    except (ValueError, RecursionError, MemoryError):
        pass
    message = " ".join(error.message.split())
    return f"LibCST cannot parse this: {message} at {error.raw_line}:{error.raw_column + 1}"


def _refuse_what_would_crash_the_parser(text: str) -> None:
    if len(text) > MAX_SOURCE_CHARS:
        raise SourceError(f"too large to lint ({len(text) / 2**20:.1f} MiB; the limit is "
                          f"{MAX_SOURCE_CHARS // 2**20} MiB)")
    # Python's own parser (a fifth of LibCST's time) checks only text that could hide very deep code: a chain of
    # a thousand terms needs a long line, a long bracketed stretch or a long run of backslash continuations
    if not _could_hide_deep_code(text):
        return
    try:
        tree = _python_parse(text)
    except SyntaxError as error:
        raise SourceError(f"{error.msg} at {error.lineno}:{error.offset}") from None
    except (RecursionError, MemoryError, ValueError) as error:
        raise SourceError(f"too deeply nested to parse ({type(error).__name__})") from None
    nesting, terms = _ast_depth(tree)
    if nesting > MAX_NESTING:
        raise SourceError(f"nested {nesting} levels deep; np2torch-lint parses at most {MAX_NESTING}")
    if terms > MAX_CHAIN_TERMS:
        raise SourceError(f"a chain of {terms} operands; np2torch-lint parses at most {MAX_CHAIN_TERMS}, as "
                          "Python compiles")


def _could_hide_deep_code(text: str) -> bool:
    """Long lines or bracketed stretches (longer than a line may be) with many nesting tokens, more than 200
    nested brackets, or many backslash continuations in a row (brackets and tokens in strings and comments count
    too: that only errs to checking)."""
    # (plain string operations first: a regular expression that looks for a long line tries every position)
    lines = text.split("\n")
    if max(map(len, lines)) >= _LONG_STRETCH and any(
            _nests_deeply(line, 0, len(line)) for line in lines if len(line) >= _LONG_STRETCH):
        return True
    continuations = text.count("\\\n") + text.count("\\\r\n")
    if continuations >= _CONTINUATIONS and _LONG_CONTINUATION.search(text):
        return True
    depth = opened_at = 0
    for bracket in _BRACKET.finditer(text):
        if bracket.group() in "([{":
            depth += 1
            if depth == 1:
                opened_at = bracket.start()
            elif depth > 200:
                return True
        elif depth > 0:
            depth -= 1
            if depth == 0 and bracket.start() - opened_at > _LONG_STRETCH and _nests_deeply(
                    text, opened_at, bracket.start()):
                return True
    return False


def _nests_deeply(text: str, start: int, end: int) -> bool:
    count = 0
    for _ in _NESTING_TOKEN.finditer(text, start, end):
        count += 1
        if count >= _NESTING_TOKENS:
            return True
    return False


def _python_parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings are the user's compiler's business, not ours
        return compile(text, "<file>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)


def _ast_depth(tree: ast.AST) -> tuple[int, int]:
    """How deeply expressions and blocks nest, and the most terms of one chain of binary operators.

    The next link of a flat chain adds no level of nesting: an ``elif`` (LibCST parses chains of 20,000), or an
    operand of a binary operation inside another (``a + a + ... + a``, which Python compiles up to about 3,000
    terms and LibCST parses in time quadratic in the terms: that is their own limit). Brackets, which do nest,
    stop at 200 in Python's parser; method chains (``x.a().b()``) nest: LibCST takes minutes over a few thousand
    links."""
    deepest = longest = 0
    stack = [(tree, 1, 1)]
    while stack:
        node, depth, terms = stack.pop()
        deepest, longest = max(deepest, depth), max(longest, terms)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.BinOp) and isinstance(node, ast.BinOp):
                stack.append((child, depth, terms + 1))
            elif isinstance(child, ast.If) and isinstance(node, ast.If) and node.orelse == [child]:
                stack.append((child, depth, 1))
            else:
                stack.append((child, depth + 1, 1))
    return deepest, longest + 1  # n operators join n + 1 terms


_deep_stack_lock = threading.Lock()
_deep_stack_threads = 0  # how many run now (the language server lints documents on threads of their own)
_deep_stack_restore = [0]  # the recursion limit from before the first of them


@contextmanager
def _deep_recursion_allowed() -> Iterator[None]:
    """A high recursion limit while any deep-stack thread runs (the limit is the process's, not a thread's)."""
    global _deep_stack_threads
    with _deep_stack_lock:
        if _deep_stack_threads == 0:
            _deep_stack_restore[0] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_deep_stack_restore[0], 50_000))
        _deep_stack_threads += 1
    try:
        yield
    finally:
        with _deep_stack_lock:
            _deep_stack_threads -= 1
            if _deep_stack_threads == 0:
                sys.setrecursionlimit(_deep_stack_restore[0])


def run_with_deep_stack(function: Callable[..., T], *args: object) -> T:
    """Call ``function`` on a thread with a large C stack and a high recursion limit, and return its result (from
    any number of threads at once: the limit is raised while any runs)."""
    outcome: list = []

    def target() -> None:
        # No cyclic garbage collection while one file is parsed and analysed: a full collection walks every node
        # of the (large, acyclic, still alive) tree, and the analysis allocates enough to set off many of them
        # (measured: 1.4-1.5x a bare parse with them, 1.1x without). What the analysis makes in cycles is
        # collected afterwards, as usual.
        collecting = gc.isenabled()
        gc.disable()
        try:
            outcome.append((True, function(*args)))
        except BaseException as error:  # noqa: BLE001 - handed back to the calling thread below
            outcome.append((False, error))
        finally:
            if collecting:
                gc.enable()

    with _deep_recursion_allowed():
        with _deep_stack_lock:  # the stack size is the process's: set for this thread's start only
            previous_size = threading.stack_size(_DEEP_STACK_BYTES)
            try:
                thread = threading.Thread(target=target, name="np2torch-lint-parse")
                thread.start()
            finally:
                threading.stack_size(previous_size)
        thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


@contextmanager
def garbage_collected_after() -> Iterator[None]:
    """No cyclic garbage collection until one file's work is done and its tree dropped, then a collection of the
    youngest generation only.

    Collected while the file is being worked on, the (alive, large) tree would be walked and promoted to older
    generations, and walked again there. The analysis breaks the reference cycles it made once it is done
    (``Analyzer.release``), so the tree is freed when it is dropped, and the collection afterwards walks only the
    little the analysis left in cycles (before that, walking the garbage tree cost about 0.1x of the parse).
    Inside a run of files (``collector_paused_for_files``) it does nothing."""
    with _collector_paused(at_end=lambda: gc.collect(0)):
        yield


@contextmanager
def collector_paused_for_files(every: int = 1000) -> Iterator[Callable[[], None]]:
    """No cyclic garbage collection during a run of files (each one's ``garbage_collected_after`` then does
    nothing), but a collection of the youngest generation after every ``every`` files (call the function it gives
    after each file); at the end, what the run allocated joins the oldest generation without being walked.

    A file's analysis leaves only a few objects in cycles (``Analyzer.release``: its tree is freed when dropped),
    so collecting after each file would mostly walk what is still alive, which in project mode is the trees and
    analyses kept for files whose turn is to come: on pytorch/rl (842 files) that was 0.85 s of collections, about
    0.03x of the bare parse. A collection of the youngest generation at the end walked every object the run left
    alive (the project's summaries, the results): 0.6 s on 400 of torch's files, 0.08x of their bare parse. Moved
    to the oldest generation instead (``gc.freeze()`` then ``gc.unfreeze()``, which only splice lists), the few
    cycles among them wait for the next full collection, which Python runs once that generation has grown."""
    done = 0

    def file_done() -> None:
        nonlocal done
        done += 1
        if collecting and done % every == 0:
            gc.collect(0)

    def to_the_oldest_generation() -> None:
        gc.freeze()
        gc.unfreeze()

    with _collector_paused(at_end=to_the_oldest_generation) as collecting:
        yield file_done


@contextmanager
def _collector_paused(at_end: Callable[[], None]) -> Iterator[bool]:
    """The collector off for the block, then ``at_end`` and the collector on again; a host that turned it off keeps
    it off, and nothing runs at the end (the block is part of a run that pauses it already). Gives whether it was
    on."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield collecting
    finally:
        if collecting:
            at_end()
            gc.enable()


def check_fixed_text(text: str) -> None:
    """Raise ``SourceError`` where parsing would refuse the text before trying (too large, too deep)."""
    _refuse_what_would_crash_the_parser(text)


def python_accepts(text: str) -> bool | None:
    """Whether Python's own parser (a fifth of LibCST's time) accepts the text; None where it gives up (code
    nested deeper than it goes, which LibCST may parse)."""
    try:
        _python_parse(text)
    except (SyntaxError, ValueError):
        return False
    except (RecursionError, MemoryError):
        return None
    return True


def check_parses(text: str) -> None:
    """Raise ``SourceError`` when the text does not parse, without building LibCST's tree when Python's parser (a
    fifth of LibCST's time) accepts it. LibCST has the last word, as it may know syntax newer than this Python."""
    if not python_accepts(text):  # refused, or too deep for Python's parser
        run_with_deep_stack(parse, text)  # raises SourceError with LibCST's or Python's reason
