"""scalebench.site.scales: which scales a partition skips, and the nodes x ranks x threads they give."""
import pytest

from scalebench import schema
from scalebench.errors import InputError
from scalebench.site import scales
from scalebench.site.scales import Scale, ScaleSpec

ONE_NODE = Scale("1_node", 1)
FOUR_NODES = Scale("4_nodes", 4)
FOUR_CORES = Scale("4_cores", 1, cores_per_node=4)

# --- a partition's scales ----------------------------------------------------------------------

def names(spec, max_nodes, cores):
    return [s.name for s in spec.scales(max_nodes, cores)]


def test_default_cluster_scales_are_powers_of_two_and_the_full_partition():
    assert names(ScaleSpec(), 64, 128) == ["1_node", "2_nodes", "4_nodes", "8_nodes", "16_nodes", "32_nodes",
                                           "64_nodes"]
    assert names(ScaleSpec(), 36, 8)[-2:] == ["32_nodes", "36_nodes"]  # full: 36 added
    assert names(ScaleSpec(full=False), 36, 8)[-1] == "32_nodes"


def test_default_single_machine_scales_are_its_cores():
    assert names(ScaleSpec(), 1, 2) == ["1_core", "1_node"]
    assert names(ScaleSpec(), 1, 64) == ["1_core", "2_cores", "4_cores", "8_cores", "16_cores", "32_cores", "1_node"]
    assert names(ScaleSpec(), 1, 1) == ["1_node"]


def test_a_node_list_and_sub_node_cores():
    seed = ScaleSpec((2, 4, 6, 8, 10, 12, 16, 18, 20, 24, 25, 28, 30, 32, 36), full=True, cores=())
    assert names(seed, 36, 8) == [f"{n}_nodes" for n in seed.nodes]
    assert names(ScaleSpec((4, 2000), cores=(1, 16, 128)), 1024, 128) == [
        "1_core", "16_cores", "4_nodes", "1024_nodes"]  # beyond the partition, or the whole node: no scale


def test_scale_spec_from_a_site_file():
    assert ScaleSpec.from_site(None) == ScaleSpec()
    spec = ScaleSpec.from_site({"nodes": [2, 4], "full": False, "cores": "powers_of_two"})
    assert spec == ScaleSpec((2, 4), False, "powers_of_two")
    assert ScaleSpec.from_site(spec.to_json()) == spec


@pytest.mark.parametrize("data, message", [
    ({"nodes": 4}, r"scales.nodes: must be powers_of_two or a list of node counts, got 4"),
    ({"nodes": [0]}, r"scales.nodes\[0\]: must be a positive whole number \(>= 1\), got 0"),
    ({"nodes": [2**40]}, r"scales.nodes\[0\]: must be a positive whole number \(<= 2147483647\)"),
    ({"full": "yes"}, "scales.full: must be true or false"),
    ({"cores": "all"}, "scales.cores: must be auto, powers_of_two or a list of core counts"),
    ({"node": [2]}, r"scales: unknown key 'node' \(did you mean 'nodes'\?\)"),
    ([2, 4], "scales: must be a mapping"),
])
def test_bad_scale_specs_are_named(data, message):
    site = {"system": "s", "partitions": [{"name": "p", "scheduler": "slurm", "launcher": "srun", "max_nodes": 4,
                                           "cores_per_node": 8, "memory_per_node": "8GiB", "environs": ["e"],
                                           "scales": data}], "stacks": [{"name": "e"}]}
    with pytest.raises(InputError, match=r"^site.yaml: partitions\[p\]\." + message):
        schema.check(site, "site.yaml", "site.yaml")


def test_scale_names_of_several_partitions_once_smallest_first():
    lists = [ScaleSpec().scales(4, 64), ScaleSpec(cores=(8,)).scales(2, 16)]
    assert scales.scale_names(lists) == ["8_cores", "1_node", "2_nodes", "4_nodes"]


def test_scaling_series():
    cluster = ScaleSpec(cores=(1,)).scales(4, 64)
    assert [s.name for s in scales.scaling_series(cluster, 4)] == ["1_node", "2_nodes", "4_nodes"]
    machine = ScaleSpec().scales(1, 4)
    assert [s.name for s in scales.scaling_series(machine, 1)] == ["1_core", "2_cores", "1_node"]


# --- geometry -----------------------------------------------------------------------------------

def test_geometry_fills_the_cores():
    g = scales.geometry(FOUR_NODES, cores_per_node=64)
    assert (g.nodes, g.ranks_per_node, g.threads_per_rank, g.ranks, g.cores_per_node) == (4, 64, 1, 256, 64)


def test_geometry_sub_node_scale_uses_its_cores():
    g = scales.geometry(FOUR_CORES, cores_per_node=16)
    assert (g.nodes, g.ranks_per_node, g.cores_per_node) == (1, 4, 4)


def test_geometry_threads_per_rank_divides_the_cores():
    g = scales.geometry(ONE_NODE, cores_per_node=64, threads_per_rank=4)
    assert (g.ranks_per_node, g.threads_per_rank, g.cores_per_node) == (16, 4, 64)


def test_geometry_threads_not_dividing_cores_leaves_cores_idle():
    g = scales.geometry(ONE_NODE, cores_per_node=8, threads_per_rank=3)
    assert (g.ranks_per_node, g.cores_per_node) == (2, 6)


def test_geometry_explicit_ranks_per_node():
    g = scales.geometry(ONE_NODE, cores_per_node=64, threads_per_rank=2, ranks_per_node=8)
    assert (g.ranks_per_node, g.threads_per_rank, g.cores_per_node) == (8, 2, 16)


def test_geometry_ranks_times_threads_over_cores_names_threads():
    with pytest.raises(InputError, match="^threads_per_rank: "):
        scales.geometry(ONE_NODE, cores_per_node=8, threads_per_rank=3, ranks_per_node=4)


def test_geometry_threads_over_scale_cores_names_threads():
    with pytest.raises(InputError, match="^threads_per_rank: "):
        scales.geometry(FOUR_CORES, cores_per_node=16, threads_per_rank=8)


def test_geometry_ranks_per_node_over_cores():
    with pytest.raises(InputError, match="^ranks_per_node: "):
        scales.geometry(ONE_NODE, cores_per_node=8, ranks_per_node=9)


def test_geometry_explicit_ranks_cannot_exceed_a_sub_node_scale():
    # 4_cores on a 16-core node: 8 ranks would use 8 cores under the name '4_cores'
    with pytest.raises(InputError, match="^ranks_per_node: "):
        scales.geometry(FOUR_CORES, cores_per_node=16, ranks_per_node=8)


@pytest.mark.parametrize("kwargs, field", [
    (dict(cores_per_node=0), "cores_per_node"),
    (dict(cores_per_node=8, threads_per_rank=0), "threads_per_rank"),
    (dict(cores_per_node=8, ranks_per_node=0), "ranks_per_node"),
])
def test_geometry_non_positive_inputs(kwargs, field):
    with pytest.raises(InputError, match=f"^{field}: "):
        scales.geometry(ONE_NODE, **kwargs)
