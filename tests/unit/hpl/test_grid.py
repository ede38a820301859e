"""scalebench.hpl.grid: every rank on the squarest grid within the allowed aspect, else as many as can be."""
import pytest

from scalebench.errors import InputError
from scalebench.hpl import deck
from scalebench.hpl.grid import aspect, grid_choice, process_grid


@pytest.mark.parametrize("ranks, expected", [
    # powers of two: all ranks, 1:2 at most (the site-scale counts the old penalty model left idle)
    (512, (16, 32, 0)), (2048, (32, 64, 0)), (8192, (64, 128, 0)), (131072, (256, 512, 0)),
    # the seed study: 4x7 at 28 nodes, 4x8 at 32, one rank per node
    (28, (4, 7, 0)), (32, (4, 8, 0)),
    # within 1:4 on all ranks
    (2, (1, 2, 0)), (3, (1, 3, 0)), (4, (2, 2, 0)), (10, (2, 5, 0)), (506, (22, 23, 0)),
    # no grid within 1:4: the most ranks that have one, the rest idle
    (5, (2, 2, 1)),      # 1x5 (1:5) -> 4 = 2x2
    (7, (2, 3, 1)),      # 1x7 -> 6 = 2x3
    (13, (3, 4, 1)),     # 1x13 -> 12 = 3x4
    (22, (3, 7, 1)),     # 2x11 (1:5.5) -> 21 = 3x7 (1:2.3)
    (26, (5, 5, 1)),     # 2x13 (1:6.5) -> 25 = 5x5
    (34, (3, 11, 1)),    # 2x17 (1:8.5) -> 33 = 3x11 (1:3.7)
])
def test_grid_choice(ranks, expected):
    choice = grid_choice(ranks, 4)
    assert (choice.p, choice.q, choice.idle_ranks) == expected
    assert choice.p <= choice.q <= 4 * choice.p or (choice.p, choice.q) in ((1, 2), (1, 3))
    assert choice.p * choice.q + choice.idle_ranks == ranks
    assert ("idle" in choice.reason) == bool(choice.idle_ranks)


def test_a_wider_aspect_keeps_every_rank():
    assert grid_choice(22, 6)[:3] == (2, 11, 0)
    assert grid_choice(7, 7)[:3] == (1, 7, 0)
    assert grid_choice(13, 1)[:3] == (3, 3, 4)  # square only: 9 of 13


def test_grid_choice_is_exact_for_large_primes():
    choice = grid_choice(999983, 4)
    assert choice.p <= choice.q <= 4 * choice.p and choice.p * choice.q + choice.idle_ranks == 999983
    assert choice.idle_ranks < 10


@pytest.mark.parametrize("max_aspect", [0.5, 0, -1, float("nan"), "4", None])
def test_grid_choice_rejects_an_aspect_below_one(max_aspect):
    with pytest.raises(InputError, match="^max_grid_aspect: "):
        grid_choice(12, max_aspect)


def test_grid_choice_rejects_zero_ranks():
    with pytest.raises(InputError, match="^ranks: "):
        grid_choice(0, 4)


def test_aspect():
    assert aspect(4, 8) == aspect(8, 4) == 2
    assert process_grid(36) == (6, 6)


def test_rules_yaml_allows_one_to_four():
    rules = deck.load_rules()
    assert rules.max_grid_aspect == 4 and rules.time_limit_safety >= 1
