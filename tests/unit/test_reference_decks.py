"""The reference decks are exactly what their stated parameters produce."""
from scalebench import paths
from scalebench.hpl.deck import Algorithm, DeckRequest, hpl_dat_lists, make_deck, load_rules

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
