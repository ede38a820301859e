"""ReFrame site configurations from site files (site_configs/sites/*.yaml), as plain dicts.

A site file names the system, its partitions (scheduler, launcher, node counts, cores, memory,
Rpeak inputs, limits, scales, node sharing, GPUs) and its interconnect/MPI stacks (one ReFrame
environment each); see site_configs/sites/example.yaml. What the plan of a case needs goes into the
partition and environment extras, read back by scalebench.site.partition. `detect` as a value of
cores_per_node, memory_per_node, microarch or clock_ghz means this machine's (host detection).
"""
from __future__ import annotations

import os
import re
import shlex
import string
import sys
from pathlib import Path
from typing import Any

from scalebench import benchmarks, loaders, paths
from scalebench.errors import InputError, ScalebenchError
from scalebench.hpl import peak
from scalebench.hpl.deck import HPL_MAX_PARAM
from scalebench.site import fabric, host, rundir, spack_lock
from scalebench.site.partition import GpuSpec, JobOptions
from scalebench.site.scales import ScaleSpec
from scalebench.site.thresholds import SCREEN_MIN_NODES
from scalebench.units import parse_duration, parse_size
from scalebench.validation import check_name, check_shell_word, excerpt, is_number, require_count, require_positive



def system_dirs(run: Path) -> dict[str, str]:
    return {"outputdir": str(run / "output"), "stagedir": str(run / "stage")}


def perflog_format() -> str:
    """Pipe-separated, one line per performance variable (perflog_multiline), pandas reads it directly;
    the columns are the provenance registry's, and ReFrame heads the file with their names."""
    return "|".join(f"%(check_{name})s" for name in benchmarks.provenance().perflog_columns())


def logging_config(run: Path, log: Path | None = None) -> list[dict[str, Any]]:
    """Perflogs under run/perflogs, ReFrame's log in `log` (default run/reframe.log)."""
    return [{
        # Records below verbose are not even formatted: ReFrame 4.10 builds every record's check
        # fields, which costs ~15 ms per record (a deprecated alias walks the stack).
        "level": "verbose",
        "perflog_multiline": True,
        "handlers": [
            {"type": "stream", "name": "stdout", "level": "info", "format": "%(message)s"},
            {"type": "file", "name": str(log or run / "reframe.log"), "level": "verbose",
             "format": "[%(asctime)s] %(levelname)s: %(check_info)s: %(message)s", "append": True},
        ],
        "handlers_perflog": [{
            "type": "filelog",
            "basedir": str(run / "perflogs"),
            "prefix": "%(check_system)s/%(check_partition)s",
            "level": "info",
            "append": True,
            "format": perflog_format(),
        }],
    }]


def general_config(run: Path) -> list[dict[str, Any]]:
    return [{
        "report_file": str(run / "report.json"),
        "check_search_path": [str(paths.REPO_ROOT / "reframe_tests")],
        "check_search_recursive": False,  # reframe_tests/tuning/ runs only when named
        "save_log_files": False,
    }]


# --- partitions ---------------------------------------------------------------------------------

_DETECTABLE = ("cores_per_node", "memory_per_node", "microarch", "clock_ghz")
_HPL_KEYS = ("hpl_time_budget_s", "hpl_trials", "hpl_ranks_per_node", "hpl_threads_per_rank", "hpl_max_grid_aspect")
_PARTITION_KEYS = {"name", "descr", "scheduler", "launcher", "access", "time_limit", "max_time_limit_s", "environs",
                   "features", "max_jobs", "max_nodes", "flops_per_cycle", "scales", "job_options", "gpus",
                   "screen_chunk_nodes", *_DETECTABLE, *_HPL_KEYS}
# Binaries and directories a stack's checks run (environment extras of the same name).
_STACK_PROGRAMS = ("hpl_binary", "hpcc_binary", "lmp_binary", "netpipe_binary", "osu_dir", "mpirun",
                   "openfoam_bashrc", "screen_binary")
