"""Probe of every `scalebench` subcommand with the hostile inputs of tests/fuzz/hostile.py, as a new user
would run them, through scalebench.cli.main in this process (each under a hard time limit).

Run: .venv/bin/python scripts/bench/probe_cli.py [--seed 14] [--cuts 3] [--keep DIR] [-v] [--per-class N]
(smoke run: --cuts 1 --per-class 3)

Each probe is an argument list, the exit it must give (0 ok, 1 FAILED, 2 bad input) and what its
output must or must not say. Classes 1-8 are those of issue 14; 30.x those of issue 30 (run-report units
and partitions, HPL rows timed 0.00 and appended runs, impossible values and contradictions in every
parser, ranks beyond a C int, unreadable directories and symbolic-link loops for spack validate (a file
that fails to read, /proc/self/mem, is among class 1's paths), run as an unprivileged user when the probe runs as root). It counts as
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
import csv
import hashlib
import io
import json
import math
import os
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
from scalebench.benchmarks import KINDS, parse_text  # noqa: E402
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
    cls: str  # the class: 1-8 (issue 14), 30.x (issue 30)
    name: str
    argv: List[str]
    expect: str | tuple[str, ...]  # ok | fail | error, or several
    check: Optional[Callable[[Result], str]] = None  # '' when the output is right
    words: tuple[str, ...] = ()  # an error must say one of these
    unprivileged: bool = False  # run as nobody (in a child process) when the probe runs as root


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


def run_unprivileged(argv: List[str]) -> Result:
    """run(argv) where file permissions hold: in a child that gives up root (everything it needs is
    imported already); as run() when not root."""
    if os.geteuid() != 0:
        return run(argv)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.setgid(65534)
            os.setuid(65534)
            result = run(argv)
            payload = {"status": result.status, "stdout": result.stdout, "stderr": result.stderr,
                       "seconds": result.seconds}
        except BaseException as err:  # noqa: BLE001 - reported as the probe's traceback
            payload = {"status": 3, "stdout": "", "stderr": f"Traceback (most recent call last): {err!r}",
                       "seconds": 0.0}
        os.write(write, json.dumps(payload).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return Result(**json.loads(data))


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
        self.cleanup: List[Path] = []  # trees outside root (readable by an unprivileged user)

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
             "is not a file", "neither a run report")  # the last: a results path that is no .json or .log
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
        b.add("1", f"predict: {what}", ["predict", path, "--dgemm-gflops", "40", "--latency-us", "6",
                                        "--bandwidth-gbs", "1"], "error", words=words)
        if what != "directory":  # an empty results directory: "no usable ... run report", as for report
            b.add("1", f"predict --from: {what}", ["predict", "--from", path], "error", words=words)
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
    b.add("5", "accept: no data, optional", ["accept", b.results([]), "--thresholds", optional], "fail")  # no PASS


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
             "is not a file", "neither a run report")  # the last: a results path that is no .json or .log
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


def class_runs_counted_once(b: Builder) -> None:
    """Issues 27 and 30: copies of a session, dry runs, symbolic links, acceptance without criteria, where
    a report goes and a run that cannot start."""
    thresholds = b.file("t.yaml", "criteria:\n  - {benchmark: HPLCheck, figure: efficiency, min: 50%}\n")
    copied = Path(b.results([]))
    for name in ("copy1", "copy2", "copy3"):
        shutil.copytree(copied / "runs" / "good", copied / "runs" / name)

    def one_run_each(r: Result) -> str:
        rows = [line for line in r.stdout.splitlines() if line.startswith("local:default")]
        if len(rows) != 3 or any(line.split()[-1] != "1" for line in rows):
            return f"copies counted as runs: {rows}"
        return "" if r.stderr.count("a copy of the session") == 3 else "the copies are not named"
    b.add("copies", "report over a run and 3 copies", ["report", str(copied), "--out", b.out(), "--format", "txt"],
          "ok", check=one_run_each)
    b.add("copies", "references freeze from one session and 3 copies", ["references", "freeze", str(copied),
          "--system", "local", "--thresholds", thresholds, "--references-dir", b.out()], "error",
          words=("fewer than 3",))
    dry = Path(b.results([]))
    (dry / "runs" / "good" / "DRY-RUN").write_text("")
    for command in (["report", "--out", b.out()], ["accept", "--thresholds", thresholds], ["compare"], ["screen"]):
        b.add("dry run", f"{command[0]} of a dry run only", [command[0], str(dry), *command[1:]], "error",
              words=("a ReFrame dry run",))
    empty = b.file("empty.yaml", "criteria: []\n")
    results = b.results([])
    for command in (["accept"], ["references", "freeze", "--system", "cluster", "--references-dir", b.out()]):
        words = 2 if command[0] == "references" else 1
        b.add("no criteria", f"{command[0]} with criteria: []", [*command[:words], results, *command[words:],
              "--thresholds", empty], "error", words=("at least one criterion",))
    unmeasured = b.file("unmeasured.yaml", "criteria: [{benchmark: HPLCheck, figure: efficiency, min: 50%, "
                                           "optional: true, system: nosuchsystem}]\n")
    refs = b.out()
    for command in (["accept"], ["references", "freeze", "--system", "cluster", "--references-dir", refs]):
        words = 2 if command[0] == "references" else 1
        b.add("no criteria", f"{command[0]} where no criterion was measured", [*command[:words], results,
              *command[words:], "--thresholds", unmeasured], "fail",
              check=lambda r: f"{refs} written" if Path(refs).exists() and any(Path(refs).iterdir())
              else "" if "acceptance FAILED: 0 PASS" in r.stdout else "no FAILED verdict printed")
    beside = b.results([])
    b.add("report out", "report without --out", ["report", beside, "--format", "csv"], "ok",
          check=lambda r: "" if r.stdout.splitlines()[-1].startswith(f"Report: {beside}/reports/")
          else f"written elsewhere: {r.stdout.splitlines()[-1]!r}")
    b.add("report out", "report of two results directories without --out",
          ["report", b.results([]), b.results([]), "--format", "csv"], "error", words=("--out",))
    linked = Path(b.results([]))
    (linked / "runs" / "loop").symlink_to(linked)
    b.add("links", "report with a symlink loop in runs/", ["report", str(linked), "--out", b.out(), "--format", "csv"],
          "ok", check=lambda r: "" if "symbolic link" in r.stderr else "the link is not named")
    b.add("run", "plan --from without --predict", ["plan", "--from", b.results([])], "error", words=("--predict",))
    nothing = b.out()
    b.add("run", "run --config /nonexistent.py", ["run", "--results", nothing, "--config", "/nonexistent.py"],
          "error", words=("--config",), check=lambda r: f"{nothing} created" if Path(nothing).exists() else "")


def class_site_files(b: Builder) -> None:
    """Issues 27 and 30: a site file's every key given values of every wrong YAML type, repeated keys,
    YAML 1.1 spellings, sizes without a unit and rules between keys: one named line each (exit 2),
    never a traceback or a plan; the shapes it may have (GPUs, containers, a reservation) plan."""
    import yaml

    site = yaml.safe_load((REPO / "site_configs" / "sites" / "example.yaml").read_text())
    wrong = [None, True, 7, -1, 1.5, [1], {"a": 1}, "", "x" * 300]

    def plan(name: str, data: Any, expect: str | tuple[str, ...] = "error", words: tuple[str, ...] = ()) -> None:
        path = b.file("site.yaml", data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
        b.add("site file", name, ["plan", path], expect, words=words)

    def edited(where: str, key: str, value: Any) -> dict:
        data = json.loads(json.dumps(site))
        target = data if where == "top" else data["partitions"][0] if where == "partition" else data["stacks"][0]
        target[key] = value
        return data

    for where, keys in (("top", ("system", "hostnames", "modules_system", "partitions", "stacks")),
                        ("partition", ("name", "scheduler", "launcher", "access", "max_nodes", "cores_per_node",
                                       "memory_per_node", "clock_ghz", "microarch", "environs", "features", "scales",
                                       "job_options", "gpus", "time_limit", "max_time_limit_s", "hpl_trials",
                                       "cpu_bind", "reservation")),
                        ("stack", ("name", "features", "env_vars", "launcher_options", "modules", "hpl_binary",
                                   "blas", "container", "transport", "fabric"))):
        for key in keys:
            for value in wrong:
                # a few of these values are right for a few keys (descr-like text): only a traceback or a
                # hang is wrong then
                plan(f"{where}.{key}: {str(value)[:20]!r}", edited(where, key, value), ("ok", "error"))
            plan(f"{where}.{key}: repeated", yaml.safe_dump(edited(where, key, None), sort_keys=False), ("ok", "error"))
    text = (REPO / "site_configs" / "sites" / "example.yaml").read_text()
    # the key's own line only: example.yaml's comments name the key too (node_kinds)
    plan("cores_per_node written twice", text.replace("\n    cores_per_node: 128\n",
                                                      "\n    cores_per_node: 64\n    cores_per_node: 128\n", 1),
         words=("repeated",))
    plan("criteria-like key twice at the top", "system: a\nsystem: b\n" + text.split("\n", 8)[-1], words=("repeated",))
    for key, value, words in (("memory_per_node", 768, ("unit",)), ("memory_per_node", "768", ("unit",)),
                              ("memory_per_node", "1B", ("unit",)), ("time_limit", "72", ("duration",)),
                              ("exclusive_yes", None, ("true or false",))):
        data = edited("partition", key, value) if value is not None else edited("partition", "job_options", {"exclusive": "yes"})
        plan(f"partition {key}={value!r}", data, words=words)
    plan("time_limit beyond max_time_limit_s", edited("partition", "time_limit", "72h"), words=("longest job",))
    plan("modules without a module system", edited("stack", "modules", ["openmpi/5"]), words=("modules_system",))
    plan("modul_system misspelt", edited("top", "modul_system", "lmod"), words=("did you mean",))
    plan("pyxis under mpirun", edited("partition", "launcher", "mpirun") | {
        "stacks": [dict(site["stacks"][0], container={"runtime": "pyxis", "image": "x"}), site["stacks"][1]]},
        words=("pyxis",))
    gpu = edited("partition", "gpus", {"count": 4, "memory": "80GB", "fp64_tflops": 67, "arch": "sm_90", "type": "h100"})
    plan("a typed GPU partition", gpu, "ok")
    plan("a reservation", edited("partition", "reservation", {"name": "full", "time_limit": "3d"}), "ok")
    plan("a reservation beyond the partition", edited("partition", "reservation",
         {"name": "full", "time_limit": "3d", "from_nodes": 100000}), words=("from_nodes",))
    plan("an apptainer stack", edited("stack", "container", {"runtime": "apptainer", "image": "/x.sif"}), "ok")


# --- issue 30 -------------------------------------------------------------------------------------------

def _csv_values(out: str, figure: str) -> List[tuple[float, str]]:
    """(value, unit) of every row of `figure` in the report's CSV under `out`."""
    found = []
    for path in Path(out).rglob("*.csv"):
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                if row["figure"] == figure and row["value"]:
                    found.append((float(row["value"]), row["unit"]))
    return found


