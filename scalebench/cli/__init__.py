"""Command line: `scalebench deck | peak | parse | report | accept | compare | run | plan | predict | prepare |
tune | references | screen | facts | spack`.

Exit codes, the same for every command (docs/reference.md, "Exit codes"): 0 success; 1 the results or files were
read and FAILED what was asked of them (acceptance, reframe's checks, spack validate's findings); 2 bad
input, one line naming it; 3 an internal error: one line pointing to a log file with the traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Sequence

from scalebench import faultpoints, interrupts, paths
from scalebench.cli import streams
from scalebench.cli.common import (EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERNAL, EXIT_OK, OneLineParser,
                                   add_geometry_arguments, path_arg, print_json, positive_int_arg, printable)
from scalebench.errors import InputError, OutputError, ResultsError, ScalebenchError
from scalebench.units import parse_size


def cmd_deck(args: argparse.Namespace) -> int:
    from scalebench.hpl import deck

    request = deck.DeckRequest(
        nodes=args.nodes, ranks_per_node=args.ranks_per_node, threads_per_rank=args.threads_per_rank,
        memory_per_node=parse_size(args.memory_per_node, "--memory-per-node"),
        memory_fraction=args.memory_fraction, nb=args.nb)
    result = deck.make_deck(request, deck.load_rules())
    fmt = "json" if args.json else args.format
    if fmt == "json":
        print_json(result.to_json())
    elif fmt == "hpcc":
        sys.stdout.write(deck.hpccinf_txt(result))
    else:
        sys.stdout.write(deck.hpl_dat(result))
    return 0


def cmd_peak(args: argparse.Namespace) -> int:
    from scalebench.site import peak
    from scalebench.site import host

    overrides = {"clock_ghz": args.clock_ghz, "flops_per_cycle": args.flops_per_cycle,
                 "cores_per_node": args.cores}
    inputs = peak.peak_inputs(overrides, host=host.detect(), source="command line")
    if args.json:
        print_json(inputs.to_json())
        return 0
    print(f"Rpeak of this machine: {inputs.rpeak_gflops():.1f} Gflop/s "
          f"= {inputs.cores_per_node} cores x {inputs.clock_ghz:g} GHz x {inputs.flops_per_cycle} flop/cycle")
    for line in inputs.derivation:
        print(f"  {line}")
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    from scalebench.benchmarks import parse_file

    result = parse_file(args.kind, args.file)
    for warning in dict.fromkeys([*(result.get("problems") or []), *(result.get("warnings") or [])]):
        print(f"warning: {printable(warning)}", file=sys.stderr)
    print_json(result)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """The terminal HPL table, then the files written; the main report's path last."""
    from scalebench.report import DEFAULT_FORMATS, parse_formats, write_report
    from scalebench.reporting.hpl_table import hpl_terminal_table

    # The tidy CSV (a row per figure: 300 MB for a year of nightly runs) only when asked for; --split-csv asks.
    formats = parse_formats(args.format) if args.format else (*DEFAULT_FORMATS, *(("csv",) if args.split_csv else ()))
    written = write_report(args.results, Path(args.out) if args.out else None, formats,
                           Path(args.thresholds) if args.thresholds else None, split_csv=args.split_csv,
                           rebuild=args.rebuild)
    _say(written.warnings, written.notes)
    print(hpl_terminal_table(written.table))
    print("")
    for path in written.files.values():
        if path != written.target:
            print(f"Written: {path}")
    print(f"Report: {written.target}")
    return 0


def _say(warnings: Sequence[str], notes: Sequence[str]) -> None:
    """Warnings about the results, then notes about the index, on stderr."""
    for line in [f"warning: {w}" for w in warnings] + [f"note: {n}" for n in notes]:
        print(line, file=sys.stderr)


