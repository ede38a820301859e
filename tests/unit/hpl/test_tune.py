"""scalebench.hpl.tune and .frozen: sweep decks, T/V decoding, ranking, frozen decks, scaling N.

HPL outputs here are synthetic, printed with HPL 2.3's own formats (HPL_pdtest.c):
row "W%c%1d%c%c%1d%c%1d%12d %5d %5d %5d %18.2f %19.4e", then the scaled-residual line.
"""
import json
import math
import re
from dataclasses import replace
from datetime import datetime, timezone

import pytest
import yaml

from hpl_outputs import BCAST_CODE, hpcc_output, hpl_output, tv

from scalebench import paths, writeonce
from scalebench.cli import tune as tune_cli
from scalebench.cli.common import OneLineParser as _Parser
from scalebench.errors import DeckError, InputError, ParseError, ScalebenchError
from scalebench.hpl import deck, frozen, tune
from scalebench.hpl import output as hpl_parse
from scalebench.hpl.deck import Algorithm, DeckRequest, Rules
from scalebench.hpl.hpcc_output import parse_hpcc
from scalebench.hpl.output import parse_hpl

GiB = 2**30
RULES_YAML = paths.HPL_DECKS / "rules.yaml"
T0 = datetime(2026, 11, 5, 12, 0, 0, tzinfo=timezone.utc)
RULES = deck.load_rules()

# --- HPL's reader, for checking what we write ----------------------------------------------------

def hpl_pdinfo(text):
    """Read an HPL.dat as HPL 2.3's HPL_pdinfo does: each line by fgets(line, 254) (253 characters
    at most), a count by sscanf(line, "%s"), list values by sscanf(lineptr, "%s") with
    `lineptr += strlen(num) + 1`. Raises AssertionError where HPL would stop."""
    pos = 0

    def fgets():
        nonlocal pos
        end = text.find("\n", pos)
        stop = min(len(text) if end < 0 else end + 1, pos + 253)
        line, pos = text[pos:stop], stop
        return line

    def first():
        return fgets().split()[0]

    def count(name):
        value = int(first())
        assert 1 <= value <= 20, f"number of values of {name}: {value}"
        return value

    def values(number):
        line, ptr, out = fgets(), 0, []
        for _ in range(number):
            token = line[ptr:].split()[0]
            ptr += len(token) + 1
            out.append(int(token))
        return out

    fgets(), fgets()
    dat = {"output_file": first(), "device": int(first())}
    dat["ns"] = values(count("N"))
    dat["nbs"] = values(count("NB"))
    dat["pmap"] = int(first())
    npqs = count("grids")
    dat["ps"], dat["qs"] = values(npqs), values(npqs)
    dat["threshold"] = float(first())
    for name in ("pfacts", "nbmins", "ndivs", "rfacts", "bcasts", "depths"):
        dat[name] = values(count(name))
    for name in ("swap", "swap_threshold", "l1", "u", "equil", "align"):
        dat[name] = int(first())
    assert pos == len(text), "text after line 31"
    assert all(v >= 1 for v in dat["nbs"] + dat["ps"] + dat["qs"] + dat["nbmins"])
    assert all(v >= 2 for v in dat["ndivs"]) and all(v >= 0 for v in dat["ns"] + dat["depths"])
    return dat


def base_deck(ranks_per_node=7, nodes=1, memory=16 * GiB, **changes):
    d = deck.make_deck(DeckRequest(nodes, ranks_per_node, memory), RULES)
    return replace(d, **changes)


# --- sweep decks ----------------------------------------------------------------------------------

def test_default_sweep_for_7_ranks():
    sweep = tune.sweep_deck(base_deck(7))
    assert sweep.nbs == (64, 96, 128, 192, 256, 384)
    assert sweep.grids == ((2, 3),)  # 1x7 is flatter than 1:4, which the plan never runs; 2x3 leaves 1 idle
    assert sweep.bcasts == ("1ringM", "2ringM", "longM") and sweep.depths == (0, 1)
    assert sweep.tests == 6 * 1 * 3 * 2
    assert any("2x3 leaves 1 of 7 ranks idle" in note for note in sweep.notes)
    assert any("grids 1x7 left out: flatter than 1:4" in note for note in sweep.notes)
    assert sweep.base.n % math.lcm(*sweep.nbs) == 0  # every NB swept holds whole blocks


