"""`scalebench tune deck | rank | freeze`: sweep decks, ranking tables and frozen decks."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Sequence

from scalebench import paths, textfile
from scalebench.cli.common import add_geometry_arguments, path_arg, positive_int_arg, print_json
from scalebench.errors import ParseError
from scalebench.hpl import deck
from scalebench.hpl.deck import DeckRequest
from scalebench.hpl.frozen import freeze
from scalebench.hpl.tune import (DEFAULT_BCASTS, default_nbs, Candidate, Ranking, rank, sweep_deck,
                                 sweep_hpccinf_txt, sweep_hpl_dat)
from scalebench.hpl.output import HplRow
from scalebench.validation import excerpt


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {excerpt(text)}") from None
    return values


def _grid_list(text: str) -> tuple[tuple[int, int], ...]:
    grids = []
    for item in text.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", item)
        if not match:
            raise argparse.ArgumentTypeError(f"not a grid PxQ: {excerpt(item)} (e.g. 1x7,2x3)")
        grids.append((int(match.group(1)), int(match.group(2))))
    return tuple(grids)


def _name_list(text: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in text.split(","))


def _read_rows(file: str, kind: str) -> list[HplRow]:
    from scalebench.hpl.hpcc_output import parse_hpcc
    from scalebench.hpl.output import parse_hpl

    text = textfile.read_text(file, f"{kind} output")
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
        print_json({"source": args.file, "candidates": [c.to_json() for c in ranking],
                    "excluded": ranking.excluded})
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
                   help=f"e.g. 128,192 (default: those of {','.join(map(str, default_nbs()))} "
                        f"with one block per process)")
    p.add_argument("--grids", type=_grid_list, default=None, help="e.g. 1x7,2x3 (default: every P<=Q grid)")
    p.add_argument("--bcasts", type=_name_list, default=None, help=f"default {','.join(DEFAULT_BCASTS)}")
    p.add_argument("--depths", type=_int_list, default=None, help="default 0,1")
    p.add_argument("--format", choices=("hpl", "hpcc"), default="hpl")
    p.set_defaults(func=cmd_tune_deck)

    for name, func, text in (("rank", cmd_tune_rank, "rank the PASSED rows of an HPL/hpcc output"),
                             ("freeze", cmd_tune_freeze, "freeze the best row as a partition's deck")):
        p = sub.add_parser(name, help=text)
        p.add_argument("file", type=path_arg, help="HPL output or hpccoutf.txt")
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
            p.add_argument("--decks-dir", default=str(paths.HPL_DECKS), type=path_arg)
    return tune
