"""The per-node probe, run by a job on every one of its nodes: before the run, during it (sampled) and
after it, what else used the node's CPUs.

Standard library only, and no other scalebench import unless energy is asked (below): it runs inside
the job, beside the benchmark. Each
sample is one JSON object per line in <dir>/<node>.jsonl, a window's named fields. A reader is an
object whose sample(seconds) returns the fields of the window since its previous reading; a new
reader (a power meter, say) joins readers() and its fields appear in every sample, which
scalebench.nodeprobe.samples keeps as they are. Fields of the readers here:

  steal_pct         CPU time the hypervisor gave to others, % of the node's CPU time (/proc/stat)
  busy_cores        CPU time spent, in cores (CPU seconds per second), by everything on the node
  job_cores         of it, by the job's processes (descendants of --job-pid, or of this Slurm job's
                    slurmstepd processes), their reaped children included
  foreign_cores     of it, by everything else (busy - job - this probe; short-lived processes included)
  probe_cores       of it, by this probe
  foreign_runnable  foreign processes runnable (state R) at the sample
  foreign_top       the foreign processes that used the most CPU: [[name, pid, cores], ...]
  load1, procs_running  /proc/loadavg and /proc/stat at the sample
  clock_mhz, clock_source  mean clock of the CPUs as the kernel reports it (cpufreq's scaling_cur_freq,
                    else /proc/cpuinfo; on a virtual machine often the nominal clock, not the real one)
  cpus              the host's CPUs
  node_cpus         the node's: the host's, or SCALEBENCH_NODE_CPUS where a node is a share of its host
                    (the lab's emulated nodes, several to a machine, their ranks unpinned), so that the rest
                    of the host is not counted as cores the job left idle (samples.excess_foreign)

Energy (--energy-out E --energy-interval S, where the partition declares an energy sampler): the same
process finds the node's energy counters and writes E/<host>.energy.jsonl as scalebench.energy.sample
does, a round every S seconds on its own cadence (the CPU samples keep theirs), the first at the
start and the last at the stop, so that its rounds enclose the run; one per-node step does both. Only
then is scalebench.energy imported (lazily): the venv's python runs the probe.

Usage (scalebench.nodeprobe.job writes these lines into the job script):
  python -m scalebench.nodeprobe.sampler run --dir D [--interval S] [--window S] [--max-s S] [--job-pid PID]
                                             [--energy-out E --energy-interval S]
  python -m scalebench.nodeprobe.sampler wait --dir D --nodes N [--timeout S] [--pid PID]
`run` samples until it receives SIGTERM (or D/stop appears, or --max-s pass), then takes the last
samples; `wait` returns once N nodes have written their first sample (or at the timeout, or when PID ends).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import signal
import socket
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scalebench.energy.sample import Writer

TICKS = os.sysconf("SC_CLK_TCK")
FORMAT = 1  # the "probe" field of every sample: the version of this layout
TOP = 5  # foreign processes named per sample
MIN_NAMED_CORES = 0.01


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


class CpuTimes:
    """Node-wide CPU time from /proc/stat's cpu line: steal and busy."""

    def __init__(self) -> None:
        self.previous = self.read()

    @staticmethod
    def read() -> tuple[int, int, int]:
        """(total, busy, steal) ticks; guest time is counted in user already."""
        fields = [int(v) for v in _read("/proc/stat").split("\n", 1)[0].split()[1:9]]
        fields += [0] * (8 - len(fields))
        user, nice, system, idle, iowait, irq, softirq, steal = fields
        return sum(fields), user + nice + system + irq + softirq, steal

    def sample(self, seconds: float) -> dict:
        now = self.read()
        total, busy, steal = (a - b for a, b in zip(now, self.previous))
        self.previous = now
        return {"steal_pct": round(100 * steal / total, 2) if total > 0 else 0.0,
                "busy_cores": round(busy / TICKS / seconds, 3)}


