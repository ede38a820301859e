"""Benchmark: `scalebench deck` for every node count 1..100000 in one process (target <= 2 s).

Run: .venv/bin/python scripts/bench/deck_speed.py [--ranks-per-node 64] [--memory-per-node 256GiB]
Prints the wall time, decks per second and a checksum of the N values (so the loop is not elided).
"""
import argparse
import time

from scalebench.hpl import deck
from scalebench.units import parse_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-nodes", type=int, default=100_000)
    parser.add_argument("--ranks-per-node", type=int, default=64)
    parser.add_argument("--memory-per-node", default="256GiB")
    args = parser.parse_args()
    memory = parse_size(args.memory_per_node)
    rules = deck.load_rules()
    start = time.perf_counter()
    checksum = 0
    for nodes in range(1, args.max_nodes + 1):
        request = deck.DeckRequest(nodes=nodes, ranks_per_node=args.ranks_per_node, memory_per_node=memory)
        checksum += deck.make_deck(request, rules).n
    elapsed = time.perf_counter() - start
    print(f"decks: {args.max_nodes} (nodes 1..{args.max_nodes}, {args.ranks_per_node} ranks/node, "
          f"{args.memory_per_node}/node)")
    print(f"wall time: {elapsed:.3f} s ({args.max_nodes / elapsed:,.0f} decks/s); checksum of N: {checksum}")


if __name__ == "__main__":
    main()
