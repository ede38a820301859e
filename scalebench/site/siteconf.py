"""Pieces shared by every ReFrame site configuration in site_configs/ (plain dicts, no ReFrame import).

Every `reframe` invocation writes into one fresh run directory under results/runs/ (or the one named by
SCALEBENCH_RUN_DIR): report.json, perflogs/, reframe.log, output/ (kept benchmark outputs) and stage/.
Nothing already in results/ is rewritten.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import socket
import string
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from scalebench import paths

from scalebench.hpl import peak
from scalebench.hpl.deck import require_positive
from scalebench.errors import InputError, ResultsError, ScalebenchError
from scalebench.units import parse_size

# Pipe-separated, one line per performance variable (perflog_multiline): pandas reads it directly.
PERFLOG_CASE_FIELDS = (
    "job_completion_time", "result", "display_name", "system", "partition", "environ", "stack",
    "scale", "num_nodes", "num_tasks", "num_tasks_per_node", "num_cpus_per_task", "job_nodelist",
)
PERFLOG_PERF_FIELDS = ("var", "value", "unit", "ref", "lower_thres", "upper_thres", "result")
PERFLOG_PROVENANCE_FIELDS = ("deck_summary", "n_policy", "blas_kernel", "spack_lock")


# ReFrame expands $NAME, and runs $(...) and `...` through a shell, in its directory settings.
_EXPANDED_IN_PATHS = re.compile(r"[$`\x00-\x1f\x7f]")


def _check_run_path(where: str, path: Path) -> Path:
    bad = _EXPANDED_IN_PATHS.search(str(path))
    if bad:
        raise ResultsError(f"{where}: {str(path)!r} has {bad.group(0)!r}; ReFrame expands $ and runs $(...) and "
                           "`...` in its directory paths: choose one without $, ` or line breaks")
    return path


def new_run_dir(results: Path | None = None) -> Path:
    """A run directory name no other run can take (UTC time, host, pid); not created here."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    results = _check_run_path("results directory", results or paths.RESULTS)
    return results / "runs" / f"{stamp}-{socket.gethostname()}-{os.getpid()}"


def run_dir() -> Path:
    """This invocation's run directory, created on first use; an existing report is never overwritten."""
    if not hasattr(run_dir, "cached"):
        given = os.environ.get("SCALEBENCH_RUN_DIR")
        path = _check_run_path("SCALEBENCH_RUN_DIR", Path(given).resolve()) if given else new_run_dir()
        if (path / "report.json").exists():
            raise ResultsError(f"SCALEBENCH_RUN_DIR: {path} already holds a run report; name a new directory")
        try:
            path.mkdir(parents=True, exist_ok=bool(given))
            _write_provenance(path)
        except OSError as err:
            where = "SCALEBENCH_RUN_DIR" if given else "results directory"
            raise ResultsError(f"{where}: cannot write {err.filename or path}: {err.strerror}") from err
        run_dir.cached = path  # type: ignore[attr-defined]
    return run_dir.cached  # type: ignore[attr-defined]


