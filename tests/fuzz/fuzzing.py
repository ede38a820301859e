"""Shared machinery of the fuzz tests and of scripts/bench/fuzz_tally.py: the seed corpus, the
mutations of real outputs, a hard per-input time guard and the outcome of one input.

The property everywhere: an input gives a result or a named error, never another exception and
never a hang. Imported as ``from fuzzing import ...`` (pytest puts tests/fuzz on sys.path; the
tally script does the same by hand).
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from hypothesis import HealthCheck, settings

from scalebench.errors import DeckError, InputError, ParseError
from scalebench.hpl import deck
from scalebench.benchmarks import KINDS, parse_text

TESTS = Path(__file__).resolve().parents[1]
# vectors.py, and the NetPIPE samples with their parser's tests, also when a script runs this outside pytest
sys.path[:0] = [str(TESTS), str(TESTS / "unit" / "benchmarks")]
from vectors import DATA_ROOT  # noqa: E402

# A parser must answer within this, whatever the input (a 1 MB line included); a hang is
# stopped here rather than blocking the run. Generous: 2 cores shared with other work.
HARD_LIMIT_S = 10.0
HUGE_LINE_CHARS = 1 << 20

# Hypothesis settings of every fuzz test: reproducible in CI (derandomized, no example database).
# The deadline only names a slow input before the hard guard stops it.
FUZZ = settings(derandomize=True, database=None, deadline=HARD_LIMIT_S * 1000,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Lines that job output interleaves with benchmark output, and fragments of the benchmarks'
# own keywords (to drive a parser into a state and leave it there).
NOISE_LINES = (
    "--------------------------------------------------------------------------",
    "WARNING: There was an error initializing an OpenFabrics device.",
    "[node01:12345] 3 more processes have sent help message help-mpi-btl-openib.txt",
    "libibverbs: Warning: couldn't open config directory '/etc/libibverbs.d'.",
    "[1700000000.123456] [node01:4242 :0]  ucp_context.c:1173 UCX  WARN  network device 'mlx5_0:1' is not available",
    "node01:4242:4242 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>",
    "srun: error: node02: task 3: Killed",
    "slurmstepd: error: *** STEP 42.0 ON node01 CANCELLED AT 2024-01-01T00:00:00 ***",
    "mpirun noticed that process rank 0 with PID 0 on node node01 exited on signal 9 (Killed).",
    "OpenBLAS WARNING - could not determine the L2 cache size on this system, assuming 256k",
    "#", "|", "W", "=", "-", "%", "(", "0", "1 2", "nan", "-nan", "inf",
    "WR11C2R4", "WR11C2R4 1 1 1 1", "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=",
    "Finished      1 tests with the following results:", "End of Tests.",
    "Begin of Summary section.", "End of HPL section.", "HPL_Tflops=", "Begin of HPL section.",
    "This is the DARPA/DOE HPC Challenge Benchmark version 1.5.0 October 2012",
    "LAMMPS (", "Loop time of", "Performance:", "MPI task timing breakdown:",
    "Section |  min time  |  avg time  |  max time  |%varavg| %total",
    "Step Temp E_pair", "Per MPI rank memory allocation", "ERROR: Lost atoms",
    "Time = ", "ExecutionTime = ", "Build  :", "Exec   :", "nProcs :", "End",
    "smoothSolver:  Solving for Ux, Initial residual = ", "--> FOAM FATAL ERROR:",
    "# OSU MPI Bandwidth Test v", "# Size", "# Avg Latency(us)", "# Datatype: MPI_CHAR.",
    "#bytes #repetitions", "#bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]",
    "# Benchmarking PingPong", "# #processes = ", "# List of Benchmarks to run:",
    "# MODE: AGGREGATE", "0:", "1 bytes 1 times -->", "Mbps in", "usec",
)
NONFINITE_TOKENS = ("nan", "NaN", "-nan", "+nan", "inf", "-inf", "+inf", "Inf", "INF", "infinity",
                    "-Infinity", "1.#QNAN", "-1.#IND", "1.#INF", "nan(0x8000000000000)", "1e999", "-1e9999")
EXTREME_NUMBERS = ("1e308", "-1.7e308", "1.7976931348623157e308", "1.8e308", "4.9e-324", "1e-400", "-0", "0",
                   "0.0", "9" * 18, "9" * 19, "9" * 40, "18446744073709551616", "-9223372036854775809", "1e+9999")
_DIGITS = "0123456789"


def real_outputs(kind: str) -> List[str]:
    """Every output kept in tests/data/<kind>/ (not its .source.txt notes or .expected.json)."""
    folder = DATA_ROOT / kind
    files = sorted(folder.glob("*")) if folder.is_dir() else []
    return [p.read_text(errors="replace") for p in files
            if p.is_file() and not p.name.endswith((".source.txt", ".expected.json"))]


def seed_corpus() -> Dict[str, List[str]]:
    """Real outputs per parser kind; NetPIPE's also the unit tests' samples of both its printf forms."""
    import test_parse_netpipe

    corpus = {kind: real_outputs(kind) for kind in KINDS}
    corpus["netpipe"] += [test_parse_netpipe.SCREEN, test_parse_netpipe.NP_OUT]
    empty = [kind for kind, texts in corpus.items() if not texts]
    assert not empty, f"no seed outputs in tests/data for {', '.join(empty)}"
    return corpus


# --- mutations of a real output: each takes (text, rng) and returns the new text --------------

def _lines(text: str) -> List[str]:
    return text.splitlines(keepends=True) or [""]


def truncate(text: str, rng: random.Random) -> str:
    return text[: rng.randrange(len(text) + 1)]


def duplicate_block(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    start = rng.randrange(len(lines))
    block = lines[start: start + rng.randint(1, 40)]
    at = rng.randrange(len(lines) + 1)
    return "".join(lines[:at] + block * rng.randint(1, 3) + lines[at:])


def drop_lines(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    return "".join(line for line in lines if rng.random() > 0.2)


def interleave_noise(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    for _ in range(rng.randint(1, 20)):
        noise = rng.choice(NOISE_LINES)
        if rng.random() < 0.3:  # a keyword fragment glued to a real line's tail
            noise += rng.choice(lines).rstrip("\r\n")[rng.randrange(8):]
        lines.insert(rng.randrange(len(lines) + 1), noise + "\n")
    return "".join(lines)


def flip_digits(text: str, rng: random.Random) -> str:
    chars = list(text)
    places = [i for i, c in enumerate(chars) if c in _DIGITS]
    for i in rng.sample(places, min(len(places), rng.randint(1, 30))):
        chars[i] = rng.choice(_DIGITS + "-+.eE x")
    return "".join(chars)


def _replace_numbers(text: str, rng: random.Random, replacements: Sequence[str]) -> str:
    """Up to 20 numeric tokens (space-separated, starting with a digit, '-' or '.') replaced."""
    lines = _lines(text)
    for _ in range(rng.randint(1, 20)):
        index = rng.randrange(len(lines))
        tokens = lines[index].split(" ")
        numeric = [i for i, tok in enumerate(tokens) if tok.strip()[:1] in tuple(_DIGITS) + ("-", ".")]
        if numeric:
            i = rng.choice(numeric)
            ending = tokens[i][len(tokens[i].rstrip("\r\n")):]
            tokens[i] = rng.choice(replacements) + ending
            lines[index] = " ".join(tokens)
    return "".join(lines)


def inject_nonfinite(text: str, rng: random.Random) -> str:
    """Numbers replaced by what C libraries print for NaN and infinity."""
    return _replace_numbers(text, rng, NONFINITE_TOKENS)


def extreme_numbers(text: str, rng: random.Random) -> str:
    """Numbers replaced by ones at the edges of float and int: sums and differences overflow."""
    return _replace_numbers(text, rng, EXTREME_NUMBERS)


def line_endings(text: str, rng: random.Random) -> str:
    return text.replace("\n", rng.choice(("\r\n", "\r", "\n\r", "\x85", "\u2028")))


def binary_garbage(text: str, rng: random.Random) -> str:
    garbage = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4096))).decode("utf-8", errors="replace")
    at = rng.randrange(len(text) + 1)
    return text[:at] + garbage + text[at:]


def huge_line(text: str, rng: random.Random) -> str:
    """A ~1 MB line: a real line (or a keyword fragment) repeated, the usual regex backtracking trap."""
    lines = _lines(text)
    unit = rng.choice([rng.choice(lines).rstrip("\r\n"), rng.choice(NOISE_LINES), "1 ", "9", " .", "W1 ",
                       "||", "# ", "a=", "-", "( ", "1.5e", "nan "]) or "x"
    line = (unit * (HUGE_LINE_CHARS // len(unit) + 1))[:HUGE_LINE_CHARS]
    if rng.random() < 0.5:
        line += rng.choice(("", " PASSED", " x", "=", " usec", " steps with 1 atoms"))
    at = rng.randrange(len(lines) + 1)
    return "".join(lines[:at] + [line + "\n"] + lines[at:])


def shuffle_lines(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    start = rng.randrange(len(lines))
    window = lines[start: start + rng.randint(2, 50)]
    rng.shuffle(window)
    return "".join(lines[:start] + window + lines[start + len(window):])


def empty(text: str, rng: random.Random) -> str:
    return rng.choice(("", "\n", " \t\r\n", "\ufeff", "\x00"))


MUTATIONS: Dict[str, Callable[[str, random.Random], str]] = {
    "truncate": truncate,
    "duplicate_block": duplicate_block,
    "drop_lines": drop_lines,
    "interleave_noise": interleave_noise,
    "flip_digits": flip_digits,
    "inject_nonfinite": inject_nonfinite,
    "extreme_numbers": extreme_numbers,
    "line_endings": line_endings,
    "binary_garbage": binary_garbage,
    "huge_line": huge_line,
    "shuffle_lines": shuffle_lines,
    "empty": empty,
}
# Mutations cheap enough to stack several per input (huge_line makes every later one slow).
STACKABLE = tuple(name for name in MUTATIONS if name != "huge_line")


def mutate(text: str, steps: Sequence[Tuple[str, int]]) -> str:
    """``text`` after each (mutation name, random seed) step in turn."""
    for name, seed in steps:
        text = MUTATIONS[name](text, random.Random(seed))
    return text


def random_steps(rng: random.Random) -> List[Tuple[str, int]]:
    """1 to 4 stacked mutations, plus a huge line in about one input of 50."""
    steps = [(rng.choice(STACKABLE), rng.randrange(2**32)) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.02:
        steps.append(("huge_line", rng.randrange(2**32)))
    return steps


def random_text(rng: random.Random) -> str:
    """Unstructured input: random code points, random bytes decoded leniently, or noise lines."""
    pick = rng.randrange(3)
    if pick == 0:
        return "".join(chr(rng.choice((rng.randrange(0x20, 0x7f), rng.randrange(0x110000 // 4))))
                       if rng.random() < 0.9 else rng.choice("\n\r\t ") for _ in range(rng.randint(0, 2000)))
    if pick == 1:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 4000))).decode("utf-8", errors="replace")
    return "\n".join(rng.choice(NOISE_LINES) + " " + rng.choice(NONFINITE_TOKENS + ("1", "2.5", "x"))
                     for _ in range(rng.randint(0, 200)))


# --- the per-input guard and the outcome ---------------------------------------------------------

class Hang(Exception):
    """An input ran past HARD_LIMIT_S (raised by the guard's timer, never by scalebench)."""


@contextlib.contextmanager
def hard_limit(seconds: float = HARD_LIMIT_S) -> Iterator[None]:
    """Raise Hang in the guarded code after ``seconds`` (SIGALRM: the regex engine checks signals,
    so a catastrophic backtrack is interrupted too). Unguarded outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"no answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


RESULT, NAMED_ERROR, CRASH, HANG = "result", "named error", "crash", "hang"


@dataclass(frozen=True)
class Outcome:
    kind: str  # RESULT | NAMED_ERROR | CRASH | HANG
    seconds: float
    detail: str = ""  # the error message, or what was wrong with a result

    @property
    def ok(self) -> bool:
        return self.kind in (RESULT, NAMED_ERROR)


def _strict_json_problem(value: Any) -> str:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as err:
        return f"result is not strict JSON: {err}"
    return ""


def run_one(call: Callable[[], Any], named: Tuple[type, ...], check: Optional[Callable[[Any], str]] = None,
            seconds: float = HARD_LIMIT_S) -> Outcome:
    """Run ``call`` under the guard: a result (that ``check`` finds nothing wrong with), an error of
    the ``named`` classes with a one-line message, a crash (anything else) or a hang."""
    start = time.perf_counter()
    try:
        with hard_limit(seconds):
            value = call()
    except Hang as err:
        return Outcome(HANG, time.perf_counter() - start, str(err))
    except named as err:
        elapsed = time.perf_counter() - start
        message = str(err)
        if not message.strip() or "\n" in message:
            return Outcome(CRASH, elapsed, f"{type(err).__name__} without a one-line message: {message!r}")
        return Outcome(NAMED_ERROR, elapsed, message)
    except Exception as err:  # noqa: BLE001 - anything else is the bug being looked for
        return Outcome(CRASH, time.perf_counter() - start, f"{type(err).__name__}: {err}")
    elapsed = time.perf_counter() - start
    problem = check(value) if check is not None else ""
    return Outcome(CRASH, elapsed, problem) if problem else Outcome(RESULT, elapsed)


def parse_outcome(kind: str, text: str, seconds: float = HARD_LIMIT_S) -> Outcome:
    """parse_text(kind, text): a strict-JSON dict or a ParseError."""
    def check(value: Any) -> str:
        return _strict_json_problem(value) if isinstance(value, dict) else f"result is a {type(value).__name__}"

    return run_one(lambda: parse_text(kind, text), (ParseError,), check, seconds)


# --- the deck generator ------------------------------------------------------------------------

def deck_problems(request: deck.DeckRequest, result: deck.Deck) -> str:
    """What a deck breaks of the invariants; '' for a valid deck."""
    n, nb, p, q = result.n, result.nb, result.p, result.q
    usable = result.memory_fraction * request.nodes * request.memory_per_node
    broken = [rule for rule, holds in (
        ("P*Q <= ranks", p * q <= request.ranks),
        ("P <= Q", request.grid is not None or p <= q),
        ("grid as requested", request.grid is None or (p, q) == tuple(request.grid)),
        ("N % NB == 0", n % nb == 0),
        ("N >= NB", n >= nb),
        ("N*N*8 <= memory_fraction * nodes * memory_per_node", n * n * deck.BYTES_PER_DOUBLE <= usable),
        ("N <= max_n", request.max_n is None or n <= request.max_n),
        ("N within HPL's C int", n <= deck.C_INT_MAX),
        ("NB as requested", request.nb is None or nb == request.nb),
    ) if not holds]
    return f"deck {n=} {nb=} {p}x{q} breaks {', '.join(broken)}" if broken else ""


def deck_outcome(request_args: Dict[str, Any], seconds: float = HARD_LIMIT_S) -> Outcome:
    """DeckRequest(**request_args) then make_deck: a deck whose invariants hold, or InputError/DeckError."""
    def build() -> Tuple[deck.DeckRequest, deck.Deck]:
        request = deck.DeckRequest(**request_args)
        made = deck.make_deck(request)
        deck.hpl_dat(made)  # the text written from it must be writable too
        return request, made

    return run_one(build, (InputError, DeckError), lambda pair: deck_problems(*pair), seconds)


# Values for the deck's numeric fields: ordinary, edge and hostile.
EDGE_INTS = (0, 1, 2, 3, -1, -2**31, 7, 64, 96, 97, 128, 256, 2**31 - 1, 2**31, 2**53 + 1, 2**63 - 1, 2**64,
             10**18 + 9, 10**30, 10**400)
C_INT_LIMITS = (deck.C_INT_MAX - 1, deck.C_INT_MAX, deck.C_INT_MAX + 1, deck.MAX_MEMORY_PER_NODE,
                deck.MAX_MEMORY_PER_NODE + 1)
EDGE_FLOATS = (0.0, -0.0, 1e-300, 0.5, 0.8, 1.0, 1.0000001, 2.0, -0.5, math.nan, math.inf, -math.inf, 1e308)


def random_deck_args(rng: random.Random) -> Dict[str, Any]:
    """Keyword arguments of a DeckRequest: mostly sane values, with hostile ones mixed in."""
    def integer(low: int, high: int) -> Any:
        roll = rng.random()
        if roll < 0.75:
            return rng.randint(low, high)
        if roll < 0.93:
            return rng.choice(EDGE_INTS + C_INT_LIMITS)
        return rng.choice((rng.choice(EDGE_FLOATS), "8", None, True, float(rng.randint(1, 64))))

    args: Dict[str, Any] = {
        "nodes": integer(1, 4096),
        "ranks_per_node": integer(1, 256),
        "memory_per_node": integer(2**20, 2**41) if rng.random() < 0.9 else rng.choice(EDGE_INTS),
        "threads_per_rank": integer(1, 64),
    }
    if rng.random() < 0.4:
        args["memory_fraction"] = rng.choice((rng.random(), rng.choice(EDGE_FLOATS)))
    if rng.random() < 0.4:
        args["nb"] = integer(1, 512)
    if rng.random() < 0.2:
        args["max_n"] = integer(1, 10**6)
    if rng.random() < 0.1:
        args["grid"] = (integer(1, 64), integer(1, 64))
    return args


def cli_deck_outcome(argv: Sequence[str], seconds: float = HARD_LIMIT_S) -> Outcome:
    """`scalebench deck ARGV` in this process: exit 0 with a deck on stdout, or exit 2 with one line
    on stderr and nothing on stdout."""
    import io

    from scalebench.cli import main

    out, err = io.StringIO(), io.StringIO()

    def call() -> Tuple[int, str, str]:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(["deck", *argv])
            except SystemExit as stop:
                status = stop.code if isinstance(stop.code, int) else 1
        return status, out.getvalue(), err.getvalue()

    outcome = run_one(call, (), lambda got: _cli_problem(*got), seconds)
    if outcome.kind == RESULT and err.getvalue():  # a clean failure: its one error line
        return Outcome(NAMED_ERROR, outcome.seconds, err.getvalue().strip())
    return outcome


def _cli_problem(status: int, stdout: str, stderr: str) -> str:
    if status == 0:
        if stderr:
            return f"exit 0 with stderr {stderr!r}"
        if not stdout.startswith(("HPLinpack benchmark input file", "{")):
            return f"exit 0, stdout {stdout[:80]!r}"
        lines = stdout.splitlines()
        ns = [int(v) for line in lines if line.rstrip().endswith(" Ns") for v in line.split()[:-1]]
        ns += [json.loads(stdout)["n"]] if stdout.startswith("{") else []
        return f"N {max(ns)} beyond HPL's C int" if ns and max(ns) > deck.C_INT_MAX else ""
    lines = stderr.splitlines()
    if status != 2 or len(lines) != 1 or stdout:
        return f"exit {status}, {len(lines)} stderr line(s): {stderr[-300:]!r}, stdout {stdout[:80]!r}"
    return ""


DECK_FLAGS = ("--nodes", "--ranks-per-node", "--threads-per-rank", "--memory-per-node", "--memory-fraction",
              "--nb", "--format")
FLAG_VALUES = ("0", "-1", "1", "2", "64", "1e3", "nan", "inf", "-inf", "0.0", "1.5", "0.8", "18446744073709551617",
               "9" * 40, "9" * 400, "1000000", "2147483647", "2147483648", "64TiB", "1024TiB", "16GiB", "16G", "1.5 TB", "0B", "12XB", "", " ", "0x10", "１６", "json", "hpl", "hpcc",
               "--", "-", "\x00", "1" * 5000)


def random_deck_argv(rng: random.Random) -> List[str]:
    """Arguments of `scalebench deck`: usually the required flags, with hostile values mixed in."""
    argv: List[str] = []
    for flag in DECK_FLAGS:
        required = flag in ("--nodes", "--ranks-per-node", "--memory-per-node")
        if rng.random() < (0.95 if required else 0.3):
            argv += [flag, rng.choice(FLAG_VALUES) if rng.random() < 0.4 else _sane_value(flag, rng)]
    if rng.random() < 0.1:
        argv.append(rng.choice(("--json", "--bogus", "extra", "--nodes")))
    return argv


def _sane_value(flag: str, rng: random.Random) -> str:
    if flag == "--memory-per-node":
        return f"{rng.randint(1, 1024)}{rng.choice(('GiB', 'G', 'MB', 'MiB', 'TB', ''))}"
    if flag == "--memory-fraction":
        return f"{rng.random():.3f}"
    if flag == "--format":
        return rng.choice(("hpl", "hpcc", "json"))
    return str(rng.randint(1, 512))
