"""scalebench.units.parse_size: binary bare suffixes (Slurm), decimal kB/MB/GB/TB, named errors."""
import pytest

from scalebench.errors import InputError
from scalebench.units import format_size, parse_size


def test_gib_is_binary():
    assert parse_size("16GiB") == 16 * 2**30


def test_bare_g_is_binary_like_slurm():
    assert parse_size("16G") == 16 * 2**30


def test_gb_is_decimal():
    assert parse_size("500GB") == 500 * 10**9


def test_fractional_tib():
    assert parse_size("1.5TiB") == 3 * 2**39


def test_fractional_decimal_size_is_exact():
    # 8.2 * 10**9 is 8199999999.999999 in binary floating point: must still be 8.2e9 bytes.
    assert parse_size("8.2GB") == 8_200_000_000


def test_units_are_case_insensitive_and_space_tolerant():
    assert parse_size(" 64 gib ") == 64 * 2**30


def test_plain_int():
    assert parse_size(4096) == 4096


def test_a_written_size_needs_its_unit():
    # 768 meant GiB to the site file's author and bytes to the parser: 0 cases planned, exit 0
    with pytest.raises(InputError, match=r"^memory_per_node: '768' has no unit; write it with one, e.g. 768GiB "):
        parse_size("768", "memory_per_node")
    assert parse_size("4096B") == 4096 and parse_size(4096) == 4096  # an int is scalebench's own byte count


@pytest.mark.parametrize("text", ["lots", "16XB", "", "1e9", "16 G B"])
def test_garbage_names_the_field(text):
    with pytest.raises(InputError, match="^--memory-per-node: "):
        parse_size(text, "--memory-per-node")


@pytest.mark.parametrize("text", ["0B", "0GiB", 0])
def test_zero_names_the_field(text):
    with pytest.raises(InputError, match="^memory_per_node: must be positive"):
        parse_size(text, "memory_per_node")


@pytest.mark.parametrize("text", ["-1G", -5])
def test_negative_names_the_field(text):
    with pytest.raises(InputError, match="^memory_per_node: "):
        parse_size(text, "memory_per_node")


def test_format_size_picks_largest_unit():
    assert format_size(16 * 2**30) == "16.0 GiB"
    assert format_size(512) == "512 B"
