"""Tune HPL decks: sweep NB x grid x BCAST x DEPTH in one HPL.dat, then rank the PASSED rows.

1. `sweep_deck` lists several NBs, grids, BCASTs and DEPTHs in one HPL.dat (HPL runs every
   combination in one process); `sweep_hpl_dat` / `sweep_hpccinf_txt` write it with the same
   writer as single decks (`deck.hpl_dat_lists`), which enforces HPL's input limits.
2. `rank` orders the PASSED result rows by Gflop/s, decoding each T/V code back into HPL.dat
   settings; scalebench.hpl.frozen freezes the winner for a partition.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from scalebench.errors import DeckError
from scalebench.hpl import deck
from scalebench.hpl.binaries import load_profiles
from scalebench.hpl.deck import Deck
from scalebench.hpl.grid import grid_choice, process_grid
from scalebench.hpl.output import HplRow, decode_tv, is_finite

DEFAULT_BCASTS = ("1ringM", "2ringM", "longM")
DEFAULT_DEPTHS = (0, 1)


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
        """Ranks the sweep launches: all of its geometry (a grid may leave some idle)."""
        return self.base.nodes * self.base.ranks_per_node

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


def default_nbs() -> tuple[int, ...]:
    """The NBs a sweep tries by default: xhpl's profile (hpl_decks/binaries.yaml)."""
    return load_profiles()["xhpl"].sweep_nbs


