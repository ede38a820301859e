"""Lab proof of HPL's scalability model (scalebench.hpl.model): predict, then measure, on emulated links.

For each link profile (site_configs/link_profiles.yaml) it starts the throwaway Slurm cluster in netns
mode, four nodes of one core each with shaped links, and
1. runs the calibration: HPL on one node (through ReFrame, the plan's deck), NetPIPE between two
   nodes (latency and pair bandwidth), hpcc's rings on 2 and 4 nodes (the bandwidth each node gets
   while all of them send: the load exponent; on 2 one-rank nodes the ring is an exchange between
   them, each sending to the other while receiving: the exchange share), and DGEMM on every rank of a
   2- and a 4-node job at once (xhpl's repeats around a token solve);
2. predicts HPL's efficiency on 2 and 4 nodes from those figures alone and prints the predictions;
3. runs HPL on 2 and 4 nodes (ReFrame, the plan's decks) and prints profile, nodes, predicted,
   measured and the error; it exits 1 when an error exceeds --target (10% relative).

g, the rank's compute rate, is the 1-node HPL's (its share of its own DGEMM) carried to the predicted
job by the DGEMM its ranks reach all at once (model.rate_at_dgemm). The columns:
- "published": the page's formula with the 1-node rate, and "1-node": the refined model with it, each
  rank at 1 / (ranks per core) of it (the lab's 4 nodes on 2 cores);
- "before runs": g from the concurrent DGEMM of step 1, minutes before the runs;
- "predicted" (the one the target judges): g from the job's own DGEMM, timed on every rank at once in
  the same job just before its solves (xhpl's DGEMM_Before repeats). The prediction is made when the
  job starts, from what it measured before solving, never from the solve; the issue's "g from the
  same job's DGEMM ceiling".
Why the DGEMM of the job: this machine's 2 vCPUs are shared (other helpers' work, the hypervisor), and
the lab's nodes share them too, so a one-rank calibration runs one core at turbo while the 2- and
4-node jobs run every core, some of it taken: seen, a 1-node rank at 115% of the nominal Rpeak and the
2-node job's ranks' DGEMM 24% below it. On a real cluster each node has its own cores, and the 1-node
rate carries over as it is (scalebench predict does so).

This machine has 2 cores: on 4 one-core nodes two ranks share each core (the site's Open MPI yields
while it waits, so that a waiting rank does not spin through its partner's time), and the rings on 4
nodes measure what sharing does to the network (CPU-bound TCP on 10GbE). The shaped links' 4-node
runs were faster than the published column phase allowed (on 100Mb its 2 x 2 communication alone,
114 s, exceeded the measured solve, 96 s): at P = 2 HPL's spread and roll move U once, half of it
in an exchange both ways at once, where the page counts it three times one way (scalebench.hpl.model's
docstring). The lab runs at nice -15, ahead of other work on the machine. Heavy:
run it under the shared lock on a quiet machine, one profile per run so that others can take the lock
between them, e.g.

    cat /proc/loadavg
    flock /tmp/sb-heavy.lock timeout 5400 .venv/bin/python scripts/bench/model_lab.py --profiles 10GbE

--smoke checks that the script runs, in minutes and on a busy machine too (its figures are worthless):
the options of SMOKE, NetPIPE to SMOKE_NETPIPE_MAX_BYTES, a noisy 1-node calibration taken as it is,
and every scale measured is a pass, whatever its error.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from scalebench import loaders, paths
from scalebench.hpl import deck, model
from scalebench.hpl.case_plan import HplPlan, HplSettings, plan_hpl
from scalebench.hpl.hpcc_output import parse_hpcc
from scalebench.hpl.outcome import dgemm_repeats
from scalebench.reporting import expected, noise
from scalebench.reporting.hpl_table import hpl_lines
from scalebench.reporting.sections.transports import fabric_figures
from scalebench.reporting.store import load
from scalebench.benchmarks.hpcc import outcome as hpcc_outcome, rules as hpcc_rules
from scalebench.site.rundir import new_run_dir
from scalebench.site.siteconf import site_systems
from scalebench.site_plan import site_specs
from scalebench_lab import cluster

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hpl_decks import wait_for_idle  # noqa: E402  (a sibling script)

SITE = paths.SITE_CONFIGS / "sites" / "testcluster-netns.yaml"
XHPL = paths.REPO_ROOT / "build" / "bin" / "xhpl"
NETPIPE_MAX_BYTES = 2**23  # well past the shaper's burst (256 KiB at 1 Gbit/s): the slope is the link's
RING_NODES = (2, 4)
PREDICTED_NODES = (2, 4)
CALIBRATION_ATTEMPTS = 3  # of the 1-node HPL, when its solves disagree
SMOKE = {"time_budget": 0.05, "trials": 1, "wait": 0.0}  # --smoke's values of those options
SMOKE_NETPIPE_MAX_BYTES = 2**16  # NetPIPE to NETPIPE_MAX_BYTES takes half a minute here
# An xhpl built with -DHPL_DETAILED_TIMING prints, after each solve, each phase's time on the rank
# that spent the most in it (HPL_pdtest.c): "+ Max aggregated wall time mxswp . . :  1.23"
PHASE_RE = re.compile(r"\+? ?Max aggregated wall time ([a-z][a-z ]*?)[ .]*: +(\d{1,9}\.\d+)")
ROW_RE = re.compile(r"W[RC]\d\S* +\d+ +\d+ +(\d+) +(\d+) +(\d{1,9}\.\d+) ")
MAX_OUTPUT_BYTES = 2**20


def reframe(state: cluster.State, run_dir: Path, profile: str, names: str, args: argparse.Namespace) -> int:
    checks = paths.REPO_ROOT / "reframe_tests"
    argv = [str(Path(sys.executable).with_name("reframe")), "-C", str(paths.SITE_CONFIGS / "slurm.py"),
            "-c", str(checks / "hpl.py"), "-c", str(checks / "microbench.py"), "-r", "-n", names,
            "-p", f"tcp-{profile}", "-S", "HPLCheck.ranks_per_node=1", "-S", "HPLCheck.efficiency_floor=0",
            "-S", f"HPLCheck.hpl_binary={args.hpl_binary}", "-S", f"HPLCheck.time_budget_s={args.time_budget:g}",
            "-S", f"HPLCheck.trials={args.trials}", "-S", f"NetPIPECheck.max_bytes={args.netpipe_max_bytes}"]
    env = state.client_env()
    env.update(SCALEBENCH_SITE=str(SITE), SCALEBENCH_RUN_DIR=str(run_dir))
    return subprocess.run(state.client_argv(argv), env=env, timeout=args.timeout, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode


def ring(state: cluster.State, work: Path, nodes: int, timeout: float) -> tuple[float, float]:
    """(per-node bandwidth in bytes/s, latency in s) of hpcc's randomly ordered ring on `nodes`
    one-rank nodes, run with srun in the cluster."""
    directory = Path(tempfile.mkdtemp(prefix=f"ring{nodes}-", dir=work))
    (directory / "hpccinf.txt").write_text(hpcc_rules.hpcc_network_input(nodes, 1, 2 * 2**30, 1152))
    env = state.client_env()
    env.update(stack_env())  # the MPI settings the HPL jobs run with
    argv = state.client_argv(["srun", "-N", str(nodes), "-n", str(nodes), f"--chdir={directory}", "hpcc"])
    subprocess.run(argv, env=env, timeout=timeout, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    figures = hpcc_outcome.hpcc_network_figures(parse_hpcc((directory / "hpccoutf.txt").read_text()))
    return figures["random_ring_bandwidth"][0] * 1e9, figures["random_ring_latency"][0] * 1e-6


def stack_env() -> dict[str, str]:
    """The environment of the site's stacks (one Open MPI over TCP for every profile)."""
    site = loaders.load_yaml(SITE, "the lab's site")
    return {str(k): str(v) for k, v in site["stacks"][0]["env_vars"].items()}


