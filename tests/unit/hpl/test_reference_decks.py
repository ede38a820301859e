"""The reference decks are exactly what their stated parameters produce (or, for HPL's sample, what
HPL ships), and rewrite_hpl_dat changes only their sizes and grids."""
import pytest

from scalebench import paths
from scalebench.errors import DeckError
from scalebench.hpl.deck import Algorithm, DeckRequest, hpl_dat_lists, load_rules, make_deck, rewrite_hpl_dat

GIB = 2**30


def test_10gbe_36node_reference_deck():
    algorithm = Algorithm(pmap="row", threshold=16.0, pfact="right", nbmin=4, ndiv=2, rfact="right",
                          bcast="1ringM", depth=0, swap="mix", swap_threshold=64, l1_transposed=True,
                          u_transposed=True, equilibration=True, alignment=8)
    real = make_deck(DeckRequest(nodes=36, ranks_per_node=1, memory_per_node=16 * GIB, nb=128), load_rules())
    assert (real.n, real.p, real.q) == (248064, 6, 6)
    expected = hpl_dat_lists(ns=[1000, real.n], nbs=[128], grids=[(6, 6)], algorithm=algorithm)
    text = (paths.HPL_DECKS / "reference" / "10gbe-36node.HPL.dat").read_text()
    assert text == expected
    lines = text.splitlines()
    assert lines[4].split()[0] == "2" and lines[5].split()[:2] == ["1000", "248064"]  # smoke N first


SAMPLE = paths.HPL_DECKS / "reference" / "hpl-2.x-sample.HPL.dat"


def test_hpl_sample_deck_is_the_stock_one():
    lines = SAMPLE.read_text().splitlines()
    assert len(lines) == 31 and lines[0] == "HPLinpack benchmark input file"
    assert [line.split("  ")[0].strip() for line in (lines[5], lines[7], lines[10], lines[11])] == [
        "29 30 34 35", "1 2 3 4", "2 1 4", "2 4 1"]


def test_a_reference_deck_is_rewritten_to_a_size_and_grid_and_keeps_every_other_line():
    text = (paths.HPL_DECKS / "reference" / "10gbe-36node.HPL.dat").read_text()
    assert rewrite_hpl_dat(text) == text
    new = rewrite_hpl_dat(text, ns=[1000, 4032], grids=[(1, 2)]).splitlines()
    old = text.splitlines()
    assert new[4:6] == ["2            # of problems sizes (N)", "1000 4032    Ns"]
    assert new[9:12] == ["1            # of process grids (P x Q)", "1            Ps", "2            Qs"]
    assert [n for i, n in enumerate(new) if i not in (4, 5, 9, 10, 11)] == [
        o for i, o in enumerate(old) if i not in (4, 5, 9, 10, 11)]
    sample = rewrite_hpl_dat(SAMPLE.read_text(), grids=[(1, 2), (2, 1)]).splitlines()
    assert sample[9:12] == ["2            # of process grids (P x Q)", "1 2          Ps", "2 1          Qs"]


def test_rewriting_refuses_what_is_no_hpl_dat_or_what_hpl_rejects():
    with pytest.raises(DeckError, match="not an HPL.dat"):
        rewrite_hpl_dat("hello\n")
    with pytest.raises(DeckError, match="Ps"):
        rewrite_hpl_dat(SAMPLE.read_text(), grids=[(0, 2)])
