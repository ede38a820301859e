"""Application checks' inputs: LAMMPS inputs and OpenFOAM cases sized for a scale (no ReFrame import).

Two scaling modes, the same for both applications:

* strong: the problem is the same at every rank count (`atoms` or `cells` in total);
* weak: the 1-rank problem (`atoms` or `cells`) is grown with the ranks, by factors whose product
  is the rank count exactly, so the work per rank is fixed: LAMMPS replicates the box
  (`replicate rx ry rz`), OpenFOAM widens the domain (`stretch`) or refines it (`refine`).

Templates are data files under reframe_tests/inputs/ (`INPUTS`); the functions here take their text
and return new text, so they are tested without the applications.
"""
from __future__ import annotations

import gzip
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from scalebench import paths

from scalebench.site import scales
from scalebench.hpl.deck import check_scaling, is_number, require_positive
from scalebench.errors import InputError

INPUTS = paths.REPO_ROOT / "reframe_tests" / "inputs"


def _prime_factors(n: int) -> list[int]:
    """Prime factors of n, largest first."""
    found, p = [], 2
    while p * p <= n:
        while n % p == 0:
            found.append(p)
            n //= p
        p += 1
    if n > 1:
        found.append(n)
    return sorted(found, reverse=True)


def split_factors(n: int, weights: Sequence[float]) -> tuple[int, ...]:
    """n as a product of one factor per dimension, as even as the weights allow: each prime factor
    (largest first) goes to the dimension with the most weight per part so far; ties go to the
    first dimension. Equal weights give MPI_Dims_create's answer (8 -> 2 x 2 x 2, 6 -> 3 x 2 x 1)."""
    require_positive("n", n)
    if not weights or any(w <= 0 for w in weights):
        raise InputError(f"weights: need one positive weight per dimension, got {list(weights)}")
    parts = [1] * len(weights)
    for prime in _prime_factors(n):
        best = max(range(len(parts)), key=lambda i: (weights[i] / parts[i], -i))
        parts[best] *= prime
    return tuple(parts)


# --- LAMMPS -------------------------------------------------------------------------------------

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
        paths.check_name("workload name", self.name)
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


def _load_specs(path: Path, kind: type, tuples: tuple[str, ...]) -> dict[str, Any]:
    """name -> kind(name=name, **entry) for each entry of a YAML mapping; `tuples` keys as tuples."""
    data = yaml.safe_load(path.read_text())
    specs = {}
    for name, entry in data.items():
        entry = {key: tuple(value) if key in tuples else value for key, value in entry.items()}
        try:
            specs[name] = kind(name=name, **entry)
        except (TypeError, InputError) as err:
            raise InputError(f"{path}: entry {name}: {err}") from None
    return specs


def load_lammps_workloads(directory: Path | None = None) -> dict[str, LammpsWorkload]:
    return _load_specs((directory or INPUTS / "lammps") / "workloads.yaml", LammpsWorkload,
                       ("packages", "files"))


def lammps_cells(atoms: int, atoms_per_cell: int) -> tuple[int, int, int]:
    """A cubic box of lattice cells holding about `atoms` atoms (at least one cell)."""
    side = max(1, round((require_positive("atoms", atoms) / atoms_per_cell) ** (1 / 3)))
    return (side, side, side)


def lammps_input(workload: LammpsWorkload, template: str, atoms: int, steps: int, ranks: int,
                 scaling: str) -> LammpsInput:
    """The workload's input for `ranks` ranks: `atoms` in total (strong) or per rank (weak, the
    1-rank box replicated by factors whose product is `ranks`), run for `steps` steps.

    The values are prepended as LAMMPS index variables, which take precedence over the defaults
    the template declares the same way."""
    require_positive("steps", steps)
    require_positive("ranks", ranks)
    cells = lammps_cells(atoms, workload.atoms_per_cell)
    replicate = split_factors(ranks, (1.0, 1.0, 1.0)) if check_scaling(scaling) == "weak" else (1, 1, 1)
    values = {"nx": cells[0], "ny": cells[1], "nz": cells[2],
              "rx": replicate[0], "ry": replicate[1], "rz": replicate[2], "steps": steps}
    header = [f"# scalebench: workload {workload.name}, {scaling} scaling on {ranks} rank(s)"]
    header += [f"variable {name} index {value}" for name, value in values.items()]
    total = workload.atoms_per_cell * cells[0] * cells[1] * cells[2]
    total *= replicate[0] * replicate[1] * replicate[2]
    return LammpsInput("\n".join(header) + "\n\n" + template, total, steps, cells, replicate)


