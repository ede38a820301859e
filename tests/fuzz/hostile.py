"""Hostile inputs of the classes an outside probe found (issue 14), shared by the fuzz tests and
scripts/bench/probe_cli.py: files that are not regular files, text that is not UTF-8, YAML and JSON
nested deep or full of aliases, outputs cut in the middle of a line, HPL rows that cannot be, run
reports with impossible values, and integers too large for any float or C int.

Each generator returns plain text, bytes or paths; the properties live with their users.
"""
from __future__ import annotations

import codecs
import json
import os
import random
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

# --- 1. not a regular file --------------------------------------------------------------------------

def special_paths(tmp: Path) -> Dict[str, str]:
    """Paths a command may be given in place of a file: none of them may be read as one (a FIFO
    blocks a reader that opens it for ever, /dev/zero never ends, /proc/self/mem fails to read)."""
    tmp.mkdir(parents=True, exist_ok=True)
    fifo = tmp / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    link = tmp / "link-to-fifo"
    if not link.exists():
        link.symlink_to(fifo)
    (tmp / "a-directory").mkdir(exist_ok=True)
    paths = {"fifo": str(fifo), "symlink to a fifo": str(link), "directory": str(tmp / "a-directory"),
             "empty name": "", "missing file": str(tmp / "no-such-file")}
    if os.path.exists("/dev/zero"):
        paths["/dev/zero"] = "/dev/zero"
    if os.path.exists("/proc/self/mem"):  # a regular file whose read fails (EIO)
        paths["/proc/self/mem"] = "/proc/self/mem"
    return paths


# --- 2. not UTF-8 ------------------------------------------------------------------------------------

ENCODINGS: Dict[str, Callable[[str], bytes]] = {
    "UTF-16 with BOM": lambda text: text.encode("utf-16"),
    "UTF-16BE with BOM": lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
    "UTF-16LE without BOM": lambda text: text.encode("utf-16-le"),
    "UTF-32 with BOM": lambda text: text.encode("utf-32"),
    "Latin-1": lambda text: text.replace("e", "\u00e9").encode("latin-1", errors="replace"),
}
# What a reader must say instead of misreading the text (any of these words).
ENCODING_WORDS = ("UTF-16", "UTF-32", "NUL", "not UTF-8")


# --- 3. nesting and aliases ----------------------------------------------------------------------------

def nested_json(depth: int) -> str:
    return "[" * depth + "]" * depth


def nested_yaml(depth: int, key: str = "criteria") -> str:
    return f"{key}: " + "[" * depth + "]" * depth + "\n"


