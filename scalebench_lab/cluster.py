"""A throwaway Slurm cluster on this machine: `python -m scalebench_lab.cluster start | stop | status | exec`.

Two modes (see shared notes "slurm-on-one-machine"):
  loopback  N slurmd on 127.0.0.1 (multiple-slurmd: NodeHostname=localhost, one port per node);
  netns     one network namespace per node (own address 10.77.0.(10+i) and hostname n<i>), joined by
            a bridge in a head namespace (10.77.0.1) that runs slurmctld and must run the clients
            (`exec` does that); links can be rate-shaped (--shape, site_configs/link_profiles.yaml).

Everything lives under DIR: slurm.conf, logs, spool, state. DIR/state.json records, as they happen,
every process and namespace that `start` created, so `stop` removes exactly those (also after a
failed start) and never kills by name. Accounting is off (accounting_storage/none) unless `--accounting`
starts a private MariaDB and slurmdbd (scalebench_lab.accounting): without it ReFrame must use its
`squeue` scheduler, not `slurm` (which polls sacct). `--energy pm_counters` (netns mode) loads Slurm's
acct_gather_energy/pm_counters plugin and feeds it, in each node's mount namespace, from an emulated
meter whose power is known (scalebench_lab.meter). MPI: MpiDefault=pmix (OpenMPI is PMIx-only).

Root only; pure stdlib (PyYAML, a project dependency, only for --shape).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from scalebench.cli.common import OneLineParser, positive_int_arg
from scalebench.errors import ScalebenchError
from scalebench_lab import accounting, meter

PARTITION = "debug"
SUBNET = "10.77.0"  # only ever configured inside namespaces this module creates
HEAD_ADDR = f"{SUBNET}.1"
HEAD_HOSTNAME = "head"
NODE_ADDR_OFFSET = 10
MAX_NODES = 64
# Slurm puts unix sockets under DIR (spool/n64/stepd.slurm.pmix.JOBID.STEPID, <= 46 characters);
# sun_path holds 107: a longer DIR makes every srun fail with "task launch failed: Unspecified error".
MAX_DIR_LEN = 60
STATE_FILE = "state.json"
MARKER_ENV = "SCALEBENCH_CLUSTER_TOKEN"  # set on every daemon we start; inherited by slurmstepd
MUNGE_RUN = Path("/run")  # each cluster's munged: MUNGE_RUN/scalebench-munge-<cluster id>/munge.socket
NETNS_DIR = "/run/netns"  # where `ip netns` keeps its named namespaces
CMD_TIMEOUT = 15.0  # default for every subprocess call
READY_TIMEOUT = 30.0
SCANCEL_WAIT = 15.0
NODE_CPUS_ENV = "SCALEBENCH_NODE_CPUS"  # scalebench.nodeprobe.sampler: the CPUs of a node that shares its host
CPU_CGROUP = Path("/sys/fs/cgroup/cpu")  # cgroup v1's cpu controller: what slow_node needs
CFS_PERIOD_US = 100_000
TERM_WAIT = 5.0
KILL_WAIT = 3.0

# In loopback mode every node is "localhost": OpenMPI's shared-memory transport then mixes ranks of
# different nodes and segfaults/hangs, and binding puts every node's rank 0 on core 0.
LOOPBACK_MPI_ENV = {
    "OMPI_MCA_btl": "tcp,self",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl_tcp_if_include": "lo",
    "OMPI_MCA_oob_tcp_if_include": "lo",
    "OMPI_MCA_hwloc_base_binding_policy": "none",
}
NETNS_MPI_ENV = {
    "OMPI_MCA_btl_tcp_if_include": f"{SUBNET}.0/24",
    "OMPI_MCA_oob_tcp_if_include": f"{SUBNET}.0/24",
}
COMMON_MPI_ENV = {
    "SLURM_MPI_TYPE": "pmix",
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
}


class ClusterError(ScalebenchError):
    """The throwaway Slurm cluster cannot be started, queried or stopped (one-line reason)."""


class ClusterTimeout(ClusterError):
    """A bounded wait (a command, the nodes becoming idle, processes exiting) ran out."""


# --------------------------------------------------------------------------- small helpers

def _run(argv: Sequence[str], *, timeout: float = CMD_TIMEOUT, check: bool = True, input: str | None = None,
         env: dict | None = None) -> subprocess.CompletedProcess:
    """Run one command with a timeout; failures become one-line ClusterErrors."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, input=input,
                              env=env, stdin=None if input is not None else subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ClusterTimeout(f"`{' '.join(argv)}` did not finish within {timeout:g} s") from None
    except OSError as err:
        raise ClusterError(f"cannot run `{argv[0]}`: {err.strerror}") from None
    if check and proc.returncode != 0:
        detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise ClusterError(f"`{' '.join(argv)}` exited {proc.returncode}: {detail[-1] if detail else 'no output'}")
    return proc


def _last_line(path: Path) -> str:
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "(no log)"
    return lines[-1].strip() if lines else "(empty log)"


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state letter, start time in clock ticks) of a process, None when it does not exist."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[19])


def _starttime(pid: int) -> int | None:
    stat = _proc_stat(pid)
    return stat[1] if stat else None