def lammps_packages(help_text: str) -> set[str]:
    """The packages `lmp -h` lists under "Installed packages:" (up to the next blank line)."""
    found: set[str] = set()
    lines = iter(help_text.splitlines())
    for line in lines:
        if line.strip() == "Installed packages:":
            break
    else:
        return found
    for line in lines:
        if not line.strip():
            if found:
                break
            continue
        found.update(line.split())
    return found


# --- OpenFOAM -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class OpenfoamCase:
    """One entry of reframe_tests/inputs/openfoam/cases.yaml."""

    name: str
    tutorial: str
    solver: str
    cells: int
    steps: int
    weak: str = "refine"  # or stretch
    deltaT: float | None = None  # transient cases: at the tutorial's own mesh
    heavy: bool = False
    files: dict[str, str] = field(default_factory=dict)
    steps_before: tuple[Any, ...] = ({"serial": "blockMesh"}, "decompose")

    def __post_init__(self) -> None:
        paths.check_name("case name", self.name)
        paths.check_name(f"case {self.name}: solver", self.solver)  # the executable of the job's launch line
        for key in ("cells", "steps"):
            require_positive(f"case {self.name}: {key}", getattr(self, key))
        if self.deltaT is not None and not (is_number(self.deltaT) and self.deltaT > 0):
            raise InputError(f"case {self.name}: deltaT: must be a positive number, got {self.deltaT!r}")


def load_openfoam_cases(directory: Path | None = None) -> dict[str, OpenfoamCase]:
    path = (directory or INPUTS / "openfoam") / "cases.yaml"
    cases = _load_specs(path, OpenfoamCase, ("steps_before",))
    for case in cases.values():
        if case.weak not in ("refine", "stretch"):
            raise InputError(f"{path}: {case.name}.weak must be refine or stretch, got {case.weak!r}")
    return cases


_BLOCK_RE = re.compile(
    r"(hex\s*\([\d\s]+\)\s*(?:[A-Za-z_][\w.]*\s*)?\(\s*)(\d+)(\s+)(\d+)(\s+)(\d+)(\s*\))")
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_VERTEX_RE = re.compile(rf"\(\s*({_NUMBER})\s+({_NUMBER})\s+({_NUMBER})\s*\)")


def block_cells(block_mesh_dict: str) -> list[tuple[int, int, int]]:
    """The (nx, ny, nz) of every hex block of a blockMeshDict."""
    blocks = [(int(m.group(2)), int(m.group(4)), int(m.group(6)))
              for m in _BLOCK_RE.finditer(block_mesh_dict)]
    if not blocks:
        raise InputError("blockMeshDict: no `hex (...) (nx ny nz)` block found")
    return blocks


def count_cells(blocks: Sequence[tuple[int, int, int]]) -> int:
    return sum(nx * ny * nz for nx, ny, nz in blocks)


def active_dims(blocks: Sequence[tuple[int, int, int]]) -> tuple[bool, bool, bool]:
    """The directions a mesh is resolved in: a 2-D case has one cell across the empty direction."""
    return tuple(any(block[d] > 1 for block in blocks) for d in range(3))  # type: ignore[return-value]