def class30_4_run_report_figures(b: Builder) -> None:
    """Units converted or refused, other partitions' figures, strings and booleans, contradictions."""
    def case(figures: Dict[str, Any], nodes: int = 8, tasks: int = 16, **extra: Any) -> Dict[str, Any]:
        return rr.testcase("HPLCheck", figures, params={"scale": f"{nodes}_nodes"}, num_nodes=nodes, num_tasks=tasks,
                           extra=extra or None)

    def rmax_is(out: str, wanted: float, warning: str = "") -> Callable[[Result], str]:
        def check(r: Result) -> str:
            values = [v for v, unit in _csv_values(out, "rmax") if unit == "Gflop/s"]
            units = {unit for _, unit in _csv_values(out, "rmax")}
            if units != {"Gflop/s"}:
                return f"rmax in units {units}"
            if not any(math.isclose(v, wanted, rel_tol=1e-9) for v in values):
                return f"rmax {values}, expected {wanted} among them"
            if any(v > 1e5 for v in values):
                return f"an rmax taken at face value: {values}"
            return f"no warning saying {warning!r}" if warning and warning not in r.stderr else ""
        return check

    for label, figures, wanted in (
            ("rmax in Tflop/s", {"rmax": (0.8, "Tflop/s"), "rpeak_gflops": (8000.0, "Gflop/s"),
                                 "efficiency": (10.0, "%")}, 800.0),
            ("rmax in Mflop/s beside 90%", {"rmax": (7200000.0, "Mflop/s"), "rpeak_gflops": (8000.0, "Gflop/s"),
                                            "efficiency": (90.0, "%")}, 7200.0),
            ("rmax in Pflop/s", {"rmax": (0.0072, "Pflop/s")}, 7200.0)):
        out = b.out()
        b.add("30.4", f"report: {label}", ["report", b.results([case(figures)], name="bad"), "--out", out,
                                           "--format", "csv"], "ok", check=rmax_is(out, wanted))
    for label, figures, warning in (
            ("rmax in furlongs", {"rmax": (900.0, "furlongs")}, "cannot be converted"),
            ("rmax in GB/s", {"rmax": (900.0, "GB/s")}, "cannot be converted"),
            ("rmax a string", {"rmax": ("9e9", "Gflop/s")}, "is not a number"),
            ("rmax a boolean", {"rmax": (True, "Gflop/s")}, "is not a number"),
            ("efficiency a string", {"rmax": (7200.0, "Gflop/s"), "efficiency": ("90%", "%")}, "is not a number")):
        out = b.out()
        b.add("30.4", f"report: {label}", ["report", b.results([case(figures)], name="bad"), "--out", out,
                                           "--format", "csv"], "ok", check=rmax_is(out, 900.0, warning))
    other = case({"rmax": (7200.0, "Gflop/s")})
    other["perfvalues"]["other:gpu:rmax"] = [500000.0, 0, None, None, "Gflop/s", "pass"]
    out = b.out()
    b.add("30.4", "report: another partition's rmax", ["report", b.results([other], name="bad"), "--out", out,
                                                       "--format", "csv"], "ok",
          check=rmax_is(out, 7200.0, "recorded for other:gpu"))
    for label, bad in (
            ("efficiency against Rmax/Rpeak", case({"rmax": (900000.0, "Gflop/s"), "rpeak_gflops": (8000.0, "Gflop/s"),
                                                    "efficiency": (90.0, "%")})),
            ("Rmax against N and time", case({"rmax": (7200.0, "Gflop/s"), "n": (8256.0, "N"), "time": (0.5, "s")})),
            ("fewer tasks than nodes", case({"rmax": (7200.0, "Gflop/s")}, nodes=8, tasks=4)),
            ("tasks fewer than P x Q", case({"rmax": (7200.0, "Gflop/s")}, hpl_deck={"p": 8, "q": 8})),
            ("Rmax beyond its processes", case({"rmax": (9.0e8, "Gflop/s")}))):
        out = b.out()
        b.add("30.4", f"report: {label}", ["report", b.results([bad], name="bad"), "--out", out, "--format", "csv"],
              "ok", check=lambda r, out=out: rmax_is(out, 900.0, "skipped HPLCheck %scale=8_nodes")(r))


