"""Frozen HPL decks: the winner of a tuning sweep per system partition, merged over the rules.

`freeze` writes hpl_decks/<system>/<partition>.yaml with its provenance (an existing deck is kept
under a timestamped name, never overwritten); `frozen_deck` reads it back merged over
hpl_decks/rules.yaml, and the HPL plan takes its NB, algorithm and grid from it.
"""
from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import yaml

from scalebench import loaders, paths, schema, writeonce
from scalebench.errors import InputError, ScalebenchError
from scalebench.hpl import deck
from scalebench.hpl.deck import Rules
from scalebench.hpl.grid import GridChoice, grid_choice, process_grid
from scalebench.hpl.output import TV_KEYS
from scalebench.hpl.tune import Candidate
from scalebench.textfile import file_key
from scalebench.validation import check_name, excerpt_text, require_count, require_positive

TOP_IN_PROVENANCE = 5


@functools.lru_cache(maxsize=16)
def _cached_rules(key: tuple[str, int, int]) -> Rules:
    return deck.load_rules(Path(key[0]))


# A frozen deck's NB is its own: the per-microarchitecture table is for generated decks only.
_RULES_KEYS = tuple(f.name for f in fields(Rules) if f.name not in ("algorithm", "nb_by_microarch"))


def frozen_path(system: str, partition: str, decks_dir: Path = paths.HPL_DECKS) -> Path:
    system_dir = Path(decks_dir) / check_name("system", system)
    return system_dir / f"{check_name('partition', partition)}.yaml"


def base_rules(decks_dir: Path = paths.HPL_DECKS) -> Rules:
    """decks_dir/rules.yaml, or the project's hpl_decks/rules.yaml when decks_dir has none."""
    path = Path(decks_dir) / "rules.yaml"
    return _cached_rules(file_key(path if path.exists() else paths.HPL_DECKS / "rules.yaml"))


def _grid_rule(candidate: Candidate) -> str:
    """flat when 1 x R won although R had a squarer grid; near_square otherwise (a 1 x R winner
    for a prime or R = 2 says nothing about other rank counts)."""
    ranks = candidate.p * candidate.q
    if candidate.p == 1 and ranks > 1 and process_grid(ranks)[0] > 1:
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
    base = rules or base_rules(Path(decks_dir))
    algorithm = replace(base.algorithm, **{k: candidate.algorithm[k] for k in TV_KEYS})
    ranked = list(ranking) if ranking else [candidate]
    launched = ranks if ranks is not None else max(c.p * c.q for c in [candidate, *ranked])
    require_count("ranks", launched)  # a frozen deck holds only what HPL and MPI can (a C int)
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
            f"# scalebench.hpl.frozen merges it over hpl_decks/rules.yaml. Re-tune rather than edit;\n"
            f"# `--force` replaces it and keeps this file as {path.name}.<UTC time>.\n"
            + yaml.safe_dump(data, sort_keys=False, default_flow_style=False))
    return writeonce.write_once(
        path, text, what="frozen deck", force=force, now=now, option="decks_dir",
        exists=lambda p: (f"{p}: a frozen deck exists already{_frozen_at(p)}; pass force=True (--force) to "
                          f"replace it (the old one is kept as {p.name}.<UTC time>)"))


def _frozen_at(path: Path) -> str:
    try:
        data = loaders.load_yaml(path, "frozen deck")
        return f" (frozen_at {excerpt_text(str(data['provenance']['frozen_at']), 40)})"
    except (ScalebenchError, KeyError, TypeError):  # only decorates the message
        return ""


@dataclass(frozen=True)
class FrozenDeck:
    path: Path
    rules: Rules  # merged over the base rules
    grid: tuple[int, int] | None
    grid_ranks: int | None
    grid_rule: str
    provenance: dict[str, Any]

    def grid_for(self, ranks: int) -> GridChoice:
        """The frozen shape for the rank count it was tuned at; else the grid rule (flat: 1 x R;
        near_square: grid_choice within the rules' max_grid_aspect)."""
        require_positive("ranks", ranks)
        if self.grid is not None and ranks == self.grid_ranks:
            p, q = self.grid
            return GridChoice(p, q, ranks - p * q, f"{p}x{q}: the frozen deck's grid for {ranks} ranks")
        if self.grid_rule == "flat":
            return GridChoice(1, ranks, 0, f"1x{ranks}: the frozen deck's rule (a flat grid won its sweep)")
        return grid_choice(ranks, self.rules.max_grid_aspect)


def read_frozen(path: Path, base: Rules) -> FrozenDeck:
    """A frozen deck merged over `base`; InputError naming the file and the key when malformed."""
    data = loaders.load_yaml(path, "frozen deck")
    schema.check(data, "frozen_deck.yaml", str(path))
    given = data.get("algorithm") or {}
    try:
        algorithm = replace(base.algorithm, **given)
    except InputError as err:
        raise InputError(f"{path}: algorithm.{err}") from None
    try:
        rules = replace(base, algorithm=algorithm, **{k: data[k] for k in _RULES_KEYS if k in data})
    except InputError as err:
        raise InputError(f"{path}: {err}") from None
    grid, grid_ranks = _read_grid(path, data.get("grid"))
    return FrozenDeck(Path(path), rules, grid, grid_ranks, data.get("grid_rule", "near_square"),
                      data.get("provenance") or {})


def _read_grid(path: Path, grid: Any) -> tuple[tuple[int, int] | None, int | None]:
    """The winning grid (its shape checked by frozen_deck.yaml), whose ranks hold its P x Q."""
    if grid is None:
        return None, None
    p, q = grid["p"], grid["q"]
    ranks = grid.get("ranks", p * q)
    if ranks < p * q:
        raise InputError(f"{path}: grid.ranks: {ranks} is fewer than the {p}x{q} grid uses")
    return (p, q), ranks


def frozen_deck(system: str, partition: str, decks_dir: Path = paths.HPL_DECKS,
                base: Rules | None = None) -> FrozenDeck | None:
    """The partition's frozen deck merged over `base` (default: decks_dir's rules.yaml); None if
    none is frozen."""
    path = frozen_path(system, partition, decks_dir)
    if not path.exists():
        return None
    return read_frozen(path, base or base_rules(Path(decks_dir)))