def scale_blocks(block_mesh_dict: str, factors: Sequence[float]) -> str:
    """Every block's cell counts multiplied by the factors (rounded, at least 1 cell)."""
    def scaled(match: re.Match) -> str:
        counts = [max(1, round(int(match.group(i)) * f)) for i, f in zip((2, 4, 6), factors)]
        return (f"{match.group(1)}{counts[0]}{match.group(3)}{counts[1]}{match.group(5)}{counts[2]}"
                f"{match.group(7)}")
    block_cells(block_mesh_dict)
    return _BLOCK_RE.sub(scaled, block_mesh_dict)


def _vertices_span(block_mesh_dict: str) -> tuple[int, int] | None:
    """Start and end of the text inside `vertices ( ... );`."""
    match = re.search(r"^\s*vertices\s*\(", block_mesh_dict, re.MULTILINE)
    if not match:
        return None
    depth, start = 1, match.end()
    for pos in range(start, len(block_mesh_dict)):
        depth += {"(": 1, ")": -1}.get(block_mesh_dict[pos], 0)
        if depth == 0:
            return start, pos
    return None


def vertex_extents(block_mesh_dict: str) -> tuple[float, float, float] | None:
    """The bounding box sizes of the vertices; None when they are not plain numbers ($macros)."""
    span = _vertices_span(block_mesh_dict)
    if span is None:
        return None
    inner = block_mesh_dict[span[0]:span[1]]
    points = [tuple(float(v) for v in m.groups()) for m in _VERTEX_RE.finditer(inner)]
    if not points or len(points) != inner.count("("):
        return None
    return tuple(max(p[d] for p in points) - min(p[d] for p in points) for d in range(3))  # type: ignore


def stretch_vertices(block_mesh_dict: str, factors: Sequence[float]) -> str:
    """Vertex coordinates multiplied by the factors, about the origin (the domain grows)."""
    span = _vertices_span(block_mesh_dict)
    if span is None or vertex_extents(block_mesh_dict) is None:
        raise InputError("blockMeshDict: vertices are not plain (x y z) numbers; cannot stretch")

    def stretched(match: re.Match) -> str:
        values = [float(v) * f for v, f in zip(match.groups(), factors)]
        return "(" + " ".join(f"{v:.10g}" for v in values) + ")"
    inner = _VERTEX_RE.sub(stretched, block_mesh_dict[span[0]:span[1]])
    return block_mesh_dict[:span[0]] + inner + block_mesh_dict[span[1]:]


def set_entries(dictionary: str, entries: Mapping[str, Any]) -> str:
    """Top-level `key value;` entries replaced, or appended when absent."""
    for key, value in entries.items():
        pattern = re.compile(rf"^([ \t]*{re.escape(key)}[ \t]+)[^;\n]*;", re.MULTILINE)
        if pattern.search(dictionary):
            dictionary = pattern.sub(lambda m: f"{m.group(1)}{value};", dictionary, count=1)
        else:
            dictionary = dictionary.rstrip("\n") + f"\n{key} {value};\n"
    return dictionary


def remove_subdict(dictionary: str, name: str) -> str:
    """A `name { ... }` sub-dictionary removed, at any depth (nested braces matched)."""
    match = re.search(rf"^[ \t]*{re.escape(name)}\s*\{{", dictionary, re.MULTILINE)
    if not match:
        return dictionary
    depth = 1
    for pos in range(match.end(), len(dictionary)):
        depth += {"{": 1, "}": -1}.get(dictionary[pos], 0)
        if depth == 0:
            end = pos + 1
            if dictionary[end:end + 1] == "\n":
                end += 1
            return dictionary[:match.start()] + dictionary[end:]
    raise InputError(f"dictionary: unbalanced braces after {name!r}")


@dataclass(frozen=True)
class OpenfoamSetup:
    """A case sized for one run: the edited files' texts and what the run must report."""

    files: dict[str, str]  # case-relative path -> new text
    cells: int
    steps: int
    delta_t: float | None  # None: the tutorial's own (steady cases)
    decomposition: tuple[int, int, int]

    @property
    def summary(self) -> str:
        n = "x".join(map(str, self.decomposition))
        dt = f", deltaT {self.delta_t:.6g}" if self.delta_t is not None else ""
        return f"{self.cells} cells, {self.steps} steps{dt}, simple decomposition {n}"


