"""Invariants of HPL's scalability model (scalebench.hpl.model) over random cases, rates and links:
- a slower link (more latency, less bandwidth, a steeper fall under load, an exchange keeping less of
  the bandwidth each way) never raises the efficiency;
- with no latency and infinite bandwidth every case reaches the efficiency of one node;
- at a fixed N, a grid at least as large in both directions (more nodes on the same link) never gives
  a higher efficiency; under the plan's rule (the squarest grid) this holds from one power of two of
  nodes to the next (from 2 nodes: one node is predicted on its own, intra-node link). Between other
  counts it need not, in the published formula too: at a fixed N a 2 x 5 grid moves less per flop
  than a 3 x 3 one ((3P + Q) is 11 against 12), so only N growing as the plan says, or such a grid,
  makes more nodes look better.
"""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fuzzing import FUZZ
from scalebench.hpl import model
from scalebench.hpl.grid import process_grid
from scalebench.hpl.model import Case, Link, RankRate


@st.composite
def cases(draw, nodes=None):
    ranks_per_node = draw(st.sampled_from((1, 2, 4, 8, 16, 64, 128)))
    nodes = nodes or draw(st.integers(1, 4096))
    p, q = process_grid(nodes * ranks_per_node)
    nb = draw(st.sampled_from((64, 128, 192, 256, 384)))
    n = draw(st.integers(max(p, q), 3_000_000 // nb)) * nb
    rpeak_node = draw(st.floats(1.0, 20_000.0))
    return Case(n, nb, p, q, nodes, ranks_per_node, rpeak_node * nodes)


rates = st.builds(RankRate, st.floats(0.1, 5_000.0), st.just("fuzz"))
links = st.builds(Link, st.floats(0.0, 1e-3), st.floats(1e6, 1e12), st.floats(0.0, model.MAX_LOAD_EXPONENT),
                  st.just("fuzz"), st.none() | st.floats(0.05, 1.0))
factors = st.floats(1.0, 500.0)  # a slowed link stays a link (below 1 s, above 1 kB/s)


@settings(FUZZ, max_examples=400)
@given(case=cases(), rate=rates, link=links, latency=factors, slowdown=factors, extra_load=st.floats(0.0, 1.0),
       exchange=st.floats(0.05, 1.0))
def test_a_slower_link_never_raises_the_efficiency(case, rate, link, latency, slowdown, extra_load, exchange):
    base = model.predict(case, rate, link).efficiency
    worse = [replace(link, latency_s=link.latency_s * latency),
             replace(link, bandwidth_bps=link.bandwidth_bps / slowdown),
             replace(link, load_exponent=min(model.MAX_LOAD_EXPONENT, link.load_exponent + extra_load)),
             replace(link, exchange_share=exchange * (link.exchange_share or 0.5))]  # an exchange keeping less
    for slower in worse:
        assert model.predict(case, rate, slower).efficiency <= base * (1 + 1e-12)


@settings(FUZZ, max_examples=300)
@given(case=cases(), rate=rates)
def test_a_perfect_link_gives_the_efficiency_of_one_node(case, rate):
    perfect = Link(0.0, math.inf, source="perfect")
    one_node = Case(case.n, case.nb, 1, 1, 1, 1, case.rpeak_gflops / case.nodes / case.ranks_per_node)
    assert math.isclose(model.predict(case, rate, perfect).efficiency,
                        model.predict(one_node, rate, None).efficiency, rel_tol=1e-9)


@settings(FUZZ, max_examples=300)
@given(case=cases(), rate=rates, link=links, grow_p=st.integers(1, 8), grow_q=st.integers(1, 8))
def test_a_larger_grid_at_the_same_n_never_raises_the_efficiency(case, rate, link, grow_p, grow_q):
    assume(grow_p * grow_q > 1 and case.nodes > 1)  # one node communicates on its own link, not this one
    p, q = case.p * grow_p, case.q * grow_q
    nodes = math.ceil(p * q / case.ranks_per_node)
    larger = replace(case, p=p, q=q, nodes=nodes, rpeak_gflops=case.rpeak_gflops / case.nodes * nodes)
    assert model.predict(larger, rate, link).efficiency <= model.predict(case, rate, link).efficiency * (1 + 1e-12)


@settings(FUZZ, max_examples=200)
@given(case=cases(nodes=1), rate=rates, link=links, doublings=st.integers(1, 12))
def test_more_nodes_on_the_same_link_at_the_same_n_never_raise_the_efficiency(case, rate, link, doublings):
    previous = None
    for k in range(1, doublings + 1):  # from 2 nodes: one node communicates on its own link
        nodes = 2 ** k
        p, q = process_grid(nodes * case.ranks_per_node)
        assume(case.n >= q * case.nb)
        scaled = replace(case, p=p, q=q, nodes=nodes, rpeak_gflops=case.rpeak_gflops * nodes)
        efficiency = model.predict(scaled, rate, link).efficiency
        if previous is not None:
            assert efficiency <= previous * (1 + 1e-12)
        previous = efficiency
