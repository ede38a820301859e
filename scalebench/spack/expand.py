"""Expansion of an environment's specs (definitions, $references, matrices) for the stack checks of
scalebench.spack.validate, bounded: a definition crossed with itself ten times is 10^10 specs, so
expansion stops at MAX_SPECS per environment with a finding naming the entry that would exceed it.
"""
from __future__ import annotations

import itertools
import math
from typing import Any

from scalebench.spack.sections import _REF_RE, _Definition
from scalebench.spack.specs import satisfies

#: Specs an environment may expand to (definitions and matrices): far above any real stack.
MAX_SPECS = 10_000


class Expansion:
    """Expands spec lists; findings go to `add`."""

    def add(self, file: str, key: str, message: str) -> None:
        raise NotImplementedError

    def _too_many(self, file: str, key: str, count: int) -> None:
        self.add(file, key, f"expands to {count} specs or more; scalebench checks at most {MAX_SPECS} per "
                            "environment (a matrix multiplies its rows' lengths)")

    def _expand_list(self, file: str, key: str, items: list[Any], defined: dict[str, list[str]],
                     undefined: dict, site: str | None) -> list[str]:
        """The specs of a list, at most MAX_SPECS (a finding names the entry that would exceed it)."""
        out: list[str] = []
        for index, item in enumerate(items):
            item_key = f"{key}[{index}]"
            if isinstance(item, str):
                values = self._expand_entry(file, item_key, item, defined, undefined, site)
                if len(out) + len(values) > MAX_SPECS:
                    self._too_many(file, item_key, len(out) + len(values))
                    return out
                out.extend(values)
            elif isinstance(item, dict) and isinstance(item.get("matrix"), list):
                rows = []
                for row_index, row in enumerate(item["matrix"]):
                    if not isinstance(row, list):
                        rows = []
                        break
                    values: list[str] = []
                    for col, entry in enumerate(row):
                        if isinstance(entry, str) and len(values) <= MAX_SPECS:
                            values.extend(self._expand_entry(file, f"{item_key}.matrix[{row_index}][{col}]",
                                                             entry, defined, undefined, site))
                    rows.append(values)
                combos = math.prod(len(row) for row in rows) if rows else 0
                if len(out) + combos > MAX_SPECS:
                    self._too_many(file, f"{item_key}.matrix", len(out) + combos)
                    return out
                excludes = [e for e in item.get("exclude", []) or [] if isinstance(e, str)]
                for combo in itertools.product(*rows) if rows else []:
                    spec = " ".join(combo)
                    if not any(satisfies(spec, ex) for ex in excludes):
                        out.append(spec)
        return out

    def _expand_entry(self, file: str, key: str, entry: str, defined: dict[str, list[str]],
                      undefined: dict, site: str | None) -> list[str]:
        match = _REF_RE.match(entry.strip())
        if not match:
            return [entry]
        name, sigil = match.group("name"), match.group("sigil")
        if name not in defined:
            known, missing = undefined.setdefault((file, key, entry.strip()), ([], set()))
            known.extend(n for n in defined if n not in known)
            missing.add(site or "")
            return []
        return [f"{sigil}{value}" if sigil else value for value in defined[name]]

    def _expand(self, file: str, env: dict[str, Any], definitions: list[_Definition],
                undefined: dict, site: str | None) -> list[str]:
        defined: dict[str, list[str]] = {}
        for definition in definitions:
            values = self._expand_list(definition.file, definition.key, definition.items, defined,
                                       undefined, site)
            known = defined.setdefault(definition.name, [])
            if len(known) + len(values) > MAX_SPECS:
                self._too_many(definition.file, definition.key, len(known) + len(values))
                continue
            known.extend(values)
        specs = env.get("specs") or []
        return self._expand_list(file, "spack.specs", specs if isinstance(specs, list) else [],
                                 defined, undefined, site)