# What the stack's MPI must use and its fabric class, whose floors the report holds it to (site.fabric).
_STACK_TRANSPORT = ("transport", "intra_node_transport", "fabric")
_STACK_KEYS = {"name", "descr", "features", "env_vars", "launcher_options", "modules", "prepare_cmds",
               "spack_env", "spack_view", "hpl_profile", *_STACK_PROGRAMS, *_STACK_TRANSPORT}
# Where Spack's osu-micro-benchmarks package installs its programs, under a view.
OSU_IN_VIEW = "libexec/osu-micro-benchmarks"
# Host detection: only where a site file asks for it, and once per process.
_HOST: list[host.HostInfo] = []


def _this_host() -> host.HostInfo:
    if not _HOST:
        _HOST.append(host.detect())
    return _HOST[0]


def _require(mapping: dict[str, Any], key: str, where: str) -> Any:
    if mapping.get(key) in (None, ""):
        raise InputError(f"{where}: missing '{key}'")
    return mapping[key]


def _env_override(name: str, kind: type) -> Any:
    """SCALEBENCH_CLOCK_GHZ / SCALEBENCH_FLOPS_PER_CYCLE: what host detection gets wrong."""
    text = os.environ.get(name)
    if not text:
        return None
    try:
        value = kind(text)
    except ValueError:
        raise InputError(f"{name}: {excerpt(text)} is not a {kind.__name__}") from None
    if not is_number(value) or value <= 0:
        raise InputError(f"{name}: {excerpt(text)} must be a positive number")
    return value


def _rpeak_inputs(part: dict[str, Any], where: str) -> tuple[peak.PeakInputs, int, host.HostInfo | None]:
    """Rpeak inputs and memory per node; `detect` values come from this machine."""
    detect = [key for key in _DETECTABLE if part.get(key) == "detect"]
    machine = _this_host() if detect else None
    given = {key: part.get(key) for key in (*peak.RPEAK_INPUTS, "microarch") if part.get(key) != "detect"}
    if machine is not None:
        given["clock_ghz"] = given.get("clock_ghz") or _env_override("SCALEBENCH_CLOCK_GHZ", float)
        given["flops_per_cycle"] = given.get("flops_per_cycle") or _env_override("SCALEBENCH_FLOPS_PER_CYCLE", int)
    for key in ("cores_per_node", "flops_per_cycle"):
        if given.get(key) is not None:
            require_count(f"{where}.{key}", given[key])
    try:
        inputs = peak.peak_inputs(given, host=machine)
    except ScalebenchError as err:
        raise InputError(f"{where}: {err}") from None
    memory = part.get("memory_per_node")
    if memory == "detect":
        memory_bytes = machine.memory_bytes  # type: ignore[union-attr]
    else:
        memory_bytes = parse_size(_require(part, "memory_per_node", where), f"{where}.memory_per_node")
    return inputs, memory_bytes, machine


