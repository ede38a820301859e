"""The HPL process grid: P x Q with P <= Q, on every rank unless no grid within the allowed aspect
exists (primes, 2 x prime, ...), and then on as many ranks as one can.

Netlib's HPL tuning notes and Intel's HPL guide run P <= Q grids from 1:1 to about 1:4 on all
ranks; a flat 1 x Q grid is for plain Ethernet only. The allowed aspect Q/P is `max_grid_aspect` in
hpl_decks/rules.yaml (per partition: a frozen deck or the site file).
"""
from __future__ import annotations

import math
from typing import NamedTuple

from scalebench.errors import InputError
from scalebench.validation import excerpt, is_number, require_count


class GridChoice(NamedTuple):
    p: int
    q: int
    idle_ranks: int
    reason: str


def process_grid(ranks: int) -> tuple[int, int]:
    """The squarest grid on all ranks: P <= Q, P the largest divisor of ranks not above sqrt(ranks)."""
    require_count("ranks", ranks)
    limit = math.isqrt(ranks)
    # Rank counts are mostly nodes x a power of two: take 2^twos out with bit operations and give
    # each odd divisor the largest power of two that keeps it within the limit (a much shorter
    # list than every divisor). Odd divisors up to limit >> twos take all of 2^twos.
    twos = (ranks & -ranks).bit_length() - 1
    all_twos = limit >> twos
    p = max([d << twos if d <= all_twos else d << ((limit // d).bit_length() - 1)
             for d in _divisors_up_to(ranks >> twos, limit)])
    return p, ranks // p


def _small_primes(bound: int) -> list[int]:
    sieve = bytearray([1]) * (bound + 1)
    sieve[0:2] = b"\x00\x00"
    for k in range(2, math.isqrt(bound) + 1):
        if sieve[k]:
            sieve[k * k::k] = bytes(len(range(k * k, bound + 1, k)))
    return [k for k in range(bound + 1) if sieve[k]]


# Trial division by primes only: enough for any rank count below 4096^2 = 16.7 million.
_PRIMES = _small_primes(4096)


def _divisors_up_to(number: int, limit: int) -> list[int]:
    """Divisors of `number` not above `limit`, from its prime factorisation (trial division by
    primes stops at the cofactor's square root; products above the limit are dropped as formed)."""
    divisors, rest = [1], number
    for factor in _PRIMES:
        if factor * factor > rest:
            break
        if rest % factor == 0:
            rest, divisors = _take_factor(rest, factor, divisors, limit)
    else:  # beyond the prime table: odd trial divisors
        factor = _PRIMES[-1] + 2
        while factor * factor <= rest:
            if rest % factor == 0:
                rest, divisors = _take_factor(rest, factor, divisors, limit)
            factor += 2
    if rest > 1:
        divisors += [d * rest for d in divisors if d * rest <= limit]
    return divisors


def _take_factor(rest: int, factor: int, divisors: list[int], limit: int) -> tuple[int, list[int]]:
    powers = [1]
    while rest % factor == 0:
        rest //= factor
        powers.append(powers[-1] * factor)
    return rest, [d * f for d in divisors for f in powers if d * f <= limit]


def aspect(p: int, q: int) -> float:
    return max(p, q) / min(p, q)


def grid_choice(ranks: int, max_aspect: float) -> GridChoice:
    """The squarest P <= Q grid on all `ranks` when its Q/P is within `max_aspect`; otherwise the
    squarest grid of the largest rank count below that is within it, the others left idle."""
    require_count("ranks", ranks)
    if not is_number(max_aspect) or max_aspect < 1:
        raise InputError(f"max_grid_aspect: must be a number >= 1, got {excerpt(max_aspect)}")
    p, q = process_grid(ranks)
    if q <= max_aspect * p:
        return GridChoice(p, q, 0, f"{p}x{q} on all {ranks} ranks")
    for used in range(ranks - 1, 0, -1):  # 1 rank is 1x1: the loop always ends
        p_used, q_used = process_grid(used)
        if q_used <= max_aspect * p_used:
            return GridChoice(p_used, q_used, ranks - used,
                              f"{p_used}x{q_used} with {ranks - used} of {ranks} ranks idle: the squarest "
                              f"grid on all ranks, {p}x{q}, exceeds the allowed aspect 1:{max_aspect:g}")
    raise AssertionError("unreachable")
