"""LAMMPS inputs sized for a rank count and scaling mode, from the templates of
reframe_tests/inputs/lammps/ (workloads.yaml names them)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scalebench import textfile
from scalebench.app_inputs import INPUTS, load_specs, split_factors
from scalebench.site.scales import check_scaling
from scalebench.validation import check_name, require_count, require_positive

INPUTS_DIR = INPUTS / "lammps"  # the templates and workloads.yaml


@dataclass(frozen=True)
class LammpsWorkload:
    """One entry of reframe_tests/inputs/lammps/workloads.yaml."""

    name: str
    input: str
    atoms_per_cell: int
    atoms: int
    steps: int
    time_unit: str
    packages: tuple[str, ...] = ()
    files: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # The name goes into the input, where a line break would start a LAMMPS command (`shell` runs programs).
        check_name("workload name", self.name)
        for key in ("atoms_per_cell", "atoms", "steps"):
            require_positive(f"workload {self.name}: {key}", getattr(self, key))


@dataclass(frozen=True)
class LammpsInput:
    """An input for one run: its text and what the run must report."""

    text: str
    atoms: int  # atoms in the replicated box: the log's "with N atoms" must say this
    steps: int
    cells: tuple[int, int, int]  # lattice cells of the box before replication
    replicate: tuple[int, int, int]

    @property
    def summary(self) -> str:
        cells, rep = "x".join(map(str, self.cells)), "x".join(map(str, self.replicate))
        return f"{self.atoms} atoms ({cells} cells, replicated {rep}), {self.steps} steps"


def load_lammps_workloads(directory: Path | None = None) -> dict[str, LammpsWorkload]:
    return load_specs((directory or INPUTS_DIR) / "workloads.yaml", LammpsWorkload,
                       ("packages", "files"))


def lammps_cells(atoms: int, atoms_per_cell: int) -> tuple[int, int, int]:
    """A cubic box of lattice cells holding about `atoms` atoms (at least one cell)."""
    side = max(1, round((require_count("atoms", atoms) / atoms_per_cell) ** (1 / 3)))
    return (side, side, side)


def lammps_input(workload: LammpsWorkload, template: str, atoms: int, steps: int, ranks: int,
                 scaling: str) -> LammpsInput:
    """The workload's input for `ranks` ranks: `atoms` in total (strong) or per rank (weak, the
    1-rank box replicated by factors whose product is `ranks`), run for `steps` steps.

    The values are prepended as LAMMPS index variables, which take precedence over the defaults
    the template declares the same way."""
    require_count("steps", steps)
    require_count("ranks", ranks)
    cells = lammps_cells(atoms, workload.atoms_per_cell)
    replicate = split_factors(ranks, (1.0, 1.0, 1.0)) if check_scaling(scaling) == "weak" else (1, 1, 1)
    values = {"nx": cells[0], "ny": cells[1], "nz": cells[2],
              "rx": replicate[0], "ry": replicate[1], "rz": replicate[2], "steps": steps}
    header = [f"# scalebench: workload {workload.name}, {scaling} scaling on {ranks} rank(s)"]
    header += [f"variable {name} index {value}" for name, value in values.items()]
    total = workload.atoms_per_cell * cells[0] * cells[1] * cells[2]
    total *= replicate[0] * replicate[1] * replicate[2]
    return LammpsInput("\n".join(header) + "\n\n" + template, total, steps, cells, replicate)


def input_file(inputs_dir: str | Path, name: str) -> Path:
    return Path(inputs_dir) / name


def read_template(inputs_dir: str | Path, workload: LammpsWorkload) -> str:
    return textfile.read_text(input_file(inputs_dir, workload.input), f"workload {workload.name} template")