def _git_describe() -> str:
    try:
        proc = subprocess.run(["git", "-C", str(paths.REPO_ROOT), "describe", "--always", "--dirty"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return proc.stdout.strip() or "unknown"


def _write_provenance(path: Path) -> None:
    """What produced this run (the ReFrame report does not say which scalebench it was)."""
    target = path / "provenance.json"
    if target.exists():
        return
    record = {"git_describe": _git_describe(), "hostname": socket.gethostname(),
              "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "argv": sys.argv, "openblas_coretype_env": os.environ.get("OPENBLAS_CORETYPE")}
    target.write_text(json.dumps(record, indent=2) + "\n")


def system_dirs() -> dict[str, str]:
    return {"outputdir": str(run_dir() / "output"), "stagedir": str(run_dir() / "stage")}


def logging_config() -> list[dict[str, Any]]:
    case = "|".join(f"%(check_{name})s" for name in PERFLOG_CASE_FIELDS)
    perf = "|".join(f"%(check_perf_{name})s" for name in PERFLOG_PERF_FIELDS)
    provenance = "|".join(f"%(check_{name})s" for name in PERFLOG_PROVENANCE_FIELDS)
    return [{
        "perflog_multiline": True,
        "handlers": [
            {"type": "stream", "name": "stdout", "level": "info", "format": "%(message)s"},
            {"type": "file", "name": str(run_dir() / "reframe.log"), "level": "debug",
             "format": "[%(asctime)s] %(levelname)s: %(check_info)s: %(message)s", "append": True},
        ],
        "handlers_perflog": [{
            "type": "filelog",
            "basedir": str(run_dir() / "perflogs"),
            "prefix": "%(check_system)s/%(check_partition)s",
            "level": "info",
            "append": True,
            "format": f"{case}|{perf}|{provenance}",
        }],
    }]


def general_config() -> list[dict[str, Any]]:
    return [{
        "report_file": str(run_dir() / "report.json"),
        "check_search_path": [str(paths.REPO_ROOT / "reframe_tests")],
        "check_search_recursive": False,  # reframe_tests/tuning/ runs only when named
        "save_log_files": False,
    }]


# --- sites described in YAML (site_configs/sites/*.yaml) --------------------------------------

_PARTITION_EXTRAS = ("max_nodes", "cores_per_node", "memory_per_node", "clock_ghz", "flops_per_cycle",
                     "microarch", "hpl_time_budget_s", "hpl_trials", "max_time_limit_s")
_PARTITION_KEYS = {"name", "descr", "scheduler", "launcher", "access", "time_limit", "environs",
                   "features", "max_jobs", "use_nodes_option", *_PARTITION_EXTRAS}
# Binaries and directories a stack's checks run (environment extras of the same name).
_STACK_PROGRAMS = ("hpl_binary", "hpcc_binary", "lmp_binary", "netpipe_binary", "osu_dir", "mpirun")
_STACK_KEYS = {"name", "descr", "features", "env_vars", "launcher_options", "modules", "prepare_cmds",
               "spack_env", "spack_view", *_STACK_PROGRAMS}
# Where Spack's osu-micro-benchmarks package installs its programs, under a view.
OSU_IN_VIEW = "libexec/osu-micro-benchmarks"


def _require(mapping: dict[str, Any], key: str, where: str) -> Any:
    if mapping.get(key) in (None, ""):
        raise InputError(f"{where}: missing '{key}'")
    return mapping[key]


def _partition(part: dict[str, Any], where: str, stacks: set[str]) -> dict[str, Any]:
    unknown = sorted(set(part) - _PARTITION_KEYS)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}")
    name = paths.check_name(f"{where}.name", _require(part, "name", where))
    where = f"{where}[{name}]"
    environs = _require(part, "environs", where)
    missing = [e for e in environs if e not in stacks]
    if missing:
        raise InputError(f"{where}.environs: unknown stack(s) {', '.join(map(str, missing))} "
                         f"(defined: {', '.join(sorted(stacks))})")
    extras = {key: part[key] for key in _PARTITION_EXTRAS if key in part}
    extras["memory_per_node"] = parse_size(_require(part, "memory_per_node", where),
                                           f"{where}.memory_per_node")
    extras["max_nodes"] = require_positive(f"{where}.max_nodes", _require(part, "max_nodes", where))
    try:
        inputs = peak.peak_inputs({k: part.get(k) for k in (*peak.RPEAK_INPUTS, "microarch")})
    except ScalebenchError as err:
        raise InputError(f"{where}: {err}") from None
    extras.update(cores_per_node=inputs.cores_per_node, flops_per_cycle=inputs.flops_per_cycle,
                  rpeak_derivation=list(inputs.derivation))
    return {
        "name": name,
        "descr": part.get("descr", name),
        "scheduler": _require(part, "scheduler", where),
        "launcher": _require(part, "launcher", where),
        "access": [_access_option(f"{where}.access[{i}]", a) for i, a in enumerate(part.get("access", []))],
        "environs": list(environs),
        "features": ["hpl", *part.get("features", [])],
        "max_jobs": int(part.get("max_jobs", 8)),
        **({"time_limit": str(part["time_limit"])} if part.get("time_limit") else {}),
        "sched_options": {"use_nodes_option": bool(part.get("use_nodes_option", True))},
        "extras": extras,
    }


def _access_option(where: str, value: Any) -> str:
    """One #SBATCH line of the job script (no shell reads it there), unless a line break starts a
    shell command after it."""
    text = str(value)
    if re.search(r"[\x00-\x1f\x7f]", text):
        raise InputError(f"{where}: {text!r} has a line break or control character; each option must stay "
                         "on its one #SBATCH line of the job script")
    return text


def _launcher_option(where: str, value: Any) -> str:
    """One word of the launch line; {threads_per_rank} is the only placeholder filled in."""
    text = paths.check_shell_word(where, value)
    try:
        fields = {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}
    except ValueError as err:
        raise InputError(f"{where}: {text!r}: {err}") from None
    if fields - {"threads_per_rank"}:
        raise InputError(f"{where}: {text!r}: only {{threads_per_rank}} is filled in "
                         f"(not {', '.join(sorted(repr(f) for f in fields - {'threads_per_rank'}))})")
    return text


def _modules(where: str, modules: list[Any]) -> list[Any]:
    """Module names (or ReFrame's module mappings) go into `module load` lines of the job script."""
    for i, module in enumerate(modules):
        for value in module.values() if isinstance(module, dict) else [module]:
            paths.check_shell_word(f"{where}[{i}]", value)
    return list(modules)


def _stack(stack: dict[str, Any], where: str) -> dict[str, Any]:
    unknown = sorted(set(stack) - _STACK_KEYS)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}")
    name = paths.check_name(f"{where}.name", _require(stack, "name", where))
    env_vars = stack.get("env_vars") or {}
    if not isinstance(env_vars, dict):
        raise InputError(f"{where}[{name}].env_vars: expected a mapping of NAME: value")
    for var in env_vars:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", str(var)):
            raise InputError(f"{where}[{name}].env_vars: {var!r} is not a valid variable name")
    prepare_cmds = [str(c) for c in stack.get("prepare_cmds", [])]
    extras: dict[str, Any] = {"stack": name, "hpl_binary": "xhpl",
                              "launcher_options": [_launcher_option(f"{where}[{name}].launcher_options[{i}]", o)
                                                   for i, o in enumerate(stack.get("launcher_options", []))]}
    extras.update({key: str(stack[key]) for key in _STACK_PROGRAMS if stack.get(key)})
    extras.update(_spack_provider(stack, f"{where}[{name}]", env_vars, prepare_cmds))
    for key in _STACK_PROGRAMS:
        if key in extras:
            paths.check_shell_word(f"{where}[{name}].{key}", extras[key])
    # ReFrame writes `export NAME=value` and itself runs $(...) and `...` in values when it loads them.
    for var, value in env_vars.items():
        paths.check_shell_word(f"{where}[{name}].env_vars.{var}", value)
    view = extras.get("spack_view") or (f"{extras['spack_env']}/.spack-env/view" if "spack_env" in extras else None)
    if view and "osu_dir" not in extras:
        extras["osu_dir"] = f"{view}/{OSU_IN_VIEW}"
    return {
        "name": name,
        "features": ["mpi", "hpl", *stack.get("features", []), *(["spack"] if "spack_lock" in extras else [])],
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
        view = Path(paths.check_shell_word(f"{where}.spack_view", stack["spack_view"], variables=False)).expanduser()
        env_vars.setdefault("PATH", f"{view}/bin:$PATH")
        env_vars.setdefault("LD_LIBRARY_PATH", f"{view}/lib:{view}/lib64:$LD_LIBRARY_PATH")
        # A view made from an environment sits in <env>/.spack-env/view: the lock is three levels up.
        lock = view.parent.parent / "spack.lock" if view.parent.name == ".spack-env" else view / "spack.lock"
        return {"spack_view": str(view), "spack_lock": str(lock)}
    return {}


def load_site(path: Path) -> dict[str, Any]:
    """A ReFrame site configuration from a site description (see site_configs/sites/*.yaml)."""
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = paths.REPO_ROOT / path  # ReFrame may load the configuration from another directory
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as err:
        raise InputError(f"site file: cannot read {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise InputError(f"site file {path}: not valid YAML ({err})") from None
    where = str(path)
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a mapping with system, partitions and stacks")
    stacks_in = _require(data, "stacks", where)
    stacks = [_stack(s, f"{where}: stacks") for s in stacks_in]
    names = {s["name"] for s in stacks}
    partitions = [_partition(p, f"{where}: partitions", names) for p in _require(data, "partitions", where)]
    system = {
        "name": paths.check_name(f"{where}: system", _require(data, "system", where)),
        "descr": data.get("descr", ""),
        "hostnames": [str(h) for h in data.get("hostnames", [".*"])],
        "modules_system": data.get("modules_system", "nomod"),
        **system_dirs(),
        "partitions": partitions,
    }
    return {"systems": [system], "environments": stacks,
            "logging": logging_config(), "general": general_config()}