def class30_5_hpl_rows(b: Builder) -> None:
    """Rows timed 0.00 s, rates beyond any processor, appended runs with their own thresholds."""
    def rmax(wanted: Optional[float]) -> Callable[[Result], str]:
        def check(r: Result) -> str:
            got = json_out(r)["rmax_gflops"]
            return "" if got == wanted else f"rmax {got}, expected {wanted}"
        return check

    good = "WR11C2R4        10000   192     1     2               6.50             1.0256e+02"
    for label, row in (("time 0.00 at 1e300", "WR11C2R4 1000 192 2 2 0.00 1.0000e+300"),
                       ("N=100000 in 0.00 s at 1 Gflop/s", "WR11C2R4 100000 192 2 2 0.00 1.0000e+00"),
                       ("time 0.00 at 9e9", "WR11C2R4 1000 192 2 2 0.00 9.0000e+09"),
                       ("5e9 Gflop/s on 4 processes", "WR11C2R4 2000000 192 2 2 1.00 5.3333e+09")):
        alone, mixed = b.file("hpl.out", _hpl_run(row)), b.file("hpl.out", _hpl_run(good, row))
        b.add("30.5", f"parse hpl: {label}", ["parse", "hpl", alone], "ok", check=rmax(None))
        b.add("30.5", f"parse hpl: good row and {label}", ["parse", "hpl", mixed], "ok", check=rmax(102.56))
        b.add("30.5", f"tune rank: {label}", ["tune", "rank", alone], "error", words=("no PASSED row",))
        decks = b.out()
        b.add("30.5", f"tune freeze: {label}", ["tune", "freeze", alone, "--system", "s", "--partition", "p",
                                               "--decks-dir", decks], "error",
              check=lambda r, d=decks: "a deck was frozen" if Path(d).exists() else "")
        decks = b.out()
        b.add("30.5", f"tune rank: good row and {label}", ["tune", "rank", mixed, "--json"], "ok",
              check=lambda r: "" if [c["gflops"] for c in json_out(r)["candidates"]] == [102.56] else r.stdout[:300])
    strict = _hpl_run("WR11C2R4 10000 192 1 2 1.30 5.1282e+02", threshold="1.0e-03")  # residual 1.2e-03: FAILED
    loose = _hpl_run(good, threshold="16.0")
    for label, text in (("a strict run, then a loose one", strict + loose), ("a loose run, then a strict one",
                                                                             loose + strict)):
        b.add("30.5", f"parse hpl: appended, {label}", ["parse", "hpl", b.file("hpl.out", text)], "ok",
              check=rmax(102.56))
        b.add("30.5", f"hpcc: appended, {label}", ["parse", "hpcc", b.file("hpccoutf.txt", _hpcc(text))], "ok",
              check=lambda r: "" if (json_out(r)["hpl"] or {}).get("rmax_gflops") in (102.56, None) else "rmax")


