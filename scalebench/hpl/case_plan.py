"""The plan of one HPL case: job geometry, process grid, idle ranks, N, NB, memory, predicted time,
time limit, BLAS environment and the provenance strings every result carries.

`plan_hpl` is the one owner of these decisions. The HPL check applies its plan as it is, and
`scalebench plan` prints the same plans without Slurm or MPI, so a plan and its job never disagree.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Mapping

from scalebench import paths
from scalebench.errors import DeckError, InputError
from scalebench.hpl import blas, deck
from scalebench.hpl.binaries import BinaryProfile, profile_for
from scalebench.hpl.deck import Deck, DeckRequest, Rules
from scalebench.hpl.frozen import FrozenDeck, base_rules, frozen_deck
from scalebench.hpl.grid import grid_choice
from scalebench.hpl.tune import SweepDeck, sweep_deck, sweep_hpccinf_txt, sweep_hpl_dat
from scalebench.knobs import knob
from scalebench.programs import missing_binary, resolve_binary
from scalebench.site.blas import FLEXIBLAS, stack_blas, threads_variables
from scalebench.site.jobs import JobPlan, LeftOut, job_plan
from scalebench.site.partition import PartitionSpec, Reservation, StackSpec
from scalebench.site.scales import Scale, check_scaling, node_scale
from scalebench.units import format_duration, format_size, parse_slurm_size
from scalebench.validation import is_number, require_positive


@dataclass(frozen=True)
class HplSettings:
    """The knobs of an HPL case (the HPL checks' variables, plan's -S names); None takes the partition's
    or the rules'."""

    scaling: str = knob("weak", recorded=True)  # weak: N1 x sqrt(nodes); strong: N1 at every node count
    fixed_n: int | None = knob(None)  # strong scaling at this N
    nb: int | None = knob(None)
    memory_fraction: float | None = knob(None)
    threads_per_rank: int | None = knob(None, recorded=True)  # None: partition hpl_threads_per_rank, else 1
    # None: partition hpl_ranks_per_node (whole nodes), else fill the cores
    ranks_per_node: int | None = knob(None, recorded=True)
    time_budget_s: float | None = knob(None)  # None: partition hpl_time_budget_s, else memory alone sizes N
    expected_efficiency: float = knob(0.75)  # Rmax/Rpeak assumed when sizing N and predicting times
    # Solves of the deck (Rmax is the best); None: partition hpl_trials, else 1
    trials: int | None = knob(None, recorded=True)
    hpl_binary: str = knob("")  # '' = the stack's hpl_binary, else xhpl
    decks_dir: Path = knob(paths.HPL_DECKS)  # where frozen decks are looked up
    profile: str = ""  # '' = the stack's hpl_profile, else named after the binary

    def __post_init__(self) -> None:
        check_scaling(self.scaling)
        if not is_number(self.expected_efficiency) or not 0 < self.expected_efficiency <= 1:
            raise InputError(f"expected_efficiency: must be in (0, 1], got {self.expected_efficiency!r}")
        if self.time_budget_s is not None and (not is_number(self.time_budget_s) or self.time_budget_s <= 0):
            raise InputError(f"time_budget_s: must be a positive number of seconds, got {self.time_budget_s!r}")
        for name in ("fixed_n", "nb", "threads_per_rank", "ranks_per_node"):
            if getattr(self, name) is not None:
                require_positive(name, getattr(self, name))
        if self.trials is not None:
            deck.check_trials("trials", self.trials)


