"""scalebench.hpl.deck: process grid, N from memory, caps, time model and the HPL.dat / hpccinf.txt text."""
import math

import pytest

from scalebench.errors import DeckError, InputError
from scalebench.hpl import deck
from scalebench.hpl.deck import Algorithm, Deck, DeckRequest, Rules

GiB = 2**30


def _deck(**changes):
    """A deck with distinct values on every HPL.dat line (non-default algorithm everywhere)."""
    algorithm = Algorithm(pmap="column", threshold=20.0, pfact="left", nbmin=2, ndiv=3, rfact="right",
                          bcast="long", depth=0, swap="long", swap_threshold=80, l1_transposed=False,
                          u_transposed=False, equilibration=False, alignment=16)
    values = dict(n=12345, nb=192, p=3, q=5, nodes=3, ranks_per_node=5, threads_per_rank=1,
                  memory_per_node=64 * GiB, memory_fraction=0.8, n_memory=12345, n_policy="test",
                  algorithm=algorithm)
    values.update(changes)
    return Deck(**values)


def _first_tokens(text):
    return [line.split()[0] if line.split() else "" for line in text.splitlines()]


# --- process grid -------------------------------------------------------------------------------

@pytest.mark.parametrize("ranks, grid", [
    (1, (1, 1)), (2, (1, 2)), (4, (2, 2)), (6, (2, 3)), (12, (3, 4)), (7, (1, 7)), (64, (8, 8)),
    (128, (8, 16)),
])
def test_process_grid(ranks, grid):
    assert deck.process_grid(ranks) == grid


def test_process_grid_is_the_squarest_with_p_le_q():
    for ranks in range(1, 257):
        p, q = deck.process_grid(ranks)
        assert p * q == ranks and p <= q
        # no divisor of ranks lies strictly between p and sqrt(ranks)
        assert not any(ranks % d == 0 for d in range(p + 1, math.isqrt(ranks) + 1))


@pytest.mark.parametrize("ranks", [0, -4])
def test_process_grid_rejects_non_positive(ranks):
    with pytest.raises(InputError, match="^ranks: "):
        deck.process_grid(ranks)


# --- N from memory ------------------------------------------------------------------------------

def test_n_for_memory_is_the_largest_multiple_of_nb_that_fits():
    # 8 * 1000^2 bytes hold exactly a 1000 x 1000 matrix; 1000 // 192 = 5 -> N = 960.
    assert deck.n_for_memory(8 * 1000**2, 192, 1, 1, 0.02) == 960
    # one byte less: isqrt(999_999) = 999, still 5 blocks of 192
    assert deck.n_for_memory(8 * 1000**2 - 1, 192, 1, 1, 0.02) == 960


def test_n_for_memory_exact_fit():
    # 8 * 1152^2 bytes: 1152 = 6 * 192 fits exactly
    assert deck.n_for_memory(8 * 1152**2, 192, 1, 1, 0.02) == 1152


def test_lcm_rounding_taken_when_cheap():
    # NB=100, grid 2x3: lcm=6, step = 600. Memory for exactly a 60150^2 matrix:
    # N (multiple of NB) = 60100; N (multiple of 600) = 60000;
    # memory lost = 1 - 60000^2 / 60100^2 = 1 - 0.996675 = 0.33% < 2% -> rounding taken.
    assert deck.n_for_memory(8 * 60150**2, 100, 2, 3, 0.02) == 60000


def test_lcm_rounding_not_taken_when_costly():
    # NB=100, grid 2x3, step 600. Memory for a 6590^2 matrix:
    # N (multiple of NB) = 6500; N (multiple of 600) = 6000;
    # memory lost = 1 - 6000^2 / 6500^2 = 1 - 0.852 = 14.8% > 2% -> stays at 6500.
    assert deck.n_for_memory(8 * 6590**2, 100, 2, 3, 0.02) == 6500


def test_lcm_rounding_off_when_allowed_loss_is_zero():
    # same memory as the 'taken' case, but no loss allowed: 60100 stays
    assert deck.n_for_memory(8 * 60150**2, 100, 2, 3, 0.0) == 60100


