"""ReFrame site configurations from site files (site_configs/sites/*.yaml), as plain dicts.

A site file names the system, its partitions (scheduler, launcher, node counts, cores, memory,
Rpeak inputs, limits, scales, node sharing, GPUs) and its interconnect/MPI stacks (one ReFrame
environment each); see site_configs/sites/example.yaml. What the plan of a case needs goes into the
partition and environment extras, read back by scalebench.site.partition. `detect` as a value of
cores_per_node, memory_per_node, microarch or clock_ghz means this machine's (host detection).
"""
from __future__ import annotations

import os
import shlex
import string
import sys
from pathlib import Path
from typing import Any

from scalebench import benchmark, loaders, paths, registry, schema
from scalebench.energy.site import EnergySpec
from scalebench.errors import InputError, ScalebenchError
from scalebench.site import binding, fabric, host, modules, peak, rundir, spack_lock
from scalebench.site.blas import blas_names
from scalebench.site.partition import SCREEN_MIN_NODES, GpuSpec, JobOptions, Reservation
from scalebench.site.scales import ScaleSpec
from scalebench.site.slurm_facts import parse_constraint
from scalebench.units import format_size, parse_duration, parse_size, parse_slurm_size
from scalebench.validation import did_you_mean, excerpt, is_number



def system_dirs(run: Path) -> dict[str, str]:
    return {"outputdir": str(run / "output"), "stagedir": str(run / "stage")}


def perflog_format() -> str:
    """Pipe-separated, one line per performance variable (perflog_multiline), pandas reads it directly;
    the columns are the provenance registry's, and ReFrame heads the file with their names."""
    return "|".join(f"%(check_{name})s" for name in registry.provenance().perflog_columns())


# ReFrame versions whose configuration has a key scalebench writes: perflog_multiline, which 4.9 renamed
# from perflog_compat (warning at every run under the old name), and the storage of its results database.
PERFLOG_MULTILINE_SINCE = (4, 9)
STORAGE_SINCE = (4, 7)


def reframe_version(text: str | None) -> tuple[int, ...]:
    """(4, 10, 4) from ReFrame's VERSION ('4.10.4', '4.9.0-dev.1'); the newest form without one."""
    numbers = [int(part) for part in (text or "").split("-")[0].split(".")[:3] if part.isdigit()]
    return tuple(numbers) or (10**6,)


def logging_config(run: Path, log: Path | None = None, version: tuple[int, ...] = (10**6,)) -> list[dict[str, Any]]:
    """Perflogs under run/perflogs, ReFrame's log in `log` (default run/reframe.log), in the keys of
    ReFrame `version`."""
    return [{
        # Records below verbose are not even formatted: ReFrame 4.10 builds every record's check
        # fields, which costs ~15 ms per record (a deprecated alias walks the stack).
        "level": "verbose",
        "perflog_multiline" if version >= PERFLOG_MULTILINE_SINCE else "perflog_compat": True,
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
        "check_search_path": [str(paths.CHECKS)],
        "check_search_recursive": False,  # reframe_tests/tuning/ runs only when named
        "save_log_files": False,
    }]


# --- partitions ---------------------------------------------------------------------------------

MIN_NODE_MEMORY = 2**30
_DETECTABLE = ("cores_per_node", "memory_per_node", "microarch", "clock_ghz")
_HPL_KEYS = ("hpl_time_budget_s", "hpl_trials", "hpl_ranks_per_node", "hpl_threads_per_rank", "hpl_max_grid_aspect")
# Binaries and directories a stack's checks run (environment extras of the same name); a benchmark
# benchmark's stack keys (scalebench.benchmark) are its programs too.
_STACK_PROGRAMS = ("hpl_binary", "hpcc_binary", "mpirun", "screen_binary", *benchmark.site_keys("stack"))
# Host detection: only where a site file asks for it, and once per process.
_HOST: list[host.HostInfo] = []


def _this_host() -> host.HostInfo:
    if not _HOST:
        _HOST.append(host.detect())
    return _HOST[0]


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
    try:
        inputs = peak.peak_inputs(given, host=machine)
    except ScalebenchError as err:
        raise InputError(f"{where}: {err}") from None
    memory = part.get("memory_per_node")
    if memory == "detect":
        memory_bytes = machine.memory_bytes  # type: ignore[union-attr]
    else:
        memory_bytes = parse_size(part["memory_per_node"], f"{where}.memory_per_node")
        if memory_bytes < MIN_NODE_MEMORY:  # '768B' or '768MB' where GB was meant: no HPC node is that small
            raise InputError(f"{where}.memory_per_node: {format_size(memory_bytes)} is less than "
                             f"{format_size(MIN_NODE_MEMORY)}: is the unit right (e.g. 768GiB)?")
    return inputs, memory_bytes, machine


