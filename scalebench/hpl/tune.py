"""Tune-then-freeze for HPL decks: sweep, rank, freeze the winner per system partition.

1. `sweep_deck` lists several NBs, grids, BCASTs and DEPTHs in one HPL.dat (HPL runs every
   combination in one process); `sweep_hpl_dat` / `sweep_hpccinf_txt` write it with the same
   writer as single decks (`deck.hpl_dat_lists`), which enforces HPL's input limits.
2. `rank` orders the PASSED result rows by Gflop/s, decoding each T/V code (`decode_tv`) back
   into HPL.dat settings.
3. `freeze` writes the winner to hpl_decks/<system>/<partition>.yaml with its provenance;
   `rules_for` merges a frozen deck over hpl_decks/rules.yaml for later deck generation.

Also here: the process-grid choice for awkward rank counts (`grid_choice`: all ranks on a
flat grid, or a squarer grid with ranks left idle) and the weak/strong-scaling problem sizes.
"""
from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
import os
import re
import sys
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import yaml

from scalebench import paths

from scalebench.hpl import deck
from scalebench.hpl.deck import (Algorithm, Deck, DeckRequest, Rules, is_number, require_positive,
                             weak_scaling_n)
from scalebench.errors import DeckError, InputError, ParseError
from scalebench.cli.common import add_geometry_arguments, positive_int_arg
from scalebench.parse.hpl import HplRow, is_finite

DEFAULT_NBS = (64, 96, 128, 192, 256, 384)
DEFAULT_BCASTS = ("1ringM", "2ringM", "longM")
DEFAULT_DEPTHS = (0, 1)
TOP_IN_PROVENANCE = 5

Efficiency = Callable[[int, int], float]


# --- process-grid model -----------------------------------------------------------------------

@dataclass(frozen=True)
class GridModel:
    """Predicted per-rank HPL efficiency of a P x Q grid relative to a square grid.

    `penalty` holds (aspect Q/P, share of throughput lost) points, ascending in aspect; between
    points the penalty is linear in log2(Q/P), beyond them it follows the nearest segment's slope
    (clamped to [0, 0.99]). Defaults and their sources: hpl_decks/rules.yaml, grid_aspect_penalty.
    """

    penalty: tuple[tuple[float, float], ...]
    idle_min_gain: float = 0.02

    def efficiency(self, p: int, q: int) -> float:
        x = math.log2(q / p)
        points = [(math.log2(a), loss) for a, loss in self.penalty]
        if len(points) == 1:
            loss = points[0][1]
        else:
            index = 1
            while index < len(points) - 1 and x > points[index][0]:
                index += 1
            (x0, y0), (x1, y1) = points[index - 1], points[index]
            loss = y0 + (y1 - y0) * (x - x0) / (x1 - x0)
        return 1.0 - min(max(loss, 0.0), 0.99)


def _yaml_load(text: str) -> Any:
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _file_key(path: Path) -> tuple[str, int, int]:
    """Identity of a file's current content, for the caches below."""
    stat = path.stat()
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=16)
def _cached_rules(key: tuple[str, int, int]) -> Rules:
    return deck.load_rules(Path(key[0]))


def load_grid_model(path: Path | None = None) -> GridModel:
    """The grid model of hpl_decks/rules.yaml (keys grid_aspect_penalty, grid_idle_min_gain)."""
    path = Path(path or paths.HPL_DECKS / "rules.yaml")
    return _cached_grid_model(_file_key(path))


@functools.lru_cache(maxsize=16)
def _cached_grid_model(key: tuple[str, int, int]) -> GridModel:
    path = Path(key[0])
    data = _yaml_load(path.read_text()) or {}
    table = data.get("grid_aspect_penalty") if isinstance(data, dict) else None
    if not isinstance(table, dict) or not table:
        raise InputError(f"{path}: grid_aspect_penalty: expected a mapping of aspect Q/P to the share lost")
    points = []
    for aspect, loss in table.items():
        if not is_number(aspect) or not aspect > 0 or not is_number(loss) or not 0 <= loss < 1:
            raise InputError(f"{path}: grid_aspect_penalty: {aspect!r}: {loss!r} must be "
                             f"aspect > 0: share lost in [0, 1)")
        points.append((float(aspect), float(loss)))
    if len({a for a, _ in points}) < len(points):
        raise InputError(f"{path}: grid_aspect_penalty: an aspect is listed twice")
    gain = data.get("grid_idle_min_gain", 0.02)
    if not is_number(gain) or not 0 <= gain < 1:
        raise InputError(f"{path}: grid_idle_min_gain: must be in [0, 1), got {gain!r}")
    return GridModel(tuple(sorted(points)), float(gain))


def grid_efficiency(p: int, q: int, model: GridModel | None = None) -> float:
    """Per-rank efficiency of a P x Q grid relative to a square grid (default model: rules.yaml)."""
    require_positive("p", p)
    require_positive("q", q)
    return (model or load_grid_model()).efficiency(p, q)


