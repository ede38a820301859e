"""Pieces shared by every ReFrame site configuration in site_configs/ (plain dicts, no ReFrame import).

Every `reframe` invocation writes into one fresh run directory under results/runs/ (or the one named by
SCALEBENCH_RUN_DIR): report.json, perflogs/, reframe.log, output/ (kept benchmark outputs) and stage/.
Nothing already in results/ is rewritten.
"""
from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import Any

from scalebench import paths
from scalebench.errors import ResultsError

# Pipe-separated, one line per performance variable (perflog_multiline): pandas reads it directly.
PERFLOG_CASE_FIELDS = (
    "job_completion_time", "result", "display_name", "system", "partition", "environ", "stack",
    "scale", "num_nodes", "num_tasks", "num_tasks_per_node", "num_cpus_per_task", "job_nodelist",
)
PERFLOG_PERF_FIELDS = ("var", "value", "unit", "ref", "lower_thres", "upper_thres", "result")
PERFLOG_PROVENANCE_FIELDS = ("deck_summary", "n_policy", "blas_kernel")


def new_run_dir(results: Path | None = None) -> Path:
    """A run directory name no other run can take (UTC time, host, pid); not created here."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return (results or paths.RESULTS) / "runs" / f"{stamp}-{socket.gethostname()}-{os.getpid()}"


def run_dir() -> Path:
    """This invocation's run directory, created on first use; an existing report is never overwritten."""
    if not hasattr(run_dir, "cached"):
        given = os.environ.get("SCALEBENCH_RUN_DIR")
        path = Path(given).resolve() if given else new_run_dir()
        if (path / "report.json").exists():
            raise ResultsError(f"SCALEBENCH_RUN_DIR: {path} already holds a run report; name a new directory")
        try:
            path.mkdir(parents=True, exist_ok=bool(given))
        except OSError as err:
            raise ResultsError(f"results directory: cannot create {path}: {err.strerror}") from err
        run_dir.cached = path  # type: ignore[attr-defined]
    return run_dir.cached  # type: ignore[attr-defined]


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
        "check_search_recursive": True,
        "save_log_files": False,
    }]
