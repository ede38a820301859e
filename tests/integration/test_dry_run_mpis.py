"""The MPIs and BLAS libraries sites run, as ReFrame's dry run writes their HPL jobs: one site file of
each shape (tests/data/sites/), and what its job script exports and launches. How each MPI binds is
scalebench/data/mpis.yaml's, how a BLAS threads scalebench/data/blas.yaml's; these read the scripts a real
run would submit, not the plan."""
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import REPO, VENV_BIN
from test_dry_run_sites import cases_of

pytestmark = pytest.mark.integration

SITES = REPO / "tests" / "data" / "sites"
HYDRA_FLAGS = ("-bind-to", "-map-by", "--bind-to", "--map-by")


def hpl_jobs(tmp_path, name):
    """{stack: (job script, run report case)} of a dry run of the site file's HPLCheck cases."""
    site = SITES / f"{name}.yaml"
    run = tmp_path / "run"
    env = dict(os.environ, SCALEBENCH_SITE=str(site), SCALEBENCH_RUN_DIR=str(run))
    system = yaml.safe_load(site.read_text())["system"]
    command = [str(VENV_BIN / "reframe"), "-C", str(REPO / "site_configs" / "slurm.py"),
               "-c", str(REPO / "reframe_tests"), "--system", system, "--dry-run", "-n", "HPLCheck"]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    cases = [case for case in cases_of(run) if case["display_name"].startswith("HPLCheck")]
    assert cases and all(case["result"] == "pass" for case in cases), [c["fail_reason"] for c in cases]
    return {case["environ"]: ((Path(case["stagedir"]) / "rfm_job.sh").read_text(), case) for case in cases}


def exports(script):
    """{name: value} of the script's `export NAME=value` lines."""
    return dict(line[len("export "):].split("=", 1) for line in script.splitlines() if line.startswith("export "))


def launch(script, launcher):
    """The words of the line launching HPL (not the node probe's `srun --overlap`)."""
    return next(line.split() for line in script.splitlines()
                if line.startswith(f"{launcher} ") and "--overlap" not in line.split())


def test_intel_mpis_mpirun_pins_by_its_variables_not_hydras_flags(tmp_path):
    script, case = hpl_jobs(tmp_path, "intelmpi-mpirun")["intel"]
    env = exports(script)
    assert (env["I_MPI_PIN_DOMAIN"], env["I_MPI_PIN_CELL"]) == ("8:compact", "core")  # 8 cores per rank
    assert (env["OMP_NUM_THREADS"], env["OMP_PLACES"], env["OMP_PROC_BIND"]) == ("8", "cores", "close")
    assert env["MKL_NUM_THREADS"] == "8" and env["I_MPI_FABRICS"] == "shm:ofi"  # the stack's own, kept
    assert launch(script, "mpirun") == ["mpirun", "-np", "16", "xhpl"]
    assert not any(flag in script.split() for flag in HYDRA_FLAGS)
    assert case["binding"].startswith("I_MPI_PIN_CELL=core I_MPI_PIN_DOMAIN=8:compact (8 cores per rank)")


def test_hpe_mpts_mpirun_places_each_ranks_threads_with_omplace(tmp_path):
    script, case = hpl_jobs(tmp_path, "mpt-mpirun")["mpt"]
    env = exports(script)
    assert launch(script, "mpirun") == ["mpirun", "-np", "32", "omplace", "-nt", "8", "xhpl"]
    assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "8"
    assert "OMP_PLACES" not in env and "OMP_PROC_BIND" not in env  # omplace pins the threads: OpenMP does not
    assert not any(flag in script.split() for flag in HYDRA_FLAGS)
    assert case["binding"] == "omplace -nt 8 (8 cores per rank); OpenMP threads placed by omplace"


def test_cray_mpich_is_bound_by_srun(tmp_path):
    script, _ = hpl_jobs(tmp_path, "craympich-srun")["cray"]
    env = exports(script)
    words = launch(script, "srun")
    assert "--cpu-bind=cores" in words and "--cpus-per-task=8" in words and words[-1] == "xhpl"
    assert (env["OMP_NUM_THREADS"], env["OMP_PLACES"], env["MPICH_OFI_NIC_POLICY"]) == ("8", "cores", "NUMA")
    assert not [name for name in env if name.startswith(("I_MPI_PIN", "MPI_DSM"))]
    # LibSci threads by OpenMP alone
    assert [name for name in env if name.endswith("_NUM_THREADS")] == ["OMP_NUM_THREADS"]


def test_flexiblas_threads_as_its_backend_and_the_run_records_it(tmp_path):
    jobs = hpl_jobs(tmp_path, "flexiblas")
    script, case = jobs["foss-openblas"]
    env = exports(script)
    assert env["FLEXIBLAS"] == "OpenBLAS" and env["OPENBLAS_NUM_THREADS"] == env["OMP_NUM_THREADS"] == "14"
    assert env["OPENBLAS_CORETYPE"] == "SkylakeX"  # OpenBLAS's kernel policy on Ice Lake, under FlexiBLAS too
    assert not {"MKL_NUM_THREADS", "BLIS_NUM_THREADS", "FLEXIBLAS_VERBOSE"} & set(env)
    assert case["blas"] == "flexiblas (site file), backend openblas (FLEXIBLAS=OpenBLAS in the stack's env_vars)"
    script, case = jobs["foss-default"]  # FlexiBLAS's configured default: not known here
    env = exports(script)
    assert "FLEXIBLAS" not in env and env["FLEXIBLAS_VERBOSE"] == "1"  # the job's stderr names what it loads
    assert all(env[name] == "14" for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"))
    assert "OPENBLAS_CORETYPE" not in env and "backend not known (FLEXIBLAS not set" in case["blas"]