class Processes:
    """Every process's CPU time (/proc/<pid>/stat), split into the job's, this probe's and the rest."""

    def __init__(self, job_pid: int | None, slurm_job: str | None, slurm_conf: str | None = None) -> None:
        self.job_pid, self.own = job_pid, os.getpid()
        self.stepd = f"slurmstepd: [{slurm_job}." if slurm_job else None
        self.slurm_conf = slurm_conf
        self.previous = {key: ticks for key, _, _, _, ticks in self.read().values()}

    @staticmethod
    def read() -> dict:
        """{pid: (key, name, state, ppid, (own, reaped children's) CPU ticks)} of every process now."""
        table = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            text = _read(f"/proc/{entry}/stat")
            close = text.rfind(")")
            if close < 0:
                continue
            name, rest = text[text.find("(") + 1:close], text[close + 2:].split()
            if len(rest) < 20:
                continue
            own, reaped = int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14])  # utime+stime, cutime+cstime
            table[int(entry)] = ((int(entry), rest[19]), name, rest[0], int(rest[1]), (own, reaped))
        return table

    def job_pids(self, table: dict) -> set[int]:
        roots = {self.job_pid} if self.job_pid else set()
        if self.stepd:
            roots |= {pid for pid, (_, name, *_) in table.items()
                      if name == "slurmstepd" and _read(f"/proc/{pid}/cmdline").startswith(self.stepd)
                      and self.same_cluster(pid)}
        inside: dict[int, bool] = {}

        def in_job(pid: int) -> bool:
            chain = []
            while pid not in inside:
                if pid in roots:
                    inside[pid] = True
                    break
                entry = table.get(pid)
                if entry is None or entry[3] in (0, pid):
                    inside[pid] = False
                    break
                chain.append(pid)
                pid = entry[3]
            for link in chain:
                inside[link] = inside[pid]
            return inside[pid]

        return {pid for pid in table if in_job(pid)}

    def same_cluster(self, pid: int) -> bool:
        """Whether a slurmstepd of this job's id is this cluster's: several Slurm clusters on one host (a
        test machine) number their jobs alike, and only their SLURM_CONF tells them apart. Unknown (either
        side without one, or unreadable) counts as the same: a site's nodes run one cluster."""
        theirs = next((entry[len("SLURM_CONF="):] for entry in _read(f"/proc/{pid}/environ").split("\0")
                       if entry.startswith("SLURM_CONF=")), None)
        return not (self.slurm_conf and theirs) or theirs == self.slurm_conf

    def account(self) -> tuple[dict, set[int], dict[int, int], int]:
        """(processes now, the job's pids, each one's own CPU ticks since the previous reading, the
        ticks of the job's processes reaped meanwhile: a finished rank's whole life, once)."""
        table = self.read()
        job = self.job_pids(table)
        spent: dict[int, int] = {}
        reaped = 0
        for pid, (key, _, _, _, (own, children)) in table.items():
            before = self.previous.get(key, (0, 0))
            spent[pid] = max(0, own - before[0])
            if pid in job:
                reaped += max(0, children - before[1])
        self.previous = {key: ticks for key, _, _, _, ticks in table.values()}
        return table, job, spent, reaped

    def sample(self, seconds: float) -> dict:
        table, job, spent, reaped = self.account()
        foreign = [pid for pid in table if pid not in job and pid != self.own]
        top = sorted(foreign, key=lambda pid: spent[pid], reverse=True)[:TOP]
        job_ticks = sum(spent[pid] for pid in job if pid != self.own) + reaped
        return {"job_cores": round(job_ticks / TICKS / seconds, 3),
                "probe_cores": round(spent.get(self.own, 0) / TICKS / seconds, 3),
                "foreign_runnable": sum(table[pid][2] == "R" for pid in foreign),
                "foreign_top": [[table[pid][1], pid, round(spent[pid] / TICKS / seconds, 3)] for pid in top
                                if spent[pid] / TICKS / seconds >= MIN_NAMED_CORES]}


class Load:
    def sample(self, seconds: float) -> dict:
        running = next((line.split()[1] for line in _read("/proc/stat").splitlines()
                        if line.startswith("procs_running ")), "0")
        load = _read("/proc/loadavg").split()
        return {"load1": float(load[0]) if load else 0.0, "procs_running": int(running)}