def _partition(part: dict[str, Any], where: str, stacks: set[str]) -> dict[str, Any]:
    if not isinstance(part, dict):
        raise InputError(f"{where}: expected a mapping")
    if "use_nodes_option" in part:
        raise InputError(f"{where}: use_nodes_option: scalebench writes each job's --nodes itself (remove the key)")
    unknown = sorted(map(str, set(part) - _PARTITION_KEYS))
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}")
    name = check_name(f"{where}.name", _require(part, "name", where))
    where = f"{where}[{name}]"
    environs = _require(part, "environs", where)
    missing = [e for e in environs if e not in stacks]
    if missing:
        raise InputError(f"{where}.environs: unknown stack(s) {', '.join(map(str, missing))} "
                         f"(defined: {', '.join(sorted(stacks))})")
    inputs, memory, machine = _rpeak_inputs(part, where)
    extras: dict[str, Any] = {
        "max_nodes": require_count(f"{where}.max_nodes", _require(part, "max_nodes", where)),
        "cores_per_node": inputs.cores_per_node, "memory_per_node": memory, "microarch": inputs.microarch,
        "clock_ghz": inputs.clock_ghz, "flops_per_cycle": inputs.flops_per_cycle,
        "rpeak_derivation": list(inputs.derivation),
        "scales": ScaleSpec.from_site(part.get("scales"), f"{where}.scales").to_json(),
        "job_options": JobOptions.from_site(part.get("job_options"), f"{where}.job_options",
                                            parse_size(memory, f"{where}.memory_per_node")).to_json(),
    }
    for key in ("time_limit", "max_time_limit_s"):
        if part.get(key) is not None:
            extras[f"{key.removesuffix('_s')}_s"] = parse_duration(part[key], f"{where}.{key}")
    for key in _HPL_KEYS:
        if part.get(key) is not None:
            value = part[key]
            if key == "hpl_max_grid_aspect":
                if not is_number(value) or value < 1:
                    raise InputError(f"{where}.{key}: must be a number >= 1, got {excerpt(value)}")
            elif key == "hpl_time_budget_s":
                if not is_number(value) or value <= 0:
                    raise InputError(f"{where}.{key}: must be a positive number of seconds, got {excerpt(value)}")
            elif key == "hpl_trials":  # one N per trial on HPL.dat's Ns line, which holds HPL_MAX_PARAM
                if require_positive(f"{where}.{key}", value) > HPL_MAX_PARAM:
                    raise InputError(f"{where}.{key}: at most {HPL_MAX_PARAM} (HPL.dat lists one N per trial)")
            else:
                require_positive(f"{where}.{key}", value)
            extras[key] = value
    if part.get("screen_chunk_nodes") is not None:  # nodes per screening job (scalebench.screening.jobs)
        if require_count(f"{where}.screen_chunk_nodes", part["screen_chunk_nodes"]) < SCREEN_MIN_NODES:
            raise InputError(f"{where}.screen_chunk_nodes: at least {SCREEN_MIN_NODES} (a node is compared with the "
                             f"median of its job's nodes)")
        extras["screen_chunk_nodes"] = part["screen_chunk_nodes"]
    gpus = GpuSpec.from_site(part.get("gpus"), f"{where}.gpus")
    config: dict[str, Any] = {
        "name": name,
        "descr": part.get("descr", name),
        "scheduler": _require(part, "scheduler", where),
        "launcher": _require(part, "launcher", where),
        "access": [_access_option(f"{where}.access[{i}]", a) for i, a in enumerate(part.get("access", []))],
        "environs": list(environs),
        "features": ["hpl", *part.get("features", [])],
        "max_jobs": int(part.get("max_jobs", 8)),
        **({"time_limit": str(part["time_limit"])} if part.get("time_limit") else {}),
        # Each check writes --nodes from its plan: ReFrame's tasks / tasks-per-node rounds down
        # when a process grid leaves ranks idle.
        "sched_options": {"use_nodes_option": False},
        "extras": extras,
    }
    if gpus is not None:
        if gpus.count > inputs.cores_per_node:
            raise InputError(f"{where}.gpus.count: {gpus.count} GPUs, but {inputs.cores_per_node} cores to drive them")
        extras["gpus"] = gpus.to_json()
        config["devices"] = [{"type": "gpu", "arch": gpus.arch, "num_devices": gpus.count}]
        config["resources"] = [{"name": "gpu", "options": ["--gres=gpu:{num_gpus_per_node}"]}]
    if machine is not None:
        config["processor"] = {"arch": machine.microarch, "num_cpus": machine.cpus,
                               "num_cpus_per_core": machine.cpus_per_core, "num_sockets": machine.sockets,
                               "num_cpus_per_socket": machine.cpus // machine.sockets}
    return config


def _access_option(where: str, value: Any) -> str:
    """One #SBATCH line of the job script (no shell reads it there), unless a line break starts a
    shell command after it."""
    text = str(value)
    if re.search(r"[\x00-\x1f\x7f]", text):
        raise InputError(f"{where}: {excerpt(text)} has a line break or control character; each option must stay "
                         "on its one #SBATCH line of the job script")
    return text


# --- stacks -------------------------------------------------------------------------------------

def _launcher_option(where: str, value: Any) -> str:
    """One word of the launch line; {threads_per_rank} is the only placeholder filled in."""
    text = check_shell_word(where, value)
    try:
        fields = {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}
    except ValueError as err:
        raise InputError(f"{where}: {excerpt(text)}: {err}") from None
    if fields - {"threads_per_rank"}:
        raise InputError(f"{where}: {excerpt(text)}: only {{threads_per_rank}} is filled in "
                         f"(not {', '.join(sorted(repr(f) for f in fields - {'threads_per_rank'}))})")
    return text


def _modules(where: str, modules: list[Any]) -> list[Any]:
    """Module names (or ReFrame's module mappings) go into `module load` lines of the job script."""
    for i, module in enumerate(modules):
        for value in module.values() if isinstance(module, dict) else [module]:
            check_shell_word(f"{where}[{i}]", value)
    return list(modules)


def _stack(stack: dict[str, Any], where: str) -> dict[str, Any]:
    if not isinstance(stack, dict):
        raise InputError(f"{where}: expected a mapping")
    unknown = sorted(map(str, set(stack) - _STACK_KEYS))
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}")
    name = check_name(f"{where}.name", _require(stack, "name", where))
    env_vars = stack.get("env_vars") or {}
    if not isinstance(env_vars, dict):
        raise InputError(f"{where}[{name}].env_vars: expected a mapping of NAME: value")
    for var in env_vars:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", str(var)):
            raise InputError(f"{where}[{name}].env_vars: {excerpt(var)} is not a valid variable name")
    prepare_cmds = [str(c) for c in stack.get("prepare_cmds", [])]
    extras: dict[str, Any] = {"stack": name, "hpl_binary": "xhpl",
                              "launcher_options": [_launcher_option(f"{where}[{name}].launcher_options[{i}]", o)
                                                   for i, o in enumerate(stack.get("launcher_options", []))]}
    extras.update({key: str(stack[key]) for key in (*_STACK_PROGRAMS, "hpl_profile") if stack.get(key)})
    extras.update(_spack_provider(stack, f"{where}[{name}]", env_vars, prepare_cmds))
    for key in ("transport", "intra_node_transport"):
        if stack.get(key) is not None:
            extras[key] = fabric.check_declaration(f"{where}[{name}].{key}", stack[key])
    if stack.get("fabric") is not None:
        extras["fabric"] = fabric.check_fabric(f"{where}[{name}].fabric", stack["fabric"])
    for key in _STACK_PROGRAMS:
        if key in extras:
            check_shell_word(f"{where}[{name}].{key}", extras[key])
    # ReFrame writes `export NAME=value` and itself runs $(...) and `...` in values when it loads them.
    for var, value in env_vars.items():
        check_shell_word(f"{where}[{name}].env_vars.{var}", value)
    view = extras.get("spack_view") or (f"{extras['spack_env']}/.spack-env/view" if "spack_env" in extras else None)
    if view and "osu_dir" not in extras:
        extras["osu_dir"] = f"{view}/{OSU_IN_VIEW}"
    if view and "openfoam_bashrc" not in extras:  # OpenFOAM's solvers are not linked into the view's bin/
        extras["openfoam_bashrc"] = f"{view}/etc/bashrc"
    return {
        "name": name,
        "features": ["mpi", *stack.get("features", []), *(["spack"] if "spack_lock" in extras else [])],
        "env_vars": [[str(k), str(v)] for k, v in env_vars.items()],
        "modules": _modules(f"{where}[{name}].modules", stack.get("modules", [])),
        "prepare_cmds": prepare_cmds,
        "extras": extras,
    }


