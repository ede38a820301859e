"""scalebench.site.thresholds.efficiency_floor: the most specific key wins; bad data is a named error."""
import pytest

from scalebench import paths
from scalebench.errors import InputError
from scalebench.site import thresholds
from scalebench.site.thresholds import efficiency_floor

FLOORS = '"*": 0.65\n"big:*": 0.7\n"big:gpu": 0.5\n'


def _floors(tmp_path, text=FLOORS):
    path = tmp_path / "efficiency_floors.yaml"
    path.write_text(text)
    return path


def test_system_partition_key_wins(tmp_path):
    assert efficiency_floor("big", "gpu", _floors(tmp_path)) == 0.5


def test_system_wildcard_beats_global_wildcard(tmp_path):
    assert efficiency_floor("big", "cpu", _floors(tmp_path)) == 0.7


def test_global_wildcard_is_the_fallback(tmp_path):
    assert efficiency_floor("small", "cpu", _floors(tmp_path)) == 0.65


def test_integer_floor_becomes_float(tmp_path):
    value = efficiency_floor("a", "b", _floors(tmp_path, '"*": 1\n'))
    assert value == 1.0 and isinstance(value, float)


def test_real_file_has_a_local_floor():
    assert efficiency_floor("local", "default") == 0.5
    assert efficiency_floor("elsewhere", "default") == 0.65


@pytest.mark.parametrize("value", ["1.5", "-0.1", "high", "true", ".nan"])
def test_out_of_range_names_file_and_key(tmp_path, value):
    path = _floors(tmp_path, f'"*": 0.65\n"big:gpu": {value}\n')
    with pytest.raises(InputError) as caught:
        efficiency_floor("big", "gpu", path)
    assert str(caught.value).startswith(f"{path}: big:gpu: ")


def test_no_match_is_input_error(tmp_path):
    path = _floors(tmp_path, '"big:*": 0.7\n')
    with pytest.raises(InputError, match="no floor for small:cpu"):
        efficiency_floor("small", "cpu", path)


def test_empty_file_is_no_match(tmp_path):
    with pytest.raises(InputError, match="no floor"):
        efficiency_floor("small", "cpu", _floors(tmp_path, ""))


def test_not_a_mapping_is_input_error(tmp_path):
    with pytest.raises(InputError, match="must be a mapping"):
        efficiency_floor("small", "cpu", _floors(tmp_path, "- '*'\n"))


def test_report_flags_shipped_file_loads():
    flags = thresholds.report_flags()
    assert set(flags) == set(thresholds.REPORT_FLAGS)
    assert all(low < flags[key] <= high for key, (low, high) in thresholds.REPORT_FLAGS.items())


def test_report_flags_typo_in_key_names_the_file(tmp_path):
    path = tmp_path / "flags.yaml"
    path.write_text((paths.SITE_CONFIGS / "report_flags.yaml").read_text().replace("min_hpl_over_dgemm", "min_hpl_over_dgem"))
    with pytest.raises(InputError, match="flags.yaml: expected exactly the keys"):
        thresholds.report_flags(path)