def cmd_accept(args: argparse.Namespace) -> int:
    """PASS/FAIL per criterion of the thresholds file; 1 on any FAIL (or missing required result), or
    while noisy points wait for a re-run."""
    from scalebench import atomic
    from scalebench.reporting import acceptance
    from scalebench.reporting.document import render_text
    from scalebench.reporting.store import load
    from scalebench.reporting.table import figure_units

    loaded = load(args.results)
    criteria = acceptance.load(Path(args.thresholds), figure_units(loaded.table))
    verdicts = acceptance.judge(criteria, loaded.table, expectations=_expectations(criteria, loaded.table),
                                cut_short=loaded.cut_short)
    _say(loaded.warnings, loaded.notes)
    if args.junit:  # for CI (GitLab, Jenkins): one test case per criterion and point
        atomic.write(Path(args.junit), acceptance.junit_xml(verdicts, Path(args.thresholds)), replace=True,
                     what="--junit")
    if args.json:
        print_json(acceptance.to_json(verdicts, Path(args.thresholds)))
    else:
        print(render_text([acceptance.verdict_table(verdicts)]).rstrip())
        for rerun in acceptance.reruns(verdicts):
            print(f"re-run (noisy): {rerun}")
        print(f"\nacceptance {acceptance.outcome(verdicts)}: {acceptance.counts(verdicts)}")
    return EXIT_OK if acceptance.passed(verdicts) else EXIT_FAILED


def _expectations(criteria, results):  # type: ignore[no-untyped-def]
    """What HPL's scalability model expects, where a criterion compares with it (of_model)."""
    from scalebench.reporting import acceptance
    from scalebench.reporting.hpl_table import model_expectations

    return model_expectations(results) if acceptance.uses_model(criteria) else None


def cmd_compare(args: argparse.Namespace) -> int:
    """Configurations side by side, normalised to the baseline (text or Markdown on stdout)."""
    from scalebench.reporting import bakeoff, series
    from scalebench.reporting.document import render_markdown, render_text
    from scalebench.reporting.store import load

    loaded = load(args.results)
    compared = bakeoff.compare(series.build(loaded.table), args.by, args.baseline, args.figure)
    _say(loaded.warnings, loaded.notes)  # once there is an answer: an error stays one line
    if args.json or args.format == "json":
        print_json(bakeoff.to_json(compared))
        return 0
    blocks = bakeoff.blocks(compared, level=1)
    print((render_markdown(blocks, lambda chart: "") if args.format == "md" else render_text(blocks)).rstrip())
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """One ReFrame session into a fresh run directory, then (optionally) its report."""
    from scalebench import atomic, loaders, textfile
    from scalebench.site.facts import FACTS_VARIABLE, facts_files, read_facts
    from scalebench.site.rundir import dry_run_requested, new_run_dir

    reframe = Path(sys.executable).with_name("reframe")
    if not os.access(reframe, os.X_OK):
        raise InputError(f"reframe: no executable {reframe} (install it with scripts/install.sh)")
    textfile.read_bytes(args.config, "--config", loaders.CONFIG_LIMIT)  # named here, not by ReFrame's exit 1
    if args.facts:  # named before a run directory is made
        for path in facts_files(args.facts, "--facts"):
            read_facts(path)
    if not Path(args.checks).exists():
        raise InputError(f"--checks: {args.checks} does not exist")
    run_dir = new_run_dir(Path(args.results).absolute())  # ReFrame, in another directory, reads it too
    try:
        made = atomic.make_directory(run_dir)
    except OSError as err:
        raise ResultsError(f"--results: cannot create {run_dir}: {err.strerror}") from err
    full = _full(run_dir)
    if full:  # ReFrame would run its checks for nothing: refused before it starts
        atomic.unmake(made)
        raise OutputError(f"--results: {run_dir.parent}: {full}; no run started")
    # The run's files go into its directory whatever the configuration says (a site's own writes elsewhere).
    into_run = ["-o", str(run_dir / "output"), "-s", str(run_dir / "stage"), "--perflogdir", str(run_dir / "perflogs"),
                "--report-file", str(run_dir / "report.json")]
    action = [] if dry_run_requested(args.reframe_args) else ["-r"]  # -- --dry-run: ReFrame's instead of -r
    command = [str(reframe), "-C", args.config, "-c", args.checks, *into_run, *action, *args.reframe_args]
    env = dict(os.environ, SCALEBENCH_RUN_DIR=str(run_dir))
    if args.facts:
        env[FACTS_VARIABLE] = os.pathsep.join(str(Path(p).resolve()) for p in args.facts.split(os.pathsep))
    print(f"scalebench run: {' '.join(command)}\n  run directory: {run_dir}", flush=True)
    try:
        status = _reframe(command, env, run_dir)
    except BaseException:
        atomic.unmake(made)  # interrupted before ReFrame wrote anything: no empty run directory is left
        raise
    report = run_dir / "report.json"
    if status:
        atomic.unmake(made)  # ReFrame stopped before writing anything (an option it refused): leave nothing
    if status == 0 and not report.exists():
        # ReFrame exits 0 and writes no report when its filters select no test case.
        filters = " ".join(args.reframe_args) or "(none)"
        raise InputError(f"no test case ran: the reframe filters {filters} match no check, system, "
                         "partition or environment (stack) of this configuration")
    full = _full(run_dir if run_dir.is_dir() else run_dir.parent) if status and status != EXIT_BAD_INPUT else ""
    if full:  # what failed then is the disk, not the checks: said as the bad output it is
        raise OutputError(f"--results: {run_dir}: {full}; reframe stopped (status {status}) and what it wrote "
                          "there may be cut short")
    if status and status != EXIT_BAD_INPUT and not report.exists():
        print(f"scalebench run: reframe exited with status {status} without writing its report (the lines above "
              "say why)", file=sys.stderr)
        return EXIT_FAILED
    if args.report:
        # One run's CSV is small: its report keeps it.
        report_args = argparse.Namespace(results=[str(run_dir)], out=str(run_dir / "report"), format="md,html,csv",
                                         thresholds=None, split_csv=False, rebuild=False)
        cmd_report(report_args)
    if status == EXIT_BAD_INPUT:  # ReFrame's usage errors, and scalebench's checks stopping on their input
        print("scalebench run: reframe refused its input (the line above says why)", file=sys.stderr)
        return EXIT_BAD_INPUT
    if status:
        print(f"scalebench run: reframe exited with status {status} (failures are listed above)",
              file=sys.stderr)
    return EXIT_FAILED if status else EXIT_OK