def test_lcm_rounding_skipped_when_no_multiple_of_step_fits():
    # 500^2 matrix: 500 // 600 = 0 multiples of the step, so N stays the NB multiple 500
    assert deck.n_for_memory(8 * 500**2, 100, 2, 3, 0.02) == 500


def test_make_deck_single_node_by_hand():
    # usable = int(16 GiB * 0.8) = 13_743_895_347 bytes -> isqrt(usable // 8) = 41448
    # 41448 // 256 = 161 blocks -> N = 41216 (grid 1x1: lcm step equals NB)
    d = deck.make_deck(DeckRequest(nodes=1, ranks_per_node=1, memory_per_node=16 * GiB), Rules())
    assert (d.n, d.nb, d.p, d.q, d.n_memory) == (41216, 256, 1, 1, 41216)
    assert d.n_policy == "memory: 80% of 16.0 GiB/node x 1 node(s)"


def test_make_deck_grid_from_all_ranks():
    d = deck.make_deck(DeckRequest(nodes=4, ranks_per_node=8, memory_per_node=64 * GiB), Rules())
    assert (d.p, d.q, d.ranks) == (4, 8, 32)


def test_request_overrides_rules_nb_and_fraction():
    d = deck.make_deck(DeckRequest(1, 1, 16 * GiB, nb=128, memory_fraction=0.5), Rules())
    assert d.nb == 128 and d.memory_fraction == 0.5
    assert d.n % 128 == 0 and d.memory_used_fraction <= 0.5


# --- make_deck errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("nodes", [0, -1])
def test_non_positive_nodes_is_input_error(nodes):
    with pytest.raises(InputError, match="^nodes: "):
        DeckRequest(nodes=nodes, ranks_per_node=1, memory_per_node=GiB)


def test_memory_below_one_block_per_rank_is_deck_error():
    # NB=256: one block is 256*256*8 = 512 KiB; 4 ranks need 2 MiB usable; 1 MiB * 0.8 is less.
    with pytest.raises(DeckError, match="^memory_per_node: "):
        deck.make_deck(DeckRequest(nodes=1, ranks_per_node=4, memory_per_node=2**20), Rules())


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.01, 2.0, float("nan")])
def test_memory_fraction_outside_0_1_is_input_error(fraction):
    with pytest.raises(InputError, match="^memory_fraction: "):
        DeckRequest(nodes=1, ranks_per_node=1, memory_per_node=GiB, memory_fraction=fraction)


def test_memory_fraction_one_is_allowed():
    d = deck.make_deck(DeckRequest(1, 1, GiB, memory_fraction=1.0), Rules())
    assert d.memory_fraction == 1.0 and d.memory_used_fraction <= 1.0


@pytest.mark.parametrize("fraction", [0, 1.5, "0.8", True])
def test_rules_memory_fraction_validated(fraction):
    with pytest.raises(InputError, match="^memory_fraction: "):
        Rules(memory_fraction=fraction)


# --- N cap --------------------------------------------------------------------------------------

def test_cap_below_memory_n_sets_n_and_policy():
    request = DeckRequest(1, 1, 16 * GiB, max_n=10000, max_n_reason="time budget: 8 s")
    d = deck.make_deck(request, Rules())
    assert d.n == 9984  # 10000 // 256 * 256
    assert d.n_memory == 41216
    assert d.n_policy == "time budget: 8 s (memory alone allows N=41216)"


def test_cap_without_reason_is_called_cap():
    d = deck.make_deck(DeckRequest(1, 1, 16 * GiB, max_n=10000), Rules())
    assert d.n_policy.startswith("cap (memory alone allows N=")


def test_cap_above_memory_n_changes_nothing():
    d = deck.make_deck(DeckRequest(1, 1, 16 * GiB, max_n=10**6, max_n_reason="budget"), Rules())
    assert d.n == d.n_memory == 41216
    assert d.n_policy.startswith("memory: ")


