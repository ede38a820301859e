"""No import loop of any kind in scalebench/ and reframe_tests/: the graph of which module imports which,
read from the source (every import statement, in a function or under TYPE_CHECKING too), has no cycle.
A module's package __init__.py, which Python runs first, is not an edge: it is a face that hands names on.
"""
from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGES = ("scalebench", "reframe_tests")
# Imports that may close a loop, each with its reason: none.
ALLOWED: set[tuple[str, str]] = set()


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of `known` that `name` (at `path`) imports: `from a import b` is a.b when b is a module."""
    def module_of(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(module_of(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                whole = f"{base}.{alias.name}"
                targets.add(whole if whole in known else module_of(base))
    return {target for target in targets if target and target != name}


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) - {b for a, b in ALLOWED if a == name} for name, path in known.items()}


def a_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One loop of the graph (its modules, the first repeated at the end), or []."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        path.pop()
        return []

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return []


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    assert len(graph) > 100 and "scalebench.benchmarks.stream.rules" in graph["scalebench.benchmarks.stream"]
    cycle = a_cycle(graph)
    assert not cycle, "an import loop: " + " -> ".join(cycle)


def test_a_loop_is_found():
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": set()}) == []


def test_every_kind_of_import_is_an_edge():
    graph = import_graph()
    assert "scalebench.check" in graph["scalebench.benchmarks.stream.rules"]  # at the top
    assert "scalebench.benchmarks" in graph["scalebench.cli"]  # in a function: `scalebench parse`
    assert "reframe_tests.base" in graph["reframe_tests.hpl"]  # relative
