"""Slurm host lists (`nid[001000-001255],nid002[000-127]`, `c[1-2]n[01-04]`) expanded to node names and
node names folded back, through ClusterShell's NodeSet: one parser and one folder for every host list
scalebench reads or writes, with several bracketed ranges in one name as Slurm has them.

What NodeSet reads beyond Slurm's syntax is refused before it gets there: node groups (`@rack1`),
set operators (`!`, `&`, `^`), steps (`[1-9/2]`) and spaces are no part of a Slurm node list. A
RangeSet holds each of its numbers, so `n[1-99999999999]` would fill the memory before NodeSet says
anything: the count is taken from the brackets first, and a list of more than `limit` names refused.
"""
from __future__ import annotations

import re
from typing import Iterable

from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet, NodeSetError
from ClusterShell.RangeSet import RangeSetException

from scalebench.errors import InputError
from scalebench.validation import excerpt

MAX_NODES = 10**6

NODE_NAME = re.compile(r"[A-Za-z0-9._-]{1,255}")
_LIST_CHARS = re.compile(r"[A-Za-z0-9._,\[\]-]*")
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_RANGE = re.compile(r"(\d{1,30})(?:-(\d{1,30}))?")


def _split_top(text: str, where: str) -> list[str]:
    """The names and prefix[ranges] of a node list: its commas outside brackets separate them."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth not in (0, 1):
            raise InputError(f"{where}: {excerpt(text)} has unbalanced brackets")
        if char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    if depth:
        raise InputError(f"{where}: {excerpt(text)} has unbalanced brackets")
    return parts + [text[start:]]


def _names_in(part: str) -> int:
    """How many names one prefix[ranges]suffix[ranges] holds, from its brackets alone (a range that
    is no range counts one: NodeSet names it)."""
    total = 1
    for brackets in _BRACKETS.findall(part):
        count = 0
        for item in brackets.split(","):
            match = _RANGE.fullmatch(item)
            count += int(match[2]) - int(match[1]) + 1 if match and match[2] else 1
        total *= max(count, 1)
    return total


def expand(text: str, where: str = "node list", limit: int = MAX_NODES) -> list[str]:
    """The names of a Slurm node list in the order given (a bracket's names in its order), each once;
    InputError naming `where` when it is not one or holds more than `limit` names."""
    text = text.strip()
    if not _LIST_CHARS.fullmatch(text):
        bad = re.search(r"[^A-Za-z0-9._,\[\]-]", text)
        raise InputError(f"{where}: {excerpt(text)} has {excerpt(bad[0] if bad else text)}; a Slurm node list has "
                         "names, prefix[ranges] and commas only")
    parts = _split_top(text, where)
    if sum(_names_in(part) for part in parts) > limit:
        raise InputError(f"{where}: more than {limit} nodes in {excerpt(text)}")
    names: dict[str, None] = {}
    for part in parts:
        if not part:
            raise InputError(f"{where}: {excerpt(text)} has an empty name")
        try:
            names.update(dict.fromkeys(NodeSet(part, resolver=RESOLVER_NOGROUP)))
        except (NodeSetError, RangeSetException) as err:
            raise InputError(f"{where}: {excerpt(part)} is not a node name or prefix[ranges] ({err})") from None
    if not names:
        raise InputError(f"{where}: no node named")
    return list(names)


def fold(names: Iterable[str], where: str = "node names") -> str:
    """Slurm's compressed form of node names: `n[1-3,7],gpu01`, `c[1-2]n[01-04]`; numbers keep their
    zero padding; '' for none. A name that is no node name (a comma or a bracket would change the list)
    is an InputError naming `where`."""
    listed = list(names)
    for name in listed:
        if not NODE_NAME.fullmatch(name):
            raise InputError(f"{where}: {excerpt(name)} is not a node name (letters, digits, '.', '_', '-')")
    return str(NodeSet.fromlist(listed, resolver=RESOLVER_NOGROUP))
