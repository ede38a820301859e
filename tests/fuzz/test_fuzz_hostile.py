"""The classes of hostile input of issue 14, fuzzed through the library's readers, parsers, ingest and
deck writer: files that are not regular files, text that is not UTF-8, YAML and JSON nested deep or
full of aliases, outputs cut mid-line, HPL rows that cannot be, and huge integers. Each property: a
result that makes sense, or a named error with a short message, within the hard limit."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hostile
from fuzzing import FUZZ, HARD_LIMIT_S, hard_limit, run_one, seed_corpus
from scalebench import loaders, textfile
from scalebench.registry import lookup, quantity_of
from scalebench.errors import InputError, ParseError, ResultsError
from scalebench.hpl import tune
from scalebench.hpl.output import DEFAULT_THRESHOLD, parse_hpl
from scalebench.benchmarks import KINDS, parse_file, parse_text
from scalebench.reporting import records, store
from scalebench.validation import C_INT_MAX

CORPUS = seed_corpus()
MESSAGE_LIMIT = 1000  # an error quotes an excerpt of the input, never all of it


def named_or_result(call, named=(InputError, ParseError, ResultsError)):
    outcome = run_one(call, named)
    assert outcome.ok, f"{outcome.kind} after {outcome.seconds:.2f} s: {outcome.detail[:500]}"
    assert len(outcome.detail) <= MESSAGE_LIMIT, f"a {len(outcome.detail)}-character message"
    return outcome


# --- not a regular file -------------------------------------------------------------------------------

READERS = {
    "textfile.read_text": lambda path: textfile.read_text(path, "input"),
    "loaders.load_yaml": lambda path: loaders.load_yaml(path, "input"),
    "loaders.load_json": lambda path: loaders.load_json(path, "input"),
    "parse_file hpl": lambda path: parse_file("hpl", path),
}


@pytest.fixture(scope="module")
def special(tmp_path_factory):
    return hostile.special_paths(tmp_path_factory.mktemp("special"))


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("what", ["fifo", "symlink to a fifo", "directory", "empty name", "missing file",
                                  "/dev/zero", "/proc/self/mem"])
def test_what_is_not_a_regular_file_is_refused_by_name(special, reader, what):
    if what not in special:
        pytest.skip(f"{what} does not exist on this machine")
    outcome = named_or_result(lambda: READERS[reader](special[what]))
    assert outcome.kind == "named error"


# --- not UTF-8 ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("encoding", sorted(hostile.ENCODINGS))
@settings(FUZZ, max_examples=20)
@given(text=st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7e), min_size=40, max_size=400))
def test_wide_or_legacy_encodings_are_named_not_misread(tmp_path_factory, encoding, text):
    text = "criteria: []\n# " + text.replace("\n", " ") + " caf\u00e9\n"
    path = tmp_path_factory.mktemp("enc") / "file.yaml"
    path.write_bytes(hostile.ENCODINGS[encoding](text))
    outcome = named_or_result(lambda: loaders.load_yaml(path, "thresholds"))
    assert outcome.kind == "named error" and any(w in outcome.detail for w in hostile.ENCODING_WORDS)
    if encoding != "Latin-1":  # benchmark outputs: wide encodings named too (Latin-1 read leniently)
        outcome = named_or_result(lambda: parse_file("hpl", path))
        assert any(w in outcome.detail for w in hostile.ENCODING_WORDS), outcome.detail


# --- nesting and aliases --------------------------------------------------------------------------------

def _expanded_size(value, limit):
    """Nodes of `value` with shared parts counted every time, stopping past `limit`."""
    count, stack = 0, [value]
    while stack and count <= limit:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


@settings(FUZZ, max_examples=60)
@given(depth=st.integers(0, 3000), flow=st.booleans(), levels=st.integers(0, 12), width=st.integers(1, 12))
def test_yaml_depth_and_alias_expansion_are_bounded(depth, flow, levels, width):
    nested = "[" * depth + "]" * depth if flow else "".join(f"{'  ' * i}- \n" for i in range(depth)) or "[]"
    text = ("\n".join(hostile.alias_levels(levels, width)) + "\n" if levels else "") + "x: " + (
        nested if flow else "\n" + nested)
    outcome = named_or_result(lambda: loaders.parse_yaml(text, "input"))
    if outcome.kind == "result":
        data = loaders.parse_yaml(text, "input")
        assert _expanded_size(data, loaders.YAML_MAX_NODES + 10) <= loaders.YAML_MAX_NODES + 2


@settings(FUZZ, max_examples=40)
@given(depth=st.integers(0, 250_000), nan=st.booleans())
def test_json_depth_is_bounded(depth, nan):
    data = ("[" * depth + ("NaN" if nan else "1") + "]" * depth).encode()
    named_or_result(lambda: loaders.parse_json(data, "report"))


# --- cut mid-line ----------------------------------------------------------------------------------------

def _without_cut_note(value):
    if isinstance(value, dict):
        return {k: _without_cut_note(v) for k, v in value.items() if k != "warnings"}
    if isinstance(value, list):
        return [_without_cut_note(v) for v in value if not (isinstance(v, str) and "has no line end" in v)]
    return value


@pytest.mark.parametrize("kind", sorted(KINDS))
@settings(FUZZ, max_examples=30)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_a_line_cut_while_written_is_dropped_and_named(kind, data, seed):
    text = data.draw(st.sampled_from(CORPUS[kind]), label="seed output")
    cut, head = hostile.cut_mid_line(text, random.Random(seed))
    named_or_result(lambda: parse_text(kind, cut), (ParseError,))
    try:
        wanted = parse_text(kind, head)
    except ParseError:
        with pytest.raises(ParseError):
            parse_text(kind, cut)
        return
    got = parse_text(kind, cut)
    if cut != head:
        assert "no line end" in json.dumps(got)
    assert _without_cut_note(got) == _without_cut_note(wanted)


# --- HPL rows that cannot be ------------------------------------------------------------------------------

TOKENS = ("0", "-0", "1", "-1", "nan", "-nan", "inf", "-inf", "1e300", "1.0000e+300", "-4.261", "99999999999", "0.00",
          "1.0e+03", "16.0", "16.000001", "-1.0e-03", "1e308", "1.0000e+00")


@st.composite
def hpl_rows(draw):
    n = draw(st.integers(1, 60000))
    seconds = draw(st.floats(0.01, 5000))
    row = [n, draw(st.integers(1, 512)), draw(st.integers(1, 64)), draw(st.integers(1, 64)), f"{seconds:.2f}",
           f"{hostile.hpl_gflops(n, seconds):.4e}", f"{draw(st.floats(0, 20)):.6e}",
           draw(st.sampled_from(("PASSED", "PASSED", "FAILED")))]
    for field in draw(st.lists(st.integers(0, 6), max_size=3)):
        row[field] = draw(st.sampled_from(TOKENS))
    return tuple(row)


def _half_step(token):
    """Half the last digit a token prints: the true time of '6.50' is within 0.005 s of it."""
    mantissa, _, exponent = str(token).lower().partition("e")
    return 0.5 * 10.0 ** (int(exponent or 0) - len(mantissa.partition(".")[2]))


TIME, FLOP_RATE = quantity_of("s"), quantity_of("Gflop/s")


def _physical(row, threshold, time_token):
    """What a row must be to count, from HPL's format and scalebench/data/quantities.yaml: fields within
    C ints, a finite time and rate within the bounds (the rate also per process), residuals at or below
    the threshold, and the Gflops HPL computes from N and a time within half a printed digit of Time."""
    values = (row.residuals if row.residuals is not None else (row.residual,))
    if not (all(1 <= v <= C_INT_MAX for v in (row.n, row.nb, row.p, row.q))
            and isinstance(row.time_s, float) and math.isfinite(row.time_s) and 0 <= row.time_s <= TIME.maximum
            and isinstance(row.gflops, float) and math.isfinite(row.gflops)
            and 0 < row.gflops <= min(FLOP_RATE.maximum, FLOP_RATE.per_process_max * row.p * row.q)
            and all(isinstance(v, float) and 0 <= v <= threshold for v in values)):
        return False
    half = _half_step(time_token)
    flops = (2 / 3 * row.n**3 + 1.5 * row.n**2) / 1e9
    highest = flops / (row.time_s - half) * 1.02 if row.time_s > half else math.inf
    return flops / (row.time_s + half) * 0.98 <= row.gflops <= highest


def _printed_rows(rows):
    """The generated rows HPL's row format reads (N, NB, P, Q digits only), in order."""
    return [row for row in rows if all(str(v).isdigit() and len(str(v)) <= 18 for v in row[:4])]


