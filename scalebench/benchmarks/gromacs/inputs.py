"""The GROMACS workloads (workloads.yaml) sized for a job: a box of whole copies of GROMACS's spc216.gro,
the job's commands that build the run input with GROMACS's own tools, and mdrun's arguments.

spc216.gro is 216 SPC waters equilibrated at 300 K in a periodic cube of 1.86206 nm (GROMACS's data
directory, where gmx solvate finds it). A box of whole copies is periodic as the copy is: no molecule
of one copy overlaps its neighbour's, so the run starts at 300 K; gmx solvate still drops the few
molecules its van der Waals radii call too close, so the job's topology (the SOL line solvate writes)
says how many atoms the run has.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from scalebench import textfile
from scalebench.app_inputs import fill, load_specs, split_factors
from scalebench.errors import InputError
from scalebench.site.scales import check_scaling
from scalebench.validation import check_name, excerpt, require_count, require_positive

FOLDER = Path(__file__).parent
INPUTS = FOLDER / "inputs"  # the templates workloads.yaml names
SPC216_NM = 1.86206  # the edge of spc216.gro's cubic box, in nm (its last line)

# The job's files: what it writes, what GROMACS's tools write, what the outcome reads.
TOPOLOGY, PARAMETERS = "topol.top", "md.mdp"
COORDINATES, RUN_INPUT = "conf.gro", "topol.tpr"
SOLVATE_LOG, GROMPP_LOG = "solvate.log", "grompp.log"
LOG = "md.log"  # mdrun -deffnm md


@dataclass(frozen=True)
class GromacsWorkload:
    """One entry of workloads.yaml."""

    name: str
    topology: str
    parameters: str
    molecule: Mapping[str, Any]
    cells: int
    steps: int

    def __post_init__(self) -> None:
        check_name("workload name", self.name)
        for key in ("topology", "parameters"):
            check_name(f"workload {self.name}: {key}", getattr(self, key))
        for key in ("cells", "steps"):
            require_positive(f"workload {self.name}: {key}", getattr(self, key))
        name, atoms = self.molecule.get("name"), self.molecule.get("atoms")
        if set(self.molecule) != {"name", "atoms"} or not isinstance(atoms, int) or atoms < 1:
            raise InputError(f"workload {self.name}: molecule: expected {{name: RESIDUE, atoms: COUNT}}, got "
                             f"{excerpt(dict(self.molecule))}")
        check_name(f"workload {self.name}: molecule name", name)


@dataclass(frozen=True)
class WaterBox:
    """The input of one run: its box (whole spc216.gro copies per direction) and its steps."""

    cells: tuple[int, int, int]
    steps: int

    @property
    def box_nm(self) -> tuple[float, float, float]:
        return tuple(round(n * SPC216_NM, 5) for n in self.cells)  # type: ignore[return-value]

    @property
    def reset_step(self) -> int:
        """mdrun -resetstep: the figures time the second half, past start-up and load balancing."""
        return self.steps // 2

    def summary(self, atoms: int | None = None) -> str:
        cells = "x".join(map(str, self.cells))
        box = " x ".join(f"{side:g}" for side in self.box_nm)
        what = f"{atoms} atoms of SPC/E water" if atoms else "SPC/E water"
        return (f"{what} ({cells} spc216 boxes, {box} nm), {self.steps} steps of 2 fs, "
                f"counters reset at step {self.reset_step}")


def load_workloads(directory: Path | None = None) -> dict[str, GromacsWorkload]:
    return load_specs((directory or FOLDER) / "workloads.yaml", GromacsWorkload, ())


def water_box(cells: int, steps: int, ranks: int, scaling: str) -> WaterBox:
    """`cells` spc216 boxes per direction (strong), or that box grown by factors whose product is `ranks`
    (weak: each rank keeps the 1-rank box's water)."""
    require_count("cells", cells)
    require_count("steps", steps)
    require_count("ranks", ranks)
    grow = split_factors(ranks, (1.0, 1.0, 1.0)) if check_scaling(scaling) == "weak" else (1, 1, 1)
    return WaterBox((cells * grow[0], cells * grow[1], cells * grow[2]), steps)


def read_template(name: str, directory: str | Path | None = None) -> str:
    return textfile.read_text(Path(directory or INPUTS) / name, f"GROMACS input template {name}")


def prepare_commands(gmx: str, box: WaterBox) -> list[str]:
    """The job-script lines that build the run input where GROMACS is installed: the water box (written
    into the topology's [ molecules ]), then the run input. Each tool's output goes to its log, which
    the outcome reads for a fatal error."""
    program = shlex.quote(gmx)
    sides = " ".join(f"{side:.5f}" for side in box.box_nm)  # whole copies: every digit of spc216's edge
    return [f"{program} solvate -cs spc216.gro -box {sides} -p {TOPOLOGY} -o {COORDINATES} > {SOLVATE_LOG} 2>&1",
            f"{program} grompp -f {PARAMETERS} -c {COORDINATES} -p {TOPOLOGY} -o {RUN_INPUT} > {GROMPP_LOG} 2>&1"]


def mdrun_args(threads: int, box: WaterBox) -> list[str]:
    """`gmx mdrun`'s arguments for one rank of the job: its OpenMP threads, counters reset half-way."""
    require_count("threads", threads)
    return ["mdrun", "-s", RUN_INPUT, "-deffnm", LOG.removesuffix(".log"), "-ntomp", str(threads),
            "-resetstep", str(box.reset_step)]


_MOLECULES_RE = re.compile(r"\[\s*molecules\s*\]")


def molecules(topology: str, name: str) -> int | None:
    """The count of molecule `name` in a topology's [ molecules ] section (the last line naming it, as
    gmx solvate appends one); None when the section has none."""
    found, inside = None, False
    for line in topology.splitlines():
        text = line.split(";", 1)[0].strip()
        if text.startswith("["):
            inside = bool(_MOLECULES_RE.fullmatch(text))
            continue
        words = text.split()
        if inside and len(words) == 2 and words[0] == name and words[1].isdigit() and len(words[1]) <= 18:
            found = int(words[1])
    return found