def test_sweep_hpl_dat_reads_back_through_hpl_pdinfo():
    sweep = tune.sweep_deck(base_deck(7))
    text = tune.sweep_hpl_dat(sweep)
    assert len(text.splitlines()) == 31
    dat = hpl_pdinfo(text)
    assert dat["ns"] == [sweep.base.n]
    assert dat["nbs"] == [64, 96, 128, 192, 256, 384]
    assert list(zip(dat["ps"], dat["qs"])) == [(2, 3)]
    assert dat["bcasts"] == [1, 3, 5] and dat["depths"] == [0, 1]
    assert (dat["pfacts"], dat["nbmins"], dat["ndivs"], dat["rfacts"]) == ([2], [4], [2], [1])
    assert (dat["pmap"], dat["swap"], dat["swap_threshold"], dat["align"]) == (0, 2, 64, 8)


def test_sweep_hpccinf_is_sweep_hpl_dat_plus_ptrans_lines():
    sweep = tune.sweep_deck(base_deck(4))
    lines = tune.sweep_hpccinf_txt(sweep).splitlines()
    assert len(lines) == 36 and lines[:31] == tune.sweep_hpl_dat(sweep).splitlines()
    assert lines[31].startswith("#####") and [line.split()[0] for line in lines[32:]] == ["0"] * 4


def test_single_valued_sweep_is_byte_identical_to_hpl_dat():
    base = base_deck(6)
    a = base.algorithm
    sweep = tune.sweep_deck(base, nbs=[base.nb], grids=[(base.p, base.q)], bcasts=[a.bcast], depths=[a.depth])
    assert sweep.tests == 1
    assert tune.sweep_hpl_dat(sweep) == deck.hpl_dat(base)
    assert tune.sweep_hpccinf_txt(sweep) == deck.hpccinf_txt(base)


def test_square_rank_count_has_no_idle_option():
    assert tune.sweep_deck(base_deck(4)).grids == ((1, 4), (2, 2))
    assert tune.sweep_deck(base_deck(2)).grids == ((1, 2),)
    assert tune.sweep_deck(base_deck(1)).grids == ((1, 1),)


def test_idle_grid_on_several_nodes_states_the_memory_of_busy_nodes():
    # 2 nodes x 11 ranks: 2x11 is the squarest full grid, 3x7 leaves rank 21 idle. The 11 busy ranks
    # of node 1 hold 11/21 of the matrix: 11/21 x 2 x 0.8 = 83.8% of its memory instead of 80%.
    sweep = tune.sweep_deck(base_deck(11, nodes=2))
    assert sweep.grids == ((3, 7),)  # 1x22 and 2x11 are flatter than 1:4
    share = 11 / 21 * sweep.base.n ** 2 * 8 / (16 * GiB)
    assert f"its busy nodes hold {share:.0%} of their memory" in " ".join(sweep.notes) and share < 0.84
    # with the matrix sized to all the memory, 104.8% would not fit: no idle-rank grid, so no grid at all
    full = deck.make_deck(DeckRequest(2, 11, 16 * GiB, memory_fraction=1.0), RULES)
    with pytest.raises(DeckError, match=r"^grids: no grid of 22 ranks to sweep \(.*3x7 \(leaving 1 of 22 ranks idle\) left out"):
        tune.sweep_deck(full)


def test_rows_with_zero_sizes_are_left_out():
    text = hpl_output([(tv(), 10000, 192, 0, 2, 6.5, 102.6, "PASSED"),
                       (tv(), 10000, 192, 1, 2, 6.5, 102.6, "PASSED")])
    ranking = tune.rank(parse_hpl(text).rows)
    assert [c.p for c in ranking] == [1] and ranking.excluded["impossible values"] == 1


def test_default_nbs_keep_one_block_per_process_row_and_column():
    # 8 ranks on grid 2x4: the widest side is 4, so at N=1500 NB <= 375: 384 is out; N then becomes a
    # multiple of every NB kept, where 256 no longer fits either (768 / 4 = 192)
    assert 384 in tune.sweep_deck(base_deck(8, n=1536)).nbs
    sweep = tune.sweep_deck(base_deck(8, n=1500))
    assert sweep.nbs == (64, 96, 128, 192) and sweep.grids == ((2, 4),)
    assert sweep.base.n == 768 and any("NB 256, 384 left out" in note for note in sweep.notes)


def test_explicit_nb_too_wide_is_deck_error():
    with pytest.raises(DeckError, match=r"^NB 384: N=1000 .* grid 2x3 \(needs N >= 1152\)"):
        tune.sweep_deck(base_deck(7, n=1000), nbs=[192, 384])