class Clock:
    def sample(self, seconds: float) -> dict:
        khz = [_read(path).strip() for path in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq")]
        mhz = [int(v) / 1000 for v in khz if v.isdigit()]
        source = "cpufreq"
        if not mhz:
            source = "cpuinfo"
            mhz = [float(line.split(":")[1]) for line in _read("/proc/cpuinfo").splitlines()
                   if line.startswith("cpu MHz") and ":" in line]
        return {"clock_mhz": round(sum(mhz) / len(mhz), 1), "clock_source": source} if mhz else {}


def node_name() -> str:
    """Slurm's name for the node (several slurmd may share one host), else the host's."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0] or "node"


def node_cpus() -> int:
    """The host's CPUs, or fewer where SCALEBENCH_NODE_CPUS says the node is a share of its host."""
    host = os.cpu_count() or 1
    share = os.environ.get("SCALEBENCH_NODE_CPUS", "")
    return min(host, int(share)) if share.isdigit() and int(share) > 0 else host


def readers(job_pid: int | None) -> list:
    """What every sample asks, in order; a new reader (a power meter, say) is added here. CpuTimes
    first, so that the process walk falls inside its window."""
    return [CpuTimes(), Processes(job_pid, os.environ.get("SLURM_JOB_ID"), os.environ.get("SLURM_CONF")), Load(),
            Clock()]


class Probe:
    def __init__(self, job_pid: int | None) -> None:
        self.readers = readers(job_pid)
        self.node, self.cpus, self.node_cpus = node_name(), os.cpu_count() or 1, node_cpus()
        self.last = time.monotonic()

    def sample(self, phase: str) -> dict:
        now = time.monotonic()
        seconds, self.last = max(now - self.last, 1e-3), now
        fields = {"probe": FORMAT, "node": self.node, "phase": phase, "t": round(time.time(), 3),
                  "window_s": round(seconds, 3), "cpus": self.cpus, "node_cpus": self.node_cpus}
        for reader in self.readers:
            fields.update(reader.sample(seconds))
        if "busy_cores" in fields and "job_cores" in fields:
            fields["foreign_cores"] = round(max(0.0, fields["busy_cores"] - fields["job_cores"]
                                                - fields["probe_cores"]), 3)
        return fields


def energy_writer(directory: str, interval_s: float) -> Writer | None:
    """The node's energy sample file, its header written; None (said on stderr, the probe.log) when it
    cannot be: the interference samples go on without it."""
    from pathlib import Path

    from scalebench.energy import sample  # here only: without energy the probe needs no scalebench

    out = sample.output_path(Path(directory))
    try:
        return sample.Writer(sample.Sampler.discover(interval_s), out)
    except FileExistsError:
        print(f"scalebench node probe: {out} exists (one sampler per node and run): no energy samples",
              file=sys.stderr)
    except OSError as err:
        print(f"scalebench node probe: {out}: {err.strerror}: no energy samples", file=sys.stderr)
    return None


def run(args: argparse.Namespace) -> int:
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    os.makedirs(args.dir, exist_ok=True)
    stop_file = os.path.join(args.dir, "stop")
    energy = energy_writer(args.energy_out, args.energy_interval) if args.energy_out else None
    probe = Probe(args.job_pid)
    path = os.path.join(args.dir, f"{probe.node}.jsonl")
    started = time.monotonic()

    def idle(until: float) -> None:
        """Sleep until `until` (or a stop), taking the energy rounds that fall due meanwhile."""
        while not stopping and time.monotonic() < until:
            if energy:
                energy.take()
            wake = min(until, energy.due) if energy and energy.sampling else until
            time.sleep(max(0.0, min(0.1, wake - time.monotonic())))

    try:
        with open(path, "a", encoding="utf-8") as out:
            def write(phase: str) -> None:
                out.write(json.dumps(probe.sample(phase), separators=(",", ":")) + "\n")
                out.flush()

            if energy:
                energy.take()  # before the job script goes on (wait): the first round precedes the run
            idle(time.monotonic() + args.window)
            write("before")
            due = time.monotonic() + args.interval
            while not stopping and not os.path.exists(stop_file) and time.monotonic() - started < args.max_s:
                if time.monotonic() >= due:
                    write("during")
                    # Long runs: windows grow with the run (about 100 per run, then slowly more); the CPU
                    # time of every window is kept, only its resolution in time falls.
                    due = time.monotonic() + max(args.interval, (time.monotonic() - started) / 100)
                idle(min(due, time.monotonic() + 0.1))
            if energy:
                energy.take(force=True)  # after the stop, so that it covers the program's end
                energy.close()
            write("during")
            time.sleep(args.window)
            write("after")
    finally:
        if energy:
            energy.close()
    return 0


def wait(args: argparse.Namespace) -> int:
    deadline, ready, why = time.monotonic() + args.timeout, [], f"after {args.timeout:g} s"
    while time.monotonic() < deadline:
        ready = [p for p in glob.glob(os.path.join(args.dir, "*.jsonl")) if os.path.getsize(p) > 0]
        if len(ready) >= args.nodes:
            return 0
        if args.pid and not os.path.exists(f"/proc/{args.pid}"):
            why = "when the probe ended (see its probe.log)"
            break
        time.sleep(0.1)
    print(f"scalebench node probe: {len(ready)} of {args.nodes} node(s) sampled {why}; the run starts anyway",
          file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scalebench.nodeprobe.sampler")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run")
    p.add_argument("--dir", required=True)
    p.add_argument("--interval", type=float, default=2.0)
    p.add_argument("--window", type=float, default=0.5, help="the before and after windows, s")
    p.add_argument("--max-s", type=float, default=86400.0)
    p.add_argument("--job-pid", type=int, default=None)
    p.add_argument("--energy-out", default=None, help="also write <host>.energy.jsonl here (scalebench.energy)")
    p.add_argument("--energy-interval", type=float, default=1.0, help="seconds between energy rounds")
    p.set_defaults(func=run)
    w = sub.add_parser("wait")
    w.add_argument("--dir", required=True)
    w.add_argument("--nodes", type=int, required=True)
    w.add_argument("--timeout", type=float, default=10.0)
    w.add_argument("--pid", type=int, default=None, help="the probe's process: stop waiting once it is gone")
    w.set_defaults(func=wait)
    args = parser.parse_args(argv)
    if args.command == "run" and not 0.01 <= args.energy_interval <= 3600:
        parser.error("--energy-interval must be 0.01..3600 s")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