def _split_active(n: int, extents: Sequence[float], active: Sequence[bool]) -> tuple[int, int, int]:
    """split_factors over the resolved directions only (weighted by the domain's extents)."""
    dims = [d for d in range(3) if active[d]]
    parts = split_factors(n, [max(extents[d], 1e-12) for d in dims])
    result = [1, 1, 1]
    for d, part in zip(dims, parts):
        result[d] = part
    return tuple(result)  # type: ignore[return-value]


def fill(template: str, **values: Any) -> str:
    """@name@ placeholders replaced (OpenFOAM dictionaries use braces and $ themselves)."""
    for name, value in values.items():
        template = template.replace(f"@{name}@", str(value))
    left = re.search(r"@\w+@", template)
    if left:
        raise InputError(f"template: no value for {left.group(0)}")
    return template


def _fmt(value: float) -> str:
    return f"{value:.12g}"


def openfoam_case(case: OpenfoamCase, texts: Mapping[str, str], decompose_template: str, cells: int,
                  steps: int, ranks: int, scaling: str) -> OpenfoamSetup:
    """The tutorial's system/ files edited for `ranks` ranks.

    texts: the tutorial's system/blockMeshDict, system/controlDict and system/fvSolution.
    The mesh is refined uniformly in its resolved directions to about `cells` cells; weak scaling
    then grows it by factors whose product is `ranks` (stretch: the domain with it, keeping the cell
    size). A transient case's deltaT follows the smallest cell size; endTime = steps x deltaT and
    residualControl goes, so exactly `steps` steps run. decomposeParDict: `ranks` subdomains,
    `simple`, split along the longest directions.
    """
    require_positive("steps", steps)
    require_positive("ranks", ranks)
    mesh = texts["system/blockMeshDict"]
    base = block_cells(mesh)
    active = active_dims(base)
    ndims = sum(active)
    refine = (require_positive("cells", cells) / count_cells(base)) ** (1 / ndims)
    mesh = scale_blocks(mesh, [refine if a else 1 for a in active])
    sized = block_cells(mesh)
    # Cell size relative to the tutorial's, per direction (for deltaT).
    spacing = [base[0][d] / sized[0][d] for d in range(3)]
    extents = vertex_extents(mesh) or (1.0, 1.0, 1.0)
    if check_scaling(scaling) == "weak":
        grow = _split_active(ranks, extents, active)
        mesh = scale_blocks(mesh, grow)
        if case.weak == "stretch":
            mesh = stretch_vertices(mesh, grow)
        else:
            spacing = [s / g for s, g in zip(spacing, grow)]
        extents = vertex_extents(mesh) or extents
    total = count_cells(block_cells(mesh))
    n = _split_active(ranks, extents, active)

    control = texts["system/controlDict"]
    entries: dict[str, Any] = {"startFrom": "startTime", "startTime": 0, "stopAt": "endTime",
                               "writeControl": "timeStep", "writeInterval": steps,
                               "timePrecision": 12, "runTimeModifiable": "false"}
    delta_t = None
    if case.deltaT is not None:
        delta_t = case.deltaT * min(s for s, a in zip(spacing, active) if a)
        entries.update(deltaT=_fmt(delta_t), endTime=_fmt(steps * delta_t))
    else:
        dt = re.search(r"^\s*deltaT\s+([^;\s]+)\s*;", control, re.MULTILINE)
        step = float(dt.group(1)) if dt else 1.0
        entries.update(deltaT=_fmt(step), endTime=_fmt(steps * step))
    control = remove_subdict(set_entries(control, entries), "functions")
    return OpenfoamSetup(
        files={
            "system/blockMeshDict": mesh,
            "system/controlDict": control,
            "system/fvSolution": remove_subdict(texts["system/fvSolution"], "residualControl"),
            "system/decomposeParDict": fill(decompose_template, ranks=ranks, nx=n[0], ny=n[1], nz=n[2]),
        },
        cells=total, steps=steps, delta_t=delta_t, decomposition=n)


