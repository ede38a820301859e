"""Lab proof of HPL's scalability model (scalebench.hpl.model): predict, then measure, on emulated links.

For each link profile (site_configs/link_profiles.yaml) it starts the throwaway Slurm cluster in netns
mode, four nodes of one core each with shaped links, and
1. runs the calibration: HPL on one node (through ReFrame, the plan's deck), NetPIPE between two
   nodes (latency and pair bandwidth), and hpcc's rings on 2 and 4 nodes (the bandwidth each node
   gets while all of them send: the load exponent);
2. predicts HPL's efficiency on 2 and 4 nodes from those figures alone, with the published formula
   and with the model as scalebench uses it, and prints the predictions;
3. runs HPL on 2 and 4 nodes (ReFrame, the plan's decks) and prints profile, nodes, predicted,
   measured and the error; it exits 1 when an error exceeds --target (10% relative). Beside them,
   what the report expects of the same runs afterwards: the rank rate scaled by each job's own DGEMM
   ceiling (every rank busy: the clock of a busy machine, cores shared), not part of the target.

This machine has 2 cores: on 4 one-core nodes two ranks share each core. The model is told so
(ranks_per_core = ranks / cores): each rank computes at half the rate, and the rings on 4 nodes
measure what sharing does to the network (a rank waits for a partner that is not running). The lab
runs at nice -15, ahead of other work on the machine. Heavy: run it under the shared lock on a quiet
machine, e.g.

    cat /proc/loadavg
    flock /tmp/sb-heavy.lock timeout 5400 .venv/bin/python scripts/bench/model_lab.py
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from scalebench import paths
from scalebench.hpl import model
from scalebench.hpl.plan import HplSettings, plan_hpl
from scalebench.interconnect import microbench
from scalebench.parse.hpcc import parse_hpcc
from scalebench.plan import site_specs
from scalebench.results import expected
from scalebench.results.sections.hpl import hpl_lines
from scalebench.results.sections.transports import fabric_figures
from scalebench.results.store import load
from scalebench.site.rundir import new_run_dir
from scalebench.site.siteconf import site_systems
from scalebench_lab import cluster

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hpl_decks import wait_for_idle  # noqa: E402  (a sibling script)

SITE = paths.SITE_CONFIGS / "sites" / "testcluster-netns.yaml"
XHPL = paths.REPO_ROOT / "build" / "bin" / "xhpl"
NETPIPE_MAX_BYTES = 2**23  # well past the shaper's burst (256 KiB at 1 Gbit/s): the slope is the link's
RING_NODES = (2, 4)
PREDICTED_NODES = (2, 4)


def reframe(state: cluster.State, run_dir: Path, profile: str, names: str, budget: float, trials: int,
            timeout: float) -> None:
    checks = paths.REPO_ROOT / "reframe_tests"
    argv = [str(Path(sys.executable).with_name("reframe")), "-C", str(paths.SITE_CONFIGS / "slurm.py"),
            "-c", str(checks / "hpl.py"), "-c", str(checks / "microbench.py"), "-r", "-n", names,
            "-p", f"tcp-{profile}", "-S", "HPLCheck.ranks_per_node=1", "-S", "HPLCheck.efficiency_floor=0",
            "-S", f"HPLCheck.hpl_binary={XHPL}", "-S", f"HPLCheck.time_budget_s={budget:g}",
            "-S", f"HPLCheck.trials={trials}", "-S", f"NetPIPECheck.max_bytes={NETPIPE_MAX_BYTES}"]
    env = state.client_env()
    env.update(SCALEBENCH_SITE=str(SITE), SCALEBENCH_RUN_DIR=str(run_dir))
    status = subprocess.run(state.client_argv(argv), env=env, timeout=timeout, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL).returncode
    if status:
        raise SystemExit(f"model_lab: reframe exited {status}; see {run_dir}")


def ring(state: cluster.State, work: Path, nodes: int, timeout: float) -> tuple[float, float]:
    """(per-node bandwidth in bytes/s, latency in s) of hpcc's randomly ordered ring on `nodes`
    one-rank nodes, run with srun in the cluster."""
    directory = Path(tempfile.mkdtemp(prefix=f"ring{nodes}-", dir=work))
    (directory / "hpccinf.txt").write_text(microbench.hpcc_network_input(nodes, 1, 2 * 2**30, 1152))
    env = state.client_env()
    env.update(OMPI_MCA_btl="tcp,self", OMPI_MCA_pml="ob1", OMPI_MCA_btl_tcp_if_include="10.77.0.0/24",
               OMPI_MCA_oob_tcp_if_include="10.77.0.0/24", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", SLURM_MPI_TYPE="pmix")
    argv = state.client_argv(["srun", "-N", str(nodes), "-n", str(nodes), f"--chdir={directory}", "hpcc"])
    subprocess.run(argv, env=env, timeout=timeout, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    figures = microbench.hpcc_network_figures(parse_hpcc((directory / "hpccoutf.txt").read_text()))
    return figures["random_ring_bandwidth"][0] * 1e9, figures["random_ring_latency"][0] * 1e-6


def retransmitted(state: cluster.State) -> int:
    """TCP segments the cluster's namespaces have retransmitted so far (/proc/net/snmp's RetransSegs):
    a shaper that drops makes TCP wait for its retransmission timeout, which no bandwidth shows."""
    total = 0
    for entry in state.data.get("created", []):
        if entry["kind"] != "netns":
            continue
        text = subprocess.run(["nsenter", f"--net=/run/netns/{entry['name']}", "cat", "/proc/net/snmp"],
                              capture_output=True, text=True, timeout=10).stdout
        rows = [line.split()[1:] for line in text.splitlines() if line.startswith("Tcp:")]
        if len(rows) == 2 and "RetransSegs" in rows[0]:
            total += int(rows[1][rows[0].index("RetransSegs")])
    return total


def plans(budget: float, trials: int) -> dict[int, model.Case]:
    partitions, stacks, _ = site_specs(site_systems(SITE))
    partition = partitions[0]
    settings = HplSettings(ranks_per_node=1, binary=str(XHPL), time_budget_s=budget, trials=trials)
    cores = cluster.machine_cpus()
    out = {}
    for nodes in PREDICTED_NODES:
        plan = plan_hpl(partition, next(iter(stacks.values())), f"{nodes}_nodes", settings)
        out[nodes] = replace(model.Case.from_plan(plan), ranks_per_core=max(1.0, plan.job.tasks / cores))
    return out


def measured_efficiency(run_dir: Path) -> dict[int, tuple[float, float | None]]:
    """nodes -> (efficiency, the same job's DGEMM ceiling in Gflop/s, shown to tell a slow machine)."""
    return {line.nodes: (line.efficiency / 100, line.dgemm) for line in hpl_lines(load([run_dir], index=False).table)
            if line.nodes and line.efficiency is not None}


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
        reframe(state, calibration_dir, profile, "HPLCheck%scale=1_node$|NetPIPECheck%placement=inter_node",
                args.time_budget, args.trials, args.timeout)
        table = load([calibration_dir], index=False).table
        cases = [case for _, case in table.cases_by_id().values()]
        figures = fabric_figures(cases, "inter_node")
        figures["bandwidth_mbs"] = expected.asymptotic_bandwidth(cases, "inter_node") or 0.0
        link = expected.link_from(figures, f"NetPIPE: {figures.get('latency_us', 0):.3g} us, "
                                           f"{figures['bandwidth_mbs']:.1f} MB/s at {NETPIPE_MAX_BYTES} B")
        if link is None:
            raise SystemExit(f"model_lab: {profile}: no NetPIPE figures in {calibration_dir}")
        rings = {nodes: ring(state, work, nodes, args.timeout) for nodes in RING_NODES}
        loaded = expected.loaded(link, [(n, b) for n, (b, _) in rings.items()], None, "hpcc's rings at 2 and 4 nodes")
        one = next(line for line in hpl_lines(table) if line.nodes == 1)
        rate = model.rate_from_run(one.point().case(), one.rmax, None, "HPL on 1 node")
        print(f"lab: {profile}: 1-node HPL {one.rmax:.2f} Gflop/s ({one.efficiency:.1f}% of Rpeak, DGEMM ceiling "
              f"{one.dgemm} Gflop/s); {link.source}; rings "
              f"{', '.join(f'{n} nodes {b / 1e6:.1f} MB/s, {a * 1e6:.3g} us' for n, (b, a) in rings.items())}: "
              f"load exponent {loaded.load_exponent:.3g}", flush=True)
        cases_at = plans(args.time_budget, args.trials)
        one_dgemm = one.dgemm
        predicted = {}
        for nodes, case in cases_at.items():
            predicted[nodes] = (model.published(case, rate, link).efficiency,
                                model.predict(case, rate, loaded).efficiency)
            print(f"lab: {profile}: predicted at {nodes} nodes (N={case.n}, {case.p} x {case.q}, "
                  f"{case.ranks_per_core:g} rank(s) per core): published {predicted[nodes][0]:.1%}, "
                  f"model {predicted[nodes][1]:.1%}", flush=True)
        run_dir = new_run_dir(results)
        run_dir = run_dir.with_name(f"{run_dir.name}-model-lab-{profile}")
        names = "HPLCheck%scale=(" + "|".join(f"{n}_nodes" for n in PREDICTED_NODES) + ")$"
        before = retransmitted(state)
        reframe(state, run_dir, profile, names, args.time_budget, args.trials, args.timeout)
        print(f"lab: {profile}: TCP retransmitted {retransmitted(state) - before} segment(s) during the 2- and "
              f"4-node runs", flush=True)
        measured = measured_efficiency(run_dir)
        for nodes in PREDICTED_NODES:
            published, refined = predicted[nodes]
            got, dgemm = measured.get(nodes, (None, None))
            after = None
            if dgemm and one_dgemm:  # the report's expectation: this job's compute, as its DGEMM measured it
                case = replace(cases_at[nodes], ranks_per_core=1.0)
                scaled = model.RankRate(rate.gflops * dgemm / case.ranks / one_dgemm, "scaled by the job's DGEMM")
                after = model.predict(case, scaled, loaded).efficiency
            rows.append((profile, nodes, published, refined, got, (refined - got) / got if got else None, after))
            print(f"lab: {profile}: measured at {nodes} nodes: {got:.1%} (the job's DGEMM ceiling {dgemm} Gflop/s)"
                  if got else f"lab: {profile}: nothing measured at {nodes} nodes", flush=True)
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
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("model_lab: needs root (network namespaces, Slurm daemons)")
    # Ahead of other work on these 2 cores (the daemons and ranks inherit it): a rank left a third of
    # a core runs HPL at its pace (seen: StarDGEMM 28 and 79 Gflop/s on the two ranks of one job).
    os.nice(-15)
    if not XHPL.is_file():
        raise SystemExit(f"model_lab: {XHPL.relative_to(paths.REPO_ROOT)} not built (scripts/build-xhpl.sh)")
    print(f"lab: load {loads()}, {cluster.machine_cpus()} cores", flush=True)
    start = time.monotonic()
    rows = []
    for profile in args.profiles.split(","):
        rows += run_profile(profile, args, Path(args.results))
    print(f"\n{'profile':8} {'nodes':>5} {'published':>10} {'predicted':>10} {'measured':>9} {'error':>7}   "
          f"{'report expects':>14} {'error':>7}")
    for profile, nodes, published, refined, got, error, after in rows:
        line = f"{profile:8} {nodes:5d} {published:10.1%} {refined:10.1%} "
        line += f"{got:9.1%} {error:+7.1%}" if got else f"{'-':>9} {'-':>7}"
        if after and got:
            line += f"   {after:14.1%} {(after - got) / got:+7.1%}"
        print(line)
    worst = max((abs(r[5]) for r in rows if r[5] is not None), default=float("inf"))
    print(f"\nworst error {worst:.1%} (target {args.target:.0%}); {time.monotonic() - start:.0f} s; load {loads()}")
    return 0 if worst <= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