def test_grid_larger_than_the_rank_count_is_deck_error():
    with pytest.raises(DeckError, match=r"^grid 2x4: needs 8 ranks, the deck launches 7"):
        tune.sweep_deck(base_deck(7), grids=[(1, 7), (2, 4)])


def test_sweep_n_beyond_memory_is_deck_error():
    with pytest.raises(DeckError, match="^N: 50000 needs more than 0.8"):
        tune.sweep_deck(base_deck(1), ns=[50000])


def test_more_than_20_values_is_deck_error():
    # HPL_MAX_PARAM = 20 in HPL's hpl_ptest.h: HPL_pdinfo rejects 21 values on one line
    base = base_deck(1)
    tune.sweep_deck(base, nbs=list(range(64, 64 + 20)))
    with pytest.raises(DeckError, match=r"^NBs: 21 values; HPL reads 1 to 20"):
        tune.sweep_deck(base, nbs=list(range(64, 64 + 21)))
    with pytest.raises(DeckError, match=r"^DEPTHs: 21 values"):
        tune.sweep_deck(base, depths=list(range(21)))
    with pytest.raises(DeckError, match=r"^BCASTs: 0 values"):
        tune.sweep_deck(base, bcasts=[])


@pytest.mark.parametrize("changes, message", [
    ({"bcasts": ["3ringM"]}, r"^BCASTs: '3ringM' is not one of"),
    ({"depths": [-1]}, r"^DEPTHs: -1 is not an integer from 0 to 2147483647"),
    ({"ndivs": [1]}, r"^NDIVs: 1 is not an integer from 2 to 2147483647"),
    ({"nbmins": [0]}, r"^NBMINs: 0 is not an integer from 1 to 2147483647"),
    ({"pfacts": ["up"]}, r"^PFACTs: 'up'"),
])
def test_values_hpl_rejects_are_deck_errors(changes, message):
    with pytest.raises(DeckError, match=message):
        tune.sweep_deck(base_deck(1), **changes)


def test_line_longer_than_hpl_reads_is_deck_error():
    # 253 characters + a space and the comment > 253 (fgets(line, HPL_LINE_MAX - 2))
    with pytest.raises(DeckError, match=r"^HPL.dat line 3 \(output file name \(if any\)\): 280 characters, HPL "
                                        r"reads at most 253"):
        deck.hpl_dat_lists(ns=[1000], nbs=[192], grids=[(1, 1)], algorithm=Algorithm(), output_file="o" * 253)


def test_n_beyond_a_c_int_is_deck_error():
    """HPL reads N into a C int: 2**31 would wrap (the longest N list now fits in a line)."""
    with pytest.raises(DeckError, match=r"^Ns: 2147483648 is not an integer from 0 to 2147483647"):
        deck.hpl_dat_lists(ns=[2**31], nbs=[192], grids=[(1, 1)], algorithm=Algorithm())


def test_longest_legal_lists_read_back():
    text = deck.hpl_dat_lists(ns=[100000 + i for i in range(20)], nbs=list(range(100, 120)),
                              grids=[(1, 1)] * 20,
                              algorithm=Algorithm(), depths=list(range(20)), bcasts=["longM"] * 20)
    dat = hpl_pdinfo(text)
    assert dat["ns"] == [100000 + i for i in range(20)] and dat["depths"] == list(range(20))


def test_single_deck_reads_back_through_hpl_pdinfo():
    algorithm = Algorithm(pmap="column", threshold=20.0, pfact="left", nbmin=2, ndiv=3, rfact="right",
                          bcast="long", depth=0, swap="long", swap_threshold=80, l1_transposed=False,
                          u_transposed=False, equilibration=False, alignment=16)
    dat = hpl_pdinfo(deck.hpl_dat(base_deck(6, algorithm=algorithm)))
    assert (dat["pmap"], dat["pfacts"], dat["rfacts"], dat["bcasts"], dat["l1"], dat["equil"]) == \
        (1, [0], [2], [4], 1, 0)


# --- T/V codes ------------------------------------------------------------------------------------

def test_decode_wr11c2r4():
    assert hpl_parse.decode_tv("WR11C2R4") == {"pmap": "row", "depth": 1, "bcast": "1ringM", "rfact": "crout",
                                          "ndiv": 2, "pfact": "right", "nbmin": 4}


