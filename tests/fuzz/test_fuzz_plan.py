"""The HPL case plan over random site geometries (1 to 512 cores, 1 GiB to 4 TiB, 1 to 100000 nodes,
ranks and threads per node, GPUs, time limits): every plan keeps its scale's node count, launches
P x Q tasks within the nodes' ranks, holds N in whole blocks within the memory the ranks own, and
fits the partition's longest job; or the case is left out with a reason. Never another exception."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzing import FUZZ
from scalebench.hpl.case_plan import HplSettings, plan_hpl
from scalebench.hpl.deck import BYTES_PER_DOUBLE, load_rules
from scalebench.hpl.grid import process_grid
from scalebench.site.jobs import LeftOut
from scalebench.site.partition import GpuSpec, PartitionHpl, PartitionSpec, StackSpec
from scalebench.site.scales import ScaleSpec

GiB = 2**30
RULES = load_rules()
XHPL = StackSpec("s", "s", ("hpl",), {"hpl_binary": "xhpl"})
GPU_HPL = StackSpec("g", "g", ("hpl",), {"hpl_binary": "hpl.sh", "hpl_profile": "nvidia-hpl"})


@st.composite
def partitions(draw):
    cores = draw(st.integers(1, 512))
    hpl = {}
    if draw(st.booleans()):
        threads = draw(st.integers(1, cores))
        hpl.update(threads_per_rank=threads)
        if draw(st.booleans()):
            hpl.update(ranks_per_node=draw(st.integers(1, cores // threads)))
    gpus = None
    if draw(st.integers(0, 4)) == 0:
        gpus = GpuSpec(draw(st.integers(1, 8)), draw(st.integers(1, 192)) * GiB, draw(st.floats(1, 100)) * 1000)
    return PartitionSpec(
        "sys", "part", "slurm", "srun", max_nodes=draw(st.integers(1, 100_000)), cores_per_node=cores,
        memory_per_node=draw(st.integers(1, 4096)) * GiB, microarch="zen3",
        clock_ghz=draw(st.floats(1.0, 4.0)), flops_per_cycle=draw(st.sampled_from((2, 4, 8, 16, 32))),
        max_time_limit_s=draw(st.one_of(st.none(), st.integers(3600, 14 * 86400))),
        scale_spec=ScaleSpec(cores=draw(st.sampled_from(("auto", "powers_of_two", ())))), gpus=gpus,
        hpl=PartitionHpl(**hpl))


@settings(FUZZ, max_examples=400)
@given(partition=partitions(), pick=st.integers(0, 10**6), gpu=st.booleans(),
       scaling=st.sampled_from(("weak", "strong")))
def test_every_hpl_plan_is_a_job_the_partition_can_run(partition, pick, gpu, scaling):
    scales = partition.scales()
    scale = scales[pick % len(scales)]
    stack = GPU_HPL if gpu else XHPL
    try:
        plan = plan_hpl(partition, stack, scale.name, HplSettings(scaling=scaling))
    except LeftOut as why:
        assert str(why)  # left out, with a reason
        return
    job, deck = plan.job, plan.deck
    assert job.nodes == scale.num_nodes
    assert deck.p * deck.q == job.tasks <= job.nodes * job.ranks_per_node
    assert job.nodes <= job.tasks and job.tasks_per_node * job.nodes >= job.tasks
    assert job.tasks_per_node * job.threads_per_rank <= (scale.cores_per_node or partition.cores_per_node)
    assert deck.p <= deck.q and deck.n % deck.nb == 0 and deck.n >= deck.nb * deck.q
    assert deck.q <= RULES.max_grid_aspect * deck.p  # within the allowed aspect, always
    if job.idle_ranks:  # ranks go idle only where no full grid within the aspect exists
        p, q = process_grid(job.nodes * job.ranks_per_node)
        assert q > RULES.max_grid_aspect * p
    if gpu:
        owned = partition.gpus.count * partition.gpus.memory if partition.gpus else 0
    elif scale.sub_node:
        owned = partition.memory_per_node * job.ranks_per_node * job.threads_per_rank // partition.cores_per_node
    else:
        owned = partition.memory_per_node
    busiest = math.ceil(job.tasks / job.nodes)
    assert deck.n * deck.n * BYTES_PER_DOUBLE * busiest / job.tasks <= RULES.memory_fraction * owned * (1 + 1e-9)
    if partition.max_time_limit_s is not None:
        assert job.time_limit_s <= partition.max_time_limit_s
    assert job.exclusive and job.memory == "0"  # HPL takes its nodes whole by default


@settings(FUZZ, max_examples=200)
@given(nodes=st.integers(1, 100_000), ranks=st.integers(1, 512))
def test_the_grid_keeps_the_node_count_and_every_rank_when_it_can(nodes, ranks):
    cores = ranks
    partition = PartitionSpec("sys", "part", "slurm", "srun", nodes, cores, 256 * GiB, "zen3", 2.0, 16,
                              scale_spec=ScaleSpec(nodes=(nodes,), full=False, cores=()))
    try:
        plan = plan_hpl(partition, XHPL, f"{nodes}_node" + ("s" if nodes > 1 else ""))
    except LeftOut:
        return
    p, q = process_grid(nodes * ranks)
    if q <= RULES.max_grid_aspect * p:
        assert (plan.deck.p, plan.deck.q, plan.job.idle_ranks) == (p, q, 0)
    else:
        assert 0 < plan.job.idle_ranks and plan.deck.q <= RULES.max_grid_aspect * plan.deck.p
    assert plan.job.nodes == nodes