# Once interrupted, ReFrame aborts its checks (its local jobs: SIGTERM, then SIGKILL) and writes its report;
# a minute is far more than that takes, and bounds the wait when it hangs.
RUN_GRACE_S = 60.0
_FULL_BELOW = 1 << 20  # bytes left on a file system a run cannot go on with


def _reframe(command: list[str], env: dict[str, str], run_dir: Path) -> int:
    """ReFrame's exit status. It runs in a process group of its own, so the signals it gets are those sent
    here, once each: interrupted, this process stops ReFrame (_stop), gives it RUN_GRACE_S to abort its
    checks and write its report (a second Ctrl-C: none), then kills it, and raises Interrupted saying
    which. ReFrame gets SIGTERM should this process die (scalebench.lifetime); what
    is left of the run's processes when it ends (by their SCALEBENCH_RUN_DIR) is ended too."""
    from scalebench import lifetime

    proc = lifetime.spawn(command, env=env, stdin=subprocess.DEVNULL, process_group=0)
    try:
        faultpoints.reached("run:reframe")
        while True:  # in short waits: a library (polars) sets SA_RESTART, and one long wait would not see a signal
            with contextlib.suppress(subprocess.TimeoutExpired):
                return proc.wait(0.2)
    except interrupts.Interrupted as stop:
        raise interrupts.Interrupted(stop.signum, _stop(proc, stop.signum, run_dir)) from None
    finally:
        if proc.poll() is None:  # any other way out: ReFrame is not left behind
            proc.kill()
            proc.wait()
        lifetime.end_marked("SCALEBENCH_RUN_DIR", str(run_dir))


def _stop(proc: subprocess.Popen, signum: int, run_dir: Path) -> str:
    """Stop ReFrame and wait for it as _reframe says; what became of the run. Whatever the signal, ReFrame
    gets SIGTERM: running its checks, it aborts them and writes its report on it as on SIGINT, and
    still starting, it ends quietly (a SIGINT then is a KeyboardInterrupt traceback of its imports)."""
    import time

    with contextlib.suppress(OSError):
        proc.send_signal(signal.SIGTERM)
    deadline, signals = time.monotonic() + RUN_GRACE_S, len(interrupts.received())
    while proc.poll() is None and time.monotonic() < deadline and len(interrupts.received()) == signals:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(0.1)
    killed = proc.poll() is None
    if killed:
        proc.kill()
        proc.wait()
    report = run_dir / "report.json"
    if report.exists():
        return f"reframe aborted its checks and wrote its report, {report}"
    how = f"killed after {RUN_GRACE_S:g} s" if killed and len(interrupts.received()) == signals else \
        "killed" if killed else f"status {proc.returncode}"
    if not run_dir.is_dir() or not any(run_dir.iterdir()):
        return f"reframe stopped ({how}) before it wrote anything"
    return f"reframe stopped ({how}) without its report: {run_dir} is listed as cut short"