def _hpl_run(*rows: str, threshold: str = "16.0") -> str:
    return ("HPLinpack 2.3  --  High-Performance Linpack benchmark  --   December 2, 2018\n"
            f"- Computational tests pass if scaled residuals are less than                {threshold}\n"
            + "".join(f"{row}\n||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   1.2e-03 ...... PASSED\n"
                      for row in rows))


def _hpcc(hpl: str, summary: str = "Success=1\n") -> str:
    return ("This is the DARPA/DOE HPC Challenge Benchmark version 1.5.0 October 2012\nBegin of HPL section.\n"
            + hpl + "End of HPL section.\nBegin of Summary section.\n" + summary + "End of Summary section.\n"
            "End of HPC Challenge tests.\n")


def _numbers(value: Any) -> List[float]:
    if isinstance(value, dict):
        return [n for v in value.values() for n in _numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v)]
    return [float(value)] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def class30_6_parsers(b: Builder) -> None:
    """Values no measurement can have, and figures of one output that contradict each other."""
    def sane(fields: tuple[str, ...], warning: str) -> Callable[[Result], str]:
        def check(r: Result) -> str:
            data = json_out(r)
            for name in fields:
                bad = [n for n in _numbers(data.get(name)) if n < 0 and n != -1 or n > 1e15]
                if bad:
                    return f"{name} holds {bad[:3]}"
            return "" if warning in r.stderr else f"no warning saying {warning!r}: {r.stderr[:200]!r}"
        return check

    osu = "# OSU MPI Latency Test v7.3\n# Size          Latency (us)\n1   -2.05\n2   inf\n4   1e308\n8   1.05\n"
    b.add("30.6", "parse osu: -2.05, inf, 1e308", ["parse", "osu", b.file("osu.txt", osu)], "ok",
          check=sane(("rows", "peak_value", "min_latency_us"), "dropped"))
    netpipe = "       1 0.61   0.00001253\n       2 1.2   -0.00000051\n"
    b.add("30.6", "parse netpipe: a negative time", ["parse", "netpipe", b.file("np.out", netpipe)], "ok",
          check=sane(("rows", "min_latency_usec", "peak_mbps"), "dropped"))
    lammps = ("LAMMPS (2 Aug 2023)\nLoop time of {loop} on {procs} procs for 100 steps with 32000 atoms\n\n"
              "Performance: 9.191 tau/day, {rate} timesteps/s\n99.8% CPU use with {tasks} MPI tasks x 1 OpenMP threads\n")
    for label, fields, warning in (
            ("Loop time -9.4", dict(loop="-9.4", procs="2", rate="10.638", tasks="2"), "dropped"),
            ("100 steps in 9.4 s at 99999 timesteps/s", dict(loop="9.4", procs="2", rate="99999", tasks="2"),
             "contradicts"),
            ("2 procs against 64 MPI tasks", dict(loop="9.4", procs="2", rate="10.638", tasks="64"), "64 MPI tasks")):
        b.add("30.6", f"parse lammps: {label}", ["parse", "lammps", b.file("log.lammps", lammps.format(**fields))],
              "ok", check=sane(("loop_time_s", "timesteps_per_s"), warning))
    openfoam = "Build  : v2312\nExec   : icoFoam\nTime = 1\nExecutionTime = 1e308 s  ClockTime = 1 s\nEnd\n"
    b.add("30.6", "parse openfoam: ExecutionTime 1e308", ["parse", "openfoam", b.file("log", openfoam)], "ok",
          check=sane(("final_execution_time_s", "seconds_per_step_mean"), "dropped"))
    row = "WR11C2R4        10000   192     1     2               6.50             1.0256e+02"
    for label, summary, warning in (
            ("HPL_Tflops=-5", "Success=1\nHPL_Tflops=-5\n", "dropped"),
            ("CommWorldProcs=-8", "Success=1\nCommWorldProcs=-8\n", "dropped"),
            ("1000 Tflop/s against an 8.1 Gflop/s row", "Success=1\nHPL_Tflops=1000\n", "not the fastest HPL row"),
            ("Success=0 with a PASSED row", "Success=0\nHPL_Tflops=0.10256\n", "Success=0")):
        b.add("30.6", f"parse hpcc: {label}", ["parse", "hpcc", b.file("hpccoutf.txt", _hpcc(_hpl_run(row), summary))],
              "ok", check=sane(("key_metrics",), warning))