@dataclass(frozen=True)
class HplPlan:
    PLAN_KEY: ClassVar[str] = "hpl"

    job: JobPlan
    deck: Deck
    binary: str
    profile: BinaryProfile
    trials: int
    grid_reason: str
    deck_source: str
    rpeak_gflops: float
    rpeak_derivation: str
    predicted_s: float
    env_vars: Mapping[str, str] = field(default_factory=dict)
    blas: str = ""  # the BLAS it links, and FlexiBLAS's backend (scalebench.site.blas)
    blas_kernel: str = ""
    sweep: SweepDeck | None = None  # a tuning run: many combinations in one HPL.dat
    missing: str = ""  # why the binary cannot run here (a repository binary not built); '' when it can
    clock_ghz: float | None = None  # the nominal clock Rpeak counts (CPUs); None for GPUs
    working_rpeak_gflops: float | None = None  # the peak of the cores the ranks' threads use (Rpeak: all held)

    def clock_from(self, gflops: float) -> float | None:
        """The clock a rate of the working cores implies at the flop/cycle Rpeak counts: DGEMM never
        quite reaches the FMA units' peak, so the DGEMM ceiling gives a lower bound of the clock the
        cores ran at."""
        peak = self.working_rpeak_gflops or self.rpeak_gflops
        return self.clock_ghz * gflops / peak if self.clock_ghz else None

    @property
    def expected_cases(self) -> int:
        """HPL tests the job runs: the trials of one deck, or every combination of a sweep."""
        return self.sweep.tests if self.sweep else self.trials

    @property
    def n_policy(self) -> str:
        return self.deck.n_policy

    @property
    def deck_summary(self) -> str:
        if self.sweep is not None:
            return f"sweep of {self.sweep.tests} tests at N={self.deck.n}"
        return (f"N={self.deck.n} NB={self.deck.nb} {self.deck.p}x{self.deck.q} "
                f"mem={self.deck.memory_used_fraction:.1%}")

    @property
    def memory_used_per_node(self) -> int:
        """Bytes of matrix on the node (or its GPUs) with the most busy ranks."""
        return int(self.deck.memory_used_fraction * self.deck.memory_per_node)

    def input_file(self) -> tuple[str, str]:
        """The file the binary reads in its working directory, and its text."""
        if self.sweep is not None:
            text = sweep_hpccinf_txt(self.sweep) if self.profile.is_hpcc else sweep_hpl_dat(self.sweep)
        else:
            text = (deck.hpccinf_txt(self.deck, self.trials) if self.profile.is_hpcc
                    else deck.hpl_dat(self.deck, trials=self.trials))
        return self.profile.input, text

    def provenance(self) -> dict[str, Any]:
        """What every result of the case carries (the check's loggable variables)."""
        ignored = f"; {self.profile.name} ignores {', '.join(self.profile.ignores)}" if self.profile.ignores else ""
        return {"deck_summary": self.deck_summary, "n_policy": self.n_policy, "deck_source": self.deck_source + ignored,
                "grid_reason": self.grid_reason, "idle_ranks": self.job.idle_ranks,
                "rpeak_derivation": self.rpeak_derivation, "blas": self.blas, "blas_kernel": self.blas_kernel,
                "hpl_deck": self.deck.to_json(), "trials": self.trials}

    def to_json(self) -> dict[str, Any]:
        return {"job": self.job.to_json(), "deck": self.deck.to_json(), "binary": self.binary,
                "profile": self.profile.name, "trials": self.trials, "grid_reason": self.grid_reason,
                "deck_source": self.deck_source, "n_policy": self.n_policy,
                "rpeak_gflops": self.rpeak_gflops, "rpeak_derivation": self.rpeak_derivation,
                "predicted_s": round(self.predicted_s, 1),
                "memory_used_per_node": self.memory_used_per_node, "env_vars": dict(self.env_vars),
                "missing": self.missing}


