"""The deck generator and `scalebench deck`, fed random and hostile numbers: a deck whose
invariants hold (P*Q <= ranks, P <= Q, N % NB == 0, N >= NB, N*N*8 within the memory share) or
InputError/DeckError with a one-line message; never another exception and never a hang."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fuzzing import C_INT_LIMITS, DECK_FLAGS, EDGE_FLOATS, EDGE_INTS, FLAG_VALUES, FUZZ, NAMED_ERROR
from fuzzing import cli_deck_outcome, deck_outcome
from scalebench.errors import InputError
from scalebench.hpl import deck

GiB = 2**30

hostile_number = st.one_of(st.sampled_from(EDGE_INTS + C_INT_LIMITS), st.integers(), st.sampled_from(EDGE_FLOATS),
                           st.floats(), st.booleans(), st.none(), st.just("8"))


def field(sane: st.SearchStrategy) -> st.SearchStrategy:
    """Mostly a sane value, one time in four a hostile one."""
    return st.one_of(sane, sane, sane, hostile_number)


deck_args = st.fixed_dictionaries(
    {"nodes": field(st.integers(1, 10_000)), "ranks_per_node": field(st.integers(1, 512)),
     "memory_per_node": field(st.integers(2**20, 2**42))},
    optional={"threads_per_rank": field(st.integers(1, 128)),
              "memory_fraction": st.one_of(st.floats(0, 1), st.sampled_from(EDGE_FLOATS), hostile_number),
              "nb": field(st.integers(1, 1024)), "max_n": field(st.integers(1, 10**7)),
              "grid": st.tuples(field(st.integers(1, 128)), field(st.integers(1, 128)))})


@settings(FUZZ, max_examples=600)
@given(args=deck_args)
@example(args={"nodes": 1000000000000000009, "ranks_per_node": 94, "memory_per_node": 2**31})  # was a hang
@example(args={"nodes": 2765, "ranks_per_node": 164, "memory_per_node": 10**400})  # was OverflowError
@example(args={"nodes": 1158, "ranks_per_node": 67, "memory_per_node": 1850624795514,
               "memory_fraction": 1e-300})  # was OverflowError in the error message
def test_make_deck_gives_a_valid_deck_or_a_named_error(args):
    outcome = deck_outcome(args)
    assert outcome.ok, f"{args}: {outcome.kind}: {outcome.detail}"


@settings(FUZZ, max_examples=300)
@given(nodes=st.integers(1, 100_000), ranks_per_node=st.integers(1, 256), gib=st.integers(1, 4096),
       fraction=st.floats(0.05, 1.0), nb=st.sampled_from((None, 64, 128, 192, 232, 256, 384)))
def test_realistic_geometry_gives_a_deck_or_a_deck_error(nodes, ranks_per_node, gib, fraction, nb):
    """Valid inputs are never an InputError: a deck, or DeckError when memory or a flat grid (a
    prime rank count) leaves no room for one block per process."""
    args = {"nodes": nodes, "ranks_per_node": ranks_per_node, "memory_per_node": gib * GiB,
            "memory_fraction": fraction, "nb": nb}
    outcome = deck_outcome(args)
    assert outcome.kind == "result" or outcome.detail.startswith(("N: ", "memory_per_node: ")), (args, outcome)


cli_value = st.one_of(st.sampled_from(FLAG_VALUES), st.integers().map(str), st.floats().map(str),
                      st.text(max_size=12))
sane_flags = {"--nodes": st.integers(1, 4096).map(str), "--ranks-per-node": st.integers(1, 256).map(str),
              "--memory-per-node": st.sampled_from(("16GiB", "256G", "512GB", "64 GiB", "1TiB"))}
cli_argv = st.lists(
    st.one_of(st.sampled_from(DECK_FLAGS), st.sampled_from(("--json", "--bogus", "extra"))).flatmap(
        lambda flag: st.tuples(st.just(flag), st.one_of(sane_flags.get(flag, cli_value), cli_value))),
    max_size=9).map(lambda pairs: [token for pair in pairs for token in pair])


@settings(FUZZ, max_examples=200)
@given(argv=cli_argv, required=st.booleans())
def test_deck_command_prints_a_deck_or_one_error_line(argv, required):
    if required:  # most inputs get past argparse's required flags
        argv = ["--nodes", "2", "--ranks-per-node", "4", "--memory-per-node", "16GiB", *argv]
    outcome = cli_deck_outcome(argv)
    assert outcome.ok, f"{argv}: {outcome.kind}: {outcome.detail}"


def test_deck_command_names_the_field_of_a_non_finite_fraction():
    for value in ("nan", "inf", "-inf", "0", "1e-400"):
        outcome = cli_deck_outcome(["--nodes", "2", "--ranks-per-node", "4", "--memory-per-node", "16GiB",
                                    f"--memory-fraction={value}"])
        assert outcome.kind == NAMED_ERROR and "memory_fraction" in outcome.detail, (value, outcome)


def test_deck_command_names_the_field_of_an_absurd_memory_size():
    outcome = cli_deck_outcome(["--nodes", "2", "--ranks-per-node", "4", "--memory-per-node", "9" * 400 + "GiB"])
    assert outcome.kind == NAMED_ERROR and "memory_per_node" in outcome.detail, outcome


def test_rank_count_beyond_a_c_int_is_refused_quickly():
    """2**61 - 1 is prime: factorising it for the process grid took for ever before the limit."""
    with pytest.raises(InputError, match="^ranks: must be at most 2147483647"):
        deck.process_grid(2**61 - 1)
    outcome = deck_outcome({"nodes": 2**16, "ranks_per_node": 2**16, "memory_per_node": 16 * GiB})
    assert outcome.kind == NAMED_ERROR, outcome
    assert outcome.detail.startswith("ranks: 65536 nodes x 65536 ranks per node is more than 2147483647")