@pytest.mark.parametrize("code, expected", [
    ("WC03R2R2", ("column", 0, "2ringM", "right", 2, "right", 2)),   # NVIDIA HPL, 8x4 run
    ("WC00C2R2", ("column", 0, "1ring", "crout", 2, "right", 2)),    # Intel MKL HPL
    ("WR10L2L2", ("row", 1, "1ring", "left", 2, "left", 2)),
    ("WR05R3C8", ("row", 0, "longM", "right", 3, "crout", 8)),
    ("WR121C2R16", ("row", 12, "1ringM", "crout", 2, "right", 16)),  # %1d is a minimum width
])
def test_decode_tv_fields(code, expected):
    decoded = hpl_parse.decode_tv(code)
    assert tuple(decoded[k] for k in hpl_parse.TV_KEYS) == expected


def test_every_bcast_digit_decodes_to_the_name_the_writer_encodes():
    for name, code in BCAST_CODE.items():
        assert hpl_parse.decode_tv(tv(bcast=code))["bcast"] == name
        assert deck._BCAST[name] == code


@pytest.mark.parametrize("code", ["WC0", "WR1", "WR11C2R", "XR11C2R4", "WX11C2R4", "WR11Q2R4",
                                  "WR11C2R4 ", "", "wr11c2r4"])
def test_bad_tv_codes_are_parse_errors_naming_the_code(code):
    with pytest.raises(ParseError, match=r"^T/V code " + re.escape(repr(code)) + ": not HPL's encoded variant"):
        hpl_parse.decode_tv(code)


def test_bcast_digit_beyond_5_is_named():
    with pytest.raises(ParseError, match=r"^T/V code 'WR16C2R4': BCAST digit 6 is not one of HPL's 0-5"):
        hpl_parse.decode_tv("WR16C2R4")


def test_ndiv_below_2_is_parse_error():
    with pytest.raises(ParseError, match="NDIV 1"):
        hpl_parse.decode_tv("WR11C1R4")


# --- ranking --------------------------------------------------------------------------------------

def test_failed_row_never_wins_and_is_counted():
    text = hpl_output([
        (tv(), 10000, 192, 1, 2, 6.5, 102.6, "PASSED"),
        (tv(bcast=5), 10000, 256, 1, 2, 5.0, 180.0, "FAILED"),  # fastest, but wrong
        (tv(depth=0), 10000, 128, 1, 2, 7.0, 95.3, "PASSED"),
    ])
    ranking = tune.rank(parse_hpl(text).rows)
    assert [c.gflops for c in ranking] == [102.6, 95.3]
    assert all(c.nb != 256 for c in ranking)
    assert ranking.excluded["failed residual check"] == 1
    assert ranking.excluded_text() == "1 failed residual check"


def test_candidate_carries_the_decoded_algorithm():
    text = hpl_output([(tv("C", 0, 3, "R", 3, "L", 8), 20000, 96, 2, 3, 30.0, 177.8, "PASSED")])
    (best,) = tune.rank(parse_hpl(text).rows)
    assert (best.nb, best.p, best.q, best.n, best.time_s, best.gflops) == (96, 2, 3, 20000, 30.0, 177.8)
    assert best.algorithm == {"pmap": "column", "depth": 0, "bcast": "2ringM", "rfact": "right",
                              "ndiv": 3, "pfact": "left", "nbmin": 8}


def test_ties_broken_by_time_then_squarer_grid():
    text = hpl_output([
        (tv(), 10000, 192, 1, 4, 9.00, 74.08, "PASSED"),
        (tv(), 10000, 192, 2, 2, 9.00, 74.08, "PASSED"),  # same rate and time, squarer
        (tv(), 9984, 192, 1, 4, 8.96, 74.08, "PASSED"),   # same rate (from the unrounded time), less time
        (tv(), 10000, 64, 2, 2, 9.10, 73.26, "PASSED"),
    ])
    ranking = tune.rank(parse_hpl(text).rows)
    assert [(c.n, c.p, c.q, c.nb) for c in ranking] == [(9984, 1, 4, 192), (10000, 2, 2, 192),
                                                         (10000, 1, 4, 192), (10000, 2, 2, 64)]


def test_row_without_residual_check_is_left_out():
    text = hpl_output([(tv(), 10000, 192, 1, 2, 6.5, 102.6, "PASSED"),
                       (tv(), 10000, 256, 1, 2, 6.0, 110.0, None)])  # run cut before its check
    ranking = tune.rank(parse_hpl(text).rows)
    assert [c.nb for c in ranking] == [192] and ranking.excluded["no residual check"] == 1