def _spack_provider(stack: dict[str, Any], where: str, env_vars: dict[str, Any],
                    prepare_cmds: list[str]) -> dict[str, str]:
    """A stack built by Spack: activate its environment (or put its view first on PATH) and
    remember its spack.lock, whose hash every result then records."""
    if stack.get("spack_env") and stack.get("spack_view"):
        raise InputError(f"{where}: give spack_env or spack_view, not both")
    if stack.get("spack_env"):
        env_dir = Path(str(stack["spack_env"])).expanduser()
        env_dir = env_dir if env_dir.is_absolute() else paths.REPO_ROOT / env_dir
        prepare_cmds.append(f"spack env activate -d {shlex.quote(str(env_dir))}")
        return {"spack_env": str(env_dir), "spack_lock": str(env_dir / "spack.lock")}
    if stack.get("spack_view"):
        # It goes on PATH, which is written unquoted (and expanded by ReFrame): a plain word.
        view = Path(check_shell_word(f"{where}.spack_view", stack["spack_view"], variables=False)).expanduser()
        env_vars.setdefault("PATH", f"{view}/bin:$PATH")
        env_vars.setdefault("LD_LIBRARY_PATH", f"{view}/lib:{view}/lib64:$LD_LIBRARY_PATH")
        # A view made from an environment sits in <env>/.spack-env/view: the lock is three levels up.
        lock = view.parent.parent / "spack.lock" if view.parent.name == ".spack-env" else view / "spack.lock"
        return {"spack_view": str(view), "spack_lock": str(lock)}
    return {}