def _reap(pid: int) -> None:
    """Collect the exit status when the process is our own child (no zombie left behind)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except (ChildProcessError, OSError):
        pass


def is_alive(pid: int, starttime: int | None = None) -> bool:
    """Alive, not a zombie, and (when given) the same process as recorded (no PID reuse)."""
    _reap(pid)
    stat = _proc_stat(pid)
    if stat is None or stat[0] in ("Z", "X"):
        return False
    return starttime is None or stat[1] == starttime


def _environ_has(pid: int, entry: bytes) -> bool:
    try:
        return entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _ppid(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(text[text.rindex(")") + 2:].split()[1])


def _cluster_id(directory: Path) -> str:
    return hashlib.sha1(str(directory).encode()).hexdigest()[:6]


def machine_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def machine_memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise ClusterError("/proc/meminfo: no MemTotal line")


def node_names(nodes: int) -> list[str]:
    return [f"n{i}" for i in range(1, nodes + 1)]


def node_addr(index: int) -> str:
    """Address of node n<index> (1-based) in netns mode."""
    return f"{SUBNET}.{NODE_ADDR_OFFSET + index}"


def load_link_profiles(path: Path | None = None) -> dict[str, dict]:
    """The shaped links of site_configs/link_profiles.yaml, read and checked as every project file is."""
    from scalebench import loaders, paths, schema

    path = path or paths.SITE_CONFIGS / "link_profiles.yaml"
    try:
        data = loaders.load_yaml(path, "link profiles") or {}
        schema.check(data, "link_profiles.yaml", str(path))
    except ScalebenchError as err:
        raise ClusterError(str(err)) from None
    return data


# --------------------------------------------------------------------------- state file

class State:
    """DIR/state.json, rewritten atomically after every change so a half-done start is recorded."""

    def __init__(self, directory: Path, data: dict):
        self.dir = directory
        self.data = data

    @property
    def path(self) -> Path:
        return self.dir / STATE_FILE

    @classmethod
    def load(cls, directory: Path) -> "State | None":
        path = directory / STATE_FILE
        if not path.exists():
            return None
        try:
            return cls(directory, json.loads(path.read_text()))
        except (OSError, ValueError) as err:
            raise ClusterError(f"{path}: unreadable cluster state ({err})") from None

    def save(self) -> None:
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.data, indent=2) + "\n")
        os.replace(tmp, self.path)

    def add_process(self, role: str, pid: int, argv: Sequence[str], log: Path) -> None:
        self.data["processes"].append({"role": role, "pid": pid, "starttime": _starttime(pid),
                                       "argv": list(argv), "log": str(log)})
        self.save()

    def add_created(self, kind: str, name: str) -> None:
        self.data["created"].append({"kind": kind, "name": name})
        self.save()

    @property
    def netns_head(self) -> str | None:
        return self.data.get("netns_head")

    @property
    def slurm_conf(self) -> Path:
        return Path(self.data["slurm_conf"])

    def client_env(self, base: dict | None = None) -> dict:
        env = dict(os.environ if base is None else base)
        env.update(self.data.get("env", {}))
        env.pop(MARKER_ENV, None)
        return env

    def client_argv(self, argv: Sequence[str]) -> list[str]:
        """argv to run a Slurm/MPI client against this cluster (inside the head namespace in netns mode)."""
        head = self.netns_head
        if head:
            return ["nsenter", f"--net={NETNS_DIR}/{head}", "--", *argv]
        return list(argv)

    def run_client(self, argv: Sequence[str], *, timeout: float = CMD_TIMEOUT, check: bool = True,
                   env: dict | None = None) -> subprocess.CompletedProcess:
        return _run(self.client_argv(argv), timeout=timeout, check=check, env=self.client_env(env))


def exports(state: State) -> str:
    """Shell lines a client needs (eval-able); comments say how to reach a netns cluster."""
    lines = [f"export {k}={v}" for k, v in state.data.get("env", {}).items()]
    if state.netns_head:
        lines.append(f"# netns mode: run clients in the head namespace, e.g. "
                     f"nsenter --net={NETNS_DIR}/{state.netns_head} -- srun ..., "
                     f"or: python -m scalebench_lab.cluster exec --dir {state.dir} -- srun ...")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- configuration

@dataclass(frozen=True)
class Spec:
    directory: Path
    nodes: int
    mode: str = "loopback"
    cpus_per_node: int | None = None
    memory_per_node_mb: int | None = None
    shape: str | None = None
    slurmd_timeout_s: int | None = None  # None: Slurm's 300 s before a silent node is marked DOWN
    # task/none by default: the nodes share this machine's cores, so binding each node's ranks would
    # stack them on the same ones; task/affinity where a test proves binding itself.
    task_plugin: str = "none"
    accounting: bool = False  # slurmdbd + MariaDB: sacct answers
    energy: str | None = None  # an emulated meter behind this acct_gather_energy plugin (pm_counters)
    energy_period_s: int = 1  # AcctGatherNodeFreq and the energy sampling of job steps
    energy_profile: bool = False  # acct_gather_profile/hdf5 into DIR/profile (jobs ask --profile=energy)
    # Nodes of several kinds: each node's RealMemory (MB) and features, in node order (None: all alike).
    node_memory_mb: tuple[int, ...] | None = None
    node_features: tuple[str, ...] | None = None
    max_mem_per_node_mb: int | None = None  # the partition's MaxMemPerNode (memory then a consumable)


ENERGY_PLUGINS = ("pm_counters",)  # the ones an emulated meter can feed (files the plugin reads)
PM_COUNTERS = "/sys/cray/pm_counters"


def _free_ports(count: int, seed: str) -> list[int]:
    """`count` free TCP ports (Slurm binds all addresses), below the ephemeral range, from a per-DIR offset."""
    start = 20000 + (int(seed, 16) % 900) * 10
    ports: list[int] = []
    port = start
    while len(ports) < count:
        if port >= 32000:
            port = 20000
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("", port))
                ports.append(port)
            except OSError:
                pass
        port += 1
        if port == start:
            raise ClusterError("not enough free TCP ports in 20000-31999")
    return ports


def _accounting_host(spec: Spec) -> str:
    return "127.0.0.1" if spec.mode == "loopback" else HEAD_ADDR


def slurm_conf_text(spec: Spec, cluster_id: str, ports: list[int] | None, dbd_port: int | None = None) -> str:
    d = spec.directory
    cpus = spec.cpus_per_node or machine_cpus()
    memory = spec.memory_per_node_mb or machine_memory_mb()
    names = node_names(spec.nodes)
    lines = [
        "# Written by scalebench_lab/cluster.py: a throwaway cluster; `stop` removes what `start` created.",
        f"ClusterName=sb{cluster_id}",
    ]
    if spec.mode == "loopback":
        lines += ["SlurmctldHost=localhost", f"SlurmctldPort={ports[0]}"]
    else:
        lines += [f"SlurmctldHost={HEAD_HOSTNAME}({HEAD_ADDR})"]
    lines += [
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={munge_socket(d)}",  # the cluster's own munged: auth and credentials both
        "ProctrackType=proctrack/linuxproc",
        f"TaskPlugin=task/{spec.task_plugin}",
        *(accounting.slurm_conf_lines(_accounting_host(spec), dbd_port, munge_socket(d)) if spec.accounting and dbd_port else
          ["JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none"]),
        *([f"AcctGatherEnergyType=acct_gather_energy/{spec.energy}", f"AcctGatherNodeFreq={spec.energy_period_s}",
           f"JobAcctGatherFrequency=task={spec.energy_period_s},energy={spec.energy_period_s}",
           # as at most sites: the extern step spans the allocation, so sacct -X holds all of its energy
           "PrologFlags=Contain"] if spec.energy else []),
        *(["AcctGatherProfileType=acct_gather_profile/hdf5"] if spec.energy_profile else []),
        "JobCompType=jobcomp/none",
        "SelectType=select/cons_tres",
        # memory is a resource Slurm schedules and bounds (MaxMemPerNode) only when it is consumable
        f"SelectTypeParameters={'CR_Core_Memory' if spec.max_mem_per_node_mb else 'CR_Core'}",
        "MpiDefault=pmix",
        "ReturnToService=2",
        "MailProg=/bin/true",
        "SlurmdParameters=config_overrides",
        "InactiveLimit=0",
        "KillWait=5",
        *([f"SlurmdTimeout={spec.slurmd_timeout_s}"] if spec.slurmd_timeout_s else []),
        "MinJobAge=300",
        f"StateSaveLocation={d}/ctld",
        f"SlurmdSpoolDir={d}/spool/%n",
        f"TmpFS={d}/tmp/%n",
        f"SlurmctldPidFile={d}/run/slurmctld.pid",
        f"SlurmdPidFile={d}/run/slurmd-%n.pid",
        f"SlurmctldLogFile={d}/log/slurmctld.log",
        f"SlurmdLogFile={d}/log/slurmd-%n.log",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
    ]
    for i, name in enumerate(names, start=1):
        mib = spec.node_memory_mb[i - 1] if spec.node_memory_mb else memory
        features = f" Features={spec.node_features[i - 1]}" if spec.node_features else ""
        hw = f"Sockets=1 CoresPerSocket={cpus} ThreadsPerCore=1 RealMemory={mib}{features} State=UNKNOWN"
        if spec.mode == "loopback":
            lines.append(f"NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={ports[i]} {hw}")
        else:
            lines.append(f"NodeName={name} NodeHostname={name} NodeAddr={node_addr(i)} {hw}")
    limit = f" MaxMemPerNode={spec.max_mem_per_node_mb}" if spec.max_mem_per_node_mb else ""
    lines.append(f"PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE{limit} State=UP")
    return "\n".join(lines) + "\n"


def _check_prerequisites(spec: Spec) -> None:
    if os.geteuid() != 0:
        raise ClusterError("the throwaway Slurm cluster needs root (daemons run as root, namespaces)")
    tools = ["slurmctld", "slurmd", "sinfo", "squeue", "scancel", "srun", "munge", "unmunge"]
    if spec.mode == "netns":
        tools += ["ip", "nsenter", "unshare", "mount", "hostname"]
    if spec.shape:
        tools.append("tc")
    missing = [t for t in tools if shutil.which(t) is None]
    if spec.accounting:
        missing += accounting.missing_tools()
    if spec.energy_profile:
        missing += [t for t in ("sh5util",) if shutil.which(t) is None]
    if missing:
        raise ClusterError(f"missing {', '.join(missing)}: "
                           "bash scripts/install.sh scripts/debian-packages-slurm.txt")


def _munged_path() -> str:
    path = shutil.which("munged") or "/usr/sbin/munged"
    if not os.access(path, os.X_OK):
        raise ClusterError("munged not found: bash scripts/install.sh scripts/debian-packages-slurm.txt")
    return path


def munge_socket(directory: Path) -> Path:
    """The socket of a cluster's own munged: under /run, which the munge user can reach (a cluster's
    directory, a test's temporary one, is often root's alone)."""
    return MUNGE_RUN / f"scalebench-munge-{_cluster_id(Path(directory))}" / "munge.socket"


def munge_answers(socket: Path) -> bool:
    try:
        cred = _run(["munge", "-n", f"--socket={socket}"], timeout=5, check=False)
        if cred.returncode != 0:
            return False
        return _run(["unmunge", f"--socket={socket}"], timeout=5, check=False, input=cred.stdout).returncode == 0
    except ClusterTimeout:
        return False


# --------------------------------------------------------------------------- start

def _spawn(state: State, role: str, argv: list[str], log: Path, env: dict, **popen_kw) -> subprocess.Popen:
    with open(log, "ab") as out:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    env=env, start_new_session=True, close_fds=True, **popen_kw)
        except OSError as err:
            raise ClusterError(f"cannot start {role} ({argv[0]}): {err.strerror}") from None
    state.add_process(role, proc.pid, argv, log)
    return proc


def _start_munged(state: State, env: dict) -> None:
    """The cluster's own munged on a socket in its directory (slurm.conf's AuthInfo): the machine's
    /run/munge one is shared with every other cluster on it, and whichever started it stopped it when
    that cluster stopped, under the others' running jobs (Protocol authentication error)."""
    socket = munge_socket(state.dir)
    socket.parent.mkdir(mode=0o755, exist_ok=True)
    shutil.chown(socket.parent, "munge", "munge")
    log = state.dir / "log" / "munged.log"
    argv = [_munged_path(), "--foreground", f"--socket={socket}", f"--pid-file={socket.parent / 'munged.pid'}",
            f"--seed-file={socket.parent / 'munged.seed'}"]
    proc = _spawn(state, "munged", argv, log, env, user="munge", group="munge", extra_groups=[])
    state.data["munged"] = {"started": True, "pid": proc.pid, "socket": str(socket)}
    state.save()
    deadline = time.monotonic() + 10
    while not munge_answers(socket):
        if proc.poll() is not None:
            raise ClusterError(f"munged exited {proc.returncode}: {_last_line(log)}")
        if time.monotonic() > deadline:
            raise ClusterTimeout("munged did not answer within 10 s")
        time.sleep(0.1)