def test_cap_below_one_block_per_process_column_is_deck_error():
    with pytest.raises(DeckError, match="^N: "):
        deck.make_deck(DeckRequest(1, 4, 16 * GiB, max_n=300), Rules())


def test_cap_must_be_positive():
    with pytest.raises(InputError, match="^max_n: "):
        DeckRequest(1, 1, GiB, max_n=0)


# --- with_sizes ---------------------------------------------------------------------------------

def test_with_sizes_changes_only_n_and_policy():
    base = deck.make_deck(DeckRequest(2, 4, 16 * GiB), Rules())
    fixed = deck.with_sizes(base, 20000)
    assert fixed.n == 20000 and fixed.n_policy == "fixed N=20000 (strong scaling)"
    assert (fixed.nb, fixed.p, fixed.q, fixed.n_memory) == (base.nb, base.p, base.q, base.n_memory)


def test_with_sizes_below_nb_is_deck_error():
    base = deck.make_deck(DeckRequest(1, 1, 16 * GiB), Rules())
    with pytest.raises(DeckError, match="^N: "):
        deck.with_sizes(base, 255)


def test_with_sizes_non_positive_is_input_error():
    base = deck.make_deck(DeckRequest(1, 1, 16 * GiB), Rules())
    with pytest.raises(InputError, match="^n: "):
        deck.with_sizes(base, 0)


# --- time model ---------------------------------------------------------------------------------

def test_hpl_flops_formula():
    # N = 1000: 2/3 * 1e9 + 3/2 * 1e6 = 666_666_666.67 + 1_500_000 = 668_166_666.67
    assert deck.hpl_flops(1000) == pytest.approx(668_166_666.6667, rel=1e-12)


def test_predicted_seconds():
    # 668_166_666.67 flop at 1 Gflop/s = 0.66816666667 s; at 2 Gflop/s half of that
    assert deck.predicted_seconds(1000, 1.0) == pytest.approx(0.6681666666667, rel=1e-12)
    assert deck.predicted_seconds(1000, 2.0) == pytest.approx(0.3340833333333, rel=1e-12)


def test_largest_n_within_by_hand():
    # 10 s at 100 Gflop/s = 1e12 flop.
    # N = 11446: 2/3 * 1_499_550_944_536 + 1.5 * 131_010_916 = 999_897_146_064.7 <= 1e12
    # N = 11447: 2/3 * 1_499_944_011_623 + 1.5 * 131_033_809 = 1_000_159_225_128.8 > 1e12
    assert deck.largest_n_within(10.0, 100.0) == 11446


def test_largest_n_within_exact_budget_is_inclusive():
    budget = deck.predicted_seconds(1000, 1.0)
    assert deck.largest_n_within(budget, 1.0) == 1000
    assert deck.largest_n_within(budget * (1 - 1e-9), 1.0) == 999


@pytest.mark.parametrize("seconds, gflops", [(0, 100.0), (-1, 100.0), (10, 0), (10, float("nan"))])
def test_largest_n_within_rejects_non_positive(seconds, gflops):
    with pytest.raises(InputError):
        deck.largest_n_within(seconds, gflops)


# --- writers ------------------------------------------------------------------------------------

def test_hpl_dat_has_31_lines():
    assert len(deck.hpl_dat(_deck()).splitlines()) == 31


def test_hpl_dat_values_on_their_lines():
    tokens = _first_tokens(deck.hpl_dat(_deck()))
    line = {number: tokens[number - 1] for number in range(1, 32)}
    assert line[3] == "HPL.out"
    assert line[4] == "6"  # device out
    assert (line[5], line[6]) == ("1", "12345")  # one N
    assert (line[7], line[8]) == ("1", "192")  # one NB
    assert line[9] == "1"  # PMAP column-major
    assert (line[10], line[11], line[12]) == ("1", "3", "5")  # one grid, P, Q
    assert line[13] == "20.0"  # threshold
    assert (line[14], line[15]) == ("1", "0")  # PFACT left
    assert (line[16], line[17]) == ("1", "2")  # NBMIN
    assert (line[18], line[19]) == ("1", "3")  # NDIV
    assert (line[20], line[21]) == ("1", "2")  # RFACT right
    assert (line[22], line[23]) == ("1", "4")  # BCAST long
    assert (line[24], line[25]) == ("1", "0")  # DEPTH
    assert line[26] == "1"  # SWAP long
    assert line[27] == "80"  # swapping threshold
    assert (line[28], line[29]) == ("1", "1")  # L1, U not transposed
    assert line[30] == "0"  # no equilibration
    assert line[31] == "16"  # alignment