# --- the whole site -----------------------------------------------------------------------------

def read_site(path: Path) -> tuple[Path, dict[str, Any]]:
    """The site file's path (relative to the clone when not found as given) and its mapping."""
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = paths.REPO_ROOT / path  # ReFrame may load the configuration from another directory
    data = loaders.load_yaml(path, "site file")
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping with system, partitions and stacks")
    return path, data


def site_systems(path: Path) -> dict[str, Any]:
    """The systems and environments of a ReFrame configuration from a site file; no run directory."""
    path, data = read_site(path)
    where = str(path)
    stacks_in = _require(data, "stacks", where)
    if not isinstance(stacks_in, list):
        raise InputError(f"{where}: stacks: expected a list")
    stacks = [_stack(s, f"{where}: stacks") for s in stacks_in]
    names = {s["name"] for s in stacks}
    partitions_in = _require(data, "partitions", where)
    if not isinstance(partitions_in, list):
        raise InputError(f"{where}: partitions: expected a list")
    partitions = [_partition(p, f"{where}: partitions", names) for p in partitions_in]
    system = {
        "name": check_name(f"{where}: system", _require(data, "system", where)),
        "descr": data.get("descr", ""),
        "hostnames": [str(h) for h in data.get("hostnames", [".*"])],
        "modules_system": data.get("modules_system", "nomod"),
        "partitions": partitions,
    }
    return {"systems": [system], "environments": stacks}


# ReFrame options that only read its results database: no run directory for them.
DATABASE_QUERIES = ("--list-stored-sessions", "--list-stored-testcases", "--describe-stored-sessions",
                    "--describe-stored-testcases", "--performance-compare", "--delete-stored-sessions")


def database_query(argv: list[str]) -> bool:
    """Whether a reframe command line only queries the results database (runs no test)."""
    return any(arg.split("=")[0] in DATABASE_QUERIES for arg in argv)


def storage_config(root: Path) -> list[dict[str, Any]]:
    """ReFrame's results database in the results directory: --list-stored-sessions and
    --performance-compare then see every run written there."""
    return [{"enable": True, "sqlite_db_file": str(root / "reframe.db")}]


def load_site(path: Path, argv: list[str] | None = None) -> dict[str, Any]:
    """A ReFrame site configuration from a site file, writing into this invocation's run directory
    (a database query writes none: its log goes to the results directory's reframe-queries.log)."""
    config = site_systems(path)
    if database_query(sys.argv if argv is None else argv):
        root = rundir.results_root()
        root.mkdir(parents=True, exist_ok=True)
        run, log = root / "queries", root / "reframe-queries.log"
    else:
        run = rundir.claim_run_dir()
        root, log = rundir.results_root(), None
        for stack in config["environments"]:  # each Spack stack's lock, kept by content in the results
            if stack["extras"].get("spack_lock"):
                spack_lock.archive(stack["extras"]["spack_lock"], root)
    config["systems"][0].update(system_dirs(run))
    config.update(logging=logging_config(run, log), general=general_config(run))
    config["storage"] = storage_config(root)
    return config