def test_passed_row_with_undecodable_code_is_parse_error():
    text = hpl_output([("WC0     ", 10000, 192, 1, 2, 6.5, 102.6, "PASSED")])
    with pytest.raises(ParseError, match=r"^T/V code 'WC0'"):
        tune.rank(parse_hpl(text).rows)


def test_rank_hpcc_output():
    text = hpcc_output(hpl_output([(tv(), 5000, 192, 1, 2, 1.1, 75.0, "PASSED"),
                                   (tv(depth=0), 5000, 128, 1, 2, 1.0, 84.0, "PASSED")]))
    ranking = tune.rank(parse_hpcc(text).hpl.rows)
    assert [c.nb for c in ranking] == [128, 192]


# --- freeze ---------------------------------------------------------------------------------------

def _ranking(rows):
    return tune.rank(parse_hpl(hpl_output(rows)).rows)


SWEEP_ROWS = [
    (tv(depth=0, bcast=5), 10000, 256, 1, 2, 6.2, 106.0, "PASSED"),
    (tv(), 10000, 192, 1, 2, 6.5, 102.6, "PASSED"),
    (tv(bcast=3), 10000, 128, 1, 2, 6.6, 101.0, "PASSED"),
    (tv(), 10000, 96, 1, 2, 7.0, 95.3, "PASSED"),
    (tv(depth=0), 10000, 64, 1, 2, 8.0, 83.4, "PASSED"),
    (tv(), 10000, 384, 1, 2, 7.5, 89.0, "PASSED"),
    (tv(), 10000, 256, 1, 2, 4.0, 167.0, "FAILED"),
]


def test_freeze_writes_the_winner(tmp_path):
    ranking = _ranking(SWEEP_ROWS)
    path = frozen.freeze(ranking[0], "dev", "cpu", "/runs/1/HPL.out", tmp_path, ranking=ranking, now=T0)
    assert path == tmp_path / "dev" / "cpu.yaml"
    data = yaml.safe_load(path.read_text())
    assert list(data) == ["nb", "grid", "grid_rule", "algorithm", "provenance"]
    assert data["nb"] == 256
    assert data["grid"] == {"p": 1, "q": 2, "ranks": 2}
    assert data["grid_rule"] == "near_square"  # 1x2 is the squarest grid of 2 ranks
    # exactly the keys of rules.yaml's algorithm section, in its order
    assert list(data["algorithm"]) == list(yaml.safe_load(RULES_YAML.read_text())["algorithm"])
    assert (data["algorithm"]["bcast"], data["algorithm"]["depth"]) == ("longM", 0)
    provenance = data["provenance"]
    assert provenance["frozen_at"] == "2026-11-05T12:00:00+00:00"
    assert provenance["source"] == "/runs/1/HPL.out"
    assert provenance["n_swept"] == [10000] and provenance["ranks"] == 2
    assert [c["gflops"] for c in provenance["top"]] == [106.0, 102.6, 101.0, 95.3, 89.0]
    assert provenance["excluded"] == {"failed residual check": 1}
    assert provenance["candidates"] == 6
    assert path.read_text().startswith("# Frozen HPL deck for dev/cpu")


def test_freeze_refuses_to_overwrite(tmp_path):
    ranking = _ranking(SWEEP_ROWS)
    path = frozen.freeze(ranking[0], "dev", "cpu", "a.out", tmp_path, ranking=ranking, now=T0)
    before = path.read_text()
    with pytest.raises(InputError, match=r"cpu.yaml: a frozen deck exists already \(frozen_at 2026-11-05"):
        frozen.freeze(ranking[1], "dev", "cpu", "b.out", tmp_path, ranking=ranking)
    assert path.read_text() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["cpu.yaml"]


