"""Synthetic ReFrame run reports with the structure of the real one (tests/data/reframe): every test case
starts as a copy of the real HPL test case, with only the check's own fields changed. Used by the report
tests and by scripts/bench/report_scale.py.
"""
from __future__ import annotations

import copy
import functools
import json
import uuid
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from scalebench.registry import provenance

REAL_REPORT = Path(__file__).resolve().parent / "data" / "reframe" / "hpl_local_run_report.json"
# Variables of the HPL check that another check would not have: what it records, and its knobs.
_HPL_ONLY = (*(f.name for f in provenance().recorded_by("HPLCheck")), "hpl_binary", "efficiency_floor",
             "expected_efficiency", "fixed_n", "memory_fraction", "nb", "time_budget_s", "threads_per_rank",
             "ranks_per_node", "scale")
MESSAGE_SIZES = tuple([0] + [2 ** k for k in range(23)])  # OSU's default progression, 0 B to 4 MiB


@functools.lru_cache(maxsize=None)
def _real() -> dict[str, Any]:
    return json.loads(REAL_REPORT.read_text())


def template() -> dict[str, Any]:
    """A copy of the real report's first (passed) test case."""
    return copy.deepcopy(_real()["runs"][0]["testcases"][0])


def testcase(benchmark: str, figures: Mapping[str, tuple[float | None, str]], *, params: Mapping[str, Any],
             system: str = "local", partition: str = "default", environ: str = "openmpi",
             stack: str = "openmpi-sm", num_nodes: int = 1, num_tasks: int = 1, cpus_per_task: int = 1,
             result: str = "pass", fail_phase: str | None = None, nodelist: Sequence[str] = ("vm",),
             extra: Mapping[str, Any] | None = None, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """One test case; `base` (a template() copy) may be passed in to avoid copying it again."""
    case = base if base is not None else template()
    if benchmark != "HPLCheck":
        for key in _HPL_ONLY:
            case.pop(key, None)
    name = " ".join([benchmark, *(f"%{k}={v}" for k, v in params.items())])
    case.update(
        name=name, display_name=name, short_name=benchmark, system=system, partition=partition, environ=environ,
        stack=stack, num_nodes=num_nodes, num_tasks=num_tasks, num_cpus_per_task=cpus_per_task,
        num_tasks_per_node=max(num_tasks // max(num_nodes, 1), 1), job_nodelist=list(nodelist), result=result,
        fail_phase=fail_phase, fail_reason=f"{fail_phase} failed" if fail_phase else None,
        perfvalues={f"{system}:{partition}:{figure}": [value, 0, None, None, unit, "pass"]
                    for figure, (value, unit) in figures.items()},
        **params, **(extra or {}))
    if isinstance(case.get("hpl_deck"), dict) and "hpl_deck" not in (extra or {}):
        # the real case's deck, made for this case's nodes and tasks (a 1 x tasks grid): counts that agree
        case["hpl_deck"] = dict(case["hpl_deck"], nodes=num_nodes, ranks_per_node=max(num_tasks // max(num_nodes, 1), 1),
                                p=1, q=num_tasks, ranks=num_tasks, idle_ranks=0)
    return case


def report(testcases: Iterable[dict[str, Any]], *, start: str = "20260101T000000+0000", hostname: str = "vm",
           cmdline: str = "reframe -C site_configs/local.py -c reframe_tests -r") -> dict[str, Any]:
    cases = list(testcases)
    for i, case in enumerate(cases):  # ReFrame's unique names: the ingest keys cases by them
        case["unique_name"] = f"{case['short_name']}_{i}"
    info = dict(_real()["session_info"], time_start=start, hostname=hostname, cmdline=cmdline,
                num_cases=len(cases), num_failures=sum(c["result"] == "fail" for c in cases),
                uuid=str(uuid.uuid4()))  # a session of its own: the ingest counts a session once
    return {"session_info": info, "restored_cases": [],
            "runs": [{"num_cases": len(cases), "num_failures": info["num_failures"], "num_aborted": 0,
                      "num_skipped": 0, "run_index": 0, "testcases": cases}]}


def write_run(results: Path, name: str, testcases: Iterable[dict[str, Any]],
              provenance: Mapping[str, Any] | None = None, **session: Any) -> Path:
    """results/runs/<name>/report.json (and provenance.json); returns the run directory."""
    run = results / "runs" / name
    run.mkdir(parents=True)
    (run / "report.json").write_text(json.dumps(report(testcases, **session), indent=2))  # as ReFrame writes it
    if provenance is not None:
        (run / "provenance.json").write_text(json.dumps(provenance))
    return run


# --- studies -------------------------------------------------------------------------------------------

def _scale(procs: int) -> str:
    return f"{procs}_core" if procs == 1 else f"{procs}_cores"


def hpl(stack: str, rmax_by_nodes: Mapping[int, float], *, rpeak_per_node: float = 1000.0,
        system: str = "cluster", partition: str = "cpu", ranks_per_node: int = 4) -> list[dict[str, Any]]:
    """HPL at whole-node scales: rmax, rpeak_gflops, efficiency per node count."""
    return [testcase("HPLCheck", {"rmax": (rmax, "Gflop/s"), "rpeak_gflops": (rpeak_per_node * nodes, "Gflop/s"),
                                  "efficiency": (100 * rmax / (rpeak_per_node * nodes), "%")},
                     params={"scale": f"{nodes}_node" if nodes == 1 else f"{nodes}_nodes"}, system=system,
                     partition=partition, stack=stack, num_nodes=nodes, num_tasks=nodes * ranks_per_node,
                     nodelist=[f"n{i:03d}" for i in range(nodes)])
            for nodes, rmax in rmax_by_nodes.items()]


def lammps(stack: str, rates: Mapping[int, float], *, workload: str = "lj", scaling: str = "strong",
           system: str = "cluster", partition: str = "cpu", steps: int = 1000, atoms: int = 32000
           ) -> list[dict[str, Any]]:
    """reframe_tests/lammps.py's figures from timesteps/s per process count."""
    return [testcase("LAMMPSCheck", {"timesteps_per_s": (rate, "timesteps/s"),
                                     "atom_steps_per_s": (rate * atoms * (procs if scaling == "weak" else 1),
                                                          "atom-steps/s"),
                                     "loop_time": (steps / rate, "s"), "comm_share": (2.0 * procs ** 0.5, "%")},
                     params={"scale": _scale(procs), "workload": workload, "scaling": scaling}, system=system,
                     partition=partition, stack=stack, num_tasks=procs, extra={"executable": "lmp"})
            for procs, rate in rates.items()]


def openfoam(stack: str, seconds_per_step: Mapping[int, float], *, scaling: str = "strong",
             system: str = "cluster", partition: str = "cpu", steps: int = 100) -> list[dict[str, Any]]:
    """reframe_tests/openfoam.py's figures from the time per step per process count (2 s start-up)."""
    return [testcase("OpenFOAMCheck", {"time_per_step": (t, "s/step"), "execution_time": (t * steps, "s"),
                                       "wall_time": (t * steps + 2.0, "s")},
                     params={"scale": _scale(p), "case": "cavity", "scaling": scaling}, system=system,
                     partition=partition, stack=stack, num_tasks=p, extra={"executable": "icoFoam"})
            for p, t in seconds_per_step.items()]


def hockney(t0_us: float, peak_MBps: float, bump: float = 1.5) -> tuple[dict[int, float], dict[int, float]]:
    """(bandwidth MB/s, latency us) per OSU message size: Hockney's model t0 + size/B, with latency
    `bump` times higher from 8 KiB to 64 KiB (an eager-to-rendezvous switch: the latency surprise)."""
    latency = {s: (t0_us + s / peak_MBps) * (bump if 8192 <= s <= 65536 else 1.0) for s in MESSAGE_SIZES}
    return {s: s / latency[s] for s in MESSAGE_SIZES}, latency


def osu(stack: str, bandwidth: Mapping[int, float], latency: Mapping[int, float], *, system: str = "cluster",
        partition: str = "cpu") -> list[dict[str, Any]]:
    """OSU-like bandwidth and latency checks, one figure per message size (<figure>_<bytes>)."""
    common = dict(params={}, system=system, partition=partition, stack=stack, num_nodes=2, num_tasks=2,
                  nodelist=["n000", "n001"])
    return [testcase("OSUBandwidthCheck", {f"bandwidth_{s}": (v, "MB/s") for s, v in bandwidth.items()},
                     extra={"executable": "osu_bw"}, **common),  # type: ignore[arg-type]
            testcase("OSULatencyCheck", {f"latency_{s}": (v, "us") for s, v in latency.items()},
                     extra={"executable": "osu_latency"}, **common)]  # type: ignore[arg-type]


# Two stacks whose LAMMPS speedup peaks and then degrades; ucx scales further and is faster.
LAMMPS_RATES = {
    "tcp": {1: 100.0, 2: 190.0, 4: 340.0, 8: 520.0, 16: 450.0},
    "ucx": {1: 104.0, 2: 205.0, 4: 400.0, 8: 720.0, 16: 690.0},
}
OPENFOAM_STEP = {"tcp": {1: 8.0, 2: 4.2, 4: 2.4}, "ucx": {1: 7.9, 2: 4.0, 4: 2.05}}  # s/step
HPL_RMAX = {"tcp": {1: 900.0, 2: 1700.0, 4: 3100.0}, "ucx": {1: 910.0, 2: 1790.0, 4: 3500.0}}
INTERCONNECT = {"tcp": (15.0, 3000.0), "ucx": (1.2, 12000.0)}  # (t0 us, peak MB/s): tcp > 10x slower when small


def two_stack_study(system: str = "cluster", partition: str = "cpu") -> dict[str, list[dict[str, Any]]]:
    """Per stack, the test cases of one full run: HPL, LAMMPS, OpenFOAM and OSU."""
    out = {}
    for stack in ("tcp", "ucx"):
        bandwidth, latency = hockney(*INTERCONNECT[stack])
        out[stack] = [*hpl(stack, HPL_RMAX[stack], system=system, partition=partition),
                      *lammps(stack, LAMMPS_RATES[stack], system=system, partition=partition),
                      *openfoam(stack, OPENFOAM_STEP[stack], system=system, partition=partition),
                      *osu(stack, bandwidth, latency, system=system, partition=partition)]
    return out


# --- a committee's report: a real multi-stack run beside a two-stack study with what a committee must see ---

REAL_MULTI_STACK = REAL_REPORT.with_name("local_hpl_netpipe_run_report.json")  # openmpi-sm, openmpi-tcp, mpich
# Issue 44's noisy HPL case: solves that disagree, a probe that saw foreign load, DGEMM repeats 18% apart.
NOISY_EVIDENCE = {
    "trial_gflops": "2807.00 3278.00 3500.00",
    "interference": {"nodes": 4, "expected_nodes": 4, "steal_pct": 0.0, "steal_node": "n000", "foreign_cores": 0.59,
                     "foreign_node": "n002", "foreign_top": "sb-cpu-hog[4242] 0.47, kworker/3:1[311] 0.07, "
                                                           "sshd[17] 0.03, systemd-journald[210] 0.02"},
    "dgemm_repeats": {"before": [1000.0, 820.0, 990.0], "after": [995.0, 1000.0]},
}
POWER_KW = {1: 0.5, 2: 1.0, 4: 2.0}  # ucx's HPL power per node count (core phase)
CUT_SHORT = "run: job cancelled: DUE TO TIME LIMIT"


def committee_study(results: Path) -> Path:
    """results/runs/ with the real run (tests/data/reframe/local_hpl_netpipe_run_report.json, as ReFrame
    wrote it) and the two-stack study, where ucx's 4-node HPL is noisy (NOISY_EVIDENCE), ucx's HPL
    measured its energy, tcp's 4-node HPL has a DGEMM ceiling below its Rmax, and tcp's 16-process LAMMPS
    was cut short by its time limit. Returns results."""
    run = results / "runs" / "real"
    run.mkdir(parents=True)
    (run / "report.json").write_text(REAL_MULTI_STACK.read_text())
    for stack, cases in two_stack_study().items():
        for case in cases:
            nodes = case["num_nodes"]
            if stack == "ucx" and case["short_name"] == "HPLCheck":
                watts = POWER_KW[nodes] * 1000
                rmax = case["perfvalues"]["cluster:cpu:rmax"][0]
                case["perfvalues"].update({
                    "cluster:cpu:energy": [40 * POWER_KW[nodes], 0, None, None, "kJ", "pass"],
                    "cluster:cpu:power": [POWER_KW[nodes], 0, None, None, "kW", "pass"],
                    "cluster:cpu:gflops_per_watt": [rmax / watts, 0, None, None, "Gflop/s/W", "pass"]})
                case["energy_source"] = "core phase: node sampler (pm_counters) every 1 s, whole node"
                if nodes == 4:
                    case.update(NOISY_EVIDENCE)
            if stack == "tcp" and case["short_name"] == "HPLCheck" and nodes == 4:  # a ceiling below Rmax
                case["perfvalues"]["cluster:cpu:dgemm_ceiling"] = [2900.0, 0, None, None, "Gflop/s", "pass"]
            if stack == "tcp" and case["short_name"] == "LAMMPSCheck" and case["num_tasks"] == 16:
                phase, reason = CUT_SHORT.split(": ", 1)
                case.update(result="fail", fail_phase=phase, fail_reason=reason)
        write_run(results, f"run-{stack}", cases)
    return results
