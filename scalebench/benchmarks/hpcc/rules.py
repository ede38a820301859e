"""The plans of hpcc's checks: NodeHealthCheck, hpcc on one whole node (its HPL, DGEMM and STREAM, whatever
HPL binary the stack names: scalebench.hpl.case_plan), and HPCCNetworkCheck, its ping-pongs and rings on
every core of two nodes (or of one), with the input that runs its network section in seconds."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from scalebench.check import CasePlan, CheckSpec, Settings, case_job, fixed_values, has_scale
from scalebench.hpl import deck
from scalebench.hpl.case_plan import HplSettings, plan_hpl
from scalebench.hpl.grid import process_grid
from scalebench.interconnect import microbench
from scalebench.site.partition import SCREEN_MIN_NODES, PartitionSpec, StackSpec

Params = Mapping[str, Any]
# A small block keeps the tiny HPL of the network check valid on hundreds of ranks.
HPCC_NETWORK_NB = 64


def _plan_node_health(partition: PartitionSpec, stack: StackSpec, params: Params, settings: Settings) -> CasePlan:
    """hpcc on one node: HPL, DGEMM and STREAM of that node, whatever HPL binary the stack names."""
    hpl = settings.of(HplSettings)
    hpcc = replace(hpl, hpl_binary=hpl.hpl_binary or "hpcc", profile=hpl.profile or "hpcc")
    plan = plan_hpl(partition, stack, params["scale"], hpcc, settings.environ, settings.reservation)
    return CasePlan(plan.job, plan)


def _valid_node_health(partition: PartitionSpec, params: Params, settings: Settings | None = None) -> bool:
    return partition.max_nodes >= SCREEN_MIN_NODES and has_scale(partition, params)


def _plan_network(partition: PartitionSpec, stack: StackSpec, params: Params, settings: Settings) -> CasePlan:
    return CasePlan(case_job(partition, stack, microbench.whole_nodes_scale(partition.max_nodes), settings))


def hpcc_network_input(nodes: int, ranks_per_node: int, memory_per_node: int, hpl_n: int) -> str:
    """hpccinf.txt for hpcc's network section: HPL at about `hpl_n` (hpcc sizes its other kernels
    from it), so the run takes seconds; at least one small block per process column on many ranks."""
    nb = HPCC_NETWORK_NB
    _, q = process_grid(nodes * ranks_per_node)
    request = deck.DeckRequest(nodes=nodes, ranks_per_node=ranks_per_node, memory_per_node=memory_per_node,
                               nb=nb, max_n=max(hpl_n, nb * q), max_n_reason="hpcc network check: HPL kept small")
    return deck.hpccinf_txt(deck.make_deck(request))


CHECKS: tuple[CheckSpec, ...] = (
    # Screening's one-job-per-node form: no dependencies, so ReFrame's --distribute runs it on every node.
    CheckSpec("NodeHealthCheck", ("scale",), ("hpcc",), ("hpl",), fixed_values(scale=("1_node",)),
              _valid_node_health, _plan_node_health, needs=f"a partition of at least {SCREEN_MIN_NODES} nodes"),
    CheckSpec("HPCCNetworkCheck", (), ("hpcc",), (), fixed_values(), microbench.valid_whole_nodes, _plan_network),
)