def class30_7_c_ints(b: Builder) -> None:
    hpl = b.file("hpl.out", _hpl_run("WR11C2R4        10000   192     1     2               6.50             1.0256e+02"))
    for ranks in ("99999999999999999999", str(C_INT_MAX + 1), "9" * 400):
        decks = b.out()
        b.add("30.7", f"tune freeze --ranks {ranks[:12]}", ["tune", "freeze", hpl, "--system", "s", "--partition", "p",
                                                           "--decks-dir", decks, "--ranks", ranks], "error",
              check=lambda r, d=decks: "a deck was written" if Path(d).exists() else "")


def class30_11_spack_permissions(b: Builder) -> None:
    """Unreadable directories (as an unprivileged user) and symbolic-link loops in spack validate."""
    top = Path(tempfile.mkdtemp(prefix="scalebench-probe-spack-"))  # under /tmp: every parent searchable
    b.cleanup.append(top)
    top.chmod(0o755)
    for locked in ("openmpi-tcp", "sites", "common", "sites/example-cray-ex"):
        tree = top / f"tree-{len(b.probes)}"
        shutil.copytree(REPO / "spack_envs", tree, symlinks=True)
        (tree / locked).chmod(0)
        b.add("30.11", f"spack validate: {locked} unreadable", ["spack", "validate", str(tree)], "fail",
              check=lambda r: "" if "cannot be read (Permission denied)" in r.stdout else f"not named: {r.stdout[-300:]!r}",
              unprivileged=True)
    loop = top / "loop"
    (loop / "sites" / "x").mkdir(parents=True)
    (loop / "sites" / "x" / "site.yaml").write_text("fabric: ethernet\nscheduler: slurm\n")
    (loop / "a.yaml").symlink_to("b.yaml")
    (loop / "b.yaml").symlink_to("a.yaml")
    (loop / "e").mkdir()
    (loop / "e" / "spack.yaml").write_text("spack:\n  include:\n  - ../a.yaml\n  - ../sites/$SCALEBENCH_SPACK_SITE\n"
                                           "  specs: [hpl]\n")
    b.add("30.11", "spack validate: an include that is a symbolic-link loop", ["spack", "validate", str(loop / "e")],
          "fail", check=lambda r: "" if "loop of symbolic links" in r.stdout and "does not exist" not in r.stdout
          else f"not named a loop: {r.stdout[-300:]!r}")
    (top / "self").symlink_to("self")
    b.add("30.11", "spack validate: a directory that is a symbolic-link loop", ["spack", "validate", str(top / "self")],
          "error", words=("loop of symbolic links",))


