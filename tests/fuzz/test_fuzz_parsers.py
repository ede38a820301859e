"""Every output parser, fed random text and mutated real outputs: a strict-JSON result or a
ParseError with a one-line message, never another exception and never a hang."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzing import FUZZ, MUTATIONS, NOISE_LINES, NONFINITE_TOKENS, STACKABLE, mutate, parse_outcome
from fuzzing import seed_corpus
from scalebench.benchmarks import KINDS, parse_text

CORPUS = seed_corpus()
KIND_NAMES = sorted(KINDS)



def assert_result_or_named_error(kind: str, text: str) -> None:
    outcome = parse_outcome(kind, text)
    assert outcome.ok, f"{kind}: {outcome.kind} after {outcome.seconds:.2f} s: {outcome.detail}"


mutation_steps = st.lists(st.tuples(st.sampled_from(STACKABLE), st.integers(0, 2**32 - 1)), min_size=1, max_size=4)
# Lines that look like the benchmarks' own, with hostile numbers, to reach deep parser states.
keyword_lines = st.lists(
    st.tuples(st.sampled_from(NOISE_LINES), st.sampled_from(NONFINITE_TOKENS + ("0", "1", "-1", "1e308", " ")))
    .map(" ".join), max_size=60).map("\n".join)


@pytest.mark.parametrize("kind", KIND_NAMES)
@settings(FUZZ, max_examples=60)
@given(text=st.text(max_size=3000) | keyword_lines)
def test_random_text(kind, text):
    assert_result_or_named_error(kind, text)


@pytest.mark.parametrize("kind", KIND_NAMES)
@settings(FUZZ, max_examples=40)
@given(data=st.binary(max_size=4000))
def test_binary_garbage_decoded_leniently(kind, data):
    assert_result_or_named_error(kind, data.decode("utf-8", errors="replace"))


@pytest.mark.parametrize("kind", KIND_NAMES)
@settings(FUZZ, max_examples=80)
@given(data=st.data(), steps=mutation_steps)
def test_mutated_real_output(kind, data, steps):
    seed = data.draw(st.sampled_from(CORPUS[kind]), label="seed output")
    assert_result_or_named_error(kind, mutate(seed, steps))


@pytest.mark.parametrize("kind", KIND_NAMES)
@settings(FUZZ, max_examples=3)
@given(data=st.data(), rng_seed=st.integers(0, 2**32 - 1))
def test_megabyte_line_in_real_output(kind, data, rng_seed):
    seed = data.draw(st.sampled_from(CORPUS[kind]), label="seed output")
    assert_result_or_named_error(kind, mutate(seed, [("huge_line", rng_seed)]))


def test_every_mutation_changes_some_output():
    """A mutation that never changes anything would fuzz nothing."""
    sample = CORPUS["hpl"][0]
    for name in MUTATIONS:
        assert any(mutate(sample, [(name, seed)]) != sample for seed in range(5)), name


@pytest.mark.parametrize("kind", KIND_NAMES)
@pytest.mark.parametrize("text", ["", "\n", "\r\n\r\n", " \t ", "\ufeff", "\x00"])
def test_empty_input_is_a_parse_error_naming_the_kind_of_line(kind, text):
    outcome = parse_outcome(kind, text)
    assert outcome.kind == "named error", outcome
    assert "found" in outcome.detail  # each parser says which line it looked for and did not find


def test_openfoam_execution_times_whose_difference_overflows():
    """Found by fuzzing: two finite ExecutionTime values whose difference is inf made the
    per-step figures inf, which no JSON reader accepts."""
    text = "Build  : v2312\nTime = 1\nExecutionTime = -1.7e308 s\nTime = 2\nExecutionTime = 1.7e308 s\n"
    assert_result_or_named_error("openfoam", text)
    out = parse_text("openfoam", text)
    assert out["seconds_per_step_mean"] is None and out["seconds_per_step_median"] is None
    assert out["final_execution_time_s"] is None  # neither is a time a run can take
    assert out["warnings"] == ["ExecutionTime -1.7e+308 s is negative: dropped",
                               "ExecutionTime 1.7e+308 s is beyond 3.2e+08 s, more than any machine measures: dropped"]