def test_freeze_force_keeps_the_old_deck(tmp_path):
    ranking = _ranking(SWEEP_ROWS)
    path = frozen.freeze(ranking[0], "dev", "cpu", "a.out", tmp_path, ranking=ranking, now=T0)
    first = path.read_text()
    later = datetime(2026, 11, 6, 8, 30, 15, tzinfo=timezone.utc)
    frozen.freeze(ranking[1], "dev", "cpu", "b.out", tmp_path, ranking=ranking, now=later, force=True)
    kept = tmp_path / "dev" / "cpu.yaml.20261106T083015Z"
    assert kept.read_text() == first
    assert yaml.safe_load(path.read_text())["nb"] == 192
    # a second replacement in the same second keeps both old decks
    frozen.freeze(ranking[2], "dev", "cpu", "c.out", tmp_path, ranking=ranking, now=later, force=True)
    assert kept.read_text() == first
    assert yaml.safe_load((tmp_path / "dev" / "cpu.yaml.20261106T083015Z.1").read_text())["nb"] == 192
    assert yaml.safe_load(path.read_text())["nb"] == 128
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_freeze_without_hard_links(tmp_path, monkeypatch):
    def no_links(src, dst):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(writeonce.os, "link", no_links)
    ranking = _ranking(SWEEP_ROWS)
    path = frozen.freeze(ranking[0], "dev", "cpu", "a.out", tmp_path, ranking=ranking, now=T0)
    first = path.read_text()
    with pytest.raises(InputError, match="a frozen deck exists already"):
        frozen.freeze(ranking[1], "dev", "cpu", "b.out", tmp_path, ranking=ranking, now=T0)
    frozen.freeze(ranking[1], "dev", "cpu", "b.out", tmp_path, ranking=ranking, now=T0, force=True)
    assert (tmp_path / "dev" / "cpu.yaml.20261105T120000Z").read_text() == first
    assert sorted(p.name for p in path.parent.iterdir()) == ["cpu.yaml", "cpu.yaml.20261105T120000Z"]


@pytest.mark.parametrize("system, partition", [
    ("..", "cpu"), ("dev", ".."), ("../etc", "cpu"), ("dev", "a/b"), ("", "cpu"), ("dev", "a b"),
    ("dev", "cpu\n"), ("dév", "cpu"),
])
def test_freeze_rejects_names_that_are_not_plain_path_parts(tmp_path, system, partition):
    ranking = _ranking(SWEEP_ROWS)
    with pytest.raises(InputError, match=r"^(system|partition): .* must be at most 64 letters, digits"):
        frozen.freeze(ranking[0], system, partition, "a.out", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_grid_rule_flat_only_when_a_squarer_grid_lost(tmp_path):
    flat = _ranking([(tv(), 10000, 192, 1, 4, 5.0, 133.3, "PASSED"),
                     (tv(), 10000, 192, 2, 2, 5.5, 121.2, "PASSED")])
    path = frozen.freeze(flat[0], "dev", "flat", "x", tmp_path, ranking=flat)
    assert yaml.safe_load(path.read_text())["grid_rule"] == "flat"
    prime = _ranking([(tv(), 10000, 192, 1, 7, 5.0, 133.3, "PASSED"),
                      (tv(), 10000, 192, 2, 3, 5.5, 121.2, "PASSED")])
    path = frozen.freeze(prime[0], "dev", "prime", "x", tmp_path, ranking=prime)
    assert yaml.safe_load(path.read_text())["grid_rule"] == "near_square"
    assert yaml.safe_load(path.read_text())["grid"] == {"p": 1, "q": 7, "ranks": 7}


def test_idle_rank_winner_records_the_launched_ranks(tmp_path):
    ranking = _ranking([(tv(), 10000, 192, 2, 3, 5.0, 133.3, "PASSED"),
                        (tv(), 10000, 192, 1, 7, 5.5, 121.2, "PASSED")])
    path = frozen.freeze(ranking[0], "dev", "seven", "x", tmp_path, ranking=ranking)
    found = frozen.read_frozen(path, RULES)
    assert found.grid == (2, 3) and found.grid_ranks == 7
    assert found.grid_for(7)[:3] == (2, 3, 1)
    assert found.grid_for(12)[:3] == (3, 4, 0)
    with pytest.raises(InputError, match="^ranks: 5 is fewer"):
        frozen.freeze(ranking[0], "dev", "five", "x", tmp_path, ranks=5)


# --- frozen decks as rules ------------------------------------------------------------------------

def _frozen_rules(system, partition, decks):
    """The frozen deck's rules merged over decks/rules.yaml, None when none is frozen."""
    found = frozen.frozen_deck(system, partition, decks)
    return found.rules if found else None


def _rules_for(system, partition, decks):
    """What the plan decks with: the frozen deck's rules, else decks/rules.yaml's."""
    return _frozen_rules(system, partition, decks) or frozen.base_rules(decks)


def test_rules_for_merges_the_frozen_deck_over_rules_yaml(tmp_path):
    base = RULES
    assert _frozen_rules("dev", "cpu", tmp_path) is None
    assert _rules_for("dev", "cpu", tmp_path) == base
    ranking = _ranking(SWEEP_ROWS)
    frozen.freeze(ranking[0], "dev", "cpu", "a.out", tmp_path, ranking=ranking)
    rules = _rules_for("dev", "cpu", tmp_path)
    assert rules.nb == 256
    assert (rules.algorithm.bcast, rules.algorithm.depth) == ("longM", 0)
    assert rules.memory_fraction == base.memory_fraction == 0.8
    assert rules.lcm_rounding_max_memory_loss == base.lcm_rounding_max_memory_loss
    assert replace(rules.algorithm, bcast=base.algorithm.bcast, depth=base.algorithm.depth) == base.algorithm
    assert _frozen_rules("dev", "cpu", tmp_path) == rules
    # and a deck made from them carries the winner
    made = deck.make_deck(DeckRequest(1, 2, 16 * GiB), rules)
    dat = hpl_pdinfo(deck.hpl_dat(made))
    assert dat["nbs"] == [256] and dat["bcasts"] == [5] and dat["depths"] == [0]


def test_rules_for_partial_hand_written_deck(tmp_path):
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "gpu.yaml").write_text("nb: 128\nmemory_fraction: 0.6\nalgorithm:\n  bcast: 2ring\n")
    rules = _rules_for("dev", "gpu", tmp_path)
    assert (rules.nb, rules.memory_fraction, rules.algorithm.bcast) == (128, 0.6, "2ring")
    assert rules.algorithm.depth == RULES.algorithm.depth


