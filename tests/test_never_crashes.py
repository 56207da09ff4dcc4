"""The analysis never crashes on a valid program (hypothesmith writes them, as in flake8-bugbear's tests)."""

from __future__ import annotations

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings

from np2torch_lint.engine import lint_text
from np2torch_lint.files import SourceError

PRELUDE = "import torch\nimport numpy as np\nfrom torch import nn\n"


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles odd programs itself
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_any_valid_program_lints_without_crashing(source):
    try:
        lint_text(PRELUDE + source, "generated.py")
    except SourceError:
        pass  # LibCST may reject what Python accepts; that is a message, not a crash


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles odd programs itself
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_any_syntax_tree_lints_without_crashing(source):
    try:
        lint_text(PRELUDE + source, "generated.py")
    except SourceError:
        pass