def _setup_netns(state: State, spec: Spec, cid: str, profile: dict | None) -> None:
    head = f"sb{cid}-head"
    if Path(NETNS_DIR, head).exists():
        raise ClusterError(f"network namespace {head} already exists (a cluster in {spec.directory} "
                           "still running? stop it first)")
    # `ip netns add` mounts the directory on itself the first time: ours to undo, also when another of
    # our clusters (its namespaces all sb*) made it and may stop first, or when it is empty (nothing uses it)
    if not _mounted(NETNS_DIR) or all(entry.name.startswith("sb") for entry in Path(NETNS_DIR).iterdir()):
        state.add_created("netns_dir_mount", NETNS_DIR)
    _run(["ip", "netns", "add", head])
    state.data["netns_head"] = head
    state.add_created("netns", head)
    _run(["ip", "-n", head, "link", "set", "lo", "up"])
    _run(["ip", "-n", head, "link", "add", "br0", "type", "bridge"])
    state.add_created("bridge", f"{head}/br0")
    _run(["ip", "-n", head, "addr", "add", f"{HEAD_ADDR}/24", "dev", "br0"])
    _run(["ip", "-n", head, "link", "set", "br0", "up"])
    if profile:
        state.data["shape"] = {"profile": spec.shape, **{k: str(v) for k, v in profile.items()}}
    for i, name in enumerate(node_names(spec.nodes), start=1):
        ns = f"sb{cid}-{name}"
        _run(["ip", "netns", "add", ns])
        state.add_created("netns", ns)
        _run(["ip", "-n", ns, "link", "set", "lo", "up"])
        _run(["ip", "-n", head, "link", "add", f"v{name}", "type", "veth", "peer", "name", "eth0", "netns", ns])
        state.add_created("veth", f"{head}/v{name}")
        _run(["ip", "-n", head, "link", "set", f"v{name}", "master", "br0", "up"])
        _run(["ip", "-n", ns, "addr", "add", f"{node_addr(i)}/24", "dev", "eth0"])
        _run(["ip", "-n", ns, "link", "set", "eth0", "up"])
        if profile:
            _shape(head, ns, name, profile)
    hosts = ["127.0.0.1 localhost", f"{HEAD_ADDR} {HEAD_HOSTNAME}"]
    hosts += [f"{node_addr(i)} {n}" for i, n in enumerate(node_names(spec.nodes), start=1)]
    (spec.directory / "hosts").write_text("\n".join(hosts) + "\n")