def tcp_losses(state: cluster.State) -> tuple[int, int]:
    """(segments retransmitted, retransmission timeouts) of the cluster's namespaces so far
    (/proc/net/snmp's RetransSegs, /proc/net/netstat's TCPTimeouts): a shaper or a backlog that drops
    makes TCP resend, and a timeout stalls the flow at least 200 ms (Linux's TCP_RTO_MIN), which no
    bandwidth shows."""
    totals = [0, 0]
    for entry in state.data.get("created", []):
        if entry["kind"] != "netns":
            continue
        for i, (path, prefix, name) in enumerate((("/proc/net/snmp", "Tcp:", "RetransSegs"),
                                                  ("/proc/net/netstat", "TcpExt:", "TCPTimeouts"))):
            text = subprocess.run(["nsenter", f"--net=/run/netns/{entry['name']}", "cat", path],
                                  capture_output=True, text=True, timeout=10).stdout
            rows = [line.split()[1:] for line in text.splitlines() if line.startswith(prefix)]
            if len(rows) == 2 and name in rows[0]:
                totals[i] += int(rows[1][rows[0].index(name)])
    return totals[0], totals[1]


def plans(args: argparse.Namespace) -> dict[int, HplPlan]:
    partitions, stacks, _ = site_specs(site_systems(SITE))
    settings = HplSettings(ranks_per_node=1, hpl_binary=str(args.hpl_binary), time_budget_s=args.time_budget,
                           trials=args.trials)
    return {nodes: plan_hpl(partitions[0], next(iter(stacks.values())), f"{nodes}_nodes", settings)
            for nodes in PREDICTED_NODES}