def default_grids(ranks: int, n: int, min_nb: int, max_aspect: float = 4.0,
                  busy_node_share: Callable[[int], float] | None = None,
                  ) -> tuple[tuple[tuple[int, int], ...], tuple[str, ...]]:
    """Every P <= Q grid of `ranks` that holds one `min_nb` block per process row/column at N,
    plus the grid the plan would choose, leaving ranks idle, when the squarest full grid exceeds
    `max_aspect` (scalebench.hpl.grid.grid_choice); and notes.

    busy_node_share(used): share of a node's memory the matrix takes on a node whose ranks are all
    in a grid of `used` ranks (HPL places ranks beyond P x Q outside the grid, so on several nodes
    the others hold more); the idle-rank grid is left out when that exceeds 1.
    """
    notes: list[str] = []
    every = [(p, ranks // p) for p in range(1, math.isqrt(ranks) + 1) if ranks % p == 0]
    grids = [(p, q) for p, q in every if q / p <= max_aspect]  # flatter grids lose to the network (Netlib TUNING)
    if len(grids) < len(every):
        notes.append(f"grids {', '.join(f'{p}x{q}' for p, q in every if (p, q) not in grids)} left out: "
                     f"flatter than 1:{max_aspect:g} (max_grid_aspect)")
    fitting = [g for g in grids if n >= min_nb * max(g)]
    if len(fitting) < len(grids):
        dropped = ", ".join(f"{p}x{q}" for p, q in grids if (p, q) not in fitting)
        notes.append(f"grids {dropped} left out: N={n} holds less than one {min_nb}-wide block per process")
    if not fitting and grids:
        raise DeckError(f"N: {n} holds less than one {min_nb}-wide block per process column "
                        f"on every grid of {ranks} ranks; raise N")
    if len(fitting) > deck.HPL_MAX_PARAM - 1:
        notes.append(f"only the {deck.HPL_MAX_PARAM - 1} squarest of {len(fitting)} grids (HPL reads "
                     f"at most {deck.HPL_MAX_PARAM})")
        fitting = fitting[-(deck.HPL_MAX_PARAM - 1):]
    choice = grid_choice(ranks, max_aspect)
    if choice.idle_ranks:
        used = choice.p * choice.q
        share = busy_node_share(used) if busy_node_share is not None else None
        if n < min_nb * max(choice.p, choice.q):
            pass  # too wide for N
        elif share is not None and share > 1:
            notes.append(f"grid {choice.p}x{choice.q} (leaving {choice.idle_ranks} of {ranks} ranks idle) left out: "
                         f"its busy nodes would need {share:.0%} of their memory")
        else:
            fitting.append((choice.p, choice.q))
            memory = f"; its busy nodes hold {share:.0%} of their memory" if share is not None else ""
            notes.append(f"grid {choice.p}x{choice.q} leaves {choice.idle_ranks} of {ranks} ranks idle: "
                         f"{process_grid(ranks)[0]}x{process_grid(ranks)[1]} is the squarest grid on all ranks"
                         f"{memory}")
    if not fitting:
        raise DeckError(f"grids: no grid of {ranks} ranks to sweep ({'; '.join(notes)})")
    return tuple(fitting), tuple(notes)


def sweep_deck(base: Deck, nbs: Sequence[int] | None = None,
               grids: Sequence[tuple[int, int]] | None = None,
               bcasts: Sequence[str] | None = None, depths: Sequence[int] | None = None, *,
               ns: Sequence[int] | None = None, pfacts: Sequence[str] | None = None,
               rfacts: Sequence[str] | None = None, nbmins: Sequence[int] | None = None,
               ndivs: Sequence[int] | None = None, max_aspect: float = 4.0,
               candidate_nbs: Sequence[int] | None = None) -> SweepDeck:
    """A sweep around `base` (its N, geometry and algorithm); None takes the default list.

    Defaults: NB among `candidate_nbs` (the binary profile's sweep_nbs; default xhpl's) that keep at
    least one block per process row and column at N on every grid, N rounded down to a multiple of
    every one of them (NBs given are the caller's: N stays); every P <= Q grid of the ranks the base geometry launches (plus the idle-rank grid
    of `grid_choice` when the squarest full grid exceeds `max_aspect`); BCAST 1ringM, 2ringM, longM; DEPTH 0 and 1; one
    value (the base algorithm's) for N, PFACT, RFACT, NBMIN and NDIV.
    """
    a = base.algorithm
    n_list = tuple(ns) if ns is not None else (base.n,)
    launched = base.nodes * base.ranks_per_node
    usable = deck.matrix_capacity(base.nodes, base.memory_per_node, base.memory_fraction, launched)
    for n in n_list:
        if isinstance(n, int) and n * n * deck.BYTES_PER_DOUBLE > usable:
            raise DeckError(f"N: {n} needs more than {base.memory_fraction:g} of the memory of "
                            f"{base.nodes} node(s) (largest N {base.n_memory})")
    n_min = min(n_list) if n_list and all(isinstance(n, int) for n in n_list) else 0
    notes: tuple[str, ...] = ()
    candidates = tuple(candidate_nbs or default_nbs())
    if grids is None:
        min_nb = min(nbs) if nbs else min(candidates)
        share = None
        if base.nodes > 1:  # one node: the matrix takes the same memory however many ranks share it
            def share(used: int) -> float:
                busy = min(used, base.ranks_per_node)
                return busy * max(n_list) ** 2 * deck.BYTES_PER_DOUBLE / used / base.memory_per_node
        grid_list, notes = default_grids(launched, n_min, min_nb, max_aspect, share)
    else:
        grid_list = tuple(tuple(g) for g in grids)  # type: ignore[misc]
    if not grid_list:
        raise DeckError(f"grids: 0 values; HPL reads 1 to {deck.HPL_MAX_PARAM} per line")
    if nbs is None:
        widest = max(max(g) for g in grid_list)
        nb_list = tuple(nb for nb in candidates if n_min >= nb * widest)
        if not nb_list:
            raise DeckError(f"N: {n_min} holds less than one {min(candidates)}-wide block per process "
                            f"on a {widest}-wide grid side; raise N or pass grids")
        if len(nb_list) < len(candidates):
            notes += (f"NB {', '.join(str(nb) for nb in candidates if nb not in nb_list)} left out: "
                      f"less than one block per process at N={n_min} on a {widest}-wide grid side",)
    else:
        nb_list = tuple(nbs)
    if ns is None and nbs is None and base.n % math.lcm(*nb_list):
        # every NB tried holds whole blocks at N (46464 is no multiple of 256): the same sweep at the
        # largest such N, its grids and notes taken again there
        step = math.lcm(*nb_list)
        n = base.n // step * step
        if n < max(nb_list):
            raise DeckError(f"N: {base.n} has no multiple of {step} (the NBs {', '.join(map(str, nb_list))}) "
                            "that holds a block; raise N or sweep fewer NBs")
        rounded = deck.with_sizes(base, n, f"{base.n_policy}; N={n}, a multiple of every NB swept "
                                           f"({', '.join(map(str, nb_list))})")
        return sweep_deck(rounded, None, grids, bcasts, depths, ns=ns, pfacts=pfacts, rfacts=rfacts, nbmins=nbmins,
                          ndivs=ndivs, max_aspect=max_aspect, candidate_nbs=candidate_nbs)
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

    FAILED rows (the parser fails a row whose values make no physical sense, with its reason), rows
    whose residual check is missing and rows with non-finite figures are left out and counted in
    `.excluded`. ParseError for a PASSED row whose T/V code cannot be decoded.
    """
    excluded = {"failed residual check": 0, "impossible values": 0, "no residual check": 0, "not finite": 0,
                "zero N/NB/P/Q": 0}
    candidates = []
    for row in rows:
        if row.reason is not None:
            excluded["impossible values"] += 1
        elif row.status == "FAILED":
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