def test_hpl_dat_comment_labels_match_the_format():
    lines = deck.hpl_dat(_deck()).splitlines()
    assert lines[0] == "HPLinpack benchmark input file"
    assert lines[5].split(maxsplit=1)[1] == "Ns"
    assert lines[7].split(maxsplit=1)[1] == "NBs"
    assert lines[10].split(maxsplit=1)[1] == "Ps"
    assert lines[11].split(maxsplit=1)[1] == "Qs"
    assert "alignment" in lines[30]


def test_hpl_dat_default_algorithm_codes():
    # right=2, crout=1, 1ringM=1, mix=2, transposed=0, equilibration=1
    tokens = _first_tokens(deck.hpl_dat(_deck(algorithm=Algorithm())))
    assert [tokens[i - 1] for i in (9, 15, 21, 23, 25, 26, 28, 29, 30, 31)] == \
        ["0", "2", "1", "1", "1", "2", "0", "0", "1", "8"]


def test_hpl_dat_long_output_file_name_is_separated_from_its_comment():
    text = deck.hpl_dat(_deck(), output_file="a_long_output_file.out")
    assert text.splitlines()[2].split()[0] == "a_long_output_file.out"


def test_hpccinf_is_hpl_dat_plus_five_ptrans_lines():
    d = _deck()
    hpl_lines = deck.hpl_dat(d).splitlines()
    lines = deck.hpccinf_txt(d).splitlines()
    assert len(lines) == 36
    assert lines[:31] == hpl_lines
    assert lines[31].startswith("#####")
    assert [line.split()[0] for line in lines[32:]] == ["0", "0", "0", "0"]


# --- rules file ---------------------------------------------------------------------------------

def test_load_rules_real_file():
    rules = deck.load_rules()
    assert rules.nb == 192
    assert dict(rules.nb_by_microarch) == {"x86_64_v4": 384, "x86_64_v3": 192, "knl": 336}
    assert rules.memory_fraction == 0.8
    assert rules.lcm_rounding_max_memory_loss == 0.02
    assert rules.algorithm == Algorithm()  # the file states the HPL defaults