@settings(FUZZ, max_examples=150)
@given(rows=st.lists(hpl_rows(), min_size=1, max_size=6), threshold=st.sampled_from(("16.0", "1.0", "100.0")),
       claimed=st.integers(0, 8))
def test_only_rows_that_make_physical_sense_pass_and_rank(rows, threshold, claimed):
    text = hostile.hpl_text(rows, threshold, passed=claimed)
    try:
        with hard_limit(HARD_LIMIT_S):
            out = parse_hpl(text)
    except ParseError:  # no field of any row is an HPL row's (N = '-0'): no row, named
        return
    limit = float(threshold) if out.threshold is not None else DEFAULT_THRESHOLD
    printed = _printed_rows(rows)
    assert len(printed) == len(out.rows)
    tokens = {id(r): p[4] for r, p in zip(out.rows, printed)}
    passed = [r for r in out.rows if r.status == "PASSED"]
    assert all(_physical(r, limit, tokens[id(r)]) for r in passed), passed
    failed_here = [r for r in out.rows if r.reason is not None]  # HPL said PASSED, scalebench FAILED
    assert all(r.status == "FAILED" and not _physical(r, limit, tokens[id(r)]) for r in failed_here), failed_here
    assert out.rmax_gflops == (max(r.gflops for r in passed) if passed else None)
    if claimed != len(passed):
        assert out.problems(), "a summary that disagrees with the rows is a problem"
    json.dumps(out.to_dict(), allow_nan=False)
    ranked = tune.rank(out.rows)
    assert len(ranked) == len(passed) and all(c.gflops > 0 and math.isfinite(c.gflops) for c in ranked)


