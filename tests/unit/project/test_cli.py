"""scalebench.cli.main: deck, parse and peak commands; every error is one line on stderr and exit 2."""
import json
from pathlib import Path

import pytest

from scalebench.cli import main

DATA = Path(__file__).resolve().parents[2] / "data"
GiB = 2**30
DECK = ["deck", "--nodes", "2", "--ranks-per-node", "4", "--memory-per-node", "16GiB"]


def _run(argv):
    """Exit status of the command, whether main returns it or argparse exits with it."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def test_deck_json_is_consistent(capsys):
    assert _run([*DECK, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"n", "nb", "p", "q", "ranks", "memory_fraction"} <= set(data)
    assert data["p"] * data["q"] == data["ranks"] == 8
    assert data["p"] <= data["q"]
    assert data["n"] % data["nb"] == 0
    assert 8 * data["n"] ** 2 <= 0.8 * 2 * 16 * GiB


def test_deck_format_json_same_as_json_flag(capsys):
    _run([*DECK, "--json"])
    flag = capsys.readouterr().out
    _run([*DECK, "--format", "json"])
    assert capsys.readouterr().out == flag


def test_deck_default_format_is_hpl_dat(capsys):
    assert _run(DECK) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 31 and lines[0] == "HPLinpack benchmark input file"


def test_deck_hpcc_format_has_36_lines(capsys):
    assert _run([*DECK, "--format", "hpcc"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 36


def _one_error_line(capsys):
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == ""
    assert len(lines) == 1, captured.err
    return lines[0]


def test_deck_zero_nodes(capsys):
    assert _run(["deck", "--nodes", "0", "--ranks-per-node", "4", "--memory-per-node", "16GiB"]) == 2
    assert "--nodes" in _one_error_line(capsys)


def test_deck_bad_memory_unit(capsys):
    assert _run(["deck", "--nodes", "2", "--ranks-per-node", "4", "--memory-per-node", "12XB"]) == 2
    assert "--memory-per-node" in _one_error_line(capsys)


def test_deck_memory_too_small(capsys):
    assert _run(["deck", "--nodes", "2", "--ranks-per-node", "4", "--memory-per-node", "1MiB"]) == 2
    assert "memory_per_node" in _one_error_line(capsys)


def test_deck_memory_fraction_out_of_range(capsys):
    assert _run([*DECK, "--memory-fraction", "1.5"]) == 2
    assert "memory_fraction" in _one_error_line(capsys)


def test_parse_hpl(capsys):
    assert _run(["parse", "hpl", str(DATA / "hpl" / "mnt_reform_hpl23.txt")]) == 0
    assert json.loads(capsys.readouterr().out)["rmax_gflops"] == 4.261


def test_parse_unknown_kind(capsys):
    assert _run(["parse", "nosuchkind", str(DATA / "hpl" / "mnt_reform_hpl23.txt")]) == 2
    assert "nosuchkind" in _one_error_line(capsys)


def test_parse_missing_file(capsys, tmp_path):
    assert _run(["parse", "hpl", str(tmp_path / "absent.txt")]) == 2
    assert "absent.txt" in _one_error_line(capsys)


def test_peak_json_on_this_machine(capsys):
    assert _run(["peak", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rpeak_gflops_per_node"] > 0
    assert data["rpeak_gflops_per_node"] == pytest.approx(
        data["cores_per_node"] * data["clock_ghz"] * data["flops_per_cycle"])


def test_peak_overrides(capsys):
    assert _run(["peak", "--json", "--cores", "64", "--clock-ghz", "2.0", "--flops-per-cycle", "32"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rpeak_gflops_per_node"] == 4096.0
    assert "cores_per_node = 64 (command line)" in data["derivation"]  # not the site config


# --- print_json: every --json and `parse` output ---------------------------------------------------------

def test_print_json_does_not_indent_in_pure_python(capsys, monkeypatch):
    """json's indenting encoder is pure Python: half the time of `scalebench parse` on a 100 MB HPL output
    of many rows went into printing it (issue 30, 14)."""
    import json.encoder

    from scalebench.cli.common import print_json

    def pure_python(*args, **kwargs):
        raise AssertionError("json's pure-Python encoder used")

    monkeypatch.setattr(json.encoder, "_make_iterencode", pure_python)
    rows = [{"n": 10000, "gflops": 102.56, "status": "PASSED", "reason": None} for _ in range(3)]
    print_json({"rows": rows, "counts": {"passed": 3}, "rmax_gflops": 1e300, "empty": [], "none": {}})
    out = capsys.readouterr().out
    assert json.loads(out) == {"rows": rows, "counts": {"passed": 3}, "rmax_gflops": 1e300, "empty": [], "none": {}}
    assert out.startswith('{\n  "rows": [\n    {\n      "n": 10000,') and out.endswith("}\n")


@pytest.mark.parametrize("data", [{"title": "Ümlaut \u2013 ✓"}, {"n": 10**400}, {1: "an int key"},
                                  {"s": "\udcff"}])
def test_print_json_prints_what_json_prints(capsys, data):
    """Non-ASCII text escaped (a terminal in any locale prints it), integers beyond 64 bits, keys that are
    not text, lone surrogates (undecodable bytes of a file name): the standard library's answer."""
    from scalebench.cli.common import print_json

    print_json(data)
    assert capsys.readouterr().out == json.dumps(data, indent=2) + "\n"


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_print_json_refuses_what_json_has_no_word_for(capsys, value):
    from scalebench.cli.common import print_json

    with pytest.raises(ValueError):
        print_json({"rows": [{"gflops": value}]})
    assert capsys.readouterr().out == ""
