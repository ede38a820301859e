"""Every YAML file goes through one loader: a key repeated in a mapping is an error (never last-wins),
and plain scalars mean what YAML 1.2 says (1e308 is a number; 1:30, no and 2026-11-25 are text)."""
import pytest

import reframe_reports as rr
from scalebench import loaders
from scalebench.errors import InputError
from cli_calls import error_line, scalebench
from site_files import SITE, write  # noqa: F401


@pytest.mark.parametrize("text, value", [
    ("1e308", 1e308), ("-2.5E-3", -0.0025), (".inf", float("inf")), ("0x1F", 31), ("0o17", 15),
    ("017", 17),  # decimal: YAML 1.1 read it as octal 15
    ("1:30", "1:30"),  # YAML 1.1: the integer 90 (base 60)
    ("no", "no"), ("on", "on"), ("2026-11-25", "2026-11-25"), ("1_000", "1_000"),
    ("true", True), ("False", False), ("~", None), ("null", None),
])
def test_plain_scalars_follow_yaml_1_2(text, value):
    assert loaders.parse_yaml(f"key: {text}\n", "f.yaml") == {"key": value}


def test_merge_keys_still_merge():
    assert loaders.parse_yaml("a: &x {b: 1}\nc: {<<: *x, d: 2}\n", "f.yaml")["c"] == {"b": 1, "d": 2}


@pytest.mark.parametrize("text", ["a: 1\na: 2\n", "m:\n  - {x: 1, x: 1}\n", "1: a\n1: b\n"])
def test_a_repeated_key_is_refused_naming_its_line(text):
    with pytest.raises(InputError, match=r"^f\.yaml: line \d+ not valid YAML \(key .* is repeated\)$"):
        loaders.parse_yaml(text, "f.yaml")


@pytest.fixture
def results(tmp_path):
    return rr.REAL_REPORT.parent


def test_a_repeated_bound_in_acceptance_criteria_is_refused(tmp_path, results):
    # last-wins would check 50% and pass a run the committee asked to hold to 95%
    path = tmp_path / "acceptance.yaml"
    path.write_text("criteria:\n  - {benchmark: HPLCheck, figure: efficiency, min: 95%, min: 50%}\n")
    line = error_line(scalebench("accept", str(results), "--thresholds", str(path)))
    assert line.startswith("scalebench accept: error: ") and "key 'min' is repeated" in line


def test_two_criteria_lists_are_refused(tmp_path, results):
    path = tmp_path / "acceptance.yaml"
    path.write_text("criteria:\n  - {benchmark: HPLCheck, figure: efficiency, min: 95%}\n"
                    "criteria:\n  - {benchmark: HPLCheck, figure: rmax, min: 1}\n")
    assert "key 'criteria' is repeated" in error_line(scalebench("accept", str(results), "--thresholds", str(path)))


def test_a_repeated_site_key_is_refused_by_plan(tmp_path):
    text = SITE.replace("cores_per_node: 64", "cores_per_node: 64\n    cores_per_node: 128", 1)
    assert text != SITE
    line = error_line(scalebench("plan", str(write(tmp_path, text))))
    assert line.startswith("scalebench plan: error: ") and "key 'cores_per_node' is repeated" in line


def test_a_number_beyond_yaml_1_1_is_a_number_in_thresholds(tmp_path, results):
    path = tmp_path / "acceptance.yaml"
    path.write_text("criteria:\n  - {benchmark: HPLCheck, figure: rmax, min: 1e308}\n")
    proc = scalebench("accept", str(results), "--thresholds", str(path))
    assert proc.returncode == 1 and "FAIL" in proc.stdout, proc.stderr  # judged, and no Rmax reaches 1e308