# --- impossible values and huge integers at ingest ---------------------------------------------------------

HOSTILE_VALUES = (0.0, -0.0, -1.0, 1e300, -1e300, 1e-320, float("nan"), float("inf"), 10**400, -10**400, 2**64,
                  True, "12", None, [1], 45.7, 900.0, 64.0, 71.5, 100.0, 100.0000001)
HOSTILE_COUNTS = (0, -1, 1, 2, 4, 2**31 - 1, 2**31, 10**400, 1e30, 2.5, 2.0, True, "4", None)


@settings(FUZZ, max_examples=60)
@given(cases=st.lists(st.fixed_dictionaries({
    "rmax": st.sampled_from(HOSTILE_VALUES), "rpeak_gflops": st.sampled_from(HOSTILE_VALUES),
    "efficiency": st.sampled_from(HOSTILE_VALUES), "num_nodes": st.sampled_from(HOSTILE_COUNTS),
    "num_tasks": st.sampled_from(HOSTILE_COUNTS)}), min_size=1, max_size=5))
def test_ingest_keeps_only_values_that_can_be(tmp_path_factory, cases):
    import reframe_reports as rr

    root = tmp_path_factory.mktemp("results")
    testcases = []
    for i, c in enumerate(cases):
        case = rr.testcase("HPLCheck", {"rmax": (c["rmax"], "Gflop/s"), "rpeak_gflops": (c["rpeak_gflops"], "Gflop/s"),
                                        "efficiency": (c["efficiency"], "%")}, params={"scale": f"{i}_nodes"})
        case.update(num_nodes=c["num_nodes"], num_tasks=c["num_tasks"])
        testcases.append(case)
    run = root / "runs" / "r"
    run.mkdir(parents=True)
    (run / "report.json").write_text(json.dumps(rr.report(testcases)))
    outcome = named_or_result(lambda: store.load([root], index=False), (ResultsError,))
    if outcome.kind != "result":
        return
    loaded = store.load([root], index=False)
    warnings, rows = loaded.warnings, loaded.table.with_cases().to_dicts()
    for r in rows:
        if not r["usable"]:
            continue
        low, included, high, _ = records.bounds(lookup(r["benchmark"]), r["figure"], r["unit"])
        value = r["value"]
        assert (value >= low if included else value > low) and value <= high, r
        assert r["num_nodes"] is None or 1 <= r["num_nodes"] <= C_INT_MAX
        assert r["num_tasks"] is None or 1 <= r["num_tasks"] <= C_INT_MAX
    kept = {r["name"] for r in rows}
    assert len(kept) + sum(w.startswith("skipped ") for w in warnings) == len(testcases)