def shared(plan: HplPlan) -> model.Case:
    """The plan's case with its ranks time-sharing this machine's cores."""
    case = model.Case.from_plan(plan)
    return replace(case, ranks_per_core=max(1.0, plan.job.tasks / cluster.machine_cpus()))


def per_rank(repeats: tuple[float, ...], ranks: int) -> float | None:
    """Gflop/s per rank of DGEMM repeats summed over the ranks: their median (a repeat disturbed or
    alone on a quiet core moves it less than the best)."""
    return statistics.median(repeats) / ranks if repeats else None


def concurrent_dgemm(state: cluster.State, work: Path, plan: HplPlan, timeout: float) -> float:
    """Gflop/s per rank of DGEMM on every rank of `plan`'s job at once, as its HPL job times it (xhpl's
    repeats, here around a token solve)."""
    directory = Path(tempfile.mkdtemp(prefix=f"dgemm{plan.job.nodes}-", dir=work))
    token = replace(plan.deck, n=plan.deck.nb * max(plan.deck.p, plan.deck.q))
    (directory / plan.input_file()[0]).write_text(deck.hpl_dat(token))
    env = state.client_env()
    env.update(stack_env(), **plan.env_vars, **plan.job.env_vars)
    tasks = str(plan.job.tasks)
    argv = state.client_argv(["srun", "-N", str(plan.job.nodes), "-n", tasks, f"--chdir={directory}",
                              plan.binary])
    output = subprocess.run(argv, env=env, timeout=timeout, check=True, capture_output=True, text=True).stdout
    repeats = dgemm_repeats(output)
    rate = per_rank(repeats.before, plan.job.tasks) if repeats else None
    if rate is None:
        raise SystemExit(f"model_lab: no DGEMM repeats from xhpl on {plan.job.nodes} nodes (see {directory})")
    return rate