def _geometry(partition: PartitionSpec, profile: BinaryProfile, scale_name: str | Scale,
              settings: HplSettings) -> tuple[int | None, int, int]:
    """(ranks per node or None to fill the cores, threads per rank, GPUs per node) for the binary."""
    hpl = partition.hpl
    if profile.ranks == "per_gpu":
        if partition.gpus is None:
            raise LeftOut(f"HPL binary profile {profile.name} runs one rank per GPU; "
                          f"{partition.fullname} has no GPUs (site file: gpus)")
        scale = partition.scale(scale_name) if isinstance(scale_name, str) else scale_name
        if scale is not None and scale.sub_node:
            raise LeftOut(f"HPL binary profile {profile.name} runs on whole GPU nodes, not on {scale.name}")
        count = partition.gpus.count
        if count > partition.cores_per_node:
            raise LeftOut(f"{count} GPUs need a core each for their ranks; {partition.fullname}'s nodes have "
                          f"{partition.cores_per_node}")
        threads = settings.threads_per_rank or max(1, partition.cores_per_node // count)
        return settings.ranks_per_node or count, threads, count
    threads = settings.threads_per_rank or hpl.threads_per_rank or 1
    scale = partition.scale(scale_name) if isinstance(scale_name, str) else scale_name
    ranks = settings.ranks_per_node
    if scale is not None and scale.sub_node:  # the partition's layout is for whole nodes
        threads = settings.threads_per_rank or min(threads, scale.cores_per_node)  # type: ignore[type-var]
    elif ranks is None:
        ranks = hpl.ranks_per_node
    return ranks, threads, 0


def _rules(partition: PartitionSpec, settings: HplSettings) -> tuple[Rules, FrozenDeck | None, str]:
    frozen = frozen_deck(partition.system, partition.name, settings.decks_dir)
    if frozen is not None:
        return frozen.rules, frozen, f"frozen deck {frozen.path}"
    return base_rules(settings.decks_dir), None, "hpl_decks/rules.yaml (no frozen deck for this partition)"


def plan_hpl(partition: PartitionSpec, stack: StackSpec, scale_name: str | Scale,
             settings: HplSettings | None = None, environ: Mapping[str, str] | None = None,
             reservation: Reservation | None = None) -> HplPlan:
    """The HPL case at `scale_name` on a partition and stack; LeftOut with the reason when the
    partition cannot run it (no such scale, no memory for one block per rank, a time limit it
    cannot grant even at the smallest N)."""
    settings = settings or HplSettings()
    named = settings.hpl_binary or str(stack.extras.get("hpl_binary") or "xhpl")
    profile = profile_for(named, settings.profile or stack.extras.get("hpl_profile"))
    # A site file's relative path is under the repository; -S hpl_binary=... is used as given.
    from_site = not settings.hpl_binary
    binary = resolve_binary(named) if from_site else named
    rpn, threads, gpus = _geometry(partition, profile, scale_name, settings)
    shell = environ or {}
    job = job_plan(partition, stack, scale_name, threads_per_rank=threads, ranks_per_node=rpn,
                   whole_nodes=True, gpus_per_node=gpus, environ=shell, reservation=reservation)
    rules, frozen, deck_source = _rules(partition, settings)
    if partition.hpl.max_grid_aspect is not None:
        rules = replace(rules, max_grid_aspect=partition.hpl.max_grid_aspect)
        frozen = replace(frozen, rules=rules) if frozen else None
    grid = frozen.grid_for(job.tasks) if frozen else grid_choice(job.tasks, rules.max_grid_aspect)
    p, q = grid.p, grid.q
    job = job.with_tasks(p * q)

    cores_used = job.ranks_per_node * job.threads_per_rank
    if profile.memory == "gpu":
        memory = partition.gpus.count * partition.gpus.memory  # type: ignore[union-attr]
        share = f"the memory of {partition.gpus.count} GPUs"  # type: ignore[union-attr]
        rpeak_node = working_node = partition.gpus.count * partition.gpus.fp64_gflops  # type: ignore[union-attr]
        rpeak_text = (f"{partition.gpus.count} GPUs x {partition.gpus.fp64_gflops:g} Gflop/s FP64 "  # type: ignore[union-attr]
                      f"(site file gpus.fp64_tflops) per node")
        clock = None
    else:
        scale = partition.scale(job.scale) if isinstance(scale_name, str) else scale_name
        memory = partition.memory_per_node
        share = ""
        rpeak_text = "; ".join(partition.rpeak_derivation)
        sub_node = scale is not None and scale.sub_node
        if sub_node:
            memory = partition.memory_per_node * cores_used // partition.cores_per_node
            share = f"the share of its {cores_used} of {partition.cores_per_node} cores"
        # Rpeak counts the cores the job holds: an exclusive node whole, except on a sub-node scale,
        # whose point is its core count. Cores held but idle are said, not hidden.
        held = partition.cores_per_node if job.exclusive and not sub_node else cores_used
        rpeak_node, working_node = partition.rpeak_gflops(1, held), partition.rpeak_gflops(1, cores_used)
        if sub_node:
            rpeak_text += f"; counted for the {cores_used} cores of scale {job.scale}"
        elif held > cores_used:
            rpeak_text += (f"; {held - cores_used} of the {held} cores each node holds stay idle ({job.ranks_per_node} "
                           f"rank(s) x {job.threads_per_rank} thread(s)): Rpeak and efficiency count all {held}")
        clock = partition.clock_ghz
    rpeak = rpeak_node * job.nodes
    expected_node = settings.expected_efficiency * working_node
    budget = settings.time_budget_s or partition.hpl.time_budget_s
    max_n, reason = None, ""
    if budget:  # a cap for one node; the scaling law takes N to more nodes
        max_n = deck.largest_n_within(float(budget), expected_node)
        reason = (f"time budget: {float(budget):g} s at {settings.expected_efficiency:.0%} of "
                  f"Rpeak {rpeak_node:.1f} Gflop/s")
    nb, nb_source = _nb(settings, frozen, profile, rules, partition.microarch)
    if nb_source:
        deck_source = f"{deck_source}; {nb_source}"
    request = DeckRequest(nodes=job.nodes, ranks_per_node=job.ranks_per_node, threads_per_rank=job.threads_per_rank,
                          memory_per_node=memory, memory_fraction=settings.memory_fraction,
                          nb=nb, max_n=max_n, max_n_reason=reason, grid=(p, q))
    try:
        the_deck = deck.deck_for_scaling(request, rules, settings.scaling, settings.fixed_n)
    except DeckError as err:
        raise LeftOut(f"HPL deck: {err}") from None
    if share:
        the_deck = replace(the_deck, n_policy=f"{the_deck.n_policy} ({share})")
    _within_request(the_deck, job, profile)

    trials = settings.trials or deck.check_trials(f"{partition.fullname} hpl_trials", partition.hpl.trials)
    the_deck, predicted, limit = _fit_time_limit(the_deck, partition, rules, trials,
                                                 settings.expected_efficiency * working_node * job.nodes, job.longest_s,
                                                 job.startup_s)
    job = replace(job, time_limit_s=limit)
    linked = stack_blas(stack.extras.get("blas"), job.spack_specs, binary, stack.env_vars, shell)
    coretype = blas.choose_coretype(stack.env_vars, shell, partition.microarch, linked)
    env = {name: str(job.threads_per_rank) for name in threads_variables(linked.runs.name)}
    if linked.runs.name in ("openblas", None):  # OpenBLAS then prints the kernel it chose
        env["OPENBLAS_VERBOSE"] = "2"
    if linked.name == FLEXIBLAS and linked.backend is None:  # the job's stderr names the backend it loads
        env["FLEXIBLAS_VERBOSE"] = "1"
    if coretype.value:
        env["OPENBLAS_CORETYPE"] = coretype.value
    if profile.dgemm_env:  # the DGEMM ceiling, timed by the binary in the same job
        env[profile.dgemm_env] = str(profile.dgemm_n)
    kernel = f"OPENBLAS_CORETYPE={coretype.value}: {coretype.reason}" if coretype.value else coretype.reason
    if coretype.warning:
        kernel += f" (warning: {coretype.warning})"
    return HplPlan(job=job, deck=the_deck, binary=binary, profile=profile, trials=trials,
                   grid_reason=grid.reason, deck_source=deck_source, rpeak_gflops=rpeak,
                   rpeak_derivation=rpeak_text, predicted_s=predicted, env_vars=env, blas=linked.describe(),
                   blas_kernel=kernel,
                   missing=(missing_binary(named, "HPL binary") if from_site else None) or "", clock_ghz=clock,
                   working_rpeak_gflops=working_node * job.nodes)


def _within_request(the_deck: Deck, job: JobPlan, profile: BinaryProfile) -> None:
    """LeftOut when the matrix on a node would not fit the memory its job asks Slurm for (--mem of a
    size): the job would be killed out of memory, sized from the node's memory instead."""
    if profile.memory == "gpu" or job.memory in (None, "0"):
        return
    request = parse_slurm_size(job.memory)
    matrix = int(the_deck.memory_used_fraction * the_deck.memory_per_node)
    if matrix > request:
        raise LeftOut(f"HPL's matrix takes {format_size(matrix)} of a node, more than its job asks for "
                      f"(--mem={job.memory}): lower memory_fraction, or ask for more (job_options.memory)")


def _nb(settings: HplSettings, frozen: FrozenDeck | None, profile: BinaryProfile, rules: Rules,
        microarch: str) -> tuple[int | None, str]:
    """(NB, its source) in order: -S nb, the frozen deck's (None: its rules), the binary profile's,
    the rules' table by microarchitecture, the rules' nb."""
    if settings.nb:
        return settings.nb, f"NB {settings.nb}: the check's nb"
    if frozen and profile.takes_nb(frozen.rules.nb):
        return None, ""
    if frozen:  # frozen from another binary's sweep (a CPU sweep's 256 for a GPU binary tuned at 1024)
        nb = profile.nb or rules.nb_for(microarch)[0]
        return nb, (f"NB {nb}: the frozen deck's NB {frozen.rules.nb} is outside binary profile {profile.name}'s "
                    f"range {min(profile.sweep_nbs)}-{max(profile.sweep_nbs)}")
    if profile.nb:
        return profile.nb, f"NB {profile.nb}: binary profile {profile.name}"
    return rules.nb_for(microarch)


def plan_tuning(partition: PartitionSpec, stack: StackSpec, settings: HplSettings | None = None,
                environ: Mapping[str, str] | None = None, nbs: tuple[int, ...] | None = None,
                reservation: Reservation | None = None) -> HplPlan:
    """A tuning sweep on one node: every grid of all its ranks (and the grid leaving ranks idle
    where the plan would), NB x BCAST x DEPTH, each solved once, at the one-node N or the smaller N
    whose whole sweep takes about the rules' tuning_time_budget_s and fits the partition's longest job."""
    settings = replace(settings or HplSettings(), trials=1)
    one = plan_hpl(partition, stack, node_scale(1), settings, environ, reservation)
    rules = _rules(partition, settings)[0]
    max_aspect = float(partition.hpl.max_grid_aspect or rules.max_grid_aspect)
    expected = settings.expected_efficiency * one.rpeak_gflops
    # Only what the binary reads is swept: hpl.sh ignores BCAST and look-ahead (DEPTH).
    algorithm = one.deck.algorithm
    fixed = {name: (getattr(algorithm, name),) for name in ("bcast", "depth") if name in one.profile.ignores}
    try:
        sweep = sweep_deck(one.deck, nbs=nbs, max_aspect=max_aspect, bcasts=fixed.get("bcast"),
                           depths=fixed.get("depth"), candidate_nbs=one.profile.sweep_nbs)
        n = deck.largest_n_within(rules.tuning_time_budget_s / sweep.tests, expected) // one.deck.nb * one.deck.nb
        base = one.deck
        if n < base.n:
            base = deck.with_sizes(base, n, f"tuning: N held so the {sweep.tests} solves of the sweep take about "
                                            f"{format_duration(rules.tuning_time_budget_s)} (memory allows N={base.n})")
        base, predicted, limit = _fit_time_limit(base, partition, rules, sweep.tests, expected, one.job.longest_s,
                                                 one.job.startup_s)
        sweep = sweep_deck(base, nbs=nbs, max_aspect=max_aspect, bcasts=fixed.get("bcast"), depths=fixed.get("depth"),
                           candidate_nbs=one.profile.sweep_nbs)
    except DeckError as err:
        raise LeftOut(f"HPL tuning sweep: {err}") from None
    job = replace(one.job, tasks=one.job.nodes * one.job.ranks_per_node, time_limit_s=limit)
    env = {k: v for k, v in one.env_vars.items() if k != one.profile.dgemm_env}  # the sweep ranks, no ceiling
    return replace(one, job=job, deck=base, sweep=sweep, predicted_s=predicted, env_vars=env)


def _fit_time_limit(the_deck: Deck, partition: PartitionSpec, rules: Rules, trials: int,
                    expected_gflops: float, longest_s: int | None = None,
                    startup_s: int = 0) -> tuple[Deck, float, int]:
    """(deck, predicted seconds of all trials, time limit): safety x prediction + allowance + the step's
    start-up (an image on every node: scalebench.site.launch). Beyond the partition's longest job (or its
    reservation's, longest_s) N shrinks to fit; LeftOut when not even the smallest N fits."""
    def limit_for(n: int) -> tuple[float, float]:
        predicted = trials * deck.predicted_seconds(n, expected_gflops)
        return predicted, rules.time_limit_safety * predicted + rules.time_limit_allowance_s + startup_s

    predicted, limit = limit_for(the_deck.n)
    allowed = longest_s or partition.max_time_limit_s
    if allowed is None or limit <= allowed:
        return the_deck, predicted, math.ceil(limit)
    smallest = the_deck.nb * max(the_deck.p, the_deck.q)
    solve_s = (allowed - rules.time_limit_allowance_s - startup_s) / rules.time_limit_safety / trials
    n = deck.largest_n_within(solve_s, expected_gflops) // the_deck.nb * the_deck.nb if solve_s > 0 else 0
    if n < smallest:
        need = limit_for(smallest)[1]
        raise LeftOut(f"time limit: even N={smallest} needs {format_duration(need)} with the safety margin; "
                      f"{partition.fullname} allows {format_duration(allowed)} "
                      f"({'its reservation' if longest_s else 'max_time_limit_s'})")
    whose = "its reservation's" if longest_s else "the partition's"
    capped = deck.with_sizes(the_deck, n, f"{the_deck.n_policy}, capped to N={n} by {whose} "
                                          f"{format_duration(allowed)} time limit (memory and scaling gave "
                                          f"N={the_deck.n})")
    predicted, limit = limit_for(n)
    return capped, predicted, math.ceil(limit)


def memory_text(plan: HplPlan) -> str:
    return f"{format_size(plan.memory_used_per_node)} ({plan.deck.memory_used_fraction:.0%})"
