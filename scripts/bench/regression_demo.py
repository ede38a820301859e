"""Benchmark: are regressions caught and noise not? Real HPL through ReFrame on the embedded default.

Run (root, cgroup v1 cpu controller; the machine otherwise idle):
    .venv/bin/python scripts/bench/regression_demo.py [--reference-runs 3] [--clean-runs 10]
        [--slowdowns 0.03,0.05,0.08,0.12] [--case 'HPLCheck%scale=1_core$'] [--time-budget 4] [--min-runs N]

1. runs the case --reference-runs times, checks acceptance (HPL efficiency >= 10%) and freezes
   references with `scalebench references freeze` (median, bound max(3 sigma, 3%));
2. runs it --clean-runs more times held to them: each failure is a false alarm;
3. runs it once per slowdown s with the reframe process tree in a cgroup allowed (1 - s) of the
   case's CPUs (a real slowdown of the solve), and reports which figures ReFrame failed.

Prints every run (Rmax, its deviation from the reference, ReFrame's verdict and the failing figures),
the false-alarm rate and the smallest slowdown detected. Everything goes to a temporary directory
(--keep to keep it); site_configs/references is not touched.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scalebench import paths

CPU_CGROUP = Path("/sys/fs/cgroup/cpu")
PERIOD_US = 100_000
THRESHOLDS = """criteria:
  - name: HPL efficiency
    benchmark: HPLCheck
    figure: efficiency
    min: 10%
"""


def reframe(results: Path, name: str, case: str, budget: float, references: Path,
            cpus: float | None) -> dict:
    """One ReFrame run of the case; its test case from report.json."""
    bin_dir = Path(sys.executable).parent
    argv = [str(bin_dir / "reframe"), "-C", str(paths.SITE_CONFIGS / "local.py"), "-c",
            str(paths.REPO_ROOT / "reframe_tests" / "hpl.py"), "-n", case, "-r", "-S", f"time_budget_s={budget}",
            "-S", "efficiency_floor=0", "-S", f"references_dir={references}"]
    run_dir = results / "runs" / name
    env = dict(os.environ, SCALEBENCH_RUN_DIR=str(run_dir))
    group = None
    if cpus is not None:
        group = CPU_CGROUP / f"scalebench-demo-{os.getpid()}"
        group.mkdir(exist_ok=True)
        (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (group / "cpu.cfs_quota_us").write_text(str(round(cpus * PERIOD_US)))
        argv = ["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$@"', "sh", *argv]
    try:
        subprocess.run(argv, env=env, capture_output=True, text=True, timeout=3600)
    finally:
        if group is not None:
            group.rmdir()
    report = json.loads((run_dir / "report.json").read_text())
    (testcase,) = [c for run in report["runs"] for c in run["testcases"] if c["name"].startswith("HPLCheck")]
    return testcase


def figures_failed(testcase: dict) -> list[str]:
    failed = []
    for key, (value, ref, lower, upper, *_rest) in testcase["perfvalues"].items():
        if value is None or not ref:
            continue
        if (lower is not None and value < ref * (1 + lower)) or (upper is not None and value > ref * (1 + upper)):
            failed.append(key.rsplit(":", 1)[-1])
    return sorted(failed)


def show(label: str, testcase: dict) -> list[str]:
    (value, ref, lower, *_rest) = next(v for k, v in testcase["perfvalues"].items() if k.endswith(":rmax"))
    failed = figures_failed(testcase)
    versus = f"{value / ref - 1:+6.1%} (bound {lower:+.1%})" if ref and lower is not None else "(no reference yet)"
    verdict = testcase["result"] + (f" in {testcase['fail_phase']}" if testcase.get("fail_phase") else "")
    print(f"{label:<26} Rmax {value:8.2f} Gflop/s  {versus:<26} {verdict:<22} {', '.join(failed) or '-'}",
          flush=True)
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference-runs", type=int, default=3)
    parser.add_argument("--clean-runs", type=int, default=10)
    parser.add_argument("--slowdowns", default="0.03,0.05,0.08,0.12")
    parser.add_argument("--case", default="HPLCheck%scale=1_core$")
    parser.add_argument("--cpus", type=float, default=1.0, help="CPUs the case uses (1 for 1_core)")
    parser.add_argument("--time-budget", type=float, default=4.0, help="seconds per HPL solve (sizes N)")
    parser.add_argument("--min-runs", type=int, default=None,
                        help="reference runs a figure needs to be frozen (default: references freeze's)")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    slowdowns = [float(s) for s in args.slowdowns.split(",") if s]
    if slowdowns and not (CPU_CGROUP / "cgroup.procs").is_file():
        print(f"regression_demo: slowdowns need cgroup v1's cpu controller at {CPU_CGROUP} (and root)",
              file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="scalebench-regressions-"))
    results, references = work / "results", work / "references"
    try:
        print(f"case {args.case}, time budget {args.time_budget:g} s per solve, work in {work}")
        for i in range(args.reference_runs):
            show(f"reference run {i + 1}", reframe(results, f"ref{i}", args.case, args.time_budget, references, None))
        (work / "thresholds.yaml").write_text(THRESHOLDS)
        min_runs = [] if args.min_runs is None else ["--min-runs", str(args.min_runs)]
        freeze = subprocess.run([str(Path(sys.executable).parent / "scalebench"), "references", "freeze",
                                 str(results), "--system", "local", "--thresholds", str(work / "thresholds.yaml"),
                                 "--references-dir", str(references), *min_runs], capture_output=True, text=True)
        print(freeze.stdout.strip() or freeze.stderr.strip())
        if freeze.returncode != 0:
            return 1
        alarms = 0
        for i in range(args.clean_runs):
            alarms += bool(show(f"clean run {i + 1}",
                                reframe(results, f"clean{i}", args.case, args.time_budget, references, None)))
        detected = []
        for s in slowdowns:
            failed = show(f"slowed by {s:.0%} (CPU quota)", reframe(results, f"slow{s}", args.case, args.time_budget,
                                                                   references, args.cpus * (1 - s)))
            if "rmax" in failed:
                detected.append(s)
        print(f"\nfalse alarms: {alarms} of {args.clean_runs} clean runs"
              f" ({alarms / args.clean_runs:.0%})" if args.clean_runs else "\nfalse alarms: no clean runs")
        print(f"smallest slowdown detected: {min(detected):.0%}" if detected else "no slowdown detected")
        print(f"slowdowns detected: {', '.join(f'{s:.0%}' for s in detected) or 'none'} of "
              f"{', '.join(f'{s:.0%}' for s in slowdowns)}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