def measured(run_dir: Path) -> dict[int, tuple[float, float | None, str]]:
    """nodes -> (efficiency, Gflop/s per rank of the DGEMM the same job timed before its solves, what
    made the run noisy or '')."""
    table = load([run_dir], index=False).table
    before = {}
    for _, case in table.cases_by_id().values():
        repeats = noise.recorded_repeats(case) if case.benchmark == "HPLCheck" and case.num_tasks else None
        if repeats and case.num_nodes and case.num_tasks:
            before[case.num_nodes] = per_rank(repeats.before, case.num_tasks)
    return {line.nodes: (line.efficiency / 100, before.get(line.nodes), line.noise) for line in hpl_lines(table)
            if line.nodes and line.efficiency is not None}


def phase_times(run_dir: Path) -> dict[int, list[dict[str, float]]]:
    """nodes -> per solve, HPL's phase times in seconds and its wall time ("wall"), from the jobs'
    output in `run_dir` (one rank per node: nodes = P x Q); nothing for an xhpl without them."""
    found: dict[int, list[dict[str, float]]] = {}
    for output in sorted(run_dir.glob("output/**/rfm_job.out")):
        with output.open(errors="replace") as handle:
            text = handle.read(MAX_OUTPUT_BYTES)
        solves: list[dict[str, float]] = []
        nodes = 0
        for line in text.splitlines():
            if row := ROW_RE.match(line):
                nodes = int(row[1]) * int(row[2])
                solves.append({"wall": float(row[3])})
            elif (phase := PHASE_RE.match(line)) and solves:
                solves[-1][phase[1].strip()] = float(phase[2])
        if nodes and any(len(solve) > 1 for solve in solves):
            found.setdefault(nodes, []).extend(solves)
    return found


def loads() -> str:
    return "/".join(f"{v:.2f}" for v in os.getloadavg())