def _full(run_dir: Path) -> str:
    """'the file system is full (12 KiB left)' when the run's file system has less than a run needs."""
    from scalebench.units import format_size

    try:
        info = os.statvfs(run_dir)
    except OSError:
        return ""
    left = info.f_bavail * info.f_frsize
    return f"the file system is full ({format_size(left)} left)" if left < _FULL_BELOW else ""


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="scalebench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    p = sub.add_parser("deck", help="HPL input deck for a node/rank/memory geometry")
    add_geometry_arguments(p)
    p.add_argument("--memory-fraction", type=float, default=None, help="share of memory for the matrix (default 0.8)")
    p.add_argument("--nb", type=positive_int_arg, default=None, help="block size (default from hpl_decks/rules.yaml)")
    p.add_argument("--format", choices=("hpl", "hpcc", "json"), default="hpl")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.set_defaults(func=cmd_deck)

    p = sub.add_parser("peak", help="Rpeak of this machine and how it was derived")
    p.add_argument("--clock-ghz", type=float, default=None, help="override the nominal clock")
    p.add_argument("--flops-per-cycle", type=positive_int_arg, default=None, help="override DP flop/cycle/core")
    p.add_argument("--cores", type=positive_int_arg, default=None, help="override the core count")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_peak)

    p = sub.add_parser("parse", help="parse a benchmark output into JSON")
    p.add_argument("kind", help="output kind, e.g. hpl, hpcc")
    p.add_argument("file", type=path_arg)
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser("report", help="report from run reports under RESULTS")
    p.add_argument("results", nargs="+", type=path_arg, help="run directories, report files or results/")
    p.add_argument("--out", default=None, type=path_arg,
                   help="output directory (default reports/<UTC time> in the results directory of RESULTS)")
    p.add_argument("--format", default=None,
                   help="comma-separated: md, html, csv, txt, parquet (default md,html; csv: a row per figure)")
    p.add_argument("--thresholds", default=None, type=path_arg,
                   help="acceptance thresholds (YAML) to add verdicts to the report")
    p.add_argument("--split-csv", action="store_true",
                   help="the tidy CSV as one file per benchmark, in report_csv/ (asks for csv)")
    p.add_argument("--rebuild", action="store_true",
                   help="read every run report again and write the index beside the results anew")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("accept", help="PASS/FAIL of results against acceptance thresholds (exit 1 on a FAIL)")
    p.add_argument("results", nargs="+", type=path_arg, help="run directories, report files or results/")
    p.add_argument("--thresholds", default=str(paths.SITE_CONFIGS / "acceptance.yaml"), type=path_arg,
                   help="thresholds file (default site_configs/acceptance.yaml)")
    p.add_argument("--json", action="store_true", help="the verdicts as JSON on stdout (fields: docs/acceptance.md)")
    p.add_argument("--junit", default=None, type=path_arg, metavar="FILE",
                   help="also write the verdicts as JUnit XML for CI: a test case per criterion and point")
    p.set_defaults(func=cmd_accept)

    p = sub.add_parser("compare", help="bake-off: stacks or systems normalised to a baseline")
    p.add_argument("results", nargs="+", type=path_arg, help="run directories, report files or results/")
    p.add_argument("--by", choices=("stack", "system"), default="stack", help="what to put side by side")
    p.add_argument("--baseline", default=None, help="the stack or system:partition to normalise to (default: first)")
    p.add_argument("--figure", default=None,
                   help="compare and rank on this figure (e.g. gflops_per_watt) instead of each figure of merit")
    p.add_argument("--format", choices=("text", "md", "json"), default="text")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("run", help="run ReFrame checks into a new results/runs/ directory")
    p.add_argument("--config", default=str(paths.SITE_CONFIGS / "local.py"), type=path_arg)
    p.add_argument("--checks", default=str(paths.CHECKS), type=path_arg)
    p.add_argument("--results", default=str(paths.RESULTS), type=path_arg)
    p.add_argument("--facts", default=None, type=path_arg,
                   help="facts of the --config's system when it is the site's own (default $SCALEBENCH_FACTS)")
    p.add_argument("--report", action="store_true", help="write the run's report when it ends")
    p.add_argument("reframe_args", nargs=argparse.REMAINDER, help="after --: passed to reframe")
    p.set_defaults(func=cmd_run)

    from scalebench.cli.facts import add_facts_arguments
    from scalebench.cli.plan import add_plan_arguments
    from scalebench.cli.predict import add_predict_arguments
    from scalebench.cli.prepare import add_prepare_arguments
    from scalebench.cli.references import add_references_arguments
    from scalebench.cli.screen import add_screen_arguments
    from scalebench.cli.tune import add_tune_arguments

    add_plan_arguments(sub)
    add_predict_arguments(sub)
    add_prepare_arguments(sub, OneLineParser)

    add_tune_arguments(sub)
    add_references_arguments(sub)
    add_screen_arguments(sub)
    add_facts_arguments(sub, OneLineParser)

    from scalebench.cli.spack import add_arguments as add_spack_arguments, cmd_spack_validate

    spack = sub.add_parser("spack", help="Spack environments of spack_envs/")
    spack_sub = spack.add_subparsers(dest="spack_command", required=True, parser_class=OneLineParser)
    p = spack_sub.add_parser("validate", help="check the environments offline (names, variants, values)")
    add_spack_arguments(p)
    p.set_defaults(func=cmd_spack_validate)
    return parser


