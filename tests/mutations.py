"""Mutation fuzzing: the rules' patterns inserted at random valid places of real-shaped files.

Used by tests/test_fuzz_fixes.py (a small budget in every test run) and benchmarks/fuzz_fixes.py (10,000
programs, on demand). ``check_program`` is the property: lint and both fix styles never crash, the fixed code
compiles, a second fix changes nothing, and every comment is kept.
"""

from __future__ import annotations

import random
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from np2torch_lint.engine import lint_text
from np2torch_lint.files import SourceError
from np2torch_lint.fixer import fix_text
from np2torch_lint.fixes import FixStyle

REPO = Path(__file__).resolve().parents[1]
HOSTS = sorted([*(REPO / "fixtures").glob("*.py"), *(REPO / "tests" / "data" / "executable").glob("*.py"),
                *(REPO / "tests" / "data" / "clashes").glob("*.py")])

SETUP = ("w = torch.ones(2, requires_grad=True)  # setup\narr = np.random.rand(3)\n"
         "arrays = [np.zeros(2), np.ones(2)]\ngpu = torch.ones(2).cuda()\n")
#: expressions every rule flags (no double quotes: they go inside f-strings too)
PATTERNS = [
    "w.numpy()", "np.asarray(w)", "np.array(w * 2)", "w.cpu().numpy()", "gpu.numpy()", "(w + 1).numpy()",
    "torch.tensor(arr)", "torch.from_numpy(np.random.rand(3))", "torch.as_tensor(np.zeros(4))",
    "torch.FloatTensor(arr)", "torch.Tensor(np.zeros(2)).float()", "[torch.from_numpy(a).cuda() for a in arrays]",
    "torch.stack([torch.from_numpy(a).to('cuda') for a in arrays])",
    "torch.as_tensor(\n    np.zeros(3),  # spread out\n)",
    "torch.tensor(arr,  # on two lines\n             device='cpu')",
    "w  # a comment in the chain\n    .numpy()",
]
#: places an expression can go; ``{e}`` is the hole, and each line is indented as the place needs
CONTEXTS = [
    "x = {e}",
    "f = lambda: {e}",
    "@decorate({e})\ndef decorated():\n    pass",
    "def with_default(p={e}):\n    return p",
    "s = f\"{{{e}}}\"",
    "if (v := {e}) is not None:\n    pass",
    "match command:\n    case 1:\n        r = {e}\n    case _:\n        pass",
    "async def consume():\n    async for item in source:\n        r = {e}",
    "r = [[{e} for _ in range(2)] for _ in range(2)]",
    "try:\n    r = {e}\nfinally:\n    pass",
    "class Holder:\n    attribute = {e}\n\n    def method(self):\n        return {e}",
    "with torch.no_grad():\n    r = {e}",
    "for i in range(3):\n    r = {e}  # in a loop",
    "r = ({e}  # kept\n     )",
    "if flag:\n    r = 1\nelif other:\n    r = {e}\nelse:\n    r = {e}",
]


@dataclass(frozen=True)
class Program:
    text: str
    host: str


def mutate(rng: random.Random, hosts: list[Path] = HOSTS) -> Program:
    """A host file with one to four snippets inserted between its top-level statements, after its imports."""
    host = rng.choice(hosts)
    lines = host.read_text(encoding="utf-8").splitlines(keepends=True)
    places = _top_level_boundaries(lines)
    for _ in range(rng.randint(1, 4)):
        snippet = rng.choice(CONTEXTS)
        expressions = [rng.choice(PATTERNS) for _ in range(snippet.count("{e}"))]
        for expression in expressions:
            snippet = snippet.replace("{e}", _fitted(expression, snippet), 1)
        at = rng.choice(places)
        lines.insert(at, SETUP + snippet + "\n")
    return Program("".join(lines), host.name)


def _fitted(expression: str, snippet: str) -> str:
    """Continuation lines of a multi-line pattern stay inside its brackets; in an f-string it is one line."""
    if "f\"" in snippet:
        return re.sub(r"\s*#[^\n]*\n\s*", " ", expression).replace("\n", " ")
    return expression


def _top_level_boundaries(lines: list[str]) -> list[int]:
    """Line indexes before which a top-level statement may go: after the imports, not inside brackets."""
    last_import = max((i for i, line in enumerate(lines) if line.startswith(("import ", "from "))), default=0)
    places = []
    depth = 0
    in_string = False
    for index, line in enumerate(lines):
        if index > last_import and depth == 0 and not in_string and line[:1] not in (" ", "\t", ")", "]", "}") \
                and line.strip() and not line.startswith(("else", "elif", "except", "finally", "case", "@")):
            places.append(index)
        if line.count('"""') % 2 == 1:
            in_string = not in_string
        if not in_string:
            code = line.split("#")[0]
            depth = max(0, depth + sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}"))
    return places or [len(lines)]


def compiles(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, "<fuzz>", "exec")
        except (SyntaxError, ValueError):
            return False
    return True


def comments(text: str) -> list[str]:
    return re.findall(r"#[^\n]*", text)


def check_program(program: Program) -> str | None:
    """None if the program behaves, else what went wrong (the property the fuzzers check)."""
    text = program.text
    if not compiles(text):
        return None  # a mutation Python itself rejects says nothing about the linter
    try:
        lint_text(text, "fuzz.py")
    except SourceError:
        return None  # refused with its one-line message
    for style in FixStyle:
        for unsafe in (False, True):
            once = fix_text(text, "fuzz.py", style=style, unsafe=unsafe)
            where = f"{program.host}, {style.value}{' unsafe' if unsafe else ''}"
            if not compiles(once.text):
                return f"{where}: the fixed code does not compile"
            if fix_text(once.text, "fuzz.py", style=style, unsafe=unsafe).text != once.text:
                return f"{where}: a second fix changed the code"
            if comments(once.text) != comments(text):
                return f"{where}: a comment was lost or moved"
    return None