def alias_levels(levels: int = 9, width: int = 9, indent: str = "") -> List[str]:
    """YAML lines a0: &a0 [x, ...], a1: &a1 [*a0, ...], ...: width**levels values once expanded."""
    lines = [f"{indent}a0: &a0 [{', '.join(['x'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"{indent}a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return lines


def alias_bomb_in_params(levels: int = 9) -> str:
    """Thresholds whose one criterion's params hold an alias bomb."""
    return ("criteria:\n  - benchmark: HPLCheck\n    min: 1\n    params:\n"
            + "\n".join(alias_levels(levels, indent="      ")) + "\n")


def aliases_in_at(levels: int = 8) -> str:
    """Thresholds whose `at:` is an alias `levels` deep: printing it whole took 332 MB."""
    return ("anchors:\n" + "\n".join(alias_levels(levels, indent="  ")) + "\n"
            + f"criteria:\n  - {{benchmark: HPLCheck, min: 1, at: *a{levels - 1}}}\n")


# --- 4. cut mid-line -------------------------------------------------------------------------------------

def cut_mid_line(text: str, rng: random.Random) -> Tuple[str, str]:
    """(text cut inside one of its non-blank lines, the text up to that line's start): what a job
    killed while writing leaves, and what a reader may use of it."""
    lines = text.splitlines(keepends=True)
    candidates = [i for i, line in enumerate(lines) if len(line.strip()) > 1]
    if not candidates:
        return text, text
    index = rng.choice(candidates)
    line = lines[index].rstrip("\r\n")
    start = len(line) - len(line.lstrip())
    cut_at = rng.randrange(start + 1, len(line))  # at least one visible character kept, at least one lost
    head = "".join(lines[:index])
    return head + line[:cut_at], head


# --- 4. HPL rows that cannot be ------------------------------------------------------------------------

def hpl_gflops(n: int, seconds: float) -> float:
    """HPL's Gflops for N and a time: (2/3 N^3 + 3/2 N^2) / time."""
    return (2 / 3 * n**3 + 1.5 * n**2) / seconds / 1e9


def hpl_text(rows: Sequence[Tuple[Any, ...]], threshold: str = "16.0", passed: int | None = None) -> str:
    """HPL 2.3 output; rows are (n, nb, p, q, time, gflops, residual, status) with any of them a
    printed token (str) or a number. `passed`: what the summary claims (default: the PASSED rows)."""
    out = ["HPLinpack 2.3  --  High-Performance Linpack benchmark  --   December 2, 2018",
           "- The relative machine precision (eps) is taken to be               1.110223e-16",
           f"- Computational tests pass if scaled residuals are less than                {threshold}", ""]
    for n, nb, p, q, time_s, gflops, residual, status in rows:
        out += ["T/V                N    NB     P     Q               Time                 Gflops",
                "-" * 80,
                f"WR11C2R4 {n:>12} {nb:>5} {p:>5} {q:>5} {time_s:>18} {gflops:>19}",
                "-" * 80,
                f"||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)= {residual:>16} ...... {status}", ""]
    claimed = sum(r[-1] == "PASSED" for r in rows) if passed is None else passed
    failed = max(0, len(rows) - claimed)
    out += [f"Finished {claimed + failed:>6} tests with the following results:",
            f"         {claimed:>6} tests completed and passed residual checks,",
            f"         {failed:>6} tests completed and failed residual checks,",
            "              0 tests skipped because of illegal input values.", "", "End of Tests.", ""]
    return "\n".join(out)


GOOD_ROW = (10000, 192, 1, 2, "6.50", "1.0256e+02", "1.2e-03", "PASSED")
# One field of a PASSED row replaced by a value no HPL run can print (the row must not count).
IMPOSSIBLE_FIELDS: List[Tuple[str, int, str]] = [
    ("Gflops negative", 5, "-4.2610e+00"), ("Gflops zero", 5, "0.0000e+00"), ("Gflops minus zero", 5, "-0.0000e+00"),
    ("Gflops nan", 5, "nan"), ("Gflops inf", 5, "inf"), ("Gflops 1e300", 5, "1.0000e+300"),
    ("N zero", 0, "0"), ("NB zero", 1, "0"), ("P zero", 2, "0"), ("Q zero", 3, "0"),
    ("N beyond a C int", 0, "99999999999"),
    ("time negative", 4, "-6.50"), ("time nan", 4, "nan"), ("time inf", 4, "inf"),
    ("residual nan", 6, "nan"), ("residual -nan", 6, "-nan"), ("residual inf", 6, "inf"),
    ("residual negative", 6, "-1.0e+00"), ("residual above the threshold", 6, "1.0e+03"),
    ("residual just above the threshold", 6, "1.6000001e+01"),
]


def impossible_row(field: int, token: str) -> Tuple[Any, ...]:
    row = list(GOOD_ROW)
    row[field] = token
    return tuple(row)


# --- 5. run reports with values that cannot be --------------------------------------------------------

IMPOSSIBLE_FIGURES: List[Tuple[str, Dict[str, Tuple[Any, str]]]] = [
    ("Rpeak zero", {"rmax": (45.7, "Gflop/s"), "rpeak_gflops": (0.0, "Gflop/s"), "efficiency": (71.5, "%")}),
    ("Rpeak negative", {"rmax": (45.7, "Gflop/s"), "rpeak_gflops": (-64.0, "Gflop/s"), "efficiency": (71.5, "%")}),
    ("efficiency negative", {"rmax": (45.7, "Gflop/s"), "efficiency": (-50.0, "%")}),
    ("efficiency 1e300 %", {"rmax": (45.7, "Gflop/s"), "efficiency": (1e300, "%")}),
    ("Rmax zero", {"rmax": (0.0, "Gflop/s")}),
    ("Rmax negative", {"rmax": (-45.74, "Gflop/s")}),
    ("Rmax a 400-digit integer", {"rmax": (10**400, "Gflop/s")}),
]
IMPOSSIBLE_COUNTS: List[Tuple[str, Dict[str, Any]]] = [
    ("nodes -1", {"num_nodes": -1}), ("nodes 0", {"num_nodes": 0}), ("nodes 1e30", {"num_nodes": 1e30}),
    ("ranks 0", {"num_tasks": 0}), ("nodes 2.5", {"num_nodes": 2.5}),
]


def report_json_text(data: Any) -> str:
    """JSON as Python writes it (NaN as a bare word, integers of any length)."""
    return json.dumps(data)


# --- 6. huge integers -------------------------------------------------------------------------------------

HUGE_INTS = ("9" * 400, str(2**64), str(2**31), str(2**31 - 1), "1" + "0" * 30, "-" + "9" * 40)
HUGE_FLOATS = ("1e308", "1.8e308", "1e-320", "4.9e-324", "nan", "inf", "-inf", "-0")