def _crash_log(command: str) -> str:
    """The traceback of the exception being handled, in a new file of the temporary directory."""
    try:
        fd, path = tempfile.mkstemp(prefix=f"scalebench-{command or 'start'}-crash-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8") as log:
            log.write(f"scalebench {' '.join(map(repr, sys.argv[1:]))}\n\n{traceback.format_exc()}")
        return path
    except OSError as err:
        return f"(none: cannot write one in {tempfile.gettempdir()}: {err.strerror})"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code (see the module's docstring). Usage errors exit 2 in argparse. Signals
    (scalebench.interrupts) and output streams (scalebench.cli.streams) are handled here, for every
    command from its first line on: the parser, which imports every command's module, included."""
    words = list(sys.argv[1:] if argv is None else argv)
    command = words[0] if words and words[0].isalpha() else ""  # until the parser says: it may be interrupted
    with interrupts.handled(), streams.guarded():
        try:
            with interrupts.armed():
                faultpoints.reached("main:parse")
                args = build_parser().parse_args(argv)
                if getattr(args, "reframe_args", None) and args.reframe_args[0] == "--":
                    args.reframe_args = args.reframe_args[1:]
                command = args.command
                status = int(args.func(args))
                sys.stdout.flush()  # here, not at exit: a stdout that cannot be written is said like any output
                return status
        except ScalebenchError as err:
            message = str(err)  # messages quote excerpts; a longer one is still cut, to stay one readable line
            print(f"{_who(command)}: error: "
                  f"{printable(message if len(message) <= 900 else message[:897] + '...')}", file=sys.stderr)
            for line in err.details[:100]:
                print(f"  {printable(line[:900])}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except KeyboardInterrupt as err:  # interrupts.Interrupted, or a KeyboardInterrupt of a caller's handler
            stop = err if isinstance(err, interrupts.Interrupted) else interrupts.Interrupted(signal.SIGINT)
            print(f"{_who(command)}: interrupted ({stop.name}){': ' + stop.detail if stop.detail else ''}",
                  file=sys.stderr)
            return stop.exit_code
        except Exception as err:  # noqa: BLE001 - a bug: one line and the traceback kept, not a traceback as output
            log = _crash_log(command)
            what = printable(f"{type(err).__name__}: {err}")
            print(f"{_who(command)}: internal error ({what[:200]}); please report it with the traceback "
                  f"in {log}", file=sys.stderr)
            return EXIT_INTERNAL


def _who(command: str) -> str:
    return f"scalebench {command}" if command else "scalebench"