def test_rules_for_uses_decks_dir_rules_yaml_when_present(tmp_path):
    (tmp_path / "rules.yaml").write_text("nb: 96\nmemory_fraction: 0.5\n")
    assert _rules_for("dev", "cpu", tmp_path) == Rules(nb=96, memory_fraction=0.5)


@pytest.mark.parametrize("text, key", [
    ("nb: 0\n", "nb: must be a positive whole number (>= 1), got 0"),
    ("nbb: 192\n", "unknown key 'nbb' (did you mean 'nb'?)"),
    ("algorithm:\n  bcast: 9ring\n", "algorithm.bcast: '9ring'"),
    ("algorithm:\n  lookahead: 1\n", "algorithm: unknown key 'lookahead'"),
    ("algorithm:\n  l1_transposed: 'no'\n", "algorithm.l1_transposed: must be true or false"),
    ("algorithm: [1]\n", "algorithm: must be a mapping"),
    ("grid: {p: 0, q: 2}\n", "grid.p: must be a positive whole number"),
    ("grid: {q: 2}\n", "grid: missing 'p'"),
    ("grid: {p: 2, q: 3, ranks: 5}\n", "grid.ranks: 5 is fewer"),
    ("grid_rule: diagonal\n", "grid_rule: 'diagonal' is not one of near_square, flat"),
    ("provenance: yesterday\n", "provenance: must be a mapping"),
    ("- nb: 192\n", "must be a mapping"),
    ("nb: [\n", "not valid YAML"),
])
def test_malformed_frozen_deck_names_file_and_key(tmp_path, text, key):
    (tmp_path / "dev").mkdir()
    path = tmp_path / "dev" / "cpu.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        _rules_for("dev", "cpu", tmp_path)
    assert str(caught.value).startswith(f"{path}: ") and key in str(caught.value)


# --- scaling N ------------------------------------------------------------------------------------

@pytest.mark.parametrize("n1, nodes, nb, expected", [
    (10000, 1, 192, 9984),    # 10000 // 192 = 52 -> 52 x 192
    (10000, 2, 192, 14016),   # 10000 x 1.41421 = 14142.1; 14142 // 192 = 73 -> 14016
    (10000, 3, 192, 17280),   # 17320.5; 17320 // 192 = 90 -> 17280
    (10000, 4, 192, 19968),   # 20000; 20000 // 192 = 104 -> 19968
    (9984, 4, 192, 19968),    # exactly 2 x 9984 = 19968 = 104 x 192: kept
    (41216, 16, 256, 164864), # 4 x 41216 = 164864 = 644 x 256
])
def test_weak_scaling_n(n1, nodes, nb, expected):
    n = deck.weak_scaling_n(n1, nodes, nb)
    assert n == expected and n % nb == 0 and n <= n1 * math.sqrt(nodes) < n + nb


def test_weak_scaling_n_errors():
    with pytest.raises(DeckError, match="^N: 100 x sqrt"):
        deck.weak_scaling_n(100, 1, 192)
    with pytest.raises(InputError, match="^nodes: "):
        deck.weak_scaling_n(10000, 0, 192)