def _shape(head: str, ns: str, node: str, profile: dict) -> None:
    """Both directions of a node's link: its egress on eth0, its ingress as the head side's egress."""
    tbf = ["root", "tbf", "rate", str(profile["rate"]), "burst", str(profile.get("burst", "64kb")),
           "latency", str(profile.get("latency", "50ms"))]
    _run(["tc", "-n", ns, "qdisc", "replace", "dev", "eth0", *tbf])
    _run(["tc", "-n", head, "qdisc", "replace", "dev", f"v{node}", *tbf])


def _in_namespace(ns: str, hostname: str, hosts: Path, argv: list[str],
                  pm_counters: tuple[Path, Path] | None = None) -> list[str]:
    """nsenter + unshare, exec'ing through to argv (same PID): own net, UTS (hostname) and /etc/hosts.

    Not `ip netns exec`: it remounts /sys and slurmd 22.05 then dies ("No filesystem mounted on
    /sys/fs/cgroup"). unshare's default mount propagation is private: the bind stays inside.
    pm_counters=(meter directory, empty directory): the node's /sys gains cray/pm_counters, the meter's
    files. sysfs takes no new directory, so a tmpfs holding every entry of /sys (bound, submounts and
    all) and cray/pm_counters is moved over /sys.
    """
    script = 'hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"'
    args = [hostname, str(hosts)]
    if pm_counters:
        script = ('hostname "$1" && mount --bind "$2" /etc/hosts && s="$4" && mount -t tmpfs -o mode=755 sbsys "$s" '
                  '&& for e in /sys/*; do mkdir "$s/${e#/sys/}" && mount --rbind "$e" "$s/${e#/sys/}" || exit 1; done '
                  f'&& mkdir -p "$s{PM_COUNTERS[len("/sys"):]}" && mount --bind "$3" "$s{PM_COUNTERS[len("/sys"):]}" '
                  '&& mount --move "$s" /sys && shift 4 && exec "$@"')
        args += [str(pm_counters[0]), str(pm_counters[1])]
    return ["nsenter", f"--net={NETNS_DIR}/{ns}", "--", "unshare", "--uts", "--mount", "--",
            "/bin/sh", "-c", script, "sh", *args, *argv]


def _node_states(state: State) -> dict[str, str]:
    proc = state.run_client(["sinfo", "--noheader", "--Node", "--format=%N %T"], timeout=10, check=False)
    if proc.returncode != 0:
        return {}
    states = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            states[parts[0]] = parts[1]
    return states


