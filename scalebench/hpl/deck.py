"""HPL input decks: process grid, problem size and the HPL.dat / hpccinf.txt text.

Rules (the numbers live in hpl_decks/rules.yaml):
- grid P x Q with P <= Q, as square as the rank count allows (HPL tuning notes: P <= Q, near square);
- N is the largest multiple of NB whose matrix of doubles fits memory_fraction of the nodes' memory,
  rounded further to a multiple of NB*lcm(P,Q) when that costs less than a small share of memory;
- an optional cap on N (e.g. a time budget on a workstation) is applied last and recorded.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from scalebench import loaders, paths, schema
from scalebench.errors import DeckError, InputError
from scalebench.hpl.grid import process_grid
from scalebench.hpl.output import BCAST_CODES, PFACT_CODES, PMAP_CODES, SWAP_CODES
from scalebench.site.scales import check_scaling
from scalebench.units import format_size
from scalebench.validation import C_INT_MAX, excerpt, is_number, require_count, require_positive

BYTES_PER_DOUBLE = 8

_PFACT, _BCAST, _SWAP, _PMAP = PFACT_CODES, BCAST_CODES, SWAP_CODES, PMAP_CODES


@dataclass(frozen=True)
class Algorithm:
    """The HPL.dat lines after the grid (names as in HPL.dat)."""

    pmap: str = "row"
    threshold: float = 16.0
    pfact: str = "right"
    nbmin: int = 4
    ndiv: int = 2
    rfact: str = "crout"
    bcast: str = "1ringM"
    depth: int = 1
    swap: str = "mix"
    swap_threshold: int = 64
    l1_transposed: bool = True
    u_transposed: bool = True
    equilibration: bool = True
    alignment: int = 8

    def __post_init__(self) -> None:
        for name, table in (("pmap", _PMAP), ("pfact", _PFACT), ("rfact", _PFACT),
                            ("bcast", _BCAST), ("swap", _SWAP)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in table:
                raise InputError(f"{name}: {excerpt(getattr(self, name))} is not one of {', '.join(table)}")
        for name in ("nbmin", "ndiv", "alignment"):
            require_positive(name, getattr(self, name))
        for name in ("depth", "swap_threshold"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InputError(f"{name}: must be an integer >= 0, got {excerpt(value)}")
        if not is_number(self.threshold) or not self.threshold > 0:
            raise InputError(f"threshold: must be a positive number, got {excerpt(self.threshold)}")


@dataclass(frozen=True)
class Rules:
    memory_fraction: float = 0.8
    nb: int = 256
    lcm_rounding_max_memory_loss: float = 0.02
    max_grid_aspect: float = 4.0
    time_limit_safety: float = 2.0
    time_limit_allowance_s: float = 600.0
    tuning_time_budget_s: float = 3600.0
    algorithm: Algorithm = field(default_factory=Algorithm)
    # (archspec microarchitecture, NB): a mapping in rules.yaml, kept as pairs (hashable, ordered)
    nb_by_microarch: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        table = self.nb_by_microarch
        pairs = tuple(table.items()) if isinstance(table, Mapping) else table
        if not isinstance(pairs, tuple) or not all(isinstance(p, tuple) and len(p) == 2 for p in pairs):
            raise InputError(f"nb_by_microarch: expected a mapping of microarchitecture: NB, got {excerpt(table)}")
        for name, nb in pairs:
            require_count(f"nb_by_microarch.{excerpt(name)}", nb)
        object.__setattr__(self, "nb_by_microarch", tuple((str(name), nb) for name, nb in pairs))
        if not is_number(self.memory_fraction) or not 0 < self.memory_fraction <= 1:
            raise InputError(f"memory_fraction: must be in (0, 1], got {excerpt(self.memory_fraction)}")
        require_positive("nb", self.nb)
        loss = self.lcm_rounding_max_memory_loss
        if not is_number(loss) or not 0 <= loss < 1:
            raise InputError(f"lcm_rounding_max_memory_loss: must be in [0, 1), got {excerpt(loss)}")
        for name, low in (("max_grid_aspect", 1.0), ("time_limit_safety", 1.0), ("time_limit_allowance_s", 0.0),
                          ("tuning_time_budget_s", 1.0)):
            value = getattr(self, name)
            if not is_number(value) or value < low:
                raise InputError(f"{name}: must be a number >= {low:g}, got {excerpt(value)}")

    def nb_for(self, microarch: str) -> tuple[int, str]:
        """(NB, where it comes from): the nb_by_microarch entry of the microarchitecture or of its
        nearest listed archspec ancestor, else `nb`."""
        table = dict(self.nb_by_microarch)
        if table and microarch:
            import archspec.cpu

            target = archspec.cpu.TARGETS.get(microarch)
            for name in [microarch] + ([a.name for a in target.ancestors] if target else []):
                if name in table:
                    return table[name], f"NB {table[name]}: rules' nb_by_microarch {name} ({microarch})"
        return self.nb, f"NB {self.nb}: rules' nb (no nb_by_microarch entry for {microarch or 'this CPU'})"


def load_rules(path: Path | None = None) -> Rules:
    """Deck rules from hpl_decks/rules.yaml (or another file of the same shape)."""
    path = path or paths.HPL_DECKS / "rules.yaml"
    data = loaders.load_yaml(path, "deck rules") or {}
    schema.check(data, "deck_rules.yaml", str(path))
    algorithm = data.pop("algorithm", None) or {}
    try:
        algorithm = Algorithm(**algorithm)
    except InputError as err:
        raise InputError(f"{path}: algorithm.{err}") from None
    try:
        return Rules(algorithm=algorithm, **data)
    except InputError as err:
        raise InputError(f"{path}: {err}") from None


@dataclass(frozen=True)
class DeckRequest:
    nodes: int
    ranks_per_node: int
    memory_per_node: int  # bytes
    threads_per_rank: int = 1
    memory_fraction: float | None = None  # None: from the rules
    nb: int | None = None  # None: from the rules
    max_n: int | None = None  # a cap on N set by a policy other than memory (e.g. a time budget)
    max_n_reason: str = ""
    grid: tuple[int, int] | None = None  # P x Q to use (may leave ranks idle); None: process_grid

    def __post_init__(self) -> None:
        for name in ("nodes", "ranks_per_node", "threads_per_rank"):
            require_count(name, getattr(self, name))
        require_positive("memory_per_node", self.memory_per_node)
        if self.memory_per_node > MAX_MEMORY_PER_NODE:
            raise InputError("memory_per_node: more than 1 EiB per node; check the unit")
        if self.ranks > C_INT_MAX:
            raise InputError(f"ranks: {self.nodes} nodes x {self.ranks_per_node} ranks per node is more than "
                             f"{C_INT_MAX} (MPI counts ranks in a C int)")
        if self.nb is not None:
            require_count("nb", self.nb)
        fraction = self.memory_fraction
        if fraction is not None and (not is_number(fraction) or not 0 < fraction <= 1):
            raise InputError(f"memory_fraction: must be in (0, 1], got {excerpt(fraction)}")
        if self.max_n is not None:
            require_count("max_n", self.max_n)
        if self.grid is not None:
            p, q = self.grid
            require_count("grid P", p)
            require_count("grid Q", q)
            if p * q > self.ranks:
                raise InputError(f"grid: {p}x{q} needs {p * q} ranks, only {self.ranks} requested")

    @property
    def ranks(self) -> int:
        return self.nodes * self.ranks_per_node


@dataclass(frozen=True)
class Deck:
    n: int
    nb: int
    p: int
    q: int
    nodes: int
    ranks_per_node: int
    threads_per_rank: int
    memory_per_node: int
    memory_fraction: float
    n_memory: int  # the N memory alone would give
    n_policy: str  # which rule set N, in words
    algorithm: Algorithm = field(default_factory=Algorithm)

    @property
    def ranks(self) -> int:
        return self.p * self.q

    @property
    def busiest_node_ranks(self) -> int:
        """Ranks of the grid on the node with the most of them: idle ranks are spread over the nodes."""
        return math.ceil(self.ranks / self.nodes)

    @property
    def matrix_capacity(self) -> int:
        """Bytes the matrix may take: memory_fraction of the memory of the node with the most busy
        ranks, times the nodes it takes to hold the grid at that density."""
        return matrix_capacity(self.nodes, self.memory_per_node, self.memory_fraction, self.ranks)

    @property
    def memory_used_fraction(self) -> float:
        """Share of a node's memory the matrix takes on the node with the most busy ranks."""
        # one division of exact integers: no rounding beyond the last bit
        return self.n * self.n * BYTES_PER_DOUBLE * self.busiest_node_ranks / (self.ranks * self.memory_per_node)

    @property
    def idle_ranks(self) -> int:
        return self.nodes * self.ranks_per_node - self.ranks

    def to_json(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if k != "algorithm"}
        data.update(ranks=self.ranks, idle_ranks=self.idle_ranks, memory_used_fraction=round(self.memory_used_fraction, 6),
                    algorithm=asdict(self.algorithm))
        return data