# --- command line ---------------------------------------------------------------------------------

def tune_main(argv):
    """Like scalebench.cli.main once `tune` is wired in: exit status, errors as one line."""
    parser = _Parser(prog="scalebench")
    tune_cli.add_tune_arguments(parser.add_subparsers(dest="command", required=True, parser_class=_Parser))
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except ScalebenchError as err:
        import sys
        print(f"scalebench {args.command}: error: {err}", file=sys.stderr)
        return 2
    except SystemExit as stop:
        return stop.code


DECK_ARGS = ["tune", "deck", "--nodes", "1", "--ranks-per-node", "7", "--memory-per-node", "16GiB"]


def test_cli_tune_deck(capsys):
    assert tune_main([*DECK_ARGS, "--n", "20000", "--nbs", "128,192"]) == 0
    captured = capsys.readouterr()
    dat = hpl_pdinfo(captured.out)
    assert dat["ns"] == [20000] and dat["nbs"] == [128, 192]
    assert list(zip(dat["ps"], dat["qs"])) == [(2, 3)]
    assert "= 12 tests at N=20000 on 7 ranks" in captured.err


def test_cli_tune_deck_hpcc_and_options(capsys):
    assert tune_main([*DECK_ARGS, "--n", "20000", "--grids", "1x7", "--bcasts", "longM",
                      "--depths", "1", "--format", "hpcc"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 36 and hpl_pdinfo("\n".join(lines[:31]) + "\n")["bcasts"] == [5]


def test_cli_tune_deck_error_is_one_line(capsys):
    assert tune_main([*DECK_ARGS, "--nbs", ",".join(str(64 + i) for i in range(21))]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("scalebench tune: error: NBs: 21 values")


def test_cli_tune_rank_table_and_json(tmp_path, capsys):
    out = tmp_path / "HPL.out"
    out.write_text(hpl_output(SWEEP_ROWS))
    assert tune_main(["tune", "rank", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["#", "T/V", "N", "NB"]
    assert lines[1].split()[:4] == ["1", "WR05C2R4", "10000", "256"]
    assert lines[-1] == "6 PASSED row(s) ranked; left out: 1 failed residual check"
    assert tune_main(["tune", "rank", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["nb"] for c in data["candidates"]] == [256, 192, 128, 96, 384, 64]
    assert data["excluded"]["failed residual check"] == 1


def test_cli_tune_rank_hpcc(tmp_path, capsys):
    out = tmp_path / "hpccoutf.txt"
    out.write_text(hpcc_output(hpl_output(SWEEP_ROWS[:2])))
    assert tune_main(["tune", "rank", str(out), "--kind", "hpcc", "--json"]) == 0
    assert [c["nb"] for c in json.loads(capsys.readouterr().out)["candidates"]] == [256, 192]


def test_cli_tune_rank_without_passed_rows(tmp_path, capsys):
    out = tmp_path / "HPL.out"
    out.write_text(hpl_output([(tv(), 10000, 192, 1, 2, 6.5, 102.6, "FAILED")]))
    assert tune_main(["tune", "rank", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "no PASSED row to rank (left out: 1 failed residual check)" in err[0]
    assert tune_main(["tune", "rank", str(tmp_path / "missing.out")]) == 2
    assert "hpl output: cannot read " in capsys.readouterr().err


def test_cli_tune_freeze(tmp_path, capsys):
    out = tmp_path / "HPL.out"
    out.write_text(hpl_output(SWEEP_ROWS))
    decks = tmp_path / "decks"
    argv = ["tune", "freeze", str(out), "--system", "dev", "--partition", "cpu", "--decks-dir", str(decks)]
    assert tune_main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out == f"{decks / 'dev' / 'cpu.yaml'}\n"
    assert "frozen: WR05C2R4 N=10000 NB=256 1x2 106 Gflop/s" in captured.err
    assert yaml.safe_load((decks / "dev" / "cpu.yaml").read_text())["provenance"]["source"] == str(out)
    assert tune_main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "a frozen deck exists already" in err[0]
    assert tune_main([*argv, "--force"]) == 0
    capsys.readouterr()
    assert len(list((decks / "dev").glob("cpu.yaml.*Z"))) == 1
    assert tune_main(["tune", "freeze", str(out), "--system", "../x", "--partition", "cpu",
                      "--decks-dir", str(decks)]) == 2
    assert "system: '../x' must be" in capsys.readouterr().err