CLASSES = (class_references_and_screen, class1_not_regular, class1_other_commands, class2_random_bytes, class2_structures, class2_long_arguments,
           class3_spack,
           class4_rows_and_cuts, class5_reports,
           class6_numbers, class7_messages, class8_freeze, class_runs_counted_once, class_site_files,
           class30_4_run_report_figures, class30_5_hpl_rows, class30_6_parsers, class30_7_c_ints,
           class30_11_spack_permissions)  # 30.10 (/proc/self/mem) is among class 1's paths


def snapshot(root: Path) -> Dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*")
            if p.is_file() and not p.is_symlink()}


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--cuts", type=int, default=3, help="cuts mid-line per real output")
    parser.add_argument("--keep", type=Path, default=None, help="build the inputs here and keep them")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every failing probe in full")
    parser.add_argument("--per-class", type=int, default=None,
                        help="run only this many probes of each class, drawn with the seed (a smoke run)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="scalebench-probe-")) if args.keep is None else args.keep
    tally = Tally()
    start = time.perf_counter()
    try:
        b = Builder(root, args.seed, args.cuts)
        for build in CLASSES:
            build(b)
        probes = b.probes
        if args.per_class is not None:
            by_class: Dict[str, List[Probe]] = {}
            for probe in probes:
                by_class.setdefault(probe.cls, []).append(probe)
            draw = random.Random(args.seed)
            probes = [p for group in by_class.values() for p in draw.sample(group, min(args.per_class, len(group)))]
        before = snapshot(b.inputs)
        for probe in probes:
            tally.probes[(probe.cls, probe.argv[0] if probe.argv[0] not in ("tune", "spack") else
                          " ".join(probe.argv[:2]))] += 1
            try:
                result = run_unprivileged(probe.argv) if probe.unprivileged else run(probe.argv)
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
        for tree in getattr(locals().get("b"), "cleanup", []):
            for path in (tree, *tree.rglob("*")):
                if path.is_dir() and not path.is_symlink():
                    path.chmod(0o755)
            shutil.rmtree(tree, ignore_errors=True)
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