def _step_kind(step: Any) -> tuple[str, str]:
    if isinstance(step, str):
        return step, ""
    if isinstance(step, Mapping) and len(step) == 1:
        (kind, command), = step.items()
        return str(kind), str(command)
    raise InputError(f"steps_before: {step!r} is not serial/parallel: command, decompose or restore0")


def openfoam_log_name(command: str) -> str:
    return f"log.{command.split()[0]}"


def _steps_plan(case: OpenfoamCase, ranks: int, launcher: str) -> list[tuple[str, str | None]]:
    """(shell line, log it writes or None) for each step before the solver on `ranks` ranks."""
    plan: list[tuple[str, str | None]] = []
    for step in case.steps_before:
        kind, command = _step_kind(step)
        if kind == "serial":
            log = openfoam_log_name(command)
            plan.append((f"{command} > {log} 2>&1", log))
        elif kind == "parallel":
            log, flag = openfoam_log_name(command), " -parallel" if ranks > 1 else ""
            plan.append((f"{launcher} {command}{flag} > {log} 2>&1", log))
        elif kind == "decompose":
            if ranks > 1:
                plan.append(("decomposePar -force > log.decomposePar 2>&1", "log.decomposePar"))
        elif kind == "restore0":
            plan.append(("for d in processor*; do rm -rf $d/0; cp -r 0.orig $d/0; done" if ranks > 1
                         else "rm -rf 0 && cp -r 0.orig 0", None))
        else:
            raise InputError(f"steps_before: unknown step {kind!r} (serial, parallel, decompose, restore0)")
    return plan


def openfoam_commands(case: OpenfoamCase, ranks: int, launcher: str) -> list[str]:
    """Shell lines of the case's steps before the solver; each utility logs to log.<utility>.

    launcher: the partition's launch command for `ranks` ranks (e.g. "mpirun -np 2")."""
    return [line for line, _ in _steps_plan(case, ranks, launcher)]


def openfoam_logs(case: OpenfoamCase, ranks: int) -> list[str]:
    """The utility logs openfoam_commands writes (each must end with `End`)."""
    return [log for _, log in _steps_plan(case, ranks, "") if log]


_MESHED_RE = re.compile(r"^(?:Refined|Snapped|Layer) mesh\s*:\s*cells:(\d+)", re.MULTILINE)


def snapped_cells(snappy_log: str) -> int | None:
    """The cell count of snappyHexMesh's last mesh (after refinement, snapping, layers); None if absent."""
    found = _MESHED_RE.findall(snappy_log)
    return int(found[-1]) if found else None


def copy_tutorial(tutorials: str | Path, case: OpenfoamCase, target: str | Path) -> None:
    """The case's tutorial copied into target with its extra files; gzipped dictionaries (e.g.
    snappyHexMeshDict.gz in some distributions) are unpacked, gzipped geometry (constant/triSurface)
    stays as it is: OpenFOAM reads it."""
    tutorials = Path(tutorials)
    source = tutorials / case.tutorial
    if not source.is_dir():
        raise InputError(f"tutorials_dir: no case directory {source}")
    target = Path(target)
    shutil.copytree(source, target, dirs_exist_ok=True)
    for name, origin in case.files.items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(tutorials / origin, target / name)
        except OSError as err:
            raise InputError(f"tutorials_dir: cannot copy {tutorials / origin}: {err.strerror}") from None
    for packed in target.rglob("*.gz"):
        if "triSurface" in packed.parts or packed.suffixes[-2:-1] in ([".obj"], [".stl"], [".vtk"]):
            continue
        packed.with_suffix("").write_bytes(gzip.decompress(packed.read_bytes()))
        packed.unlink()
