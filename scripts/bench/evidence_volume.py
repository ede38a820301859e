"""Measure what the transport evidence variables cost: stderr bytes per rank and per peer, by MPI layer.

Run: .venv/bin/python scripts/bench/evidence_volume.py [--runs 3] [--dir /tmp/evidence-volume] [--configs A,B]
        [--smoke]
Each configuration runs with and without scalebench/data/transports.yaml's evidence_env on this machine
(Debian's Open MPI and MPICH, NetPIPE, hpcc); the difference in stderr bytes is what the variables add.
NetPIPE gives a 2-rank job; hpcc on 2 and 4 ranks (a 1 x ranks grid, every rank sending to every other)
gives what grows with the peers. The numbers go into transports.yaml's evidence_volume by hand.
--smoke checks that the script runs: one run, NetPIPE at a fixed SMOKE_REPEATS per message size instead
of the repeats it calibrates to a time (NetPIPE writes the same bytes either way). --configs picks
configurations: hpcc's ring tests over the UCX and OFI layers' TCP alone take a minute and a half here.
"""
import argparse
import os
import subprocess
from pathlib import Path

from scalebench.site.fabric import transports

OMPI = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
UCX_PML = {"OMPI_MCA_pml": "ucx", "OMPI_MCA_pml_ucx_tls": "any", "OMPI_MCA_pml_ucx_devices": "any", "UCX_TLS": "tcp"}
# tcp is in the OFI MTL's default exclude list; only shm is left out here
OFI_MTL = {"OMPI_MCA_pml": "cm", "OMPI_MCA_mtl": "ofi", "OMPI_MCA_mtl_ofi_provider_exclude": "shm",
           "FI_PROVIDER": "tcp"}
CONFIGS = {  # name: (layer, environment, MPI launcher, NetPIPE binary or None)
    "openmpi-ob1-vader": ("btl", {}, ["mpirun", "--oversubscribe"], "NPopenmpi"),
    "openmpi-ob1-tcp": ("btl", {"OMPI_MCA_btl": "self,tcp"}, ["mpirun", "--oversubscribe"], "NPopenmpi"),
    "mpich-ch4-ucx": ("ucx", {}, ["mpirun.mpich"], "NPmpich2"),
    "openmpi-pml-ucx": ("ucx", UCX_PML, ["mpirun", "--oversubscribe"], "NPopenmpi"),
    "openmpi-ofi-mtl": ("ofi", OFI_MTL, ["mpirun", "--oversubscribe"], "NPopenmpi"),
}
SMOKE_REPEATS = 10
HPCC_INPUT = """HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
6            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
200          Ns
1            # of NBs
40           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
{ranks}            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                               Number of additional problem sizes for PTRANS
1200 10000 30000                values of N
0                               number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64        values of NB
"""


def added_bytes(command: list[str], env: dict[str, str], workdir: Path, runs: int) -> list[int]:
    """Stderr bytes the evidence variables add to `command`, once per run."""
    def stderr_bytes(extra: dict[str, str]) -> int:
        proc = subprocess.run(command, env={**os.environ, **OMPI, **env, **extra}, cwd=workdir, capture_output=True,
                              timeout=600)
        if proc.returncode:
            raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
        return len(proc.stderr)
    evidence = transports().evidence_env
    return [stderr_bytes(evidence) - stderr_bytes({}) for _ in range(runs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/evidence-volume"))
    parser.add_argument("--configs", default=",".join(CONFIGS), help=f"of {', '.join(CONFIGS)} (default: all)")
    parser.add_argument("--smoke", action="store_true", help="a run that checks the script works")
    args = parser.parse_args()
    unknown = set(args.configs.split(",")) - set(CONFIGS)
    if unknown:
        parser.error(f"no configuration {', '.join(sorted(unknown))}")
    if args.smoke:
        args.runs = 1
    repeats = ["-n", str(SMOKE_REPEATS)] if args.smoke else []
    args.dir.mkdir(parents=True, exist_ok=True)
    for name in args.configs.split(","):
        layer, env, launcher, netpipe = CONFIGS[name]
        netpipe_2 = added_bytes([*launcher, "-np", "2", netpipe, "-u", "1024", "-p", "0", *repeats, "-o", "np.out"],
                                env, args.dir, args.runs)
        print(f"{name} ({layer}): NetPIPE 2 ranks: {netpipe_2} B, {netpipe_2[0] / 2:.0f} B per rank", flush=True)
        if launcher[0] == "mpirun.mpich":  # Debian's hpcc is Open MPI's
            continue
        hpcc = {}
        for ranks in (2, 4):
            (args.dir / "hpccinf.txt").write_text(HPCC_INPUT.format(ranks=ranks))
            hpcc[ranks] = added_bytes([*launcher, "-np", str(ranks), "hpcc"], env, args.dir, args.runs)[0]
        per_peer = (hpcc[4] / 4 - hpcc[2] / 2) / 2  # 3 peers on 4 ranks, 1 on 2
        print(f"{name} ({layer}): hpcc 2 ranks {hpcc[2]} B, 4 ranks {hpcc[4]} B: {per_peer:.0f} B per peer, "
              f"{hpcc[2] / 2 - per_peer:.0f} B per rank besides", flush=True)


if __name__ == "__main__":
    main()