MAX_MEMORY_PER_NODE = 2**60  # 1 EiB: far beyond any node; keeps make_deck's float arithmetic finite


def matrix_capacity(nodes: int, memory_per_node: int, fraction: float, grid_ranks: int) -> int:
    """Bytes an HPL matrix may take on `nodes` nodes when `grid_ranks` ranks hold it evenly and
    the node with the most of them (ceil(grid_ranks / nodes)) may fill `fraction` of its memory."""
    busiest = -(-grid_ranks // nodes)
    return int(memory_per_node * grid_ranks // busiest * fraction)


def n_for_memory(memory_bytes: int, nb: int, p: int, q: int, lcm_max_loss: float) -> int:
    """Largest N (multiple of NB, of NB*lcm(P,Q) when cheap) whose matrix fits memory_bytes."""
    n_fit = math.isqrt(memory_bytes // BYTES_PER_DOUBLE)
    n = n_fit // nb * nb
    step = nb * math.lcm(p, q)
    n_even = n_fit // step * step
    if n_even > 0 and n_even * n_even >= (1 - lcm_max_loss) * n * n:
        return n_even
    return n


@functools.lru_cache(maxsize=64, typed=True)
def _memory_share(fraction: float, memory_per_node: int) -> str:
    """'80% of 256.0 GiB' for the memory policy text: the same for every node count of a sweep."""
    return f"{fraction:.0%} of {format_size(memory_per_node)}"


def make_deck(request: DeckRequest, rules: Rules | None = None) -> Deck:
    rules = rules or Rules()
    nb = request.nb or rules.nb
    fraction = request.memory_fraction or rules.memory_fraction
    p, q = request.grid or process_grid(request.ranks)
    if p * q < request.nodes:
        raise DeckError(f"grid: {p}x{q} has fewer ranks than the {request.nodes} nodes")
    usable = matrix_capacity(request.nodes, request.memory_per_node, fraction, p * q)
    per_rank_block = nb * nb * BYTES_PER_DOUBLE
    if usable < p * q * per_rank_block:
        needed = p * q * per_rank_block / fraction / request.nodes  # inf for a subnormal fraction
        raise DeckError(
            f"memory_per_node: {format_size(request.memory_per_node)} x {fraction:g} cannot hold one "
            f"{nb}x{nb} block per rank for {p * q} ranks"
            + (f" (needs {format_size(math.ceil(needed))}/node)" if math.isfinite(needed) else ""))
    n_memory = n_for_memory(usable, nb, p, q, rules.lcm_rounding_max_memory_loss)
    policy = f"memory: {_memory_share(fraction, request.memory_per_node)}/node x {request.nodes} node(s)"
    n = n_memory
    if n > C_INT_MAX:  # HPL reads N into a C int
        n = C_INT_MAX // nb * nb
        policy = f"HPL's largest N (a C int; memory alone allows N={n_memory})"
    if request.max_n is not None and request.max_n < n:
        n = request.max_n // nb * nb
        policy = f"{request.max_n_reason or 'cap'} (memory alone allows N={n_memory})"
    if n < nb * q:
        raise DeckError(f"N: {n} gives fewer than one {nb}-wide block per process column "
                        f"(grid {p}x{q}); raise the N cap or lower nb")
    return Deck(n=n, nb=nb, p=p, q=q, nodes=request.nodes, ranks_per_node=request.ranks_per_node,
                threads_per_rank=request.threads_per_rank,
                memory_per_node=request.memory_per_node, memory_fraction=fraction,
                n_memory=n_memory, n_policy=policy, algorithm=rules.algorithm)


def with_sizes(deck: Deck, n: int, policy: str | None = None) -> Deck:
    """The same deck at another N (e.g. a strong-scaling N fixed across node counts)."""
    require_count("n", n)
    if n < deck.nb:
        raise DeckError(f"N: {n} is smaller than NB={deck.nb}")
    if n < deck.nb * deck.q:
        raise DeckError(f"N: {n} gives fewer than one {deck.nb}-wide block per process column "
                        f"(grid {deck.p}x{deck.q})")
    if n * n * BYTES_PER_DOUBLE > deck.matrix_capacity:
        raise DeckError(f"N: {n} needs {format_size(n * n * BYTES_PER_DOUBLE)}, more than "
                        f"{deck.memory_fraction:g} of the memory of {deck.nodes} node(s) (largest N {deck.n_memory})")
    return replace(deck, n=n, n_policy=policy or f"fixed N={n} (strong scaling)")


def weak_scaling_n(n1: int, nodes: int, nb: int) -> int:
    """N for `nodes` nodes at the memory per node of N=n1 on one node: the largest multiple of NB
    not above n1 x sqrt(nodes) (the matrix, N^2, grows with the node count)."""
    for name, value in (("n1", n1), ("nodes", nodes), ("nb", nb)):
        require_positive(name, value)
    n = math.isqrt(n1 * n1 * nodes) // nb * nb  # isqrt(n1^2 x nodes) = floor(n1 x sqrt(nodes))
    n = min(n, C_INT_MAX // nb * nb)  # HPL reads N into a C int
    if n == 0:
        raise DeckError(f"N: {n1} x sqrt({nodes}) is smaller than NB={nb}")
    return n


def deck_for_scaling(request: DeckRequest, rules: Rules, mode: str = "weak",
                     fixed_n: int | None = None) -> Deck:
    """The deck of `request` under a scaling law, from N1 = the one-node deck's N (its memory
    policy, or request.max_n read as a one-node cap):
    weak: N = N1 x sqrt(nodes) (constant memory per node); strong: N = N1 at every node count;
    fixed_n: that N everywhere (strong scaling at a chosen size)."""
    check_scaling(mode)
    # N1 comes from one node's memory; on one node that deck is the answer, grid included.
    one_node = make_deck(request if request.nodes == 1 else replace(request, nodes=1, grid=None), rules)
    if request.nodes == 1 and fixed_n is None:
        return replace(one_node, n_policy=f"{mode} scaling: {one_node.n_policy}")
    full = make_deck(replace(request, max_n=None, max_n_reason=""), rules)
    if fixed_n is not None:
        return with_sizes(full, fixed_n, f"strong scaling at fixed N={fixed_n}")
    if mode == "strong":
        return with_sizes(full, one_node.n, f"strong scaling: N of 1 node ({one_node.n_policy})")
    n = weak_scaling_n(one_node.n, request.nodes, full.nb)
    return with_sizes(full, n, f"weak scaling: N1 x sqrt({request.nodes} nodes), "
                               f"N1={one_node.n} from {one_node.n_policy}")


# --- HPL operation count and time model -------------------------------------------------------

def hpl_flops(n: int) -> float:
    """Floating-point operations HPL credits for one solve of order N."""
    return 2.0 / 3.0 * n**3 + 1.5 * n**2


def predicted_seconds(n: int, gflops: float) -> float:
    return hpl_flops(n) / (gflops * 1e9)


def largest_n_within(seconds: float, gflops: float) -> int:
    """Largest N whose predicted solve time at `gflops` is at most `seconds`."""
    if not seconds > 0 or not gflops > 0:
        raise InputError(f"time budget and expected Gflop/s must be positive ({seconds}, {gflops})")
    n = (seconds * gflops * 1e9 * 1.5) ** (1 / 3)
    if not n < C_INT_MAX:  # inf for a budget of 1e308 s: N is then HPL's largest anyway
        return C_INT_MAX
    n = int(n)
    while n > 1 and predicted_seconds(n, gflops) > seconds:
        n -= 1
    return n


# --- writers ----------------------------------------------------------------------------------

# Limits of HPL's input reader (HPL 2.x include/hpl_ptest.h, testing/ptest/HPL_pdinfo.c):
# - every list line (Ns, NBs, Ps/Qs, PFACTs, NBMINs, NDIVs, RFACTs, BCASTs, DEPTHs) holds 1 to
#   HPL_MAX_PARAM = 20 values;
# - each line is read with fgets(line, HPL_LINE_MAX - 2, ...), HPL_LINE_MAX = 256: at most 253
#   characters including the newline, or the rest of the line is read as the next line;
# - list values are split with `lineptr += strlen(num) + 1`: a list starts in the first column
#   with ONE space between values;
# - N >= 0, NB >= 1, P >= 1, Q >= 1, NBMIN >= 1, NDIV >= 2, DEPTH >= 0.
# xhpl stops on a violation; hpcc's copy of HPL_pdinfo silently runs its built-in defaults instead.
HPL_MAX_PARAM = 20
HPL_LINE_MAX = 256
_MAX_LINE_CHARS = HPL_LINE_MAX - 3  # fgets(line, 254, ...) keeps 253 characters, newline included


def _check_count(label: str, count: int) -> None:
    if not 1 <= count <= HPL_MAX_PARAM:
        raise DeckError(f"{label}: {count} values; HPL reads 1 to {HPL_MAX_PARAM} per line "
                        f"(HPL_MAX_PARAM in HPL's hpl_ptest.h)")


def _check_ints(label: str, values: tuple[Any, ...], minimum: int) -> None:
    _check_count(label, len(values))
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= C_INT_MAX:
            raise DeckError(f"{label}: {excerpt(value)} is not an integer from {minimum} to {C_INT_MAX} "
                            "(HPL reads it into a C int and rejects it)")


def _check_names(label: str, values: tuple[Any, ...], table: dict[str, int]) -> None:
    _check_count(label, len(values))
    for value in values:
        if not isinstance(value, str) or value not in table:
            raise DeckError(f"{label}: {excerpt(value)} is not one of {', '.join(table)}")


def hpl_dat_lists(*, ns: Sequence[int], nbs: Sequence[int], grids: Sequence[tuple[int, int]],
                  algorithm: Algorithm, pfacts: Sequence[str] | None = None,
                  nbmins: Sequence[int] | None = None, ndivs: Sequence[int] | None = None,
                  rfacts: Sequence[str] | None = None, bcasts: Sequence[str] | None = None,
                  depths: Sequence[int] | None = None, output_file: str = "HPL.out",
                  device: int = 6) -> str:
    """HPL.dat for xhpl (HPL 2.x), with lists where HPL takes lists; xhpl runs every combination.

    The one writer of HPL.dat text: `hpl_dat` passes one value per list. A list left as None
    holds the single value of `algorithm`; PMAP, threshold, SWAP and the lines after it always
    come from `algorithm`. DeckError when HPL would reject (or, in hpcc, silently replace) the deck.
    """
    a = algorithm
    n_list, nb_list, grid_list = tuple(ns), tuple(nbs), tuple(grids)
    pf_list = tuple(pfacts) if pfacts is not None else (a.pfact,)
    nbmin_list = tuple(nbmins) if nbmins is not None else (a.nbmin,)
    ndiv_list = tuple(ndivs) if ndivs is not None else (a.ndiv,)
    rf_list = tuple(rfacts) if rfacts is not None else (a.rfact,)
    bc_list = tuple(bcasts) if bcasts is not None else (a.bcast,)
    depth_list = tuple(depths) if depths is not None else (a.depth,)
    _check_ints("Ns", n_list, 0)
    _check_ints("NBs", nb_list, 1)
    _check_count("grids", len(grid_list))
    for grid in grid_list:
        if len(grid) != 2:
            raise DeckError(f"grids: {excerpt(grid)} is not a (P, Q) pair")
    _check_ints("Ps", tuple(p for p, _ in grid_list), 1)
    _check_ints("Qs", tuple(q for _, q in grid_list), 1)
    _check_names("PFACTs", pf_list, _PFACT)
    _check_ints("NBMINs", nbmin_list, 1)
    _check_ints("NDIVs", ndiv_list, 2)
    _check_names("RFACTs", rf_list, _PFACT)
    _check_names("BCASTs", bc_list, _BCAST)
    _check_ints("DEPTHs", depth_list, 0)
    # HPL takes the first word of line 3 as the file name and line 4 as an int: nothing else may ride along.
    if not isinstance(output_file, str) or not output_file or any(
            c.isspace() or not c.isprintable() for c in output_file):
        raise DeckError(f"output file: {excerpt(output_file)} must be one word (HPL reads the first word of its line)")
    if isinstance(device, bool) or not isinstance(device, int) or device < 0:
        raise DeckError(f"device: {excerpt(device)} is not an integer >= 0 (6 = stdout, 7 = stderr, else the file)")

    def joined(values: Sequence[Any]) -> str:
        return " ".join(str(v) for v in values)

    lines = [
        ("HPLinpack benchmark input file", None),
        ("Innovative Computing Laboratory, University of Tennessee (written by scalebench)", None),
        (output_file, "output file name (if any)"),
        (device, "device out (6=stdout,7=stderr,file)"),
        (len(n_list), "# of problems sizes (N)"),
        (joined(n_list), "Ns"),
        (len(nb_list), "# of NBs"),
        (joined(nb_list), "NBs"),
        (_PMAP[a.pmap], "PMAP process mapping (0=Row-,1=Column-major)"),
        (len(grid_list), "# of process grids (P x Q)"),
        (joined([p for p, _ in grid_list]), "Ps"),
        (joined([q for _, q in grid_list]), "Qs"),
        (a.threshold, "threshold"),
        (len(pf_list), "# of panel fact"),
        (joined([_PFACT[v] for v in pf_list]), "PFACTs (0=left, 1=Crout, 2=Right)"),
        (len(nbmin_list), "# of recursive stopping criterium"),
        (joined(nbmin_list), "NBMINs (>= 1)"),
        (len(ndiv_list), "# of panels in recursion"),
        (joined(ndiv_list), "NDIVs"),
        (len(rf_list), "# of recursive panel fact."),
        (joined([_PFACT[v] for v in rf_list]), "RFACTs (0=left, 1=Crout, 2=Right)"),
        (len(bc_list), "# of broadcast"),
        (joined([_BCAST[v] for v in bc_list]), "BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)"),
        (len(depth_list), "# of lookahead depth"),
        (joined(depth_list), "DEPTHs (>=0)"),
        (_SWAP[a.swap], "SWAP (0=bin-exch,1=long,2=mix)"),
        (a.swap_threshold, "swapping threshold"),
        (0 if a.l1_transposed else 1, "L1 in (0=transposed,1=no-transposed) form"),
        (0 if a.u_transposed else 1, "U  in (0=transposed,1=no-transposed) form"),
        (1 if a.equilibration else 0, "Equilibration (0=no,1=yes)"),
        (a.alignment, "memory alignment in double (> 0)"),
    ]
    text = [f"{value}\n" if comment is None else f"{str(value):<12} {comment}\n"
            for value, comment in lines]
    for number, line in enumerate(text, 1):
        if len(line) > _MAX_LINE_CHARS:
            raise DeckError(f"HPL.dat line {number} ({lines[number - 1][1]}): {len(line)} characters, "
                            f"HPL reads at most {_MAX_LINE_CHARS} (HPL_LINE_MAX - 3)")
    return "".join(text)


def rewrite_hpl_dat(text: str, *, ns: Sequence[int] | None = None,
                    grids: Sequence[tuple[int, int]] | None = None) -> str:
    """A written HPL.dat (a reference deck) with other Ns or process grids and every other line as it
    is: a published deck run at a size and on the ranks a machine has. DeckError when the text is no
    HPL.dat or a value is one HPL rejects."""
    lines = text.splitlines(keepends=True)
    if len(lines) < 31 or not lines[0].startswith("HPLinpack"):
        raise DeckError("not an HPL.dat: expected 31 lines or more, the first 'HPLinpack benchmark input file'")

    def put(index: int, values: Sequence[int], replaced: int) -> None:
        """Line `index` with `values` in place of its first `replaced` words; its label kept."""
        label = re.sub(r"^\s*(?:\S+\s+){%d}" % replaced, "", lines[index])
        lines[index] = f"{' '.join(str(v) for v in values):<12} {label}"

    def count(index: int) -> int:
        try:
            return int(lines[index].split()[0])
        except (IndexError, ValueError):
            raise DeckError(f"HPL.dat line {index + 1}: no count ({excerpt(lines[index])})") from None

    if ns is not None:
        _check_count("Ns", len(ns))
        _check_ints("Ns", tuple(ns), 0)
        put(5, ns, count(4))
        put(4, [len(ns)], 1)
    if grids is not None:
        _check_count("grids", len(grids))
        _check_ints("Ps", tuple(p for p, _ in grids), 1)
        _check_ints("Qs", tuple(q for _, q in grids), 1)
        put(10, [p for p, _ in grids], count(9))
        put(11, [q for _, q in grids], count(9))
        put(9, [len(grids)], 1)
    return "".join(lines)


def check_trials(name: str, trials: Any) -> int:
    """Solves of one deck: HPL.dat lists its N once per solve, at most HPL_MAX_PARAM times."""
    if require_positive(name, trials) > HPL_MAX_PARAM:
        raise InputError(f"{name}: {trials} solves; HPL.dat lists at most {HPL_MAX_PARAM} Ns")
    return trials


def hpl_dat(deck: Deck, output_file: str = "HPL.out", device: int = 6, trials: int = 1) -> str:
    """HPL.dat for xhpl (HPL 2.x): one NB, one grid, one of each algorithm choice, and N listed
    `trials` times: HPL solves it that often in one run, and Rmax is the best of them."""
    require_positive("trials", trials)
    return hpl_dat_lists(ns=(deck.n,) * trials, nbs=(deck.nb,), grids=((deck.p, deck.q),),
                         algorithm=deck.algorithm, output_file=output_file, device=device)


# hpccinf.txt lines 32-36: PTRANS sizes (none beyond HPL's own Ns and NBs).
HPCCINF_PTRANS_LINES = (
    "##### This line (no. 32) is ignored (it serves as a separator). ######\n"
    "0                               Number of additional problem sizes for PTRANS\n"
    "0                               values of N\n"
    "0                               number of additional blocking sizes for PTRANS\n"
    "0                               values of NB\n"
)


def hpccinf_txt(deck: Deck, trials: int = 1) -> str:
    """hpccinf.txt for hpcc: HPL.dat lines 1-31, then PTRANS sizes (none beyond HPL's own N)."""
    return hpl_dat(deck, trials=trials) + HPCCINF_PTRANS_LINES
