"""Fabric classes and their floors (site_configs/fabric_floors.yaml), and the report's flag."""
import pytest

from scalebench.errors import InputError
from scalebench.site import fabric


def test_a_healthy_measurement_of_its_class_is_not_flagged():
    assert fabric.judge("infiniband-hdr", {"latency_us": 1.1, "bandwidth_mbs": 23500, "n_half_bytes": 8192}) is None
    assert fabric.judge("shared-memory", {"latency_us": 0.4}) is None  # only what was measured is judged


def test_a_stack_below_its_class_is_flagged_with_the_class_it_is_like():
    flag = fabric.judge("infiniband-hdr", {"latency_us": 31.0, "bandwidth_mbs": 1100.0})
    assert flag == ("declared InfiniBand HDR, measured latency 31 us (at most 2 us); peak bandwidth 1100 MB/s "
                    "(at least 18000 MB/s): like TCP over Ethernet")
    assert fabric.judge("slingshot", {"latency_us": 9000.0}).endswith("below every class")


def test_classes_are_compared_within_their_placement():
    flag = fabric.judge("shared-memory", {"latency_us": 20.0})
    assert flag.endswith("like TCP over loopback")  # not an inter-node class


@pytest.mark.parametrize("text, message", [
    ("x: {label: X, placement: inter_node, latency_us: 1, bandwidth_mbs: 1}", "x: missing 'n_half_bytes'"),
    ("x: {label: X, placement: rack, latency_us: 1, bandwidth_mbs: 1, n_half_bytes: 1}", "placement"),
    ("x: {label: X, placement: inter_node, latency_us: -1, bandwidth_mbs: 1, n_half_bytes: 1}", "latency_us"),
    ("[1, 2]", "must be a mapping"),
])
def test_a_bad_floors_file_is_named(tmp_path, text, message):
    path = tmp_path / "floors.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        fabric.fabric_classes(path)