def _wait_ready(state: State, procs: dict[str, subprocess.Popen], nodes: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    names = node_names(nodes)
    seen: dict[str, str] = {}
    while True:
        for role, proc in procs.items():
            if proc.poll() is not None:
                log = next(Path(p["log"]) for p in state.data["processes"] if p["pid"] == proc.pid)
                raise ClusterError(f"{role} exited {proc.returncode} during start: {_last_line(log)} "
                                   f"(log {log})")
        if time.monotonic() >= deadline:
            shown = ", ".join(f"{n}={seen.get(n, '?')}" for n in names)
            raise ClusterTimeout(f"nodes not all idle after {timeout:g} s ({shown}); logs in {state.dir}/log")
        seen = _node_states(state)
        if all(seen.get(n) == "idle" for n in names):
            return
        time.sleep(0.2)


def start(directory: Path | str, nodes: int, mode: str = "loopback", cpus_per_node: int | None = None,
          memory_per_node_mb: int | None = None, shape: str | None = None, ready_timeout: float = READY_TIMEOUT,
          cleanup_on_failure: bool = True, slurmd_timeout_s: int | None = None, task_plugin: str = "none",
          accounting_db: bool = False, energy: str | None = None, energy_period_s: int = 1,
          meter_args: Sequence[str] = (), energy_profile: bool = False,
          node_memory_mb: Sequence[int] | None = None, node_features: Sequence[str] | None = None,
          max_mem_per_node_mb: int | None = None) -> State:
    """Start the cluster; on failure stop what was started (unless cleanup_on_failure=False) and raise.

    accounting_db: slurmdbd and MariaDB (sacct works); energy: the acct_gather_energy plugin fed by an
    emulated meter (netns mode; meter_args go to scalebench_lab.meter: --base-w, --ramp-w-per-s ...);
    energy_profile: Slurm's hdf5 energy profile under DIR/profile (read with sh5util); node_memory_mb and
    node_features: each node's RealMemory and features (nodes of several kinds); max_mem_per_node_mb: the
    partition's MaxMemPerNode, with memory a consumable resource."""
    directory = Path(directory).resolve()
    if task_plugin not in ("none", "affinity"):
        raise ClusterError(f"task_plugin must be none or affinity, got {task_plugin!r}")
    spec = Spec(directory, nodes, mode, cpus_per_node, memory_per_node_mb, shape, slurmd_timeout_s, task_plugin,
                accounting_db, energy, energy_period_s, energy_profile,
                tuple(node_memory_mb) if node_memory_mb else None, tuple(node_features) if node_features else None,
                max_mem_per_node_mb)
    for given, name in ((spec.node_memory_mb, "node_memory_mb"), (spec.node_features, "node_features")):
        if given is not None and len(given) != nodes:
            raise ClusterError(f"{name}: {len(given)} value(s) for {nodes} node(s)")
    if mode not in ("loopback", "netns"):
        raise ClusterError(f"unknown mode {mode!r} (loopback or netns)")
    if energy is not None and energy not in ENERGY_PLUGINS:
        raise ClusterError(f"--energy {energy!r}: an emulated meter feeds only {', '.join(ENERGY_PLUGINS)}")
    if energy and mode != "netns":
        raise ClusterError("--energy needs --mode netns (the meter is mounted in each node's own mount namespace)")
    if not 1 <= energy_period_s <= 3600:
        raise ClusterError(f"energy_period_s must be 1..3600, got {energy_period_s}")
    if energy_profile and not energy:
        raise ClusterError("--energy-profile needs --energy (it profiles the plugin's readings)")
    if not 1 <= nodes <= MAX_NODES:
        raise ClusterError(f"--nodes must be 1..{MAX_NODES}, got {nodes}")
    if shape and mode != "netns":
        raise ClusterError("--shape needs --mode netns (loopback traffic cannot be shaped per node)")
    for value, name in ((cpus_per_node, "--cpus-per-node"), (memory_per_node_mb, "--memory-per-node-mb"),
                        (slurmd_timeout_s, "slurmd_timeout_s")):
        if value is not None and value <= 0:
            raise ClusterError(f"{name} must be positive, got {value}")
    profile = None
    if shape:
        profiles = load_link_profiles()
        if shape not in profiles:
            raise ClusterError(f"unknown link profile {shape!r}; known: {', '.join(profiles)}")
        profile = profiles[shape]
    if len(str(directory)) > MAX_DIR_LEN:
        raise ClusterError(f"--dir path is {len(str(directory))} characters, at most {MAX_DIR_LEN}: "
                           "Slurm's unix sockets under it would exceed 107 characters")
    _check_prerequisites(spec)
    directory.mkdir(parents=True, exist_ok=True)
    previous = State.load(directory)
    if previous is not None and previous.data.get("phase") != "stopped":
        raise ClusterError(f"{directory} holds a cluster in phase {previous.data.get('phase')!r}: "
                           "run `stop --dir` on it first")
    for sub in ("log", "run", "ctld", "spool", "tmp", *(["sys"] if energy else []), *(["profile"] if energy_profile else [])):
        (directory / sub).mkdir(exist_ok=True)
    if energy_profile:  # slurmstepd writes <user>/<job>_<step>_<node>.h5 under it
        (directory / "acct_gather.conf").write_text(f"ProfileHDF5Dir={directory / 'profile'}\nProfileHDF5Default=None\n")
    for name in node_names(nodes):
        (directory / "spool" / name).mkdir(exist_ok=True)
        (directory / "tmp" / name).mkdir(exist_ok=True)

    cid = _cluster_id(directory)
    token = uuid.uuid4().hex
    conf = directory / "slurm.conf"
    env = {"SLURM_CONF": str(conf), **COMMON_MPI_ENV,
           **(LOOPBACK_MPI_ENV if mode == "loopback" else NETNS_MPI_ENV)}
    if mode == "netns" and cpus_per_node and cpus_per_node < machine_cpus():
        # Each namespace node is a share of this machine, its ranks unpinned on all its cores: the node
        # probe counts the rest of the machine's CPU time as foreign to the node's job, not as idle cores.
        env[NODE_CPUS_ENV] = str(cpus_per_node)
    state = State(directory, {
        "version": 1, "phase": "starting", "dir": str(directory), "mode": mode, "nodes": nodes,
        "node_names": node_names(nodes), "partition": PARTITION, "cluster_id": cid, "token": token,
        "slurm_conf": str(conf), "env": env, "started_at": time.time(), "munged": None,
        "processes": [], "created": [], "netns_head": None, "accounting": accounting_db, "energy": energy,
        "energy_period_s": energy_period_s if energy else None})
    state.save()
    t0 = time.monotonic()
    try:
        ports = _free_ports(nodes + 1 + (2 if accounting_db else 0), cid) if mode == "loopback" else None
        db_ports = (ports[-2], ports[-1]) if ports and accounting_db else (3306, 6819)  # the head netns has all
        conf.write_text(slurm_conf_text(spec, cid, ports and ports[:nodes + 1], db_ports[1] if accounting_db else None))
        state.data["ports"] = ports
        if mode == "netns":
            _setup_netns(state, spec, cid, profile)
        daemon_env = dict(os.environ, SLURM_CONF=str(conf), **{MARKER_ENV: token})
        _start_munged(state, daemon_env)
        if accounting_db:
            _start_accounting(state, spec, daemon_env, *db_ports)
        if energy:
            _start_meter(state, spec, daemon_env, meter_args)
        procs: dict[str, subprocess.Popen] = {}
        ctld = ["slurmctld", "-D", "-c", "-f", str(conf)]
        if mode == "netns":
            ctld = _in_namespace(state.netns_head, HEAD_HOSTNAME, directory / "hosts", ctld)
        procs["slurmctld"] = _spawn(state, "slurmctld", ctld, directory / "log" / "slurmctld.out", daemon_env)
        for name in node_names(nodes):
            argv = ["slurmd", "-D", "-f", str(conf), "-N", name]
            if mode == "netns":
                argv = _in_namespace(f"sb{cid}-{name}", name, directory / "hosts", argv,
                                     (directory / "meter" / name, directory / "sys" / name) if energy else None)
                if energy:
                    (directory / "sys" / name).mkdir(exist_ok=True)
            procs[f"slurmd {name}"] = _spawn(state, f"slurmd {name}", argv,
                                            directory / "log" / f"slurmd-{name}.out", daemon_env)
        _wait_ready(state, procs, nodes, ready_timeout)
    except BaseException as err:
        state.data["phase"] = "failed"
        state.data["error"] = str(err)
        state.save()
        if cleanup_on_failure:
            try:
                stop(directory)
            except ClusterError as stop_err:
                raise ClusterError(f"{err}; and the cleanup failed: {stop_err}") from None
        raise
    state.data["phase"] = "running"
    state.data["start_seconds"] = round(time.monotonic() - t0, 2)
    state.save()
    return state


def _in_head(state: State, argv: list[str]) -> list[str]:
    """argv in the controller's network namespace (the head one in netns mode; the host's otherwise)."""
    head = state.netns_head
    return ["nsenter", f"--net={NETNS_DIR}/{head}", "--", *argv] if head else argv


def _start_accounting(state: State, spec: Spec, env: dict, db_port: int, dbd_port: int) -> None:
    """MariaDB (a private data directory) and slurmdbd, then this cluster registered in it."""
    d = spec.directory
    db = accounting.db_dir(d)
    db.mkdir(exist_ok=True)
    if not (db / "data" / "mysql").is_dir():
        _run(accounting.install_db_argv(d), timeout=120)
    mariadb = _spawn(state, "mariadbd", _in_head(state, accounting.mariadbd_argv(d, db_port)),
                     d / "log" / "mariadbd.out", env)
    try:
        accounting.wait_until(lambda: _run(accounting.ping_argv(d), check=False).returncode == 0,
                              "MariaDB did not answer", alive=lambda: mariadb.poll() is None)
    except (TimeoutError, RuntimeError) as err:
        raise ClusterError(f"{err} ({db / 'mysqld.err'}: {_last_line(db / 'mysqld.err')})") from None
    accounting.write_slurmdbd_conf(d, db_port, dbd_port, "localhost", munge_socket(d))
    argv = [accounting.tool("slurmdbd"), "-D"]
    if state.netns_head:
        argv = _in_namespace(state.netns_head, HEAD_HOSTNAME, d / "hosts", argv)
    slurmdbd = _spawn(state, "slurmdbd", argv, d / "log" / "slurmdbd.out", env)
    name = f"sb{state.data['cluster_id']}"

    def registered() -> bool:
        listed = state.run_client(["sacctmgr", "-n", "-P", "list", "cluster", "format=cluster"], check=False)
        if listed.returncode == 0 and name in listed.stdout.split():
            return True
        state.run_client(["sacctmgr", "-i", "add", "cluster", name], check=False)
        return False

    try:
        accounting.wait_until(registered, f"slurmdbd did not register cluster {name}",
                              alive=lambda: slurmdbd.poll() is None)
    except (TimeoutError, RuntimeError) as err:
        raise ClusterError(f"{err} ({d / 'log' / 'slurmdbd.log'}: {_last_line(d / 'log' / 'slurmdbd.log')})") from None


def _start_meter(state: State, spec: Spec, env: dict, meter_args: Sequence[str]) -> None:
    """The emulated meter of every node, writing before any slurmd reads it."""
    d = spec.directory / "meter"
    argv = [sys.executable, "-m", meter.__name__, "--dir", str(d), "--nodes", ",".join(node_names(spec.nodes)),
            *meter_args]
    proc = _spawn(state, "meter", argv, spec.directory / "log" / "meter.out", env)
    deadline = time.monotonic() + 10
    while not all((d / n / "energy").is_file() for n in node_names(spec.nodes)):
        if proc.poll() is not None:
            raise ClusterError(f"the emulated meter exited {proc.returncode}: "
                               f"{_last_line(spec.directory / 'log' / 'meter.out')}")
        if time.monotonic() > deadline:
            raise ClusterTimeout("the emulated meter wrote no sample within 10 s")
        time.sleep(0.05)


# --------------------------------------------------------------------------- stop

def _with_descendants(roots: set[int], pids: list[int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid in pids:
        parent = _ppid(pid)
        if parent is not None:
            children.setdefault(parent, []).append(pid)
    found = set(roots)
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _marked_and_descendants(token: str, roots: list[int]) -> list[int]:
    """Processes carrying our token (daemons, slurmstepd) plus all their descendants (job tasks)."""
    entry = f"{MARKER_ENV}={token}".encode()
    pids = _all_pids()
    found = _with_descendants(set(roots) | {pid for pid in pids if _environ_has(pid, entry)}, pids)
    return sorted(pid for pid in found if is_alive(pid))


# --------------------------------------------------------------------------- fault injection

def job_processes(state: State, job_id: str, **env: str) -> list[int]:
    """Live processes of job `job_id` of this cluster whose environment also holds every NAME=value
    given (e.g. SLURM_STEP_ID="0", SLURM_PROCID="1": one rank of the first step)."""
    entries = [f"{name}={value}".encode() for name, value in
               {"SLURM_CONF": str(state.slurm_conf), "SLURM_JOB_ID": job_id, **env}.items()]
    return sorted(pid for pid in _all_pids() if all(_environ_has(pid, e) for e in entries) and is_alive(pid))


def _live_slurmd(state: State, node: str) -> int:
    daemon = [p for p in state.data["processes"] if p["role"] == f"slurmd {node}"
              and is_alive(p["pid"], p.get("starttime"))]
    if not daemon:
        raise ClusterError(f"node {node}: no live slurmd recorded in {state.path}")
    return daemon[0]["pid"]


def slow_node(state: State, node: str, cpus: float) -> Path:
    """A node with less CPU than its peers, as a throttled or failing node has: its slurmd, and so
    every job process it starts from now on, in a cgroup (v1 cpu controller) limited to `cpus` CPUs.
    `stop` removes the group. Returns its directory."""
    pid = _live_slurmd(state, node)
    if not (CPU_CGROUP / "cgroup.procs").is_file():
        raise ClusterError(f"slowing a node needs cgroup v1's cpu controller at {CPU_CGROUP}")
    if not 0 < cpus <= machine_cpus():
        raise ClusterError(f"cpus must be in (0, {machine_cpus()}], got {cpus}")
    group = CPU_CGROUP / f"scalebench-{state.data['cluster_id']}-{node}"
    try:
        group.mkdir(exist_ok=True)
        state.add_created("cpu_cgroup", str(group))
        (group / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
        (group / "cpu.cfs_quota_us").write_text(str(max(1000, round(cpus * CFS_PERIOD_US))))
        (group / "cgroup.procs").write_text(str(pid))
    except OSError as err:
        raise ClusterError(f"cannot limit node {node} to {cpus} CPUs in {group}: {err.strerror}") from None
    return group


def shape_node(state: State, node: str, profile: str) -> None:
    """One node's link slower than its peers', as a port trained at a lower speed: both directions of
    its veth (netns mode) held to a link profile's rate (site_configs/link_profiles.yaml). The
    namespaces, and so the shaping, go with `stop`."""
    if not state.netns_head:
        raise ClusterError("shaping a node's link needs --mode netns")
    profiles = load_link_profiles()
    if profile not in profiles:
        raise ClusterError(f"unknown link profile {profile!r}; known: {', '.join(profiles)}")
    if node not in state.data["node_names"]:
        raise ClusterError(f"no node {node} in this cluster ({', '.join(state.data['node_names'])})")
    _shape(state.netns_head, f"sb{state.data['cluster_id']}-{node}", node, profiles[profile])


def repair_node(state: State, node: str) -> None:
    """Undo slow_node and shape_node: the node's slurmd (so its jobs from now on) back in the root CPU
    group, and its link unshaped."""
    pid = _live_slurmd(state, node)
    if (CPU_CGROUP / f"scalebench-{state.data['cluster_id']}-{node}").is_dir():
        try:
            (CPU_CGROUP / "cgroup.procs").write_text(str(pid))
        except OSError as err:
            raise ClusterError(f"cannot move node {node}'s slurmd out of its CPU group: {err.strerror}") from None
    if state.netns_head:
        _run(["tc", "-n", f"sb{state.data['cluster_id']}-{node}", "qdisc", "del", "dev", "eth0", "root"], check=False)
        _run(["tc", "-n", state.netns_head, "qdisc", "del", "dev", f"v{node}", "root"], check=False)


def _remove_cgroups(state: State) -> list[str]:
    """Remove the cpu groups of slow_node (their processes are gone by now: any left go to the root)."""
    errors = []
    for created in (c for c in state.data["created"] if c["kind"] == "cpu_cgroup"):
        group = Path(created["name"])
        if not group.is_dir():
            continue
        try:
            for pid in (group / "cgroup.procs").read_text().split():
                (CPU_CGROUP / "cgroup.procs").write_text(pid)
            group.rmdir()
        except OSError as err:
            errors.append(f"cannot remove {group}: {err.strerror}")
    return errors


def crash_node(state: State, node: str) -> list[int]:
    """A node dying: SIGKILL its slurmd and every job process on it (each slurmstepd of ours whose
    tasks run there, with those tasks). slurmctld is not told: it marks the node DOWN, and fails its
    jobs, only when the node stops answering (SlurmdTimeout, see start). Returns the pids killed."""
    slurmd = _live_slurmd(state, node)
    entry, on_node = f"{MARKER_ENV}={state.data['token']}".encode(), f"SLURMD_NODENAME={node}".encode()
    recorded = {p["pid"] for p in state.data["processes"]}
    pids = _all_pids()
    victims = {slurmd}
    for stepd in (pid for pid in pids if pid not in recorded and _environ_has(pid, entry)):
        tree = _with_descendants({stepd}, pids)
        if any(_environ_has(pid, on_node) for pid in tree - {stepd}):
            victims |= tree
    for pid in sorted(victims):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return sorted(victims)


def _terminate(records: list[dict]) -> list[dict]:
    """TERM, wait, KILL, wait; returns the records still alive."""
    def alive() -> list[dict]:
        return [r for r in records if is_alive(r["pid"], r.get("starttime"))]

    for sig, wait in ((signal.SIGTERM, TERM_WAIT), (signal.SIGKILL, KILL_WAIT)):
        for record in alive():
            try:
                os.kill(record["pid"], sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if not alive():
            return []
    return alive()


def _wait_vanished(records: list[dict], timeout: float) -> None:
    """Give init a moment to reap our dead daemons, so `pgrep` shows no <defunct> right after stop."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(r.get("starttime") is None or _starttime(r["pid"]) != r["starttime"] for r in records):
            return
        for r in records:
            _reap(r["pid"])
        time.sleep(0.05)


def _cancel_jobs(state: State) -> None:
    ctld = [p for p in state.data["processes"] if p["role"] == "slurmctld"]
    if not ctld or not is_alive(ctld[0]["pid"], ctld[0].get("starttime")):
        return
    head = state.netns_head
    if head and not Path(NETNS_DIR, head).exists():
        return
    listing = state.run_client(["squeue", "--noheader", "--format=%A"], timeout=10, check=False)
    jobs = listing.stdout.split() if listing.returncode == 0 else []
    if not jobs:
        return
    state.run_client(["scancel", *jobs], timeout=10, check=False)
    deadline = time.monotonic() + SCANCEL_WAIT
    while time.monotonic() < deadline:
        left = state.run_client(["squeue", "--noheader", "--format=%A"], timeout=10, check=False)
        if left.returncode != 0 or not left.stdout.split():
            return
        time.sleep(0.3)


def _mounted(path: str) -> bool:
    """Whether `path` is a mount point (a directory bind-mounted on itself is one, which os.path.ismount
    cannot see when both sides are on one file system)."""
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as mounts:
        return any(line.split()[4] == path for line in mounts if len(line.split()) > 4)


def _unmount_netns_dir(created: list[dict]) -> list[str]:
    """Unmount the namespace directory `start` made a mount of, once no namespace is left in it (another
    cluster's, or the system's, keeps it)."""
    if not any(c["kind"] == "netns_dir_mount" for c in created) or not _mounted(NETNS_DIR):
        return []
    if any(Path(NETNS_DIR).iterdir()):
        return []
    try:
        _run(["umount", NETNS_DIR], timeout=10)
    except ClusterError as err:
        return [str(err)]
    return []


def stop(directory: Path | str) -> bool:
    """Stop what DIR/state.json says `start` created. Returns False when there was nothing to do."""
    directory = Path(directory).resolve()
    state = State.load(directory)
    if state is None:
        return False
    data = state.data
    slurm_records = [p for p in data["processes"] if p["role"] != "munged"]
    live_daemons = [p for p in slurm_records if is_alive(p["pid"], p.get("starttime"))]
    if data.get("phase") == "stopped" and not live_daemons:
        return False
    data["phase"] = "stopping"
    state.save()
    _record_descendants(state, [p["pid"] for p in live_daemons])
    try:
        _cancel_jobs(state)
    except ClusterError:
        pass  # the controller is going away anyway; the process sweep below catches what is left
    _record_descendants(state, [p["pid"] for p in live_daemons])
    left = _terminate([p for p in data["processes"] if p["role"] != "munged"])
    left += _terminate([p for p in data["processes"] if p["role"] == "munged"])
    _wait_vanished(data["processes"], KILL_WAIT)
    errors = []
    if left:
        errors.append("still alive after SIGKILL: " + ", ".join(f"{p['role']} pid {p['pid']}" for p in left))
    errors += _remove_cgroups(state)
    munged = data.get("munged") or {}
    if munged.get("socket"):  # its own munged's directory, once the daemon is gone
        shutil.rmtree(Path(munged["socket"]).parent, ignore_errors=True)
    for created in reversed(data["created"]):
        if created["kind"] != "netns":
            continue  # veths and the bridge live inside the namespaces and go with them
        name = created["name"]
        if not Path(NETNS_DIR, name).exists():
            continue
        try:
            _run(["ip", "netns", "delete", name], timeout=10)
        except ClusterError as err:
            errors.append(str(err))
    errors += _unmount_netns_dir(data["created"])
    data["phase"] = "stopped" if not errors else "stop-failed"
    data["stopped_at"] = time.time()
    state.save()
    if errors:
        raise ClusterError("; ".join(errors))
    return True


def _record_descendants(state: State, roots: list[int]) -> None:
    """Record everything our daemons started (slurmstepd, job tasks) before anything is killed.

    Taken before and after scancel: job processes that exit meanwhile are then also waited for.
    """
    data = state.data
    token = data.get("token", "")
    if not token:
        return
    recorded = {p["pid"] for p in data["processes"]}
    for pid in _marked_and_descendants(token, roots):
        if pid in recorded:
            continue
        data["processes"].append({"role": "descendant", "pid": pid, "starttime": _starttime(pid),
                                  "argv": _cmdline(pid), "log": ""})
        recorded.add(pid)
    state.save()


def _cmdline(pid: int) -> list[str]:
    try:
        return [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        return []


# --------------------------------------------------------------------------- status

def status(directory: Path | str) -> dict:
    """Summary of DIR's cluster: phase, processes alive, namespaces present, node states."""
    directory = Path(directory).resolve()
    state = State.load(directory)
    if state is None:
        raise ClusterError(f"no cluster recorded in {directory} (no {STATE_FILE})")
    data = state.data
    procs = [{"role": p["role"], "pid": p["pid"], "alive": is_alive(p["pid"], p.get("starttime"))}
             for p in data["processes"]]
    namespaces = {c["name"]: Path(NETNS_DIR, c["name"]).exists()
                  for c in data["created"] if c["kind"] == "netns"}
    daemons_up = bool(procs) and all(p["alive"] for p in procs if p["role"] != "descendant")
    nodes = _node_states(state) if daemons_up and data.get("phase") == "running" else {}
    healthy = daemons_up and data.get("phase") == "running" and all(namespaces.values())
    return {"dir": str(directory), "phase": data.get("phase"), "mode": data.get("mode"),
            "healthy": healthy, "partition": data.get("partition"), "nodes": nodes,
            "processes": procs, "namespaces": namespaces, "munged": data.get("munged"),
            "netns_head": data.get("netns_head"), "env": data.get("env", {})}


# --------------------------------------------------------------------------- CLI

def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="slurm-cluster", description="A throwaway Slurm cluster on this machine (root).")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    p = sub.add_parser("start", help="write slurm.conf under DIR, start the daemons, wait for idle nodes")
    p.add_argument("--dir", required=True, type=Path, help="directory for config, logs, spool, state.json")
    p.add_argument("--nodes", required=True, type=positive_int_arg)
    p.add_argument("--mode", choices=["loopback", "netns"], default="loopback")
    p.add_argument("--cpus-per-node", type=positive_int_arg, default=None,
                   help=f"CPUs each node advertises (default: this machine's, {machine_cpus()})")
    p.add_argument("--memory-per-node-mb", type=positive_int_arg, default=None,
                   help="RealMemory of each node (default: this machine's MemTotal)")
    p.add_argument("--shape", metavar="PROFILE", default=None,
                   help="netns only: rate-shape every node link (site_configs/link_profiles.yaml)")
    p.add_argument("--accounting", action="store_true", help="slurmdbd and a private MariaDB: sacct answers")
    p.add_argument("--energy", choices=ENERGY_PLUGINS, default=None,
                   help="netns only: this acct_gather_energy plugin, fed by an emulated meter of known power")
    p.add_argument("--energy-period", type=positive_int_arg, default=1, help="AcctGatherNodeFreq (s)")
    p.add_argument("--energy-profile", action="store_true", help="acct_gather_profile/hdf5 under DIR/profile")
    p.add_argument("--timeout", type=float, default=READY_TIMEOUT, help="seconds to wait for idle nodes")
    p.add_argument("--keep-on-failure", action="store_true", help="leave a failed start for inspection")
    p = sub.add_parser("stop", help="cancel jobs, kill the recorded processes, remove the namespaces")
    p.add_argument("--dir", required=True, type=Path)
    p = sub.add_parser("status", help="phase, processes, namespaces and node states")
    p.add_argument("--dir", required=True, type=Path)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--env", action="store_true", help="print only the client environment (export lines)")
    group.add_argument("--json", action="store_true")
    p = sub.add_parser("exec", help="run a client command against the cluster (in the head netns if any)")
    p.add_argument("--dir", required=True, type=Path)
    p.add_argument("argv", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "start":
            t0 = time.monotonic()
            state = start(args.dir, args.nodes, args.mode, args.cpus_per_node, args.memory_per_node_mb,
                          args.shape, ready_timeout=args.timeout, cleanup_on_failure=not args.keep_on_failure,
                          accounting_db=args.accounting, energy=args.energy, energy_period_s=args.energy_period,
                          energy_profile=args.energy_profile)
            print(f"slurm-cluster: {args.nodes} node(s) idle in partition {PARTITION} "
                  f"({args.mode}, {time.monotonic() - t0:.1f} s); stop: slurm-cluster stop --dir {state.dir}",
                  file=sys.stderr)
            sys.stdout.write(exports(state))
            return 0
        if args.command == "stop":
            t0 = time.monotonic()
            did = stop(args.dir)
            print(f"slurm-cluster: stopped ({time.monotonic() - t0:.1f} s)" if did
                  else "slurm-cluster: nothing to stop", file=sys.stderr)
            return 0
        if args.command == "status":
            if args.env:
                state = State.load(args.dir.resolve())
                if state is None:
                    raise ClusterError(f"no cluster recorded in {args.dir} (no {STATE_FILE})")
                sys.stdout.write(exports(state))
                return 0
            info = status(args.dir)
            if args.json:
                print(json.dumps(info, indent=2))
            else:
                print(f"{info['dir']}: {info['phase']} ({info['mode']}), "
                      f"{'healthy' if info['healthy'] else 'NOT healthy'}")
                for p in info["processes"]:
                    print(f"  {p['role']:<12} pid {p['pid']:<8} {'alive' if p['alive'] else 'gone'}")
                for name, present in info["namespaces"].items():
                    print(f"  netns {name}: {'present' if present else 'gone'}")
                for node, node_state in info["nodes"].items():
                    print(f"  node {node}: {node_state}")
            return 0 if info["healthy"] else 1
        if args.command == "exec":
            command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
            if not command:
                raise ClusterError("exec needs a command: exec --dir DIR -- COMMAND [ARGS...]")
            state = State.load(args.dir.resolve())
            if state is None:
                raise ClusterError(f"no cluster recorded in {args.dir} (no {STATE_FILE})")
            full = state.client_argv(command)
            try:
                os.execvpe(full[0], full, state.client_env())
            except OSError as err:
                raise ClusterError(f"cannot run {full[0]}: {err.strerror}") from None
    except ScalebenchError as err:
        print(f"slurm-cluster {args.command}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"slurm-cluster {args.command}: interrupted", file=sys.stderr)
        return 130
    return 2


if __name__ == "__main__":
    sys.exit(main())