def _partition(part: dict[str, Any], where: str, source: str, site: dict[str, Any]) -> dict[str, Any]:
    """ReFrame's partition from a site file's (its types checked by the schema)."""
    name = part["name"]
    stacks = {stack["name"]: stack for stack in site["stacks"]}
    missing = [e for e in part["environs"] if e not in stacks]
    if missing:
        schema.fail(source, f"{where}.environs", f"unknown stack(s) {', '.join(missing)} "
                                                 f"(defined: {', '.join(stacks)})")
    if part["scheduler"] == "local" and part["max_nodes"] != 1:
        schema.fail(source, f"{where}.max_nodes", f"{part['max_nodes']} nodes, but the local scheduler runs every "
                                                  "job on this one machine: 1, or a Slurm scheduler")
    if part.get("modules") and site.get("modules_system", "nomod") == "nomod":
        schema.fail(source, f"{where}.modules", "no module would be loaded: the site's modules_system is nomod "
                                                "(unset); set it to the cluster's (lmod, tmod4, envmod or spack)")
    part, sizing = _node_kinds(part, where, source)
    inputs, memory, machine = _rpeak_inputs(part, f"{source}: {where}")
    limit = parse_slurm_size(part["max_mem_per_node"], f"{where}.max_mem_per_node") \
        if part.get("max_mem_per_node") else None
    extras: dict[str, Any] = {
        "max_nodes": part["max_nodes"],
        # what HPL's matrix may use: the node's memory, within what a job may have of it (MaxMemPerNode)
        "cores_per_node": inputs.cores_per_node, "memory_per_node": min(memory, limit or memory),
        "microarch": inputs.microarch,
        "clock_ghz": inputs.clock_ghz, "flops_per_cycle": inputs.flops_per_cycle,
        "rpeak_derivation": list(inputs.derivation),
        "scales": ScaleSpec.from_site(part.get("scales")).to_json(),
        "job_options": JobOptions.from_site(part.get("job_options"), f"{source}: {where}.job_options",
                                            memory, limit).to_json(),
        "energy": EnergySpec.from_site(part.get("energy"), f"{source}: {where}.energy").to_json(),
    }
    if limit is not None:
        extras["max_mem_per_node"] = limit
        if limit < memory:
            sizing = "; ".join(filter(None, [sizing, f"a job may have {format_size(limit)} of a node's "
                                                     f"{format_size(memory)} (max_mem_per_node): HPL is sized for it"]))
    if sizing:
        extras["node_sizing"] = sizing
    for key in ("time_limit", "max_time_limit_s"):
        if part.get(key) is not None:
            extras[f"{key.removesuffix('_s')}_s"] = parse_duration(part[key], f"{where}.{key}")
    default, longest = extras.get("time_limit_s"), extras.get("max_time_limit_s")
    if default and longest and default > longest:
        schema.fail(source, f"{where}.time_limit", f"{part['time_limit']} is longer than the partition's longest job "
                                                   f"(max_time_limit_s: {longest}): its jobs would pend for ever")
    extras.update({key: part[key] for key in (*_HPL_KEYS, "cpu_bind", "screen_chunk_nodes",
                                              *benchmark.site_keys("partition")) if part.get(key) is not None})
    if part.get("screen_chunk_nodes", SCREEN_MIN_NODES) < SCREEN_MIN_NODES:
        schema.fail(source, f"{where}.screen_chunk_nodes", f"at least {SCREEN_MIN_NODES} (a node is compared with the "
                                                           f"median of its job's nodes)")
    if part.get("reservation"):
        reserved = Reservation.from_site(part["reservation"], part["max_nodes"])
        if reserved.from_nodes > part["max_nodes"]:
            schema.fail(source, f"{where}.reservation.from_nodes", f"{reserved.from_nodes} nodes, but the partition "
                                                                   f"has {part['max_nodes']}: no case would use it")
        extras["reservation"] = reserved.to_json()
    _check_binding(source, where, part, stacks)
    _check_containers(source, where, part, stacks)
    gpus = GpuSpec.from_site(part.get("gpus"))
    config: dict[str, Any] = {
        "name": name,
        "descr": part.get("descr", name),
        "scheduler": part["scheduler"],
        "launcher": part["launcher"],
        "access": list(part.get("access", [])),
        "environs": list(part["environs"]),
        "features": ["hpl", *part.get("features", [])],
        "max_jobs": part.get("max_jobs", 8),
        **({"time_limit": str(part["time_limit"])} if part.get("time_limit") else {}),
        # Each check writes --nodes from its plan: ReFrame's tasks / tasks-per-node rounds down
        # when a process grid leaves ranks idle.
        "sched_options": {"use_nodes_option": False},
        "extras": extras,
        # what every job of the partition does first, as a ReFrame partition holds it
        **({"env_vars": [[str(k), str(v)] for k, v in part["env_vars"].items()]} if part.get("env_vars") else {}),
        **({"prepare_cmds": list(part["prepare_cmds"])} if part.get("prepare_cmds") else {}),
        **({"modules": list(part["modules"])} if part.get("modules") else {}),
    }
    if gpus is not None:
        if gpus.count > inputs.cores_per_node:
            schema.fail(source, f"{where}.gpus.count", f"{gpus.count} GPUs, but {inputs.cores_per_node} cores "
                                                       "to drive them")
        extras["gpus"] = gpus.to_json()
        config["devices"] = [{"type": "gpu", "arch": gpus.arch, "num_devices": gpus.count}]
        config["resources"] = [{"name": "gpu", "options": [gpus.slurm_option("{num_gpus_per_node}")]}]
    if machine is not None:
        config["processor"] = {"arch": machine.microarch, "num_cpus": machine.cpus,
                               "num_cpus_per_core": machine.cpus_per_core, "num_sockets": machine.sockets,
                               "num_cpus_per_socket": machine.cpus // machine.sockets}
    return config


def _node_kinds(part: dict[str, Any], where: str, source: str) -> tuple[dict[str, Any], str]:
    """The partition as HPL is sized for it when its nodes differ (`node_kinds`): for the smallest kind,
    or for the kinds job_options.constraint holds its jobs to; with what plan says of it."""
    kinds = part.get("node_kinds")
    constraint = (part.get("job_options") or {}).get("constraint")
    if not kinds:
        return part, f"constrained to {constraint}" if constraint else ""
    memory = {i: parse_slurm_size(k["memory_per_node"], f"{where}.node_kinds[{i}].memory_per_node")
              for i, k in enumerate(kinds)}
    described = ", ".join(f"{k['nodes']} x {format_size(memory[i])} {'/'.join(k.get('features', ())) or ''}".rstrip()
                          for i, k in enumerate(kinds))
    if constraint:
        rule = parse_constraint(constraint, f"{where}.job_options.constraint")
        chosen = [i for i, k in enumerate(kinds) if rule.matches(k.get("features", ()))]
        if not chosen:
            schema.fail(source, f"{where}.job_options.constraint", f"{constraint!r}: no node kind has those features "
                                                                   f"({described})")
        nodes = sum(kinds[i]["nodes"] for i in chosen)
        sized = {**part, "memory_per_node": min(memory[i] for i in chosen),
                 "cores_per_node": min(kinds[i]["cores_per_node"] for i in chosen),
                 "max_nodes": min(part["max_nodes"], nodes)}
        return sized, (f"constrained to {constraint}: {sized['max_nodes']} node(s) of {format_size(sized['memory_per_node'])}"
                       f" and {sized['cores_per_node']} cores (kinds: {described})")
    smallest = min(memory.values())
    if part.get("memory_per_node") not in (None, "detect") and \
            parse_size(part["memory_per_node"], f"{where}.memory_per_node") > smallest:
        schema.fail(source, f"{where}.memory_per_node", f"{part['memory_per_node']}, but the smallest of its node kinds "
                    f"has {format_size(smallest)} ({described}): HPL sized so runs out of memory there; write the "
                    "smallest, or hold its jobs to one kind with job_options.constraint")
    fewest = min(k["cores_per_node"] for k in kinds)
    if isinstance(part.get("cores_per_node"), int) and part["cores_per_node"] > fewest:
        schema.fail(source, f"{where}.cores_per_node", f"{part['cores_per_node']}, but the smallest of its node kinds "
                                                       f"has {fewest} ({described})")
    return part, f"sized for the smallest of {len(kinds)} node kinds ({described})"


def _check_containers(source: str, where: str, part: dict[str, Any], stacks: dict[str, dict[str, Any]]) -> None:
    """pyxis is a plugin of srun: another launcher would run the program outside the image."""
    for name in part["environs"]:
        runtime = (stacks[name].get("container") or {}).get("runtime")
        if runtime == "pyxis" and part["launcher"] != "srun":
            schema.fail(source, f"stacks[{name}].container.runtime", f"pyxis runs with srun; partition "
                        f"{part['name']} launches with {part['launcher']} (use apptainer, or launcher: srun)")


def _check_binding(source: str, where: str, part: dict[str, Any], stacks: dict[str, dict[str, Any]]) -> None:
    """An mpirun or mpiexec binds as its MPI does (scalebench/data/mpis.yaml): the stack must name an MPI
    whose mpirun scalebench binds, or bind its ranks itself."""
    if part["launcher"] not in binding.MPIRUNS or part.get("cpu_bind") == "none":
        return
    for name in part["environs"]:
        stack = stacks[name]
        features = tuple(str(f) for f in stack.get("features", ()))
        options = tuple(str(o) for o in stack.get("launcher_options", ()))
        env = {str(k): str(v) for k, v in (stack.get("env_vars") or {}).items()}
        if binding.own_binding(features, options, env):
            continue
        refusal = binding.mpirun_refusal(features, str(part.get("cpu_bind", binding.CPU_BIND[0])))
        if refusal:
            schema.fail(source, f"stacks[{name}].features", f"partition {part['name']} launches with "
                                                            f"{part['launcher']}, {refusal}")


# --- stacks -------------------------------------------------------------------------------------

def _launcher_option(source: str, where: str, text: str) -> str:
    """One word of the launch line; {threads_per_rank} is the only placeholder filled in."""
    try:
        fields = {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}
    except ValueError as err:
        schema.fail(source, where, f"{excerpt(text)}: {err}")
    if fields - {"threads_per_rank"}:
        schema.fail(source, where, f"{excerpt(text)}: only {{threads_per_rank}} is filled in "
                                   f"(not {', '.join(sorted(repr(f) for f in fields - {'threads_per_rank'}))})")
    return text


def _stack(stack: dict[str, Any], source: str, modules_system: str) -> dict[str, Any]:
    """ReFrame's environment from a site file's stack (its types checked by the schema)."""
    name = stack["name"]
    where = f"stacks[{name}]"
    if stack.get("modules") and modules_system == "nomod":
        schema.fail(source, f"{where}.modules", "no module would be loaded: the site's modules_system is nomod "
                                                "(unset); set it to the cluster's (lmod, tmod4, envmod or spack)")
    env_vars = dict(stack.get("env_vars") or {})
    prepare_cmds = list(stack.get("prepare_cmds", []))
    extras: dict[str, Any] = {"stack": name, "hpl_binary": "xhpl",
                              "launcher_options": [_launcher_option(source, f"{where}.launcher_options[{i}]", o)
                                                   for i, o in enumerate(stack.get("launcher_options", []))]}
    extras.update({key: str(stack[key]) for key in _STACK_PROGRAMS + ("hpl_profile", "blas") if stack.get(key)})
    for key in ("container", "startup"):
        if stack.get(key):
            extras[key] = dict(stack[key])
    if stack.get("blas") and stack["blas"] not in blas_names():
        schema.fail(source, f"{where}.blas", f"{stack['blas']!r} is not one of {', '.join(blas_names())}"
                                             f"{did_you_mean(stack['blas'], blas_names())}")
    extras.update(_spack_provider(stack, source, where, env_vars, prepare_cmds))
    for key in ("transport", "intra_node_transport"):
        if stack.get(key) is not None:
            extras[key] = fabric.check_declaration(f"{source}: {where}.{key}", stack[key])
    if stack.get("fabric") is not None:
        extras["fabric"] = fabric.check_fabric(f"{source}: {where}.fabric", stack["fabric"])
    view = extras.get("spack_view") or (f"{extras['spack_env']}/.spack-env/view" if "spack_env" in extras else None)
    for key, key_schema in benchmark.site_keys("stack").items() if view else ():  # where Spack puts its program
        if "x-under-spack-view" in key_schema and key not in extras:
            extras[key] = f"{view}/{key_schema['x-under-spack-view']}"
    return {
        "name": name,
        "features": ["mpi", *stack.get("features", []), *(["spack"] if "spack_lock" in extras else [])],
        "env_vars": [[str(k), str(v)] for k, v in env_vars.items()],
        "modules": list(stack.get("modules", [])),
        "prepare_cmds": prepare_cmds,
        "extras": extras,
    }


def _spack_provider(stack: dict[str, Any], source: str, where: str, env_vars: dict[str, Any],
                    prepare_cmds: list[str]) -> dict[str, str]:
    """A stack built by Spack: activate its environment (or put its view first on PATH) and
    remember its spack.lock, whose hash every result then records."""
    if stack.get("spack_env") and stack.get("spack_view"):
        schema.fail(source, where, "give spack_env or spack_view, not both")
    if stack.get("spack_env"):
        env_dir = Path(str(stack["spack_env"])).expanduser()
        env_dir = env_dir if env_dir.is_absolute() else paths.REPO_ROOT / env_dir
        prepare_cmds.append(f"spack env activate -d {shlex.quote(str(env_dir))}")
        return {"spack_env": str(env_dir), "spack_lock": str(env_dir / "spack.lock")}
    if stack.get("spack_view"):
        # It goes on PATH, which is written unquoted (and expanded by ReFrame): a plain word (the schema's).
        view = Path(stack["spack_view"]).expanduser()
        env_vars.setdefault("PATH", f"{view}/bin:$PATH")
        env_vars.setdefault("LD_LIBRARY_PATH", f"{view}/lib:{view}/lib64:$LD_LIBRARY_PATH")
        # A view made from an environment sits in <env>/.spack-env/view: the lock is three levels up.
        lock = view.parent.parent / "spack.lock" if view.parent.name == ".spack-env" else view / "spack.lock"
        return {"spack_view": str(view), "spack_lock": str(lock)}
    return {}


# --- the whole site -----------------------------------------------------------------------------

def read_site(path: Path) -> tuple[Path, dict[str, Any]]:
    """The site file's path (relative to the clone when not found as given) and its mapping, checked
    against the site schema (scalebench/data/schemas/site.yaml)."""
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = paths.REPO_ROOT / path  # ReFrame may load the configuration from another directory
    data = loaders.load_yaml(path, "site file")
    schema.check(data, "site.yaml", str(path))
    return path, data


def site_systems(path: Path) -> dict[str, Any]:
    """The systems and environments of a ReFrame configuration from a site file; no run directory."""
    path, data = read_site(path)
    return systems_config(data, str(path))


def systems_config(data: dict[str, Any], source: str) -> dict[str, Any]:
    """The systems and environments of a ReFrame configuration from a site file's mapping (checked
    against the site schema), `source` naming it in messages."""
    modules_system = data.get("modules_system", "nomod")
    stacks = [_stack(stack, source, modules_system) for stack in data["stacks"]]
    _unique_names(source, "stacks", data["stacks"])
    _unique_names(source, "partitions", data["partitions"])
    partitions = [_partition(part, f"partitions[{part['name']}]", source, data) for part in data["partitions"]]
    system = {
        "name": data["system"],
        "descr": data.get("descr", ""),
        "hostnames": list(data.get("hostnames", [".*"])),
        "modules_system": modules_system,
        "partitions": partitions,
    }
    return {"systems": [system], "environments": stacks}


def _unique_names(source: str, where: str, items: list[dict[str, Any]]) -> None:
    names = [item["name"] for item in items]
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        schema.fail(source, where, f"two entries are named {twice!r}; each needs its own name")


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


def load_site(path: Path, argv: list[str] | None = None, reframe: str | None = None) -> dict[str, Any]:
    """A ReFrame site configuration from a site file, writing into this invocation's run directory
    (a database query writes none: its log goes to the results directory's reframe-queries.log), in the
    keys of the ReFrame whose VERSION is `reframe` (default: the newest supported)."""
    version = reframe_version(reframe)
    config = site_systems(path)
    argv = sys.argv if argv is None else argv
    dry_run = rundir.dry_run_requested(argv)
    system = config["systems"][0]
    names = modules.module_names([*config["environments"], *system["partitions"]])
    stubs = modules.check(system["name"], system["modules_system"], names, dry_run)
    if database_query(argv):
        root = rundir.results_root()
        root.mkdir(parents=True, exist_ok=True)
        run, log = root / "queries", root / "reframe-queries.log"
    else:
        run = rundir.claim_run_dir(dry_run=dry_run)
        root, log = rundir.results_root(), None
        for stack in config["environments"]:  # each Spack stack's lock, kept by content in the results
            if stack["extras"].get("spack_lock"):
                spack_lock.archive(stack["extras"]["spack_lock"], root)
        if stubs:
            modules.use_stubs(names, run / "module-stubs", system["modules_system"])
    config["systems"][0].update(system_dirs(run))
    config.update(logging=logging_config(run, log, version), general=general_config(run))
    if version >= STORAGE_SINCE:
        config["storage"] = storage_config(root)
    return config
