import hashlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
LOCAL_SITE = REPO / "site_configs" / "sites" / "local.yaml"


def unavailable(message: str) -> None:
    """Skip for want of something `make test` provides, except in CI, where it must be there: fail."""
    if os.environ.get("CI"):
        pytest.fail(f"{message}: missing in CI")
    pytest.skip(message)


def require_tools(*tools: str) -> None:
    """Skip when a tool is missing, except in CI, where `make test` installs everything: fail there."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        unavailable(f"needs {', '.join(missing)} (installed by scripts/install.sh)")


def lmod_environ() -> dict[str, str]:
    """This process's environment with Lmod initialised by its profile script, as in a site engineer's
    login shell (the `module` function exported); skip (fail in CI) without Lmod."""
    profile = next(iter(sorted(Path("/etc/profile.d").glob("*lmod*.sh"))), None)
    if profile is None:
        unavailable("needs Lmod (Debian package lmod, installed by make test)")
    out = subprocess.run(["bash", "-c", f". {profile} && env -0"], capture_output=True, timeout=60, check=True)
    return dict(entry.split("=", 1) for entry in out.stdout.decode().split("\0") if "=" in entry)


XHPL = REPO / "build" / "bin" / "xhpl"


@pytest.fixture(autouse=True)
def results_outside_the_clone(tmp_path_factory, monkeypatch):
    """What a test runs writes its runs into a temporary results directory, never the clone's results/
    (a test that means another one sets its own)."""
    if "SCALEBENCH_RESULTS" not in os.environ:
        monkeypatch.setenv("SCALEBENCH_RESULTS", str(tmp_path_factory.mktemp("results")))


def require_xhpl() -> None:
    """Skip (fail in CI) without mpirun and the xhpl scripts/install.sh builds."""
    require_tools("mpirun")
    if not XHPL.is_file():
        unavailable("needs build/bin/xhpl (built by scripts/install.sh)")


def run_reframe(run_dir: Path, *args: str, config: str = "local.py", env: dict | None = None,
                argv_prefix: tuple[str, ...] = (), checks: str = "hpl.py",
                timeout: int = 600) -> subprocess.CompletedProcess:
    """Real ReFrame with a site configuration of site_configs/, writing into run_dir; `checks` is a file
    of reframe_tests/ or an absolute path."""
    env = dict(os.environ if env is None else env, SCALEBENCH_RUN_DIR=str(run_dir))
    command = [*argv_prefix, str(VENV_BIN / "reframe"), "-C", str(REPO / "site_configs" / config),
               "-c", str(REPO / "reframe_tests" / checks), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)


def sbatch(script):
    """#SBATCH options of a job script: {option: value} (True for a flag)."""
    options = {}
    for line in script.splitlines():
        if line.startswith("#SBATCH "):
            name, _, value = line[len("#SBATCH "):].partition("=")
            options[name] = value or True
    return options


def file_hashes(root: Path) -> dict[str, str]:
    """SHA-256 of every file under root, by relative path: equal before and after = nothing touched."""
    return {str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(root.rglob("*")) if path.is_file()}


def perflog_rows(run_dir: Path) -> list[dict[str, str]]:
    """Every line of a run's perflogs (pipe-separated, a header per file) as a dict by column."""
    rows = []
    for path in sorted((run_dir / "perflogs").rglob("*.log")):
        header, *lines = path.read_text().splitlines() or [""]
        rows += [dict(zip(header.split("|"), line.split("|"))) for line in lines]
    return rows


# --- this machine, as the embedded default sees it: tests expect what it plans, not a fixed size --

def local_partition():
    """The embedded default's partition on this machine (its cores, memory and scales, detected)."""
    from scalebench.site_plan import site_specs
    from scalebench.site.siteconf import site_systems

    partitions, _, _ = site_specs(site_systems(LOCAL_SITE))
    return partitions[0]


def local_scales() -> list[str]:
    """The scales the embedded default runs here: 1 core, powers of two below the cores, the node."""
    return [scale.name for scale in local_partition().scales()]


def ranks_at(scale: str) -> int:
    """Ranks of a one-thread-per-rank check at a local scale (every core of it)."""
    found = local_partition().scale(scale)
    return found.cores_per_node or local_partition().cores_per_node


def require_cores(count: int) -> None:
    """Skip a test that needs `count` cores on a machine (or CPU set) that gives it fewer."""
    cores = local_partition().cores_per_node
    if cores < count:
        pytest.skip(f"needs {count} cores; this machine gives the tests {cores}")


# --- the end of a run says which tiers were skipped and why -----------------------------------------

# Test modules by the tier they stand for; a module not listed is its own tier.
TIERS = {"test_spack_concretize": "real Spack tier", "test_site_install": "site install tier",
         "test_python_support": "Python support tier", "test_slurm_cluster": "Slurm tier",
         "test_slurm_hpl": "Slurm tier", "test_slurm_faults": "Slurm tier", "test_report_browser": "browser tier"}


def skipped_tiers(reports) -> list[str]:
    """'real Spack tier: 8 skipped, no Spack: ...' per tier and reason, from pytest's skip reports."""
    counts: dict[tuple[str, str], int] = {}
    for report in reports:
        module = Path(report.nodeid.split("::")[0]).stem
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        key = (TIERS.get(module, module), reason)
        counts[key] = counts.get(key, 0) + 1
    return [f"{tier}: {count} skipped, {reason}" for (tier, reason), count in sorted(counts.items())]


def _terminated(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config):
    """A run that is terminated (SIGTERM: CI's timeout, run-tests.sh passing it on) ends as Ctrl-C does:
    pytest then tears its fixtures down, and the lab clusters and the ReFrame runs in them stop with it."""
    signal.signal(signal.SIGTERM, _terminated)


def pytest_unconfigure(config):
    """After pytest's last line: one line per skipped tier and its reason, or that none was."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not hasattr(reporter, "stats"):
        return
    lines = skipped_tiers(reporter.stats.get("skipped", []))
    reporter.write_line("skipped tiers: " + ("none" if not lines else f"{len(lines)}"))
    for line in lines:
        reporter.write_line(f"  {line}")