def run_profile(profile: str, args: argparse.Namespace, results: Path) -> list[tuple]:
    work = Path(f"/tmp/sbml-{profile}")  # short: Slurm puts unix sockets under it
    # Other work on these 2 cores slows the 2- and 4-node runs (every core busy) more than the 1-node one.
    print(f"lab: {profile}: waiting for a load below {args.max_load:g} (now {loads()})", flush=True)
    print(f"lab: {profile}: starting at load {wait_for_idle(args.max_load, args.wait):.2f}", flush=True)
    state = cluster.start(work, 4, "netns", cpus_per_node=1, shape=profile)
    rows = []
    try:
        calibration_dir = new_run_dir(results)
        calibration_dir = calibration_dir.with_name(f"{calibration_dir.name}-model-lab-{profile}-calibration")
        status = reframe(state, calibration_dir, profile, "HPLCheck%scale=1_node$|NetPIPECheck%placement=inter_node",
                         args)
        if status:  # nothing to predict from
            raise SystemExit(f"model_lab: {profile}: calibration: reframe exited {status}; see {calibration_dir}")
        table = load([calibration_dir], index=False).table
        cases = [case for _, case in table.cases_by_id().values()]
        figures = fabric_figures(cases, "inter_node")
        figures["bandwidth_mbs"] = expected.asymptotic_bandwidth(cases, "inter_node") or 0.0
        link = expected.link_from(figures, f"NetPIPE: {figures.get('latency_us', 0):.3g} us, "
                                           f"{figures['bandwidth_mbs']:.1f} MB/s at {args.netpipe_max_bytes} B")
        if link is None:
            raise SystemExit(f"model_lab: {profile}: no NetPIPE figures in {calibration_dir}")
        rings = {nodes: ring(state, work, nodes, args.timeout) for nodes in RING_NODES}
        loaded = expected.loaded(link, [(n, b) for n, (b, _) in rings.items()], None, "hpcc's rings at 2 and 4 nodes")
        loaded = expected.with_exchange(loaded, rings[2][0], "hpcc's ring on 2 nodes")
        one, hpl_dir = next(line for line in hpl_lines(table) if line.nodes == 1), calibration_dir
        if args.smoke:
            one = replace(one, noise="")
        for attempt in range(CALIBRATION_ATTEMPTS - 1):
            if one.point() is not None:
                break
            # its solves disagree: the machine was disturbed, and its rate would move every prediction
            print(f"lab: {profile}: the 1-node HPL is noisy ({one.noise}); running it again", flush=True)
            hpl_dir = new_run_dir(results)
            hpl_dir = hpl_dir.with_name(f"{hpl_dir.name}-model-lab-{profile}-calibration")
            if reframe(state, hpl_dir, profile, "HPLCheck%scale=1_node$", args):
                continue
            one = next(line for line in hpl_lines(load([hpl_dir], index=False).table) if line.nodes == 1)
        point = one.point()
        if point is None:
            raise SystemExit(f"model_lab: {profile}: no clean 1-node HPL in {CALIBRATION_ATTEMPTS} attempts: "
                             f"{one.noise}")
        rate = model.rate_from_run(point.case(), one.rmax, None, "HPL on 1 node")
        one_dgemm = measured(hpl_dir).get(1, (None, None, ""))[1]
        plan_at = plans(args)
        concurrent = {nodes: concurrent_dgemm(state, work, plan, args.timeout) for nodes, plan in plan_at.items()}
        print(f"lab: {profile}: 1-node HPL {one.rmax:.2f} Gflop/s ({one.efficiency:.1f}% of Rpeak, its DGEMM "
              f"{one_dgemm or 0:.1f} Gflop/s before the solves); {link.source}; rings "
              f"{', '.join(f'{n} nodes {b / 1e6:.1f} MB/s, {a * 1e6:.3g} us' for n, (b, a) in rings.items())}: "
              f"load exponent {loaded.load_exponent:.3g}; exchange share {loaded.exchange_share or 0:.2f}; "
              f"DGEMM per rank all at once "
              f"{', '.join(f'{n} nodes {g:.1f}' for n, g in concurrent.items())} Gflop/s", flush=True)
        if not one_dgemm:
            raise SystemExit(f"model_lab: {profile}: the 1-node HPL timed no DGEMM (see {calibration_dir})")

        def at_dgemm(nodes: int, dgemm: float, source: str) -> float:
            case = replace(model.Case.from_plan(plan_at[nodes]), ranks_per_core=1.0)  # the DGEMM shared the cores
            return model.predict(case, model.rate_at_dgemm(rate, one_dgemm, dgemm, source), loaded).efficiency

        before_runs = {}
        for nodes, plan in plan_at.items():
            case = shared(plan)
            before_runs[nodes] = (model.published(case, rate, link).efficiency,
                                  model.predict(case, rate, loaded).efficiency,
                                  at_dgemm(nodes, concurrent[nodes], "scaled by DGEMM on every rank at once"))
            print(f"lab: {profile}: predicted at {nodes} nodes (N={case.n}, {case.p} x {case.q}, "
                  f"{case.ranks_per_core:g} rank(s) per core) before the runs: published {before_runs[nodes][0]:.1%}, "
                  f"1-node rate {before_runs[nodes][1]:.1%}, concurrent DGEMM {before_runs[nodes][2]:.1%}", flush=True)
        run_dir = new_run_dir(results)
        run_dir = run_dir.with_name(f"{run_dir.name}-model-lab-{profile}")
        names = "HPLCheck%scale=(" + "|".join(f"{n}_nodes" for n in PREDICTED_NODES) + ")$"
        before = tcp_losses(state)
        # A failed scale is a row without a measurement, which misses the target; the other profiles still run.
        status = reframe(state, run_dir, profile, names, args)
        if status:
            print(f"lab: {profile}: reframe exited {status} on the 2- and 4-node runs; see {run_dir}", flush=True)
        after = tcp_losses(state)
        print(f"lab: {profile}: TCP retransmitted {after[0] - before[0]} segment(s), {after[1] - before[1]} after a "
              f"timeout, during the 2- and 4-node runs", flush=True)
        found = measured(run_dir)
        for nodes in PREDICTED_NODES:
            got, dgemm, noisy = found.get(nodes, (None, None, ""))
            # the target's prediction: made as the job starts, from the DGEMM it timed before solving
            predicted = at_dgemm(nodes, dgemm, "scaled by the job's DGEMM before its solves") if dgemm else None
            error = (predicted - got) / got if got and predicted else None
            rows.append((profile, nodes, *before_runs[nodes], predicted, got, error))
            print(f"lab: {profile}: at {nodes} nodes the job's DGEMM before its solves {dgemm or 0:.1f} Gflop/s per "
                  f"rank: predicted {predicted or 0:.1%}; measured {got or 0:.1%}{f' ({noisy})' if noisy else ''}",
                  flush=True)
        for nodes, solves in sorted(phase_times(run_dir).items()):
            for solve in solves:
                print(f"lab: {profile}: at {nodes} nodes HPL's phases (s, the busiest rank's): "
                      f"{', '.join(f'{name} {seconds:.2f}' for name, seconds in solve.items())}", flush=True)
        print(f"lab: {profile}: done at load {loads()}", flush=True)
    finally:
        cluster.stop(work)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profiles", default="10GbE,1GbE,100Mb")
    parser.add_argument("--time-budget", type=float, default=4.0, help="seconds of the 1-node solve (HPL's N)")
    parser.add_argument("--trials", type=int, default=2, help="solves per case; Rmax is the best")
    parser.add_argument("--target", type=float, default=0.10, help="largest relative error accepted")
    parser.add_argument("--results", default=str(paths.RESULTS))
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per ReFrame or srun run")
    parser.add_argument("--max-load", type=float, default=1.0, help="wait for a 1-minute load below this")
    parser.add_argument("--wait", type=float, default=1800, help="longest wait for it, seconds")
    parser.add_argument("--hpl-binary", type=Path, default=XHPL,
                        help="the xhpl every job runs (default: build/bin/xhpl); an absolute path, seen by every node")
    parser.add_argument("--smoke", action="store_true", help="a run that checks the script works")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    args.netpipe_max_bytes = SMOKE_NETPIPE_MAX_BYTES if args.smoke else NETPIPE_MAX_BYTES
    args.hpl_binary = args.hpl_binary.resolve()  # the nodes run it from their own working directories
    if os.geteuid() != 0:
        raise SystemExit("model_lab: needs root (network namespaces, Slurm daemons)")
    # Ahead of other work on these 2 cores (the daemons and ranks inherit it): a rank left a third of
    # a core runs HPL at its pace (seen: StarDGEMM 28 and 79 Gflop/s on the two ranks of one job).
    os.nice(-15)
    if not Path(args.hpl_binary).is_file():
        raise SystemExit(f"model_lab: {args.hpl_binary} not built (scripts/build-xhpl.sh)")
    print(f"lab: load {loads()}, {cluster.machine_cpus()} cores", flush=True)
    start = time.monotonic()
    rows = []
    for profile in args.profiles.split(","):
        rows += run_profile(profile, args, Path(args.results))
    print(f"\n{'profile':8} {'nodes':>5} {'published':>10} {'1-node':>7} {'before runs':>11} {'predicted':>10} "
          f"{'measured':>9} {'error':>7}")
    for profile, nodes, published, one_node, concurrent, predicted, got, error in rows:
        cells = [f"{v:.1%}" if v is not None else "-" for v in (published, one_node, concurrent, predicted, got)]
        print(f"{profile:8} {nodes:5d} {cells[0]:>10} {cells[1]:>7} {cells[2]:>11} {cells[3]:>10} {cells[4]:>9} "
              f"{f'{error:+.1%}' if error is not None else '-':>7}")
    # a scale not measured is a miss, never left out
    worst = max((abs(r[-1]) if r[-1] is not None else float("inf") for r in rows), default=float("inf"))
    print(f"\nworst error {worst:.1%} (target {args.target:.0%}); {time.monotonic() - start:.0f} s; load {loads()}")
    if args.smoke:
        return 0 if worst < float("inf") else 1
    return 0 if worst <= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