def test_load_rules_tmp_file(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("nb: 128\nalgorithm:\n  bcast: 2ring\n")
    rules = deck.load_rules(path)
    assert rules.nb == 128 and rules.algorithm.bcast == "2ring" and rules.memory_fraction == 0.8


def test_load_rules_bad_bcast(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("algorithm:\n  bcast: 9ring\n")
    with pytest.raises(InputError, match="bcast: '9ring'"):
        deck.load_rules(path)


@pytest.mark.parametrize("text, field", [
    ("memory_fraction: 1.5\n", "memory_fraction"),
    ("nb: 0\n", "nb"),
    ("lcm_rounding_max_memory_loss: 1.0\n", "lcm_rounding_max_memory_loss"),
    ("nbb: 192\n", "nbb"),
    ("algorithm:\n  threshold: high\n", "threshold"),
    ("algorithm:\n  depth: -1\n", "depth"),
    ("algorithm:\n  lookahead: 1\n", "lookahead"),
    ("- nb: 192\n", "mapping"),
    ("nb_by_microarch:\n  zen2: 0\n", "nb_by_microarch.zen2: must be a positive whole number"),
    ("nb_by_microarch: [192]\n", "nb_by_microarch"),
])
def test_load_rules_bad_values_name_file_and_field(tmp_path, text, field):
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        deck.load_rules(path)
    assert str(path) in str(caught.value) and field in str(caught.value)


# --- invariants over many inputs ----------------------------------------------------------------

def test_memory_used_never_exceeds_memory_fraction():
    rules = deck.load_rules()
    ranks_per_node = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 31, 32, 48, 64, 96, 127, 128]
    memories = [GiB * m for m in (1, 2, 3, 7, 16, 31, 64, 100, 256, 511, 512)] + [12345678901]
    checked = 0
    for nodes in range(1, 65):
        for rpn in ranks_per_node:
            for memory in memories:
                try:
                    d = deck.make_deck(DeckRequest(nodes, rpn, memory), rules)
                except DeckError:
                    continue
                checked += 1
                assert d.memory_used_fraction <= d.memory_fraction, (nodes, rpn, memory)
                assert d.n % d.nb == 0 and d.p * d.q == nodes * rpn and d.p <= d.q
    assert checked > 10000


def test_with_sizes_beyond_memory_is_deck_error():
    # 1 node x 16 GiB x 0.8 holds N <= sqrt(0.8 * 16 GiB / 8) = 41448; N=50000 needs 18.6 GiB.
    base = deck.make_deck(DeckRequest(1, 1, 16 * GiB), Rules())
    with pytest.raises(DeckError, match="^N: 50000 needs"):
        deck.with_sizes(base, 50000)


def test_weak_scaling_deck_grows_n_with_sqrt_nodes():
    # One node, 4 ranks, capped at N=10000 -> N1 = 9984 (52 x 192); 4 nodes: 9984 x 2 = 19968 (104 x 192).
    request = DeckRequest(4, 4, 64 * GiB, max_n=10000, max_n_reason="cap")
    weak = deck.deck_for_scaling(request, Rules(), "weak")
    assert (weak.n, weak.p, weak.q) == (19968, 4, 4)
    assert weak.n_policy.startswith("weak scaling: N1 x sqrt(4 nodes), N1=9984 from cap")


def test_strong_scaling_deck_keeps_the_one_node_n():
    request = DeckRequest(4, 4, 64 * GiB, max_n=10000, max_n_reason="cap")
    strong = deck.deck_for_scaling(request, Rules(), "strong")
    assert (strong.n, strong.p, strong.q) == (9984, 4, 4)
    assert strong.n_policy.startswith("strong scaling: N of 1 node")
    fixed = deck.deck_for_scaling(request, Rules(), "weak", fixed_n=5000)
    assert fixed.n == 5000 and fixed.n_policy == "strong scaling at fixed N=5000"


def test_one_node_deck_states_the_mode_and_bad_mode_is_named():
    one = deck.deck_for_scaling(DeckRequest(1, 2, 16 * GiB), Rules(), "strong")
    assert one.n_policy.startswith("strong scaling: memory: 80%")
    with pytest.raises(InputError, match="^scaling: 'linear'"):
        deck.deck_for_scaling(DeckRequest(1, 2, 16 * GiB), Rules(), "linear")


def test_explicit_grid_may_leave_ranks_idle():
    # 7 ranks on a 2x3 grid: one idle rank; N still from the memory of the node.
    d = deck.make_deck(DeckRequest(1, 7, 16 * GiB, grid=(2, 3)), Rules())
    assert (d.p, d.q, d.ranks, d.idle_ranks) == (2, 3, 6, 1)
    assert d.to_json()["idle_ranks"] == 1
    with pytest.raises(InputError, match="^grid: 3x3 needs 9 ranks"):
        DeckRequest(1, 7, 16 * GiB, grid=(3, 3))


def test_trials_list_the_same_n():
    d = deck.make_deck(deck.DeckRequest(nodes=1, ranks_per_node=2, memory_per_node=2**30))
    lines = deck.hpccinf_txt(d, trials=3).splitlines()
    assert lines[4].split()[0] == "3" and lines[5].split()[:3] == [str(d.n)] * 3
    assert deck.hpl_dat(d).splitlines()[5].split()[:2] == [str(d.n), "Ns"]
    with pytest.raises(deck.DeckError, match="Ns: 21 values"):
        deck.hpl_dat(d, trials=21)  # HPL reads at most 20 problem sizes
