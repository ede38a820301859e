"""scalebench.site.scales: which scales a partition skips, and the nodes x ranks x threads they give."""
import pytest

from scalebench.site import scales
from scalebench.errors import InputError
from scalebench.site.scales import Scale

ONE_NODE = Scale("1_node", 1)
FOUR_NODES = Scale("4_nodes", 4)
FOUR_CORES = Scale("4_cores", 1, cores_per_node=4)

# --- skip_reason --------------------------------------------------------------------------------


def test_runnable_scale_has_no_skip_reason():
    assert scales.skip_reason(FOUR_NODES, cores_per_node=64, max_nodes=4) is None
    assert scales.skip_reason(FOUR_CORES, cores_per_node=8, max_nodes=1) is None


def test_skip_too_many_nodes():
    reason = scales.skip_reason(FOUR_NODES, cores_per_node=64, max_nodes=2)
    assert reason == "scale 4_nodes needs 4 nodes; the partition has 2"


def test_skip_too_many_cores():
    reason = scales.skip_reason(FOUR_CORES, cores_per_node=2, max_nodes=1)
    assert "needs 4 cores per node" in reason and "have 2" in reason


def test_skip_sub_node_scale_equal_to_whole_node():
    reason = scales.skip_reason(FOUR_CORES, cores_per_node=4, max_nodes=1)
    assert reason == "scale 4_cores is the whole node: run as 1_node"


def test_known_scales_load():
    names = scales.scale_names()
    assert "1_core" in names and "1_node" in names
    assert scales.get_scale("2_nodes") == Scale("2_nodes", 2)


def test_unknown_scale_is_input_error():
    with pytest.raises(InputError, match="^scale: unknown scale 'huge'"):
        scales.get_scale("huge")


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


def test_sub_node_scale_smaller_than_explicit_geometry_is_skipped():
    two_cores = Scale("2_cores", 1, 2)
    reason = scales.skip_reason(two_cores, cores_per_node=16, max_nodes=1, cores_needed_per_node=4)
    assert reason is not None and "needs 4 per node" in reason
    assert scales.skip_reason(two_cores, cores_per_node=16, max_nodes=1, cores_needed_per_node=2) is None
