"""OpenFOAM cases sized for a rank count and scaling mode, from the installation's tutorials and
reframe_tests/inputs/openfoam/ (cases.yaml names them), and the job's steps before the solver."""
from __future__ import annotations

import gzip
import io
import json
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from scalebench import atomic, textfile
from scalebench.app_inputs import INPUTS, fill, load_specs, split_factors
from scalebench.errors import InputError
from scalebench.site.scales import check_scaling
from scalebench.validation import check_name, excerpt, excerpt_text, is_number, require_count, require_positive


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
        check_name("case name", self.name)
        check_name(f"case {self.name}: solver", self.solver)  # the executable of the job's launch line
        for key in ("cells", "steps"):
            require_positive(f"case {self.name}: {key}", getattr(self, key))
        if self.deltaT is not None and not (is_number(self.deltaT) and self.deltaT > 0):
            raise InputError(f"case {self.name}: deltaT: must be a positive number, got {excerpt(self.deltaT)}")


def load_openfoam_cases(directory: Path | None = None) -> dict[str, OpenfoamCase]:
    path = (directory or INPUTS / "openfoam") / "cases.yaml"
    cases = load_specs(path, OpenfoamCase, ("steps_before",))
    for case in cases.values():
        if case.weak not in ("refine", "stretch"):
            raise InputError(f"{path}: {case.name}.weak must be refine or stretch, got {excerpt(case.weak)}")
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
    raise InputError(f"dictionary: unbalanced braces after {excerpt(name)}")


@dataclass(frozen=True)
class OpenfoamSetup:
    """A case sized for one run: the edited files' texts and what the run must report."""

    files: dict[str, str]  # case-relative path -> new text
    cells: int
    steps: int
    delta_t: float | None  # None: the tutorial's own (steady cases)
    decomposition: tuple[int, int, int]

    def to_json(self) -> dict[str, Any]:
        return {"cells": self.cells, "steps": self.steps, "delta_t": self.delta_t,
                "decomposition": list(self.decomposition), "summary": self.summary}

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
    require_count("steps", steps)
    require_count("ranks", ranks)
    mesh = texts["system/blockMeshDict"]
    base = block_cells(mesh)
    active = active_dims(base)
    ndims = sum(active)
    refine = (require_count("cells", cells) / count_cells(base)) ** (1 / ndims)
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
    raise InputError(f"steps_before: {excerpt(step)} is not serial/parallel: command, decompose or restore0")


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
            raise InputError(f"steps_before: unknown step {excerpt(kind)} (serial, parallel, decompose, restore0)")
    return plan


def source_environment(bashrc: str | None) -> list[str]:
    """Job-script lines that source OpenFOAM's etc/bashrc unless its environment is set already: Spack
    does not link OpenFOAM's solvers into a view (they live in platforms/<arch>/bin), nor set
    FOAM_TUTORIALS, unless the environment is activated."""
    if not bashrc:
        return []
    quoted = shlex.quote(bashrc)
    return [f'[ -n "${{WM_PROJECT_DIR:-}}" ] || [ ! -f {quoted} ] || . {quoted}']


def openfoam_commands(case: OpenfoamCase, ranks: int, launcher: str) -> list[str]:
    """Shell lines of the case's steps before the solver; each utility logs to log.<utility>.

    launcher: the partition's launch command for `ranks` ranks (e.g. "mpirun -np 2")."""
    return [line for line, _ in _steps_plan(case, ranks, launcher)]


def openfoam_logs(case: OpenfoamCase, ranks: int) -> list[str]:
    """The utility logs openfoam_commands writes (each must end with `End`)."""
    return [log for _, log in _steps_plan(case, ranks, "") if log]


def copy_tutorial(tutorials: str | Path, case: OpenfoamCase, target: str | Path) -> None:
    """The case's tutorial copied into target with its extra files; gzipped dictionaries (e.g.
    snappyHexMeshDict.gz in some distributions) are unpacked, gzipped geometry (constant/triSurface)
    stays as it is: OpenFOAM reads it."""
    tutorials = Path(tutorials)
    source = tutorials / case.tutorial
    if not source.is_dir():
        raise InputError(f"tutorials_dir: no case directory {source}")
    target = Path(target)
    try:
        shutil.copytree(source, target, dirs_exist_ok=True)
    except shutil.Error as err:  # a FIFO or an unreadable file in the tutorial: the first one named
        first = err.args[0][0] if err.args and isinstance(err.args[0], list) and err.args[0] else (source, "", err)
        raise InputError(f"tutorials_dir: cannot copy {first[0]}: {excerpt_text(str(first[2]), 200)}") from None
    except OSError as err:
        raise InputError(f"tutorials_dir: cannot copy {source}: {err.strerror or err}") from None
    for name, origin in case.files.items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(tutorials / origin, target / name)
        except OSError as err:
            raise InputError(f"tutorials_dir: cannot copy {tutorials / origin}: {err.strerror}") from None
    for packed in target.rglob("*.gz"):
        if "triSurface" in packed.parts or packed.suffixes[-2:-1] in ([".obj"], [".stl"], [".vtk"]):
            continue
        atomic.write(packed.with_suffix(""), _gunzip(packed), replace=True, what="case")
        packed.unlink()


def _gunzip(path: Path) -> bytes:
    """A tutorial's gzipped dictionary, unpacked to at most textfile's limit (no gzip bomb)."""
    limit = textfile.DEFAULT_LIMIT
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(textfile.read_bytes(path, "tutorial file"))) as packed:
            data = packed.read(limit + 1)
    except (OSError, EOFError) as err:
        raise InputError(f"tutorials_dir: {path} is not gzip data ({err})") from None
    if len(data) > limit:
        raise InputError(f"tutorials_dir: {path} unpacks to more than {limit} bytes")
    return data


# The tutorial files a case edits, and where the job records the case it prepared.
EDITED = ("system/blockMeshDict", "system/controlDict", "system/fvSolution")
CASE_FILE = "case.json"
SOLVER_START, SOLVER_END = "solver.start", "solver.end"  # `date +%s.%N` around the solver


def prepare_case(case: OpenfoamCase, tutorials: str | Path, target: str | Path, cells: int, steps: int,
                 ranks: int, scaling: str, inputs_dir: str | Path | None = None) -> OpenfoamSetup:
    """The case in `target` as the job runs it (`scalebench prepare openfoam`, inside the job, where
    the installation's tutorials are): the tutorial copied, its files edited for `ranks` ranks, and
    CASE_FILE saying what the run must report."""
    copy_tutorial(tutorials, case, target)
    target = Path(target)
    texts = {name: textfile.read_text(target / name, f"tutorial {case.tutorial}") for name in EDITED}
    template = textfile.read_text(Path(inputs_dir or INPUTS / "openfoam") / "decomposeParDict", "decomposeParDict")
    setup = openfoam_case(case, texts, template, cells, steps, ranks, scaling)
    for name, text in setup.files.items():
        atomic.write(target / name, text, replace=True, what="case")
    atomic.write(target / CASE_FILE, json.dumps(setup.to_json()) + "\n", replace=True, what="case")
    return setup