class GridChoice(NamedTuple):
    p: int
    q: int
    idle_ranks: int
    reason: str


class _Option(NamedTuple):
    throughput: float  # used ranks x efficiency, in "rank-equivalents"
    p: int
    q: int


def _best_grid(used: int, efficiency: Efficiency) -> _Option:
    """The P <= Q grid of exactly `used` ranks with the highest predicted throughput (ties: squarer)."""
    best: _Option | None = None
    for p in range(1, math.isqrt(used) + 1):
        if used % p:
            continue
        value = efficiency(p, used // p)
        if not is_number(value) or not 0 < value <= 1:
            raise InputError(f"predicted_efficiency({p}, {used // p}): must be in (0, 1], got {value!r}")
        option = _Option(used * value, p, used // p)
        if best is None or option.throughput >= best.throughput:
            best = option
    assert best is not None
    return best


def _grid_options(ranks: int, efficiency: Efficiency) -> tuple[_Option, _Option | None]:
    """The best grid on all ranks, and the best one leaving some ranks idle (None for 1 rank)."""
    full = _best_grid(ranks, efficiency)
    idle: _Option | None = None
    for used in range(ranks - 1, 0, -1):
        if idle is not None and used <= idle.throughput:
            break  # efficiency <= 1: fewer ranks cannot predict more
        option = _best_grid(used, efficiency)
        if idle is None or option.throughput > idle.throughput:
            idle = option
    return full, idle


def grid_choice(ranks: int, predicted_efficiency: Efficiency | None = None, *,
                min_gain: float | None = None) -> GridChoice:
    """P x Q for `ranks`: every rank on the best P <= Q grid (flat 1 x R for a prime), or a squarer
    grid with ranks left idle, whichever has the better predicted throughput.

    Model: throughput = used ranks x predicted_efficiency(P, Q), the efficiency being relative to
    a square grid (default `GridModel.efficiency`, table in hpl_decks/rules.yaml). Ranks are left
    idle only when that predicts at least `min_gain` (default grid_idle_min_gain) more.
    """
    require_positive("ranks", ranks)
    model = load_grid_model() if predicted_efficiency is None or min_gain is None else None
    efficiency = predicted_efficiency or model.efficiency  # type: ignore[union-attr]
    gain = model.idle_min_gain if min_gain is None else min_gain  # type: ignore[union-attr]
    full, idle = _grid_options(ranks, efficiency)
    all_ranks = f"{full.p}x{full.q} on all {ranks} ranks ({full.throughput:.2f} rank-equivalents)"
    if idle is None:
        return GridChoice(full.p, full.q, 0, f"{ranks} rank: {full.p}x{full.q}")
    left = ranks - idle.p * idle.q
    with_idle = f"{idle.p}x{idle.q} with {left} idle ({idle.throughput:.2f})"
    if idle.throughput > full.throughput * (1 + gain):
        more = idle.throughput / full.throughput - 1
        return GridChoice(idle.p, idle.q, left, f"{with_idle} predicts {more:.1%} more than {all_ranks}")
    why = (f", less than the {gain:.0%} gain that would justify idle ranks"
           if idle.throughput > full.throughput else "")
    return GridChoice(full.p, full.q, 0, f"{all_ranks} predicts more than {with_idle}{why}")


# --- sweep decks ------------------------------------------------------------------------------

@dataclass(frozen=True)
class SweepDeck:
    """One HPL.dat with lists: HPL runs every combination (`tests` of them) in one process."""

    base: Deck  # geometry, memory and the single-valued algorithm lines
    ns: tuple[int, ...]
    nbs: tuple[int, ...]
    grids: tuple[tuple[int, int], ...]
    bcasts: tuple[str, ...]
    depths: tuple[int, ...]
    pfacts: tuple[str, ...]
    rfacts: tuple[str, ...]
    nbmins: tuple[int, ...]
    ndivs: tuple[int, ...]
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        sweep_hpl_dat(self)  # HPL's limits, checked by the writer
        for p, q in self.grids:
            if p * q > self.ranks:
                raise DeckError(f"grid {p}x{q}: needs {p * q} ranks, the deck launches {self.ranks} "
                                f"(HPL: 'Need at least {p * q} processes for these tests')")
        for nb in self.nbs:
            for p, q in self.grids:
                if min(self.ns) < nb * max(p, q):
                    raise DeckError(f"NB {nb}: N={min(self.ns)} gives fewer than one {nb}-wide block per "
                                    f"process row/column of grid {p}x{q} (needs N >= {nb * max(p, q)})")

    @property
    def ranks(self) -> int:
        return self.base.ranks

    @property
    def tests(self) -> int:
        return math.prod(len(getattr(self, name)) for name in _LIST_FIELDS)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {name: list(getattr(self, name)) for name in _LIST_FIELDS}
        data["grids"] = [{"p": p, "q": q} for p, q in self.grids]
        data.update(ranks=self.ranks, tests=self.tests, notes=list(self.notes),
                    base=self.base.to_json())
        return data


_LIST_FIELDS = ("ns", "nbs", "grids", "pfacts", "nbmins", "ndivs", "rfacts", "bcasts", "depths")


def default_grids(ranks: int, n: int, min_nb: int = min(DEFAULT_NBS), model: GridModel | None = None,
                  busy_node_share: Callable[[int], float] | None = None,
                  ) -> tuple[tuple[tuple[int, int], ...], tuple[str, ...]]:
    """Every P <= Q grid of `ranks` that holds one `min_nb` block per process row/column at N,
    plus the best grid leaving ranks idle when the squarest full grid has Q/P > 2; and notes.

    busy_node_share(used): share of a node's memory the matrix takes on a node whose ranks are all
    in a grid of `used` ranks (HPL places ranks beyond P x Q outside the grid, so on several nodes
    the others hold more); the idle-rank grid is left out when that exceeds 1.
    """
    notes: list[str] = []
    grids = [(p, ranks // p) for p in range(1, math.isqrt(ranks) + 1) if ranks % p == 0]
    fitting = [g for g in grids if n >= min_nb * max(g)]
    if len(fitting) < len(grids):
        dropped = ", ".join(f"{p}x{q}" for p, q in grids if (p, q) not in fitting)
        notes.append(f"grids {dropped} left out: N={n} holds less than one {min_nb}-wide block per process")
    if not fitting:
        raise DeckError(f"N: {n} holds less than one {min_nb}-wide block per process column "
                        f"on every grid of {ranks} ranks; raise N")
    if len(fitting) > deck.HPL_MAX_PARAM - 1:
        notes.append(f"only the {deck.HPL_MAX_PARAM - 1} squarest of {len(fitting)} grids (HPL reads "
                     f"at most {deck.HPL_MAX_PARAM})")
        fitting = fitting[-(deck.HPL_MAX_PARAM - 1):]
    squarest = fitting[-1]
    if squarest[1] > 2 * squarest[0] and ranks > 2:
        _, idle = _grid_options(ranks, (model or load_grid_model()).efficiency)
        used = idle.p * idle.q if idle is not None else 0
        share = busy_node_share(used) if busy_node_share is not None and used else None
        if idle is None or n < min_nb * max(idle.p, idle.q):
            pass  # no idle-rank grid, or one too wide for N
        elif share is not None and share > 1:
            notes.append(f"grid {idle.p}x{idle.q} (leaving {ranks - used} of {ranks} ranks idle) left out: "
                         f"its busy nodes would need {share:.0%} of their memory")
        else:
            fitting.append((idle.p, idle.q))
            memory = f"; its busy nodes hold {share:.0%} of their memory" if share is not None else ""
            notes.append(f"grid {idle.p}x{idle.q} leaves {ranks - used} of {ranks} ranks idle: "
                         f"{squarest[0]}x{squarest[1]} is the squarest grid on all ranks{memory}")
    return tuple(fitting), tuple(notes)


def sweep_deck(base: Deck, nbs: Sequence[int] | None = None,
               grids: Sequence[tuple[int, int]] | None = None,
               bcasts: Sequence[str] | None = None, depths: Sequence[int] | None = None, *,
               ns: Sequence[int] | None = None, pfacts: Sequence[str] | None = None,
               rfacts: Sequence[str] | None = None, nbmins: Sequence[int] | None = None,
               ndivs: Sequence[int] | None = None, model: GridModel | None = None) -> SweepDeck:
    """A sweep around `base` (its N, geometry and algorithm); None takes the default list.

    Defaults: NB in DEFAULT_NBS that keep at least one block per process row and column at N on
    every grid; every P <= Q grid of the rank count (plus the idle-rank option of `grid_choice`
    when the squarest full grid has Q/P > 2); BCAST 1ringM, 2ringM, longM; DEPTH 0 and 1; one
    value (the base algorithm's) for N, PFACT, RFACT, NBMIN and NDIV.
    """
    a = base.algorithm
    n_list = tuple(ns) if ns is not None else (base.n,)
    usable = base.nodes * base.memory_per_node * base.memory_fraction
    for n in n_list:
        if isinstance(n, int) and n * n * deck.BYTES_PER_DOUBLE > usable:
            raise DeckError(f"N: {n} needs more than {base.memory_fraction:g} of the memory of "
                            f"{base.nodes} node(s) (largest N {base.n_memory})")
    n_min = min(n_list) if n_list and all(isinstance(n, int) for n in n_list) else 0
    notes: tuple[str, ...] = ()
    if grids is None:
        min_nb = min(nbs) if nbs else min(DEFAULT_NBS)
        share = None
        if base.nodes > 1:  # one node: the matrix takes the same memory however many ranks share it
            def share(used: int) -> float:
                busy = min(used, base.ranks_per_node)
                return busy * max(n_list) ** 2 * deck.BYTES_PER_DOUBLE / used / base.memory_per_node
        grid_list, notes = default_grids(base.ranks, n_min, min_nb, model, share)
    else:
        grid_list = tuple(tuple(g) for g in grids)  # type: ignore[misc]
    if not grid_list:
        raise DeckError(f"grids: 0 values; HPL reads 1 to {deck.HPL_MAX_PARAM} per line")
    if nbs is None:
        widest = max(max(g) for g in grid_list)
        nb_list = tuple(nb for nb in DEFAULT_NBS if n_min >= nb * widest)
        if not nb_list:
            raise DeckError(f"N: {n_min} holds less than one {min(DEFAULT_NBS)}-wide block per process "
                            f"on a {widest}-wide grid side; raise N or pass grids")
        if len(nb_list) < len(DEFAULT_NBS):
            notes += (f"NB {', '.join(str(nb) for nb in DEFAULT_NBS if nb not in nb_list)} left out: "
                      f"less than one block per process at N={n_min} on a {widest}-wide grid side",)
    else:
        nb_list = tuple(nbs)
    return SweepDeck(
        base=base, ns=n_list, nbs=nb_list, grids=grid_list,  # type: ignore[arg-type]
        bcasts=tuple(bcasts) if bcasts is not None else DEFAULT_BCASTS,
        depths=tuple(depths) if depths is not None else DEFAULT_DEPTHS,
        pfacts=tuple(pfacts) if pfacts is not None else (a.pfact,),
        rfacts=tuple(rfacts) if rfacts is not None else (a.rfact,),
        nbmins=tuple(nbmins) if nbmins is not None else (a.nbmin,),
        ndivs=tuple(ndivs) if ndivs is not None else (a.ndiv,),
        notes=notes)


def sweep_hpl_dat(sweep: SweepDeck, output_file: str = "HPL.out", device: int = 6) -> str:
    """Multi-valued HPL.dat for xhpl (same writer and line layout as deck.hpl_dat)."""
    return deck.hpl_dat_lists(ns=sweep.ns, nbs=sweep.nbs, grids=sweep.grids,
                              algorithm=sweep.base.algorithm, pfacts=sweep.pfacts,
                              nbmins=sweep.nbmins, ndivs=sweep.ndivs, rfacts=sweep.rfacts,
                              bcasts=sweep.bcasts, depths=sweep.depths,
                              output_file=output_file, device=device)


def sweep_hpccinf_txt(sweep: SweepDeck) -> str:
    """Multi-valued hpccinf.txt: the sweep's HPL.dat lines, then no extra PTRANS sizes.

    hpcc runs every HPL combination but keeps only the best in its Summary: rank the result rows.
    """
    return sweep_hpl_dat(sweep) + deck.HPCCINF_PTRANS_LINES


# --- T/V codes --------------------------------------------------------------------------------

# HPL 2.x HPL_pdtest.c prints "W%c%1d%c%c%1d%c%1d": W (wall time), process mapping R|C, DEPTH,
# BCAST digit, RFACT L|C|R, NDIV, PFACT L|C|R, NBMIN. %1d is a minimum width: a value >= 10
# prints more digits; BCAST is then the last digit before the RFACT letter.
_TV_RE = re.compile(r"W([RC])([0-9]+)([0-9])([LCR])([0-9]+)([LCR])([0-9]+)")
_TV_LAYOUT = ("W, R|C (process mapping), DEPTH, BCAST digit 0-5, RFACT L|C|R, NDIV, PFACT L|C|R, "
              "NBMIN (HPL's W%c%1d%c%c%1d%c%1d, e.g. WR11C2R4)")
_TV_PMAP = {"R": "row", "C": "column"}
_TV_FACT = {"L": "left", "C": "crout", "R": "right"}
_TV_BCAST = {str(code): name for name, code in deck._BCAST.items()}
TV_KEYS = ("pmap", "depth", "bcast", "rfact", "ndiv", "pfact", "nbmin")


def decode_tv(tv: str) -> dict[str, Any]:
    """The HPL.dat settings a T/V code encodes, named as in rules.yaml's algorithm section."""
    match = _TV_RE.fullmatch(tv) if isinstance(tv, str) else None
    if match is None:
        raise ParseError(f"T/V code {tv!r}: not HPL's encoded variant ({_TV_LAYOUT}); builds that print "
                         f"other codes (e.g. NVIDIA HPL's 'WC0') cannot be decoded into HPL.dat settings")
    pmap, depth, bcast, rfact, ndiv, pfact, nbmin = match.groups()
    if bcast not in _TV_BCAST:
        raise ParseError(f"T/V code {tv!r}: BCAST digit {bcast} is not one of HPL's 0-5 "
                         f"({', '.join(f'{k}={v}' for k, v in _TV_BCAST.items())})")
    if int(ndiv) < 2 or int(nbmin) < 1:
        raise ParseError(f"T/V code {tv!r}: NDIV {ndiv} / NBMIN {nbmin} outside HPL's NDIV >= 2, NBMIN >= 1")
    return {"pmap": _TV_PMAP[pmap], "depth": int(depth), "bcast": _TV_BCAST[bcast],
            "rfact": _TV_FACT[rfact], "ndiv": int(ndiv), "pfact": _TV_FACT[pfact], "nbmin": int(nbmin)}


# --- ranking ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Candidate:
    tv: str
    n: int
    nb: int
    p: int
    q: int
    gflops: float
    time_s: float
    algorithm: dict[str, Any]  # decode_tv(tv)

    @property
    def aspect(self) -> float:
        """Long side over short side: 1 for a square grid."""
        return max(self.p, self.q) / min(self.p, self.q)

    def to_json(self) -> dict[str, Any]:
        return {"tv": self.tv, "n": self.n, "nb": self.nb, "p": self.p, "q": self.q,
                "gflops": self.gflops, "time_s": self.time_s, "algorithm": dict(self.algorithm)}


class Ranking(list):  # list[Candidate]
    """Candidates best first; `excluded` counts the rows left out, by reason."""

    def __init__(self, candidates: Iterable[Candidate] = (), excluded: Mapping[str, int] | None = None):
        super().__init__(candidates)
        self.excluded: dict[str, int] = dict(excluded or {})

    def excluded_text(self) -> str:
        parts = [f"{count} {reason}" for reason, count in self.excluded.items() if count]
        return ", ".join(parts) if parts else "none"


def rank(rows: Iterable[HplRow]) -> Ranking:
    """PASSED rows by Gflop/s, best first; ties: shorter time, then squarer grid, then file order.

    FAILED rows, rows whose residual check is missing and rows with non-finite figures are left
    out and counted in `.excluded`. ParseError for a PASSED row whose T/V code cannot be decoded.
    """
    excluded = {"failed residual check": 0, "no residual check": 0, "not finite": 0, "zero N/NB/P/Q": 0}
    candidates = []
    for row in rows:
        if row.status == "FAILED":
            excluded["failed residual check"] += 1
        elif row.status != "PASSED":
            excluded["no residual check"] += 1
        elif not (is_finite(row.gflops) and is_finite(row.time_s)):
            excluded["not finite"] += 1
        elif min(row.n, row.nb, row.p, row.q) < 1:
            excluded["zero N/NB/P/Q"] += 1
        else:
            candidates.append(Candidate(row.tv, row.n, row.nb, row.p, row.q, float(row.gflops),
                                        float(row.time_s), decode_tv(row.tv)))
    candidates.sort(key=lambda c: (-c.gflops, c.time_s, c.aspect))
    return Ranking(candidates, excluded)


# --- frozen decks -----------------------------------------------------------------------------

GRID_RULES = ("near_square", "flat")
_RULES_KEYS = tuple(f.name for f in fields(Rules) if f.name != "algorithm")
_FROZEN_KEYS = (*_RULES_KEYS, "algorithm", "grid", "grid_rule", "provenance")
_BOOL_KEYS = tuple(f.name for f in fields(Algorithm) if f.type in ("bool", bool))


def frozen_path(system: str, partition: str, decks_dir: Path = paths.HPL_DECKS) -> Path:
    system_dir = Path(decks_dir) / paths.check_name("system", system)
    return system_dir / f"{paths.check_name('partition', partition)}.yaml"


def _base_rules(decks_dir: Path) -> Rules:
    """decks_dir/rules.yaml, or the project's hpl_decks/rules.yaml when decks_dir has none."""
    path = Path(decks_dir) / "rules.yaml"
    return _cached_rules(_file_key(path if path.exists() else paths.HPL_DECKS / "rules.yaml"))


def _grid_rule(candidate: Candidate) -> str:
    """flat when 1 x R won although R had a squarer grid; near_square otherwise (a 1 x R winner
    for a prime or R = 2 says nothing about other rank counts)."""
    ranks = candidate.p * candidate.q
    if candidate.p == 1 and ranks > 1 and deck.process_grid(ranks)[0] > 1:
        return "flat"
    return "near_square"


def freeze(candidate: Candidate, system: str, partition: str, source: str,
           decks_dir: Path = paths.HPL_DECKS, *, force: bool = False,
           ranking: Sequence[Candidate] | None = None, ranks: int | None = None,
           rules: Rules | None = None, now: datetime | None = None) -> Path:
    """Write the winner to <decks_dir>/<system>/<partition>.yaml and return the path.

    Keys: nb, grid {p, q, ranks} (the winning shape for the rank count the sweep launched),
    grid_rule (near_square | flat, for other rank counts), algorithm (every key of rules.yaml's
    algorithm section: the seven the T/V code encodes from the winner, the others from `rules`,
    default decks_dir's rules.yaml) and provenance (time, source, Ns swept, ranks, top 5).
    An existing frozen deck is replaced only with force=True, and then kept as
    <partition>.yaml.<UTC time> (never deleted).
    """
    path = frozen_path(system, partition, decks_dir)
    now = now or datetime.now(timezone.utc)
    base = rules or _base_rules(Path(decks_dir))
    algorithm = replace(base.algorithm, **{k: candidate.algorithm[k] for k in TV_KEYS})
    ranked = list(ranking) if ranking else [candidate]
    launched = ranks if ranks is not None else max(c.p * c.q for c in [candidate, *ranked])
    require_positive("ranks", launched)
    if launched < candidate.p * candidate.q:
        raise InputError(f"ranks: {launched} is fewer than the winning grid {candidate.p}x{candidate.q} uses")
    excluded = getattr(ranking, "excluded", {})
    data = {
        "nb": candidate.nb,
        "grid": {"p": candidate.p, "q": candidate.q, "ranks": launched},
        "grid_rule": _grid_rule(candidate),
        "algorithm": asdict(algorithm),
        "provenance": {
            "frozen_at": now.astimezone(timezone.utc).isoformat(timespec="seconds"),
            "source": str(source),
            "n_swept": sorted({c.n for c in ranked}),
            "ranks": launched,
            "winner": candidate.to_json(),
            "candidates": len(ranked),
            "excluded": {k: v for k, v in excluded.items() if v},
            "top": [c.to_json() for c in ranked[:TOP_IN_PROVENANCE]],
            "algorithm_from": f"{', '.join(TV_KEYS)}: the winner's T/V code; the other keys: "
                              f"rules.yaml when frozen",
        },
    }
    text = (f"# Frozen HPL deck for {system}/{partition}, written by `scalebench tune freeze`.\n"
            f"# scalebench.hpl.tune.rules_for merges it over hpl_decks/rules.yaml. Re-tune rather than edit;\n"
            f"# `--force` replaces it and keeps this file as {path.name}.<UTC time>.\n"
            + yaml.safe_dump(data, sort_keys=False, default_flow_style=False))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    try:
        if force and path.exists():
            _keep(path, now)
            os.replace(tmp, path)
        else:
            try:
                _create(path, tmp, text)
            except FileExistsError:
                raise InputError(f"{path}: a frozen deck exists already{_frozen_at(path)}; pass "
                                 f"force=True (--force) to replace it (the old one is kept as "
                                 f"{path.name}.<UTC time>)") from None
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _create(path: Path, tmp: Path, text: str) -> None:
    """Create `path` from the complete `tmp`; FileExistsError if it exists (no overwrite, even in a
    race). Where hard links are not supported, an exclusive create and write."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:
        with open(path, "x") as out:
            out.write(text)


def _keep(path: Path, now: datetime) -> Path:
    """Hard-link the existing deck to <name>.<UTC time>[.k] (a copy where links are not supported)."""
    stamp = now.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for k in itertools.count():
        backup = path.with_name(f"{path.name}.{stamp}" + (f".{k}" if k else ""))
        try:
            os.link(path, backup)
            return backup
        except FileExistsError:
            continue
        except OSError:
            try:
                with open(backup, "xb") as out:
                    out.write(path.read_bytes())
                return backup
            except FileExistsError:
                continue
    raise AssertionError("unreachable")


def _frozen_at(path: Path) -> str:
    try:
        data = _yaml_load(path.read_text())
        return f" (frozen_at {data['provenance']['frozen_at']})"
    except Exception:  # only decorates the message
        return ""


@dataclass(frozen=True)
class FrozenDeck:
    path: Path
    rules: Rules  # merged over the base rules
    grid: tuple[int, int] | None
    grid_ranks: int | None
    grid_rule: str
    provenance: dict[str, Any]

    def grid_for(self, ranks: int) -> tuple[int, int]:
        """The frozen shape for the rank count it was tuned at; else the grid rule."""
        require_positive("ranks", ranks)
        if self.grid is not None and ranks == self.grid_ranks:
            return self.grid
        if self.grid_rule == "flat":
            return 1, ranks
        return deck.process_grid(ranks)


def read_frozen(path: Path, base: Rules) -> FrozenDeck:
    """A frozen deck merged over `base`; InputError naming the file and the key when malformed."""
    try:
        data = _yaml_load(Path(path).read_text())
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    except yaml.YAMLError as err:
        raise InputError(f"{path}: not valid YAML: {str(err).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping with keys {', '.join(_FROZEN_KEYS)}")
    unknown = sorted(map(str, set(data) - set(_FROZEN_KEYS)))
    if unknown:
        raise InputError(f"{path}: unknown key(s) {', '.join(unknown)}")
    given = data.get("algorithm") or {}
    if not isinstance(given, dict):
        raise InputError(f"{path}: algorithm: expected a mapping")
    unknown = sorted(map(str, set(given) - {f.name for f in fields(Algorithm)}))
    if unknown:
        raise InputError(f"{path}: algorithm: unknown key(s) {', '.join(unknown)}")
    for key in _BOOL_KEYS:
        if key in given and not isinstance(given[key], bool):
            raise InputError(f"{path}: algorithm.{key}: must be true or false, got {given[key]!r}")
    try:
        algorithm = replace(base.algorithm, **given)
    except InputError as err:
        raise InputError(f"{path}: algorithm.{err}") from None
    try:
        rules = replace(base, algorithm=algorithm, **{k: data[k] for k in _RULES_KEYS if k in data})
    except InputError as err:
        raise InputError(f"{path}: {err}") from None
    grid, grid_ranks = _read_grid(path, data.get("grid"))
    rule = data.get("grid_rule", "near_square")
    if rule not in GRID_RULES:
        raise InputError(f"{path}: grid_rule: {rule!r} is not one of {', '.join(GRID_RULES)}")
    provenance = data.get("provenance") or {}
    if not isinstance(provenance, dict):
        raise InputError(f"{path}: provenance: expected a mapping")
    return FrozenDeck(Path(path), rules, grid, grid_ranks, rule, provenance)


def _read_grid(path: Path, grid: Any) -> tuple[tuple[int, int] | None, int | None]:
    if grid is None:
        return None, None
    if not isinstance(grid, dict):
        raise InputError(f"{path}: grid: expected a mapping {{p: .., q: .., ranks: ..}}")
    unknown = sorted(map(str, set(grid) - {"p", "q", "ranks"}))
    if unknown:
        raise InputError(f"{path}: grid: unknown key(s) {', '.join(unknown)}")
    for key in ("p", "q"):
        if key not in grid:
            raise InputError(f"{path}: grid.{key}: missing")
    try:
        for key in ("p", "q", "ranks"):
            if key in grid:
                require_positive(f"grid.{key}", grid[key])
    except InputError as err:
        raise InputError(f"{path}: {err}") from None
    p, q = grid["p"], grid["q"]
    ranks = grid.get("ranks", p * q)
    if ranks < p * q:
        raise InputError(f"{path}: grid.ranks: {ranks} is fewer than the {p}x{q} grid uses")
    return (p, q), ranks


def load_frozen(system: str, partition: str, decks_dir: Path = paths.HPL_DECKS,
                base: Rules | None = None) -> Rules | None:
    """The frozen deck's Rules merged over `base` (default: decks_dir's rules.yaml); None if not frozen."""
    path = frozen_path(system, partition, decks_dir)
    if not path.exists():
        return None
    return read_frozen(path, base or _base_rules(Path(decks_dir))).rules


def rules_for(system: str, partition: str, decks_dir: Path = paths.HPL_DECKS,
              base: Rules | None = None) -> Rules:
    """Rules for generating a partition's decks: its frozen deck (nb, algorithm, any other rules
    key it sets) merged over hpl_decks/rules.yaml, or the plain rules when none is frozen."""
    base = base or _base_rules(Path(decks_dir))
    return load_frozen(system, partition, decks_dir, base) or base


# --- scaling laws -----------------------------------------------------------------------------

def strong_scaling_n(n_fixed: int) -> int:
    """N for strong scaling: the same N at every node count."""
    require_positive("n_fixed", n_fixed)
    return n_fixed


# --- helpers ----------------------------------------------------------------------------------

# --- command line -----------------------------------------------------------------------------

def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}") from None
    return values


def _grid_list(text: str) -> tuple[tuple[int, int], ...]:
    grids = []
    for item in text.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", item)
        if not match:
            raise argparse.ArgumentTypeError(f"not a grid PxQ: {item!r} (e.g. 1x7,2x3)")
        grids.append((int(match.group(1)), int(match.group(2))))
    return tuple(grids)


def _name_list(text: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in text.split(","))


def _read_rows(file: str, kind: str) -> list[HplRow]:
    from scalebench.parse.hpcc import parse_hpcc
    from scalebench.parse.hpl import parse_hpl

    try:
        text = Path(file).read_text(errors="replace")
    except OSError as err:
        raise InputError(f"{file}: cannot read: {err.strerror}") from None
    try:
        if kind == "hpcc":
            output = parse_hpcc(text).hpl
            if output is None:
                raise ParseError("no HPL result row in the last hpcc run")
        else:
            output = parse_hpl(text)
    except ParseError as err:
        raise ParseError(f"{file}: {err}") from None
    return list(output.rows)


def _ranked(file: str, kind: str) -> Ranking:
    ranking = rank(_read_rows(file, kind))
    if not ranking:
        raise ParseError(f"{file}: no PASSED row to rank (left out: {ranking.excluded_text()})")
    return ranking


def cmd_tune_deck(args: argparse.Namespace) -> int:
    from scalebench.units import parse_size

    request = DeckRequest(nodes=args.nodes, ranks_per_node=args.ranks_per_node,
                          threads_per_rank=args.threads_per_rank,
                          memory_per_node=parse_size(args.memory_per_node, "--memory-per-node"))
    base = deck.make_deck(request, deck.load_rules())
    sweep = sweep_deck(base, nbs=args.nbs, grids=args.grids, bcasts=args.bcasts, depths=args.depths,
                       ns=(args.n,) if args.n else None)
    sys.stdout.write(sweep_hpccinf_txt(sweep) if args.format == "hpcc" else sweep_hpl_dat(sweep))
    grids = " ".join(f"{p}x{q}" for p, q in sweep.grids)
    print(f"sweep: {len(sweep.nbs)} NB x {len(sweep.grids)} grid(s) ({grids}) x {len(sweep.bcasts)} "
          f"BCAST x {len(sweep.depths)} DEPTH = {sweep.tests} tests at N={', '.join(map(str, sweep.ns))} "
          f"on {sweep.ranks} ranks", file=sys.stderr)
    for note in sweep.notes:
        print(f"  {note}", file=sys.stderr)
    return 0


def ranking_table(ranking: Sequence[Candidate]) -> str:
    header = ("  #", "T/V", "N", "NB", "P", "Q", "Time s", "Gflop/s", "PMAP", "DEPTH", "BCAST",
              "RFACT", "NDIV", "PFACT", "NBMIN")
    rows = [header]
    for index, c in enumerate(ranking, 1):
        a = c.algorithm
        rows.append((str(index), c.tv, str(c.n), str(c.nb), str(c.p), str(c.q), f"{c.time_s:.2f}",
                     f"{c.gflops:.4g}", a["pmap"], str(a["depth"]), a["bcast"], a["rfact"],
                     str(a["ndiv"]), a["pfact"], str(a["nbmin"])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "\n".join("  ".join(cell.rjust(w) if cell[:1].isdigit() or i == 0 else cell.ljust(w)
                               for i, (cell, w) in enumerate(zip(r, widths))).rstrip()
                     for r in rows)


def cmd_tune_rank(args: argparse.Namespace) -> int:
    ranking = _ranked(args.file, args.kind)
    if args.json:
        print(json.dumps({"source": args.file, "candidates": [c.to_json() for c in ranking],
                          "excluded": ranking.excluded}, indent=2))
    else:
        print(ranking_table(ranking))
        print(f"\n{len(ranking)} PASSED row(s) ranked; left out: {ranking.excluded_text()}")
    return 0


def cmd_tune_freeze(args: argparse.Namespace) -> int:
    ranking = _ranked(args.file, args.kind)
    path = freeze(ranking[0], args.system, args.partition, str(Path(args.file).resolve()),
                  Path(args.decks_dir), force=args.force, ranking=ranking, ranks=args.ranks)
    best = ranking[0]
    print(f"frozen: {best.tv} N={best.n} NB={best.nb} {best.p}x{best.q} {best.gflops:.4g} Gflop/s, "
          f"best of {len(ranking)} PASSED row(s) (left out: {ranking.excluded_text()})", file=sys.stderr)
    print(path)
    return 0


def add_tune_arguments(subparsers: Any) -> argparse.ArgumentParser:
    """Add `tune deck | rank | freeze` to the CLI's subparsers; each sets `func`."""
    tune = subparsers.add_parser("tune", help="sweep HPL decks, rank the results, freeze the winner")
    sub = tune.add_subparsers(dest="tune_command", required=True, metavar="{deck,rank,freeze}",
                             parser_class=type(tune))

    p = sub.add_parser("deck", help="multi-valued HPL.dat sweeping NB, grid, BCAST and DEPTH")
    add_geometry_arguments(p)
    p.add_argument("--n", type=positive_int_arg, default=None, help="problem size (default: sized from memory)")
    p.add_argument("--nbs", type=_int_list, default=None,
                   help=f"e.g. 128,192 (default: those of {','.join(map(str, DEFAULT_NBS))} "
                        f"with one block per process)")
    p.add_argument("--grids", type=_grid_list, default=None, help="e.g. 1x7,2x3 (default: every P<=Q grid)")
    p.add_argument("--bcasts", type=_name_list, default=None, help=f"default {','.join(DEFAULT_BCASTS)}")
    p.add_argument("--depths", type=_int_list, default=None, help="default 0,1")
    p.add_argument("--format", choices=("hpl", "hpcc"), default="hpl")
    p.set_defaults(func=cmd_tune_deck)

    for name, func, text in (("rank", cmd_tune_rank, "rank the PASSED rows of an HPL/hpcc output"),
                             ("freeze", cmd_tune_freeze, "freeze the best row as a partition's deck")):
        p = sub.add_parser(name, help=text)
        p.add_argument("file", help="HPL output or hpccoutf.txt")
        p.add_argument("--kind", choices=("hpl", "hpcc"), default="hpl")
        p.set_defaults(func=func)
        if name == "rank":
            p.add_argument("--json", action="store_true")
        else:
            p.add_argument("--system", required=True)
            p.add_argument("--partition", required=True)
            p.add_argument("--force", action="store_true",
                           help="replace a frozen deck (the old one is kept as <partition>.yaml.<UTC time>)")
            p.add_argument("--ranks", type=positive_int_arg, default=None,
                           help="ranks the sweep launched (default: the largest grid in the output)")
            p.add_argument("--decks-dir", default=str(paths.HPL_DECKS))
    return tune
