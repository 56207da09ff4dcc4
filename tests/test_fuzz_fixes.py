"""Mutation fuzzing with a small budget: the rules' patterns at random valid places of real-shaped files never make
lint or fix crash, the fixed code compiles, a second fix changes nothing and comments are kept.
benchmarks/fuzz_fixes.py runs the same check over 10,000 programs."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mutations import check_program, mutate


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.integers(min_value=0, max_value=2**32))
def test_mutated_programs_are_linted_and_fixed_cleanly(seed):
    program = mutate(random.Random(seed))
    assert check_program(program) is None, program.text


def test_the_mutations_reach_every_context_and_mostly_compile():
    programs = [mutate(random.Random(seed)) for seed in range(60)]
    from mutations import CONTEXTS, compiles

    texts = "".join(program.text for program in programs)
    assert all(context.split("{e}")[0] in texts for context in CONTEXTS)
    assert sum(compiles(program.text) for program in programs) >= 50
