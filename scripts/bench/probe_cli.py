"""Probe of every `scalebench` subcommand with the hostile inputs of tests/fuzz/hostile.py, as a new user
would run them, through scalebench.cli.main in this process (each under a hard time limit).

Run: .venv/bin/python scripts/bench/probe_cli.py [--seed 14] [--cuts 3] [--keep DIR] [-v]

Each probe is an argument list, the exit it must give (0 ok, 1 FAILED, 2 bad input) and what its
output must or must not say. It counts as
  traceback     the command raised, or exited 3 (internal error);
  hang          no answer within the hard limit;
  wrong answer  any other exit than the one expected, an error that is not one line, or output that
                breaks the probe's check (an impossible row counted, a value beyond a C int written,
                a raw <script> in report.md, an input file changed ...).
Prints the probes per class and subcommand and the three totals; exits 1 if any is not 0.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "tests" / "fuzz"), str(REPO / "tests")]
import hostile  # noqa: E402
import reframe_reports as rr  # noqa: E402
from fuzzing import HARD_LIMIT_S, Hang, hard_limit  # noqa: E402

from scalebench.cli import main  # noqa: E402
from scalebench.parse import KINDS, parse_text  # noqa: E402
from scalebench.validation import C_INT_MAX  # noqa: E402

DATA = REPO / "tests" / "data"
REAL_REPORT = DATA / "reframe" / "hpl_local_run_report.json"
EXIT = {"ok": 0, "fail": 1, "error": 2}
MAX_ERROR_CHARS = 1000  # an error quotes an excerpt of the input, never all of it


@dataclass
class Result:
    status: int
    stdout: str
    stderr: str
    seconds: float


@dataclass
class Probe:
    cls: str  # the class, 1-8
    name: str
    argv: List[str]
    expect: str | tuple[str, ...]  # ok | fail | error, or several
    check: Optional[Callable[[Result], str]] = None  # '' when the output is right
    words: tuple[str, ...] = ()  # an error must say one of these


@dataclass
class Tally:
    probes: Counter = field(default_factory=Counter)
    tracebacks: List[str] = field(default_factory=list)
    hangs: List[str] = field(default_factory=list)
    wrong: List[str] = field(default_factory=list)


def run(argv: List[str]) -> Result:
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            with hard_limit(HARD_LIMIT_S):
                status = main(argv)
        except SystemExit as stop:
            status = stop.code if isinstance(stop.code, int) else 2
    return Result(status, out.getvalue(), err.getvalue(), time.perf_counter() - start)


def judge(probe: Probe, result: Result) -> str:
    """'' when the result is what the probe expects, else what is wrong."""
    expected = (probe.expect,) if isinstance(probe.expect, str) else probe.expect
    if result.status not in [EXIT[e] for e in expected]:
        return f"exit {result.status}, expected {'/'.join(expected)}; stderr {result.stderr[-300:]!r}"
    if result.status == 2:
        lines = result.stderr.splitlines()
        if len(lines) != 1 or not lines[0].startswith("scalebench ") or len(lines[0]) > MAX_ERROR_CHARS:
            return f"the error is not one short line: {len(lines)} line(s), {len(result.stderr)} chars"
        if probe.words and not any(w in lines[0] for w in probe.words):
            return f"the error names none of {probe.words}: {lines[0][:200]!r}"
    return probe.check(result) if probe.check else ""


# --- checks ----------------------------------------------------------------------------------------

def json_out(result: Result) -> Any:
    return json.loads(result.stdout)


def _strict_json(result: Result) -> str:
    try:
        json.loads(result.stdout, parse_constant=lambda word: (_ for _ in ()).throw(ValueError(word)))
    except ValueError as err:
        return f"stdout is not strict JSON: {err}"
    return ""


def _no_warning_noise(result: Result) -> str:
    noise = [w for w in ("Warning", "Glyph", "Traceback") if w in result.stderr]
    return f"stderr carries {noise}" if noise else ""


def _ns_within_c_int(result: Result) -> str:
    for line in result.stdout.splitlines():
        if line.rstrip().endswith(" Ns") or line.rstrip().endswith("\tNs"):
            values = [int(v) for v in line.split()[:-1] if v.isdigit()]
            if any(v > C_INT_MAX for v in values):
                return f"Ns {values} beyond a C int"
    if result.stdout.lstrip().startswith("{"):
        n = json_out(result).get("n")
        if isinstance(n, int) and n > C_INT_MAX:
            return f"N {n} beyond a C int"
    return ""


# --- the probes --------------------------------------------------------------------------------------

class Builder:
    def __init__(self, root: Path, seed: int, cuts: int) -> None:
        self.root, self.rng, self.cuts = root, random.Random(seed), cuts
        self.inputs = root / "inputs"
        self.inputs.mkdir(parents=True)
        self.probes: List[Probe] = []
        self.n = 0

    def file(self, name: str, content: str | bytes) -> str:
        self.n += 1
        path = self.inputs / f"{self.n:04d}-{name}"
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return str(path)

    def out(self) -> str:
        self.n += 1
        return str(self.root / "out" / f"{self.n:04d}")

    def add(self, *args: Any, **kwargs: Any) -> None:
        self.probes.append(Probe(*args, **kwargs))

    def results(self, cases: List[Dict[str, Any]], name: str = "run", good: bool = True) -> str:
        """A results directory: a good HPL run at 1, 2, 4 nodes (Rmax 900) when `good`, then `cases`."""
        self.n += 1
        root = self.inputs / f"{self.n:04d}-results"
        if good:
            rr.write_run(root, "good", [rr.testcase("HPLCheck", {"rmax": (900.0, "Gflop/s"), "rpeak_gflops": (
                1000.0, "Gflop/s"), "efficiency": (90.0, "%")}, params={"scale": f"{n}_nodes"}, num_nodes=n,
                num_tasks=2 * n) for n in (1, 2, 4)])
        if cases:
            rr.write_run(root, name, cases)
        return str(root)


def class1_not_regular(b: Builder) -> None:
    paths = hostile.special_paths(b.root / "special")
    results = b.results([])
    words = ("not a regular file", "a directory", "no file or directory name", "cannot read", "does not exist",
             "is not a file")
    for what, path in paths.items():
        for kind in sorted(KINDS):
            b.add("1", f"parse {kind}: {what}", ["parse", kind, path], "error", words=words)
        b.add("1", f"tune rank: {what}", ["tune", "rank", path], "error", words=words)
        b.add("1", f"tune freeze: {what}", ["tune", "freeze", path, "--system", "s", "--partition", "p",
                                            "--decks-dir", b.out()], "error", words=words)
        b.add("1", f"accept --thresholds: {what}", ["accept", results, "--thresholds", path], "error", words=words)
        b.add("1", f"report --thresholds: {what}", ["report", results, "--thresholds", path, "--out", b.out()],
              "error", words=words)
        b.add("1", f"plan: {what}", ["plan", path], "error", words=words)
        if what != "directory":
            b.add("1", f"report: {what} as results", ["report", path, "--out", b.out()], "error", words=words)
            b.add("1", f"compare: {what} as results", ["compare", path], "error", words=words)
        # a run's report.json that is not a regular file: skipped, named
        run_dir = Path(b.results([], good=False)) / "runs" / "r"
        run_dir.mkdir(parents=True)
        if what not in ("empty name", "missing file"):
            (run_dir / "report.json").symlink_to(path)
            b.add("1", f"report: a run's report.json is a {what}", ["report", str(run_dir.parents[1]), "--out",
                                                                    b.out()], "error", words=("no usable",))


def class1_other_commands(b: Builder) -> None:
    """prepare and run, which take directories: what does not exist or is a file is named."""
    paths = hostile.special_paths(b.root / "special")
    a_file = b.file("a-file", "x\n")
    for what, path in paths.items():
        if what == "empty name":
            continue
        b.add("1", f"prepare openfoam --tutorials {what}",
              ["prepare", "openfoam", "--case", "cavity", "--cells", "1000", "--steps", "10", "--ranks", "2",
               "--scaling", "strong", "--tutorials", path, "--dir", b.out()], "error")
    for value in ("", a_file + "/under-a-file"):
        b.add("1", f"run --results {value[-20:]!r}", ["run", "--results", value], "error")
    for value in hostile.HUGE_INTS:
        for flag in ("--cells", "--steps", "--ranks"):
            argv = {"--cells": "1000", "--steps": "10", "--ranks": "2"} | {flag: value}
            b.add("6", f"prepare openfoam {flag} {value[:12]}",
                  ["prepare", "openfoam", "--case", "cavity", "--scaling", "weak", "--tutorials", str(b.inputs),
                   "--dir", b.out(), *[x for k, v in argv.items() for x in (k, v)]], "error")


def class2_random_bytes(b: Builder) -> None:
    """Random bytes (and random text) in every file a command reads: a result or a named error."""
    results = b.results([])
    for i in range(12):
        data = bytes(b.rng.randrange(256) for _ in range(b.rng.randint(0, 3000)))
        path = b.file(f"random-{i}", data)
        for kind in sorted(KINDS):
            b.add("2", f"parse {kind}: random bytes {i}", ["parse", kind, path], ("ok", "error"))
        b.add("2", f"tune rank: random bytes {i}", ["tune", "rank", path], "error")
        b.add("2", f"accept --thresholds: random bytes {i}", ["accept", results, "--thresholds", path], "error")
        b.add("2", f"plan: random bytes {i}", ["plan", path], "error")
        run = Path(b.results([], good=False)) / "runs" / "r"
        run.mkdir(parents=True)
        (run / "report.json").write_bytes(data)
        b.add("2", f"report: random bytes {i} as a run report", ["report", str(run.parents[1]), "--out", b.out()],
              "error", words=("no usable",))
    for depth in (63, 64, 65, 1000, 1023, 1024, 1025, 5000):
        run = Path(b.results([], good=False)) / "runs" / "r"
        run.mkdir(parents=True)
        real = json.loads(REAL_REPORT.read_text())
        real["runs"][0]["testcases"][0]["check_params"] = "@nest@"
        real["runs"][0]["testcases"][6]["display_name"] = "@nest@"
        text = json.dumps(real).replace('"@nest@"', hostile.nested_json(depth))
        (run / "report.json").write_text(text if depth < 1024 else hostile.nested_json(depth))
        b.add("2", f"report: run report nested {depth} deep", ["report", str(run.parents[1]), "--out", b.out()],
              ("ok", "error"))
        path = b.file("t.yaml", hostile.nested_yaml(depth))
        b.add("2", f"accept: thresholds nested {depth} deep", ["accept", results, "--thresholds", path], "error")


def class2_structures(b: Builder) -> None:
    hpl = (DATA / "hpl" / "mnt_reform_hpl23.txt").read_text()
    thresholds = "criteria:\n  - {benchmark: HPLCheck, figure: rmax, min: 1}\n"
    results = b.results([])
    site = (REPO / "site_configs" / "sites" / "local.yaml").read_text()
    spack_env = "spack:\n  include:\n  - ../sites/$SCALEBENCH_SPACK_SITE\n  specs: [hpl]\n"
    for encoding, encode in hostile.ENCODINGS.items():
        expect = ("ok", "error") if encoding == "Latin-1" else "error"
        words = hostile.ENCODING_WORDS
        b.add("2", f"parse hpl: {encoding}", ["parse", "hpl", b.file("hpl.txt", encode(hpl))], expect,
              words=words + ("no HPL result row",))
        b.add("2", f"tune rank: {encoding}", ["tune", "rank", b.file("hpl.txt", encode(hpl))], expect,
              words=words + ("no HPL result row",))
        b.add("2", f"accept --thresholds: {encoding}",
              ["accept", results, "--thresholds", b.file("t.yaml", encode(thresholds))], "error", words=words)
        b.add("2", f"plan: {encoding} site file", ["plan", b.file("site.yaml", encode(site))], "error", words=words)
        env = b.root / f"spack-{b.n}" / "envs" / "e"
        (env.parent / "sites" / "x").mkdir(parents=True)
        env.mkdir()
        (env / "spack.yaml").write_bytes(encode(spack_env))
        b.add("2", f"spack validate: {encoding}", ["spack", "validate", str(env)], "fail",
              check=lambda r: "" if any(w in r.stdout for w in hostile.ENCODING_WORDS) else "encoding not named")
        report = encode(REAL_REPORT.read_text())
        run = Path(b.results([], good=False)) / "runs" / "r"
        run.mkdir(parents=True)
        (run / "report.json").write_bytes(report)
        b.add("2", f"report: {encoding} run report", ["report", str(run.parents[1]), "--out", b.out()], "error",
              words=("no usable",))
    # nesting and aliases
    short = lambda r: "" if len(r.stderr) <= MAX_ERROR_CHARS else f"{len(r.stderr)} chars on stderr"  # noqa: E731
    for name, text in (("alias bomb in params", hostile.alias_bomb_in_params()),
                       ("aliases 8 deep in at", hostile.aliases_in_at()),
                       ("YAML nested 5000 deep", hostile.nested_yaml(5000)),
                       ("JSON-style nesting 200000 deep", hostile.nested_yaml(200000)),
                       ("optional: 'no'", "criteria:\n  - {benchmark: HPLCheck, min: 1, optional: 'no'}\n"),
                       ("min a 400-digit integer", f"criteria:\n  - {{benchmark: HPLCheck, min: {'9' * 400}}}\n"),
                       ("min 1e999%", "criteria:\n  - {benchmark: HPLCheck, min: 1e999%}\n"),
                       ("at a huge count", f"criteria:\n  - {{benchmark: HPLCheck, min: 1, at: {'9' * 40}}}\n")):
        path = b.file("t.yaml", text)
        b.add("2", f"accept: thresholds with {name}", ["accept", results, "--thresholds", path], "error", check=short)
        b.add("2", f"report: thresholds with {name}", ["report", results, "--thresholds", path, "--out", b.out()],
              "error", check=short)
    for name, text in (("site file nested 5000 deep", hostile.nested_yaml(5000, "system")),
                       ("site file alias bomb", "\n".join(hostile.alias_levels()) + "\nsystem: x\n")):
        b.add("2", f"plan: {name}", ["plan", b.file("site.yaml", text)], "error", check=short)
    real = json.loads(REAL_REPORT.read_text())
    for name, data in (("nested 200000 deep", None), ("session_info a list", dict(real, session_info=[1])),
                       ("runs a mapping", dict(real, runs={"a": 1})), ("testcases strings", dict(
                           real, runs=[{"testcases": ["x"]}])), ("a JSON string", "report")):
        run = Path(b.results([], good=False)) / "runs" / "r"
        run.mkdir(parents=True)
        (run / "report.json").write_text(hostile.nested_json(200000) if data is None else json.dumps(data))
        b.add("2", f"report: run report {name}", ["report", str(run.parents[1]), "--out", b.out()], "error",
              words=("no usable",))
        b.add("2", f"accept: run report {name}", ["accept", str(run.parents[1])], "error", words=("no usable",))


def class2_long_arguments(b: Builder) -> None:
    """A 100 000-character argument or key: the error quotes an excerpt (judge: one line < 1000)."""
    long = "x" * 100_000
    results = b.results([])
    b.add("2", "parse: a 100 kB kind", ["parse", long, str(REAL_REPORT)], "error")
    b.add("2", "deck: a 100 kB --nodes", ["deck", "--nodes", long, "--ranks-per-node", "2", "--memory-per-node",
                                          "1GiB"], "error")
    b.add("2", "deck: a 100 kB --memory-per-node", ["deck", "--nodes", "1", "--ranks-per-node", "2",
                                                   "--memory-per-node", long], "error")
    b.add("2", "compare: a 100 kB --baseline", ["compare", results, "--baseline", long], "error")
    b.add("2", "report: a 100 kB --format", ["report", results, "--format", long, "--out", b.out()], "error")
    b.add("2", "plan: a 100 kB -S", ["plan", "-S", f"nb={long}"], "error")
    b.add("2", "tune deck: a 100 kB --bcasts", ["tune", "deck", "--nodes", "1", "--ranks-per-node", "2",
                                               "--memory-per-node", "16GiB", "--bcasts", long], "error")
    for key in ("benchmark", "figure", "metric", "at", "system"):
        text = f"criteria:\n  - {{benchmark: HPLCheck, min: 1, {key}: {long}}}\n"
        expect = "fail" if key == "system" else "error"  # a pattern that matches no system: NO DATA
        b.add("2", f"accept: a 100 kB {key}", ["accept", results, "--thresholds", b.file("t.yaml", text)], expect)
    b.add("2", "accept: a 100 kB key", ["accept", results, "--thresholds", b.file(
        "t.yaml", f"criteria:\n  - {{benchmark: HPLCheck, min: 1, {long}: 1}}\n")], "error")


def class3_spack(b: Builder) -> None:
    definition = "  - d: [hpl, lammps, openfoam, hpl, lammps, openfoam, hpl, lammps, openfoam]\n"
    def env(text: str) -> str:
        root = b.root / f"spack-{b.n}-{len(b.probes)}"
        (root / "sites" / "x").mkdir(parents=True)
        (root / "e").mkdir()
        (root / "e" / "spack.yaml").write_text(text)
        (root / "outside.yaml").write_text("packages:\n  secretpkg: {}\n")
        return str(root / "e")
    for times in (2, 6, 10, 20, 60):
        text = ("spack:\n  include:\n  - ../sites/$SCALEBENCH_SPACK_SITE\n  definitions:\n" + definition
                + "  specs:\n  - matrix:\n" + "    - [$d]\n" * times)
        b.add("3", f"spack validate: a 9-spec definition crossed {times} times", ["spack", "validate", env(text)],
              ("ok", "fail"))
    for include in ("/etc/passwd", "../../../../../../etc/shadow", "/etc", "/dev/zero", "../../outside.yaml"):
        text = f"spack:\n  include:\n  - {include}\n  - ../sites/$SCALEBENCH_SPACK_SITE\n  specs: [hpl]\n"
        b.add("3", f"spack validate: include {include}", ["spack", "validate", env(text)], "fail",
              check=lambda r: "outside" if "root:" in r.stdout + r.stderr or "secretpkg" in r.stdout else "")
    b.add("3", "spack validate: YAML nested 5000 deep", ["spack", "validate", env(hostile.nested_yaml(5000, "spack"))],
          "fail")
    b.add("3", "spack validate: alias bomb", ["spack", "validate", env(
        "spack:\n  x:\n" + "\n".join(hostile.alias_levels(indent="    ")) + "\n  specs: [hpl]\n")], "fail")


def class4_rows_and_cuts(b: Builder) -> None:
    def no_rmax(r: Result) -> str:
        data = json_out(r)
        bad = [row for row in data["rows"] if row["status"] == "PASSED"]
        return f"rmax {data['rmax_gflops']} from {bad}" if data["rmax_gflops"] is not None or bad else ""

    def good_rmax(r: Result) -> str:
        data = json_out(r)
        return "" if data["rmax_gflops"] == 102.56 else f"rmax {data['rmax_gflops']}, the good row has 102.56"

    def nothing_frozen(decks: str) -> Callable[[Result], str]:
        return lambda r: f"a deck was frozen: {list(Path(decks).rglob('*.yaml'))}" if Path(decks).exists() and list(
            Path(decks).rglob("*.yaml")) else ""

    def frozen_good(decks: str) -> Callable[[Result], str]:
        def check(r: Result) -> str:
            found = list(Path(decks).rglob("*.yaml"))
            text = found[0].read_text() if found else ""
            winner = text.split("winner:")[-1][:400]
            return "" if "gflops: 102.56" in winner else "the frozen winner is not the good row"
        return check

    for label, index, token in hostile.IMPOSSIBLE_FIELDS:
        alone = b.file("hpl.out", hostile.hpl_text([hostile.impossible_row(index, token)]))
        mixed = b.file("hpl.out", hostile.hpl_text([hostile.GOOD_ROW, hostile.impossible_row(index, token)]))
        b.add("4", f"parse hpl: {label}", ["parse", "hpl", alone], "ok", check=no_rmax)
        b.add("4", f"parse hpl: good row and {label}", ["parse", "hpl", mixed], "ok", check=good_rmax)
        b.add("4", f"tune rank: {label}", ["tune", "rank", alone], "error", words=("no PASSED row",))
        decks = b.out()
        b.add("4", f"tune freeze: {label}", ["tune", "freeze", alone, "--system", "s", "--partition", "p",
                                            "--decks-dir", decks], "error", check=nothing_frozen(decks))
        decks = b.out()
        b.add("4", f"tune freeze: good row and {label}", ["tune", "freeze", mixed, "--system", "s", "--partition",
                                                         "p", "--decks-dir", decks], "ok", check=frozen_good(decks))
    claimed = b.file("hpl.out", hostile.hpl_text([hostile.GOOD_ROW], passed=5))
    b.add("4", "parse hpl: 5 tests passed against 1 row", ["parse", "hpl", claimed], "ok",
          check=lambda r: "" if "counts 5 tests completed but 1 result rows" in r.stderr else "no warning")
    # outputs cut in the middle of a line
    for kind in sorted(KINDS):
        for path in sorted((DATA / kind).glob("*")):
            if path.name.endswith((".source.txt", ".expected.json")) or not path.is_file():
                continue
            text = path.read_text(errors="replace")
            for _ in range(b.cuts):
                cut, head = hostile.cut_mid_line(text, b.rng)
                if cut == head:
                    continue
                b.add("4", f"parse {kind}: {path.name} cut mid-line", ["parse", kind, b.file(path.name, cut)],
                      ("ok", "error"), check=_same_as_head(kind, head))


def _without_cut_note(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cut_note(v) for k, v in value.items() if k != "warnings"}
    if isinstance(value, list):
        return [_without_cut_note(v) for v in value if not (isinstance(v, str) and "has no line end" in v)]
    return value


def _same_as_head(kind: str, head: str) -> Callable[[Result], str]:
    """A cut output reads as the lines before the cut one, and says a line was dropped."""
    def check(r: Result) -> str:
        try:
            wanted = parse_text(kind, head)
        except Exception:  # noqa: BLE001 - no result in the head: the cut output has none either
            return "" if r.status == 2 else "a result from the cut line alone"
        if r.status != 0:
            return f"no result, but the lines before the cut give one: {r.stderr[:200]!r}"
        got = json_out(r)
        if "no line end" not in r.stderr + json.dumps(got):
            return "the dropped line is not mentioned"
        return "" if _without_cut_note(got) == _without_cut_note(wanted) else "the cut line was read as data"
    return check


def class5_reports(b: Builder) -> None:
    thresholds = b.file("t.yaml", "criteria:\n  - {benchmark: HPLCheck, figure: rmax, min: 800}\n"
                                  "  - {benchmark: HPLCheck, figure: efficiency, min: 50%}\n")
    def clean(path: str) -> Callable[[Result], str]:
        def check(r: Result) -> str:
            if "warning: skipped" not in r.stderr or "runs/bad/report.json" not in r.stderr:
                return "the broken run is not named in a warning"
            if "900.00" not in r.stdout or any(w in r.stdout for w in ("-64", "1e+300", "-45.74", "-50.0%")):
                return f"an impossible value in the table: {r.stdout[:400]!r}"
            return ""
        return check
    for label, figures in hostile.IMPOSSIBLE_FIGURES:
        results = b.results([rr.testcase("HPLCheck", figures, params={"scale": "1_nodes"}, num_nodes=1, num_tasks=2)],
                            name="bad")
        b.add("5", f"report: {label}", ["report", results, "--out", b.out(), "--format", "md,csv"], "ok",
              check=clean(results))
        b.add("5", f"accept: {label}", ["accept", results, "--thresholds", thresholds], "ok")
    for label, counts in hostile.IMPOSSIBLE_COUNTS:
        case = rr.testcase("HPLCheck", {"rmax": (100.0, "Gflop/s")}, params={"scale": "1_nodes"})
        case.update(counts)
        results = b.results([case], name="bad")
        b.add("5", f"report: {label}", ["report", results, "--out", b.out(), "--format", "md"], "ok",
              check=clean(results))
        b.add("5", f"accept: {label}", ["accept", results, "--thresholds", thresholds], "ok")
    for label, case in (
            ("LAMMPS negative rate", rr.lammps("tcp", {1: -100.0, 2: 190.0})),
            ("LAMMPS comm share 150 %", _with_figure(rr.lammps("tcp", {1: 100.0, 2: 190.0}), "comm_share", 150.0)),
            ("OSU negative latency", rr.osu("tcp", {1: 1.0}, {1: -1.5})),
            ("OSU NaN bandwidth", rr.osu("tcp", {1: float("nan")}, {1: 1.5})),
            ("OpenFOAM 1e308 s per step", rr.openfoam("tcp", {1: 1e308, 2: 1.0})),
            ("a 400-digit num_tasks", [dict(rr.lammps("tcp", {1: 100.0})[0], num_tasks=10**400)])):
        results = b.results(case, name="bad")
        b.add("5", f"report: {label}", ["report", results, "--out", b.out(), "--format", "md"], "ok")
        b.add("5", f"compare: {label}", ["compare", results], ("ok", "error"))
    no_data = b.file("t.yaml", "criteria:\n  - {benchmark: HPLCheck, min: 1, at: 8}\n")
    b.add("5", "accept: no data at 8 nodes", ["accept", b.results([]), "--thresholds", no_data], "fail")
    optional = b.file("t.yaml", "criteria:\n  - {benchmark: HPLCheck, min: 1, at: 8, optional: true}\n")
    b.add("5", "accept: no data, optional", ["accept", b.results([]), "--thresholds", optional], "ok")


def _with_figure(cases: List[Dict[str, Any]], figure: str, value: Any) -> List[Dict[str, Any]]:
    for case in cases:
        for key, entry in case["perfvalues"].items():
            if key.endswith(f":{figure}"):
                entry[0] = value
    return cases


def class6_numbers(b: Builder) -> None:
    for nodes in ("1000000", "100000000", "2147483647"):
        for memory in ("64TiB", "1024TiB"):
            argv = ["--nodes", nodes, "--ranks-per-node", "2", "--memory-per-node", memory]
            b.add("6", f"deck {nodes} nodes x {memory}", ["deck", *argv], ("ok", "error"), check=_ns_within_c_int)
            b.add("6", f"deck --json {nodes} nodes x {memory}", ["deck", *argv, "--json"], ("ok", "error"),
                  check=lambda r: _strict_json(r) or _ns_within_c_int(r) if r.status == 0 else "")
            b.add("6", f"tune deck {nodes} nodes x {memory}", ["tune", "deck", *argv], ("ok", "error"),
                  check=_ns_within_c_int)
    for value in hostile.HUGE_INTS:
        for flag in ("--nodes", "--ranks-per-node", "--nb", "--threads-per-rank"):
            argv = ["--nodes", "2", "--ranks-per-node", "2", "--memory-per-node", "16GiB", flag, value]
            b.add("6", f"deck {flag} {value[:12]}", ["deck", *argv], ("ok", "error"), check=_ns_within_c_int)
        b.add("6", f"deck --memory-per-node {value[:12]}GiB",
              ["deck", "--nodes", "1", "--ranks-per-node", "2", "--memory-per-node", f"{value}GiB"], ("ok", "error"),
              check=_ns_within_c_int)
        b.add("6", f"tune deck --n {value[:12]}", ["tune", "deck", "--nodes", "1", "--ranks-per-node", "2",
                                                   "--memory-per-node", "64TiB", "--n", value], ("ok", "error"),
              check=_ns_within_c_int)
        for flag in ("--cores", "--flops-per-cycle"):
            b.add("6", f"peak {flag} {value[:12]}", ["peak", "--json", flag, value], ("ok", "error"),
                  check=lambda r: _strict_json(r) if r.status == 0 else "")
    for value in hostile.HUGE_FLOATS:
        b.add("6", f"peak --clock-ghz {value}", ["peak", "--json", "--clock-ghz", value], "error")
    b.add("6", "peak: overrides labelled", ["peak", "--clock-ghz", "2.5"], "ok",
          check=lambda r: "" if "clock_ghz = 2.5 (command line)" in r.stdout else "not labelled command line")


def class7_messages(b: Builder) -> None:
    results = b.results([])
    b.add("7", "accept FAIL exits 1", ["accept", results, "--thresholds",
                                       b.file("t.yaml", "criteria:\n  - {benchmark: HPLCheck, min: 1.0e+9}\n")], "fail")
    b.add("7", "parse hpl ''", ["parse", "hpl", ""], "error", words=("no file or directory name",))
    b.add("7", "spack validate a text file", ["spack", "validate", b.file("some_file.txt", "x\n")], "error",
          words=("is not a directory of environments",))
    b.add("7", "report a junk file", ["report", b.file("junk.txt", "junk\n"), "--out", b.out()], "error",
          words=("neither a run report",))
    b.add("7", "report a JSON that is no report", ["report", b.file("notes.json", "{}"), "--out", b.out()], "error",
          words=("no usable",))
    for value in ("a|b", "line\nbreak", "<script>alert(1)</script>", "pipe\\|escape", "`tick|`", "\u4e2d\U0001F600"):
        case = rr.lammps("tcp", {1: 100.0, 2: 190.0}, workload=value)
        out = b.out()
        b.add("7", f"report: a parameter {value!r}", ["report", b.results(case, good=False), "--out", out,
                                                      "--format", "md,html"], "ok", check=_markdown_ok(out))
    b.add("7", "compare --format md", ["compare", results, "--format", "md"], ("ok", "error"))


def _markdown_ok(out: str) -> Callable[[Result], str]:
    def check(r: Result) -> str:
        noise = _no_warning_noise(r)
        if noise:
            return noise
        md = (Path(out) / "report.md").read_text()
        if "<script" in md:
            return "raw <script> in report.md"
        width = None
        for line in md.splitlines():
            if not line.startswith("|"):
                width = None
                continue
            cells = len(line.replace("\\\\", "").replace("\\|", "").split("|"))
            width = width or cells
            if cells != width:
                return f"a table row with {cells - 2} cells under a header of {width - 2}: {line[:120]!r}"
        return ""
    return check


def class8_freeze(b: Builder) -> None:
    hpl = b.file("hpl.out", hostile.hpl_text([hostile.GOOD_ROW]))
    a_file = b.file("decks-is-a-file", "keep me\n")
    b.add("8", "tune freeze --decks-dir a file", ["tune", "freeze", hpl, "--system", "s", "--partition", "p",
                                                  "--decks-dir", a_file], "error", words=("decks_dir",))
    decks = Path(b.out())
    (decks / "s" / "p.yaml").mkdir(parents=True)
    b.add("8", "tune freeze --force onto a directory", ["tune", "freeze", hpl, "--system", "s", "--partition", "p",
                                                        "--decks-dir", str(decks), "--force"], "error",
          check=lambda r: "a backup was left" if list((decks / "s").glob("p.yaml.*")) else "")
    b.add("8", "tune freeze --system with a slash", ["tune", "freeze", hpl, "--system", "../x", "--partition", "p",
                                                     "--decks-dir", b.out()], "error")


def class_references_and_screen(b: Builder) -> None:
    """`references freeze` and `screen`: every hostile path, value and results directory is named."""
    paths = hostile.special_paths(b.root / "special")
    results = b.results([])
    thresholds = b.file("t.yaml", "criteria:\n  - {benchmark: HPLCheck, figure: efficiency, min: 50%}\n")
    words = ("not a regular file", "a directory", "no file or directory name", "cannot read", "does not exist",
             "is not a file")
    for what, path in paths.items():
        b.add("1", f"references freeze: {what} as thresholds", ["references", "freeze", results, "--system",
              "cluster", "--thresholds", path, "--references-dir", b.out()], "error", words=words)
        if what != "directory":
            b.add("1", f"references freeze: {what} as results", ["references", "freeze", path, "--system",
                  "cluster", "--references-dir", b.out()], "error", words=words)
            b.add("1", f"screen: {what} as results", ["screen", path], "error", words=words)
    for flag, value in (("--k", "nan"), ("--k", "inf"), ("--k", "-1"), ("--floor", "1"), ("--floor", "x"),
                        ("--min-runs", "0"), ("--min-runs", hostile.HUGE_INTS[0]), ("--system", "../etc"),
                        ("--system", "a b"), ("--system", "")):
        b.add("6", f"references freeze {flag} {value[:12]!r}", ["references", "freeze", results, "--thresholds",
              thresholds, "--references-dir", b.out(), *(["--system", "cluster"] if flag != "--system" else []),
              flag, value], "error")
    # three good runs, so only the hostile part can fail
    repeated = b.results([])
    for i in range(2):
        rr.write_run(Path(repeated), f"again{i}", [rr.testcase("HPLCheck", {"rmax": (900.0 + i, "Gflop/s")},
                                                               params={"scale": "1_nodes"}, num_nodes=1, num_tasks=2)])
    b.add("5", "references freeze: too few runs of most cases", ["references", "freeze", repeated, "--system",
          "cluster", "--thresholds", thresholds, "--references-dir", b.out()], ("ok", "error"))
    b.add("5", "references freeze: no such system", ["references", "freeze", repeated, "--system", "nosuch",
          "--thresholds", thresholds, "--references-dir", b.out()], "error", words=("is the system name right",))
    for label, figures in hostile.IMPOSSIBLE_FIGURES:
        bad = b.results([rr.testcase("HPLCheck", figures, params={"scale": "1_nodes"}, num_nodes=1, num_tasks=2)],
                        name="bad")
        b.add("5", f"screen: {label}", ["screen", bad], "error", words=("no ScreeningCheck result",))
        b.add("5", f"references freeze: {label}", ["references", "freeze", bad, "--system", "cluster",
              "--thresholds", thresholds, "--references-dir", b.out()], "error")


CLASSES = (class_references_and_screen, class1_not_regular, class1_other_commands, class2_random_bytes, class2_structures, class2_long_arguments,
           class3_spack,
           class4_rows_and_cuts, class5_reports,
           class6_numbers, class7_messages, class8_freeze)


def snapshot(root: Path) -> Dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*")
            if p.is_file() and not p.is_symlink()}


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--cuts", type=int, default=3, help="cuts mid-line per real output")
    parser.add_argument("--keep", type=Path, default=None, help="build the inputs here and keep them")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every failing probe in full")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="scalebench-probe-")) if args.keep is None else args.keep
    tally = Tally()
    start = time.perf_counter()
    try:
        b = Builder(root, args.seed, args.cuts)
        for build in CLASSES:
            build(b)
        before = snapshot(b.inputs)
        for probe in b.probes:
            tally.probes[(probe.cls, probe.argv[0] if probe.argv[0] not in ("tune", "spack") else
                          " ".join(probe.argv[:2]))] += 1
            try:
                result = run(probe.argv)
            except Hang:
                tally.hangs.append(f"[{probe.cls}] {probe.name}")
                continue
            except Exception as err:  # noqa: BLE001 - what the probe looks for
                tally.tracebacks.append(f"[{probe.cls}] {probe.name}: {type(err).__name__}: {err}"[:400])
                continue
            if result.status == 3 or "Traceback (most recent call last)" in result.stderr:
                tally.tracebacks.append(f"[{probe.cls}] {probe.name}: {result.stderr.strip()[:300]}")
                continue
            problem = judge(probe, result)
            if problem:
                tally.wrong.append(f"[{probe.cls}] {probe.name}: {problem}"[:600])
        changed = sorted(p for p, digest in snapshot(b.inputs).items() if before.get(p, digest) != digest)
        changed += sorted(p for p in before if not Path(p).exists())
        tally.wrong += [f"input file changed or removed: {p}" for p in changed]
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print(f"scalebench CLI probe, seed {args.seed}, hard limit {HARD_LIMIT_S:g} s per probe")
    print(f"{'class':<6} {'command':<16} {'probes':>7}")
    for (cls, command), count in sorted(tally.probes.items()):
        print(f"{cls:<6} {command:<16} {count:>7}")
    total = sum(tally.probes.values())
    print(f"probes: {total} in {time.perf_counter() - start:.1f} s")
    for title, found in (("traceback", tally.tracebacks), ("hang", tally.hangs), ("wrong answer", tally.wrong)):
        for line in found if args.verbose else found[:10]:
            print(f"  {title}: {line}")
    print(f"tracebacks = {len(tally.tracebacks)}, hangs = {len(tally.hangs)}, wrong answers = {len(tally.wrong)}")
    return 1 if tally.tracebacks or tally.hangs or tally.wrong else 0


if __name__ == "__main__":
    sys.exit(main_())
