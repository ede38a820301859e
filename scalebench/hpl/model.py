"""HPL's scalability model: the time, Rmax and efficiency of a planned HPL case, and which loss
dominates it.

Source: A. Petitet, R. C. Whaley, J. Dongarra, A. Cleary, "HPL Scalability Analysis", the
`scalability.html` page of the HPL distribution (netlib.org/benchmark/hpl/scalability.html). With g
the time per flop of one rank's matrix-matrix multiply, a the latency and b the time per 8-byte word
of the link, the solve of order N on a P x Q grid with block NB takes

    T = 2 g N^3 / (3 P Q) + b N^2 (3P + Q) / (2 P Q) + a N ((NB + 1) log2 P + P) / NB

(`published_time`). The b term is the panel broadcast along a process row, b N^2 / (2P), plus the
row swap and U broadcast along a process column, 3 b N^2 / (2Q); the a term is the panel
factorisation's exchanges, N log2 P, the broadcast, N / NB, and the update, N (log2 P + P - 1) / NB.
No communication overlaps computation (HPL's look-ahead is not modelled).

What `predict` adds to it, and why (scripts/bench/model_lab.py prints the published and the refined
prediction side by side against measured runs; docs/prediction.md):
- the grid's empty directions cost nothing: a 1 x Q grid swaps rows inside each process (no U
  broadcast), a P x 1 grid broadcasts no panel. The published sum charges 3 b N^2 / (2Q) even at
  P = 1, which more than doubles the communication of the 1 x 2 grid of two nodes. Kept: the lab's
  2-node runs (1 x 2) follow the exact terms;
- the rate a rank computes at is calibrated (`RankRate`): the DGEMM rate the published model
  assumes, or the per-rank rate of a measured HPL without network (HPL's own overheads included);
  with no communication the prediction is then that run's efficiency. Where a job timed DGEMM on
  every rank at once, `rate_at_dgemm` carries the rate to it by the ratio of the two DGEMMs (the
  report: each job's DGEMM ceiling; the lab: the DGEMM the job timed before its solves, since its nodes
  share this machine's cores and one rank alone runs at a clock the busy job does not get);
- the network under load (`Link.share`): the bandwidth each node gets while all nodes communicate
  falls with the node count as (nodes / 2) ** -k, k fitted from measured loaded bandwidths (hpcc's
  randomly ordered rings at two node counts or more) or the fabric class's default
  (site_configs/fabric_load.yaml). Kept: on the lab's 10GbE, whose TCP is CPU-bound, four nodes
  time-sharing two cores keep a fraction of the pair's bandwidth (docs/prediction.md), and the ring
  measures it. The latency under load was tried the same way and is not kept: its term stays about 1%
  of the lab's 4-node runs (docs/prediction.md);
- the swap and broadcast of U as HPL's long variant moves it (spread, then roll: HPL_pdlaswp01T),
  where the published 3 b N^2 / (2Q) counts one U for the spread and two for the roll, one direction
  after the other, as for many process rows: the spread sends the (P - 1) / P of U whose pivot rows
  lie elsewhere, and the roll exchanges the (P - 1) / P a process lacks with its neighbours, both
  directions at once (`Link.exchange_share`: the part of the pair's bandwidth each direction keeps
  while two nodes send to each other, hpcc's ring on two one-rank nodes; unmeasured, one direction
  after the other as the page counts it). The column phase costs (P - 1) / P (1 + 1 / share) N^2 / (2Q)
  words: at P = 2 with the lab's exchange (half each way) 1.5 where the page has 3. With it the panel
  factorisation's pivot exchanges, which the page's own per-phase sum has (N log2 P exchanges of
  2 NB + 4 words) and its summed formula drops as of lower order: at the lab's 34 panels of 384 they
  are a fifth of the panel broadcast. Kept: on the lab's 100 Mbit/s link 4 nodes (2 x 2) solved in
  96 s where the page's communication alone was 114 s (its column phase 85 s), this model's 84 s
  (docs/prediction.md);
- ranks of a node share its link (`Case.flows`): in the column phase every rank of the node
  exchanges with its column's ranks on other nodes at once; a process row inside one node broadcasts
  without it. This is the accounting of a per-node figure on per-rank terms, not a fitted
  refinement: the lab's nodes have one core each and cannot test it;
- ranks sharing cores (`Case.ranks_per_core` > 1: the lab's four one-rank nodes on two cores, never
  a planned partition) compute that much slower (the lab's target takes it from the job's DGEMM).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from scalebench import loaders, paths
from scalebench.errors import InputError
from scalebench.hpl.deck import BYTES_PER_DOUBLE, hpl_flops
from scalebench.validation import excerpt, is_number

LOSSES = ("compute", "bandwidth", "latency")
LOAD_FILE = paths.SITE_CONFIGS / "fabric_load.yaml"
MAX_LOAD_EXPONENT = 2.0  # a per-node bandwidth falling faster than 1/n^2 is no network, but an error


@dataclass(frozen=True)
class RankRate:
    """What one rank computes at: Gflop/s, and where that figure comes from."""

    gflops: float
    source: str
    of_peak: float | None = None  # the share of its own cores' Rpeak the measured rank reached

    def __post_init__(self) -> None:
        if not is_number(self.gflops) or not 0 < self.gflops < 1e9:
            raise InputError(f"rank rate ({self.source}): {excerpt(self.gflops)} Gflop/s is no rate of one rank")

    def for_case(self, case: Case) -> RankRate:
        """The rate of one of `case`'s ranks: a measured rank's share of its Rpeak carries over to
        another number of threads or another clock; a given rate is taken as it is."""
        if self.of_peak is None:
            return self
        rank_peak = case.rpeak_gflops / (case.nodes * case.ranks_per_node)
        return RankRate(self.of_peak * rank_peak, f"{self.source}: {self.of_peak:.1%} of a rank's Rpeak", self.of_peak)


@dataclass(frozen=True)
class Link:
    """One node's link as the model sees it: small-message latency (s), bandwidth of one pair
    (bytes/s, one direction: a ping-pong's), and how the bandwidth falls under all-node load."""

    latency_s: float
    bandwidth_bps: float
    load_exponent: float = 0.0
    source: str = ""
    # each direction's part of the pair bandwidth while two nodes send to each other at once; None:
    # unmeasured, one direction after the other (the published count)
    exchange_share: float | None = None

    def __post_init__(self) -> None:
        if not is_number(self.latency_s) or not 0 <= self.latency_s < 1.0:
            raise InputError(f"latency ({self.source}): {excerpt(self.latency_s)} s is not in [0, 1) s")
        perfect = self.bandwidth_bps == math.inf  # a what-if: no bandwidth term at all
        if not perfect and (not is_number(self.bandwidth_bps) or not self.bandwidth_bps >= 1e3):
            raise InputError(f"bandwidth ({self.source}): {excerpt(self.bandwidth_bps)} bytes/s is no link's")
        if self.exchange_share is not None and (not is_number(self.exchange_share) or not 0 < self.exchange_share <= 1):
            raise InputError(f"exchange share ({self.source}): {excerpt(self.exchange_share)} is not in (0, 1]: "
                             f"the part of the pair's bandwidth each direction keeps in an exchange")
        if not is_number(self.load_exponent) or not 0 <= self.load_exponent <= MAX_LOAD_EXPONENT:
            raise InputError(f"load exponent ({self.source}): {excerpt(self.load_exponent)} is not in "
                             f"[0, {MAX_LOAD_EXPONENT:g}]")

    def share(self, nodes: int) -> float:
        """The part of the pair bandwidth each node keeps while all `nodes` communicate."""
        return 1.0 if nodes <= 2 else (nodes / 2) ** -self.load_exponent

    @property
    def exchange_factor(self) -> float:
        """How many one-way word times a word of a simultaneous exchange takes: 1 full duplex, 2 (the
        published count, and the default) one direction after the other."""
        return 2.0 if self.exchange_share is None else 1 / self.exchange_share

    def word_time(self, nodes: int, flows: float = 1.0) -> float:
        """Seconds per 8-byte word of a rank whose traffic each node's link carries `flows` times
        (ranks sharing it), under load."""
        return BYTES_PER_DOUBLE * flows / (self.bandwidth_bps * self.share(nodes))


@dataclass(frozen=True)
class Case:
    """The geometry of one solve, as the plan or a run report gives it."""

    n: int
    nb: int
    p: int
    q: int
    nodes: int
    ranks_per_node: int  # busy ranks on the fullest node
    rpeak_gflops: float  # of the cores the job uses
    ranks_per_core: float = 1.0  # > 1 only where ranks time-share cores (the lab, never a plan)

    def __post_init__(self) -> None:
        for name in ("n", "nb", "p", "q", "nodes", "ranks_per_node"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"HPL case: {name} must be a positive integer, got {excerpt(value)}")
        if not is_number(self.rpeak_gflops) or not self.rpeak_gflops > 0:
            raise InputError(f"HPL case: Rpeak must be positive, got {excerpt(self.rpeak_gflops)}")
        if not is_number(self.ranks_per_core) or not 1 <= self.ranks_per_core < 1e6:
            raise InputError(f"HPL case: ranks per core must be >= 1, got {excerpt(self.ranks_per_core)}")

    @classmethod
    def from_plan(cls, plan: Any) -> Case:
        """The case of a scalebench.hpl.case_plan.HplPlan: its deck, nodes, busy ranks per node and Rpeak."""
        deck, job = plan.deck, plan.job
        return cls(deck.n, deck.nb, deck.p, deck.q, job.nodes, job.tasks_per_node, plan.rpeak_gflops)

    @property
    def ranks(self) -> int:
        return self.p * self.q

    @property
    def flows(self) -> tuple[float, float]:
        """How many times each node's link carries a rank's traffic, in the row broadcast and in the
        column phase. Ranks are row-major, so a node holds ranks_per_node / Q consecutive process rows
        (a part of one when below 1). A row within a node broadcasts without the link; a row across
        nodes crosses each node's link once per pipelined broadcast. In the column phase every rank
        of the node exchanges with the other P - 1 ranks of its column, those on other nodes through
        the link, all at once. On one node everything is on the node's own link (shared memory)."""
        if self.nodes == 1:
            return 1.0, 1.0
        rows_on_node = self.ranks_per_node / self.q
        row = 0.0 if rows_on_node >= 1 else 1.0
        if self.p == 1:
            return row, 0.0
        on_node = min(self.p, max(1, math.floor(rows_on_node))) - 1
        return row, self.ranks_per_node * (1 - on_node / (self.p - 1))

    @property
    def pivot_flows(self) -> float:
        """How many times each node's link carries a rank's pivot exchanges: only the panel's process
        column factors it, one of its ranks per process row on the node (a node holding part of a row
        holds at most one). On one node, its own link as every flow."""
        column = self.flows[1]
        return column if self.nodes == 1 else column * max(1 / self.ranks_per_node, 1 / self.q)


@dataclass(frozen=True)
class Terms:
    """Seconds of one solve by what they are spent on."""

    compute_s: float
    bandwidth_s: float
    latency_s: float

    @property
    def total_s(self) -> float:
        return self.compute_s + self.bandwidth_s + self.latency_s


@dataclass(frozen=True)
class Prediction:
    case: Case
    terms: Terms
    rate: RankRate
    link: Link | None  # None: one rank, nothing to communicate

    @property
    def time_s(self) -> float:
        return self.terms.total_s

    @property
    def rmax_gflops(self) -> float:
        return hpl_flops(self.case.n) / self.time_s / 1e9

    @property
    def efficiency(self) -> float:
        """Rmax / Rpeak, as a fraction."""
        return self.rmax_gflops / self.case.rpeak_gflops

    @property
    def losses(self) -> dict[str, float]:
        """The efficiency lost to each term, as fractions of Rpeak: they and the efficiency sum to 1.
        Compute loses what the rank rate misses of Rpeak (can be negative above a nominal Rpeak)."""
        at_peak = hpl_flops(self.case.n) / (self.case.rpeak_gflops * 1e9)
        total = self.time_s
        return {"compute": (self.terms.compute_s - at_peak) / total, "bandwidth": self.terms.bandwidth_s / total,
                "latency": self.terms.latency_s / total}

    @property
    def dominant_loss(self) -> str:
        losses = self.losses
        return max(LOSSES, key=lambda name: losses[name])

    def to_json(self) -> dict[str, Any]:
        return {"time_s": round(self.time_s, 3), "rmax_gflops": round(self.rmax_gflops, 3),
                "efficiency": round(100 * self.efficiency, 2), "dominant_loss": self.dominant_loss,
                "losses": {k: round(100 * v, 2) for k, v in self.losses.items()}}


def compute_time(case: Case, rate: RankRate) -> float:
    """The solve's flops over the ranks at the rank rate (slower where ranks share cores)."""
    return hpl_flops(case.n) / (case.ranks * rate.gflops * 1e9) * case.ranks_per_core


def communication(case: Case, link: Link) -> tuple[float, float]:
    """(bandwidth seconds, latency seconds) of the refined model: only the grid's real directions
    communicate, each node's link shared by the flows through it and thinned by the load; the column
    phase as HPL's spread and roll move U, with the panel factorisation's pivot exchanges."""
    n, nb, p, q = case.n, case.nb, case.p, case.q
    row_flows, column_flows = case.flows
    row_word = link.word_time(case.nodes, row_flows)
    column_word = link.word_time(case.nodes, column_flows)
    bandwidth = n * n / (2 * p) * row_word if q > 1 else 0.0
    if p > 1:
        spread_roll = (p - 1) / p * (1 + link.exchange_factor)  # the page's 3 at large P, one way at a time
        bandwidth += spread_roll * n * n / (2 * q) * column_word
        pivots = n * math.log2(p) * (2 * nb + 4)  # the longer message of each exchange
        bandwidth += pivots * link.exchange_factor * link.word_time(case.nodes, case.pivot_flows)
    panels = n / nb
    alpha = link.latency_s
    latency = alpha * n * math.log2(p)  # panel factorisation: log2 P exchanges per column
    latency += alpha * panels if q > 1 else 0.0  # broadcast
    latency += alpha * panels * (math.log2(p) + p - 1)  # update (0 at P = 1)
    return bandwidth, latency


def predict(case: Case, rate: RankRate, link: Link | None) -> Prediction:
    """The refined model's prediction; `link` may be None only for one rank."""
    compute = compute_time(case, rate)
    if case.ranks == 1:
        return Prediction(case, Terms(compute, 0.0, 0.0), rate, link)
    if link is None:
        raise InputError(f"HPL case on {case.ranks} ranks: no link figures to predict its communication")
    bandwidth, latency = communication(case, link)
    return Prediction(case, Terms(compute, bandwidth, latency), rate, link)


def published_time(case: Case, rate: RankRate, link: Link) -> Terms:
    """The page's formula as printed, for comparison: a one-rank-per-node, unloaded link."""
    n, nb, p, q = case.n, case.nb, case.p, case.q
    word = BYTES_PER_DOUBLE / link.bandwidth_bps
    return Terms(compute_time(case, rate), word * n * n * (3 * p + q) / (2 * p * q),
                 link.latency_s * n * ((nb + 1) * math.log2(p) + p) / nb)


def published(case: Case, rate: RankRate, link: Link) -> Prediction:
    return Prediction(case, published_time(case, rate, link), rate, link)


# --- calibration ------------------------------------------------------------------------------------

def rate_from_run(case: Case, rmax_gflops: float, link: Link | None, source: str) -> RankRate:
    """The rank rate that makes the model reproduce a measured run: the run's time less its
    predicted communication, over its flops per rank."""
    if not is_number(rmax_gflops) or not rmax_gflops > 0:
        raise InputError(f"{source}: Rmax {excerpt(rmax_gflops)} Gflop/s cannot calibrate a rank rate")
    time = hpl_flops(case.n) / (rmax_gflops * 1e9)
    communicating = 0.0
    if case.ranks > 1 and link is not None:
        communicating = sum(communication(case, link))
    computing = time - communicating
    if not computing > 0.05 * time:  # the model puts nearly all of the run into communication
        raise InputError(f"{source}: its communication as the link predicts it ({communicating:.3g} s) leaves "
                         f"no time to compute in its {time:.3g} s: the link figures do not fit this run")
    per_rank = hpl_flops(case.n) / case.ranks * case.ranks_per_core / computing / 1e9
    return RankRate(per_rank, source)


def rate_at_dgemm(rate: RankRate, base_dgemm: float, dgemm: float, source: str) -> RankRate:
    """`rate`, calibrated on a run whose ranks' DGEMM ran at `base_dgemm`, for ranks whose DGEMM runs at
    `dgemm` (Gflop/s per rank, every rank of each run busy at once): HPL's share of DGEMM carries over;
    the clock, and the share of a core each rank gets, come with the DGEMM."""
    for name, value in (("calibrating run's", base_dgemm), ("job's", dgemm)):
        if not is_number(value) or not 0 < value < 1e9:
            raise InputError(f"{source}: the {name} DGEMM {excerpt(value)} Gflop/s per rank is no rate")
    return RankRate(rate.gflops * dgemm / base_dgemm, f"{rate.source}, {source}")


def fit_load_exponent(points: Sequence[tuple[int, float]], pair_bps: float) -> float | None:
    """k of a per-node bandwidth falling as (n / 2) ** -k under all-node load, from loaded per-node
    bandwidths (nodes, bytes/s): the log-log slope over two node counts or more, else one count
    above 2 against the pair's bandwidth; None without either. Clipped to [0, MAX]: a bandwidth that
    rises with load is noise, not a network."""
    usable = [(n, b) for n, b in points if n >= 2 and b > 0]
    counts = {n for n, _ in usable}
    if len(counts) >= 2:
        xs = [math.log(n / 2) for n, _ in usable]
        ys = [math.log(b) for _, b in usable]
        mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
        k = -sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sum((x - mean_x) ** 2 for x in xs)
    elif counts and max(counts) > 2 and pair_bps > 0:
        n = max(counts)
        k = sum(math.log(pair_bps / b) for m, b in usable) / len(usable) / math.log(n / 2)
    else:
        return None
    return min(max(k, 0.0), MAX_LOAD_EXPONENT)


def fit_load_from_runs(runs: Sequence[tuple[Case, float, RankRate]], link: Link) -> float | None:
    """k that best reproduces measured efficiencies (fractions) of runs on more than 2 nodes, each with
    its rank rate, in relative least squares over [0, MAX] (a coarse grid, then a finer one around its
    best); None without such a run. For extrapolating a few measured scales to many, never to judge
    those runs."""
    usable = [(case, measured, rate) for case, measured, rate in runs if case.nodes > 2 and measured > 0]
    if not usable:
        return None

    def error(k: float) -> float:
        loaded = replace(link, load_exponent=k)
        return sum(((predict(case, rate, loaded).efficiency - measured) / measured) ** 2
                   for case, measured, rate in usable)

    best = min((i * MAX_LOAD_EXPONENT / 40 for i in range(41)), key=error)
    step = MAX_LOAD_EXPONENT / 40
    return min((max(0.0, min(MAX_LOAD_EXPONENT, best + step * (i / 20 - 1))) for i in range(41)), key=error)


@dataclass(frozen=True)
class FabricLoad:
    name: str
    exponent: float
    basis: str  # what the default rests on, as the file says


@functools.lru_cache(maxsize=None)
def fabric_loads(path: Path = LOAD_FILE) -> dict[str, FabricLoad]:
    """The default load exponent of each fabric class (site_configs/fabric_load.yaml)."""
    from scalebench.site.fabric import fabric_classes

    data = loaders.load_yaml(path, "fabric load defaults") or {}
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping of fabric class to {{exponent, basis}}")
    known = fabric_classes()
    out = {}
    for name, entry in data.items():
        where = f"{path}: {name}"
        if name not in known:
            raise InputError(f"{where}: no fabric class of fabric_floors.yaml ({', '.join(known)})")
        if not isinstance(entry, dict) or set(entry) != {"exponent", "basis"}:
            raise InputError(f"{where}: expected exactly exponent and basis")
        exponent = entry["exponent"]
        if not is_number(exponent) or not 0 <= exponent <= MAX_LOAD_EXPONENT:
            raise InputError(f"{where}.exponent: must be a number in [0, {MAX_LOAD_EXPONENT:g}], got {excerpt(exponent)}")
        if not isinstance(entry["basis"], str) or not entry["basis"].strip():
            raise InputError(f"{where}.basis: say what the default rests on")
        out[str(name)] = FabricLoad(str(name), float(exponent), entry["basis"].strip())
    missing = sorted(set(known) - set(out))
    if missing:
        raise InputError(f"{path}: no load default for fabric class(es) {', '.join(missing)}")
    return out


def default_load(fabric: str | None) -> tuple[float, str]:
    """(exponent, where it comes from) for a stack's declared fabric class; 0 for none declared."""
    if not fabric:
        return 0.0, "no fabric class declared: no fall under load"
    load = fabric_loads()[fabric]
    return load.exponent, f"fabric class {fabric}'s default load exponent {load.exponent:g} ({LOAD_FILE.name})"


def with_load(link: Link, exponent: float, source: str) -> Link:
    return replace(link, load_exponent=exponent, source=f"{link.source}; {source}" if link.source else source)


# --- what a committee can quote ---------------------------------------------------------------------

def _step(value: float) -> int:
    """Percent, down to a multiple of 5."""
    return int(math.floor(value * 100 / 5) * 5)


def summary_sentence(label: str, points: Mapping[int, float]) -> str:
    """One sentence on a predicted efficiency curve (nodes -> fraction), e.g. 'openmpi-tcp: 84% at
    2 nodes, 67% at 36; holds >= 80% to 4 nodes, below 70% from 24 nodes'."""
    if not points:
        return f"{label}: nothing predicted"
    nodes = sorted(points)
    first, last = nodes[0], nodes[-1]
    text = f"{label}: {points[first]:.0%} at {first} node{'s' * (first > 1)}"
    if len(nodes) == 1:
        return text
    text += f", {points[last]:.0%} at {last}"
    lowest = min(points.values())
    if points[first] - lowest < 0.05:
        return f"{text}; holds >= {_step(lowest)}% to {last} nodes"
    high = _step(points[first])
    held = max((n for n in nodes if all(points[m] >= high / 100 for m in nodes if m <= n)), default=first)
    low = high - 10
    below = next((n for n in nodes if points[n] < low / 100), None)
    text += f"; holds >= {high}% to {held} node{'s' * (held > 1)}"
    if below is not None:
        text += f", below {low}% from {below} nodes"
    return text


@dataclass(frozen=True)
class Calibration:
    """A rank rate and the links (inter-node, intra-node) for one stack, each with its source."""

    rate: RankRate | None
    inter: Link | None
    intra: Link | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def link_for(self, nodes: int) -> Link | None:
        return self.inter if nodes > 1 else self.intra

    def missing(self, case: Case) -> str:
        """Why `case` cannot be predicted with this calibration; '' when it can."""
        if self.rate is None:
            return "no rank rate (a 1-node HPL, the DGEMM ceiling, or --dgemm-gflops)"
        if case.ranks > 1 and self.link_for(case.nodes) is None:
            if case.nodes > 1:
                return "no inter-node latency and bandwidth (NetPIPE, OSU or hpcc ping-pong; or --latency-us and " \
                       "--bandwidth-gbs)"
            # --latency-us and --bandwidth-gbs are the link between nodes: within one, only a measurement
            return "no intra-node latency and bandwidth (NetPIPE, OSU or hpcc ping-pong within the node)"
        return ""
