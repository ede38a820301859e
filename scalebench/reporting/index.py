"""The index: each run report read once, its vetted sessions, cases and figures kept as columns beside the
results, so that the next report reads Parquet instead of JSON.

    <results>/index/v1-<ingest version>/<UTC time>-<host>-<pid>-<random>/
        sessions.parquet  one row per indexed report: its digest (sha256 of the report's bytes), ReFrame
                          session identity, session fields and the warnings ingest gave for it
        cases.parquet, records.parquet   its cases and figures (scalebench.reporting.table)
        stats.parquet     (path in the results, size, mtime, ctime, inode) -> digest: an unchanged report
                          is known without being read again, as git knows an unchanged file
        manifest.json     the sha256 of each file: a damaged one is found, never read as results

The run reports stay the source of truth: the index holds nothing they do not, and deleting it loses
nothing (the next report, or `report --rebuild`, writes it again). A segment is written once, complete
(in a hidden directory renamed into place, scalebench.atomic) or not at all, and never changed; a report that found new run
reports adds a segment. Two reports at once write two segments; a digest in several is read from the
newest. A segment that cannot be read (truncated, damaged: Parquet has no checksums
of its own, so the manifest's are checked) is left as it is and named in a note; its reports are read
from their JSON again. The ingest version is a digest of scalebench's own code and
data: a scalebench that vets or keeps results differently never reads another's index.

What ingest reads beside a report (provenance.json, the skip reasons of reframe.log, a failed job's
output) is kept with it: ReFrame writes the report last, when those are complete.
"""
from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import polars as pl

from scalebench import atomic, faultpoints, loaders, registry, textfile
from scalebench.errors import InputError
from scalebench.reporting.records import bounds
from scalebench.reporting.table import CASE_SCHEMA, RECORD_SCHEMA, SESSION_SCHEMA, Table
from scalebench.units import format_size
from scalebench.validation import C_INT_MAX, excerpt_text

FORMAT = "v1"
INDEX_DIR = "index"
_RACY_NS = 2_000_000_000  # a report modified this close to its indexing is hashed again next time
_STAT_SCHEMA = {"path": pl.Utf8, "size": pl.Int64, "mtime_ns": pl.Int64, "ctime_ns": pl.Int64, "ino": pl.Int64,
                "digest": pl.Utf8}
_FILES = ("sessions", "cases", "records", "stats")
_REPORT, _RUN = "\x00report\x00", "\x00run\x00"  # the report's path and its directory in kept warnings


@functools.lru_cache(maxsize=1)
def ingest_version() -> str:
    """A digest of the code and data that vet and keep results: every Python and YAML file of scalebench."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(p for p in package.rglob("*") if p.suffix in (".py", ".yaml") and p.is_file()):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _template(warning: str, report: Path) -> str:
    return warning.replace(str(report), _REPORT).replace(str(report.parent), _RUN)


def _placed(warning: str, report: Path) -> str:
    return warning.replace(_REPORT, str(report)).replace(_RUN, str(report.parent))


@dataclass(frozen=True)
class Entry:
    """An indexed report: where its rows are, and what ingest said about it."""

    segment: Path
    session: int  # its row in the segment's sessions
    identity: str
    warnings: tuple[str, ...]  # templates: _placed() puts the report's path back


@dataclass(frozen=True)
class Indexed:
    """An indexed report as one part of a load, read from `path` this time."""

    entry: Entry
    path: Path

    @property
    def warnings(self) -> list[str]:
        return [_placed(w, self.path) for w in self.entry.warnings]


@dataclass(eq=False)
class Fresh:
    """A report this load read from its JSON: its session is the row of its place among the loaded
    reports' fresh table (the one the load made of them all)."""


@dataclass
class _New:
    digest: str
    identity: str
    part: Fresh
    warnings: list[str]


class SegmentUnreadable(Exception):
    def __init__(self, segment: Path, why: str) -> None:
        super().__init__(why)
        self.segment, self.why = segment, why


@dataclass
class Index:
    """The index of one results directory, as this process reads and adds to it."""

    results: Path
    rebuild: bool = False
    skip: frozenset[Path] = frozenset()  # segments found unreadable in this process
    notes: list[str] = field(default_factory=list)
    _entries: dict[str, Entry] | None = None
    _stats: dict[tuple[str, int, int, int, int], str] = field(default_factory=dict)
    _new: dict[str, _New] = field(default_factory=dict)
    _new_stats: dict[tuple[str, int, int, int, int], str] = field(default_factory=dict)
    _made: tuple[dict[int, int], Table] | None = None  # the reports read now (by id: place) and their table

    def made(self, parts: Sequence[Fresh], table: Table) -> None:
        """The table the load made of the reports it read now: the new segment's rows are taken from it
        (all of it, when this index has them all), not made again (a year of nightly runs: half a minute)."""
        self._made = ({id(part): place for place, part in enumerate(parts)}, table)

    @property
    def root(self) -> Path:
        return self.results / INDEX_DIR / f"{FORMAT}-{ingest_version()}"

    def _open(self) -> dict[str, Entry]:
        """Every readable segment's reports (the newest segment's entry for a digest wins)."""
        if self._entries is not None:
            return self._entries
        self._entries = {}
        if self.rebuild or not self.root.is_dir():
            return self._entries
        try:
            names = sorted(n for n in os.listdir(self.root) if not n.startswith("."))
        except OSError as err:
            self.notes.append(f"index: cannot read {self.root}: {err.strerror}; the run reports are read instead")
            return self._entries
        for name in names:
            segment = self.root / name
            if segment in self.skip:
                continue
            try:
                sessions = read_verified(segment, "sessions").select("session", "digest", "identity", "warnings")
                stats = read_verified(segment, "stats")
            except SegmentUnreadable as err:
                self.notes.append(f"index: skipped {segment}: {err.why}; its run reports are read again (the index "
                                  "is derived from them: the segment may be deleted)")
                continue
            for session, digest, identity, warnings in sessions.iter_rows():
                self._entries[digest] = Entry(segment, session, identity, tuple(warnings))
            for path, size, mtime, ctime, ino, digest in stats.iter_rows():
                self._stats[(path, size, mtime, ctime, ino)] = digest
        return self._entries

    def _stat_key(self, path: Path) -> tuple[str, int, int, int, int] | None:
        try:
            info = os.stat(path)
            where = os.path.relpath(os.path.abspath(path), os.path.abspath(self.results))
        except (OSError, ValueError):
            return None
        return where, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino

    def known(self, path: Path) -> Indexed | None:
        """The indexed report `path` holds, known by its size, times and inode without reading it; None
        when those are not known (then read it, and ask `indexed` with its digest)."""
        entries = self._open()
        key = self._stat_key(path) if entries else None
        digest = self._stats.get(key) if key else None
        entry = entries.get(digest) if digest is not None else None
        return Indexed(entry, path) if entry is not None else None

    def digests(self) -> frozenset[str]:
        """The digests of every indexed report: a report read with one of them is not parsed again."""
        return frozenset(self._open())

    def indexed(self, path: Path, digest: str) -> Indexed | None:
        """The indexed report with this digest, which `path` was read to hold (its stats remembered)."""
        entry = self._open().get(digest)
        if entry is None:
            return None
        self.remember(path, digest)
        return Indexed(entry, path)

    def add(self, path: Path, digest: str, identity: str, part: Fresh, warnings: Sequence[str]) -> None:
        """A report read from its JSON, to go into this process's new segment."""
        self._new.setdefault(digest, _New(digest, identity, part, [_template(w, path) for w in warnings]))
        self.remember(path, digest)

    def remember(self, path: Path, digest: str) -> None:
        """Where a report with this digest is (kept when the digest is indexed)."""
        key = self._stat_key(path)
        if key:
            self._new_stats[key] = digest

    def write(self) -> None:
        """The new segment (the reports read from JSON and the stats learned); a note when it cannot be
        written: the report stands on what it read, only the next one reads the JSON again."""
        # Kept: the stats of indexed reports, not known yet, and older than a clock's granularity (a report
        # modified as it was looked at could keep its size and times: git's "racy" entries).
        kept, now = self._open().keys() | self._new.keys(), time.time_ns()
        self._new_stats = {k: d for k, d in self._new_stats.items()
                           if d in kept and self._stats.get(k) != d and now - k[2] > _RACY_NS}
        if not self._new and not self._new_stats:
            return
        name = f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{socket.gethostname()}-{os.getpid()}-" \
               f"{secrets.token_hex(4)}"
        final = self.root / name
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            self.notes.append(f"index: cannot write into {self.root.parent}: {err.strerror}; nothing kept, the next "
                              "report reads the run reports again")
            return
        try:
            # Written whole in a temporary directory, then renamed into place (scalebench.atomic), which
            # removes this process's partial files on any error or interruption, and sweeps a dead one's.
            with atomic.staged(final, directory=True) as tmp:
                files = {}
                for suffix, frame in zip(_FILES, self._frames()):
                    files[f"{suffix}.parquet"] = _write_parquet(tmp / f"{suffix}.parquet", frame)
                manifest = {"format": FORMAT, "ingest": ingest_version(), "files": files}
                _write_new(tmp / "manifest.json", json.dumps(manifest, indent=1).encode())
                faultpoints.reached("index:segment")
                atomic.publish(tmp, final)
        except OSError as err:
            self.notes.append(f"index: not written ({err.strerror or err}); nothing kept, the next report reads the "
                              f"run reports again")
            return
        size = sum((final / name).stat().st_size for name in files)
        if self._new:
            self.notes.append(f"index: {len(self._new)} run report(s) kept in {final} ({format_size(size)})")

    def _frames(self) -> tuple[pl.DataFrame, ...]:
        news = list(self._new.values())
        if self._made is None:
            raise RuntimeError("index: the load's table of the reports it read was not given (Index.made)")
        places, made = self._made
        wanted = [places[id(n.part)] for n in news]
        table = made if wanted == list(range(made.session_count)) else select(made, wanted)
        sessions = table.sessions.drop("report").with_columns(
            digest=pl.Series([n.digest for n in news], dtype=pl.Utf8),
            warnings=pl.Series([n.warnings for n in news], dtype=pl.List(pl.Utf8)))
        stat_frame = pl.DataFrame([(*key, digest) for key, digest in self._new_stats.items()], schema=_STAT_SCHEMA,
                                  orient="row")
        return sessions, table.cases.drop("report"), table.records, stat_frame


def _write_parquet(path: Path, frame: pl.DataFrame) -> str:
    """Write `frame` as a new file; its sha256."""
    buffer = io.BytesIO()
    frame.write_parquet(buffer, compression="zstd", statistics=False)
    data = buffer.getvalue()
    _write_new(path, data)
    return hashlib.sha256(data).hexdigest()


def _write_new(path: Path, data: bytes) -> None:
    """A new file holding `data`, on disk before the segment is renamed into place (never an existing
    file: O_EXCL)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


_MANIFEST_LIMIT = 64 * 1024


def read_verified(segment: Path, name: str) -> pl.DataFrame:
    """One file of a segment, checked against the segment's manifest; SegmentUnreadable otherwise."""
    try:
        manifest = loaders.load_json(segment / "manifest.json", "index manifest", _MANIFEST_LIMIT)
        expected = manifest["files"][f"{name}.parquet"]
        data = textfile.read_bytes(segment / f"{name}.parquet", "index file", loaders.REPORT_LIMIT)
    except (InputError, KeyError, TypeError) as err:
        raise SegmentUnreadable(segment, f"unreadable ({excerpt_text(str(err), 160)})") from None
    if hashlib.sha256(data).hexdigest() != expected:
        raise SegmentUnreadable(segment, f"{name}.parquet is damaged (its sha256 is not the manifest's)")
    try:
        return pl.read_parquet(io.BytesIO(data))
    except pl.exceptions.PolarsError as err:
        raise SegmentUnreadable(segment, f"{name}.parquet unreadable ({excerpt_text(str(err), 160)})") from None


def select(table: Table, sessions: Sequence[int]) -> Table:
    """The rows of these sessions of `table`, in this order, numbered anew as from_sessions would."""
    wanted = pl.DataFrame({"session": list(sessions), "new": list(range(len(sessions)))},
                          schema={"session": pl.UInt32, "new": pl.UInt32})
    picked = table.sessions.join(wanted, on="session", how="inner").sort("new")
    cases = table.cases.join(wanted, on="session", how="inner").sort(["new", "case"]).with_columns(
        renumbered=pl.int_range(pl.len(), dtype=pl.UInt32))
    records = table.records.with_row_index("position").join(cases.select("case", "renumbered"), on="case",
                                                            how="inner").sort(["renumbered", "position"])
    return Table(picked.with_columns(session=pl.col("new")).select(*SESSION_SCHEMA),
                 cases.with_columns(session=pl.col("new"), case=pl.col("renumbered")).select(*CASE_SCHEMA),
                 records.with_columns(case=pl.col("renumbered")).select(*RECORD_SCHEMA))


def assemble(parts: Sequence[Fresh | Indexed], fresh: Table) -> Table:
    """The table of `parts` in their order: reports read now (`fresh`: their table, a session each in the
    order of the Fresh parts), and indexed reports read from their segments. SegmentUnreadable when a
    segment fails to read (the caller reads its reports again)."""
    new = [p for p in parts if isinstance(p, Fresh)]
    order = {id(p): i for i, p in enumerate(parts)}
    pieces: list[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]] = []
    placed = pl.DataFrame({"session": list(range(len(new))), "order": [order[id(s)] for s in new]},
                          schema={"session": pl.UInt32, "order": pl.UInt32})
    pieces.append(_placed_frames(fresh.sessions, fresh.cases, fresh.records, placed))
    by_segment: dict[Path, list[Indexed]] = {}
    for part in parts:
        if isinstance(part, Indexed):
            by_segment.setdefault(part.entry.segment, []).append(part)
    for segment, members in by_segment.items():
        wanted = pl.DataFrame({"session": [m.entry.session for m in members], "order": [order[id(m)] for m in members],
                               "report": [str(m.path) for m in members]},
                              schema={"session": pl.UInt32, "order": pl.UInt32, "report": pl.Utf8})
        sessions = read_verified(segment, "sessions").select(c for c in SESSION_SCHEMA if c != "report")
        cases = read_verified(segment, "cases").join(wanted.select("session", "report"), on="session", how="inner",
                                                     maintain_order="left")
        records = read_verified(segment, "records").join(cases.select("case"), on="case", how="semi",
                                                         maintain_order="left")
        why = _unsound(cases, records)
        if why:
            raise SegmentUnreadable(segment, why)
        sessions = sessions.join(wanted.select("session", "report"), on="session", how="inner", maintain_order="left")
        pieces.append(_placed_frames(sessions, cases, records, wanted.select("session", "order")))
    return _renumber(pieces)


def _unsound(cases: pl.DataFrame, records: pl.DataFrame) -> str:
    """What in a segment's rows ingest would not have kept (a file edited since: its sha256 manifest
    catches damage, not an edit that rewrote it too), or ''. The figures' ranges are check_case's."""
    counts = cases.filter(pl.any_horizontal(~pl.col(c).is_between(0, C_INT_MAX) for c in ("num_nodes", "num_tasks",
                                                                                           "cores")))
    if not counts.is_empty():
        return f"a count out of range in {excerpt_text(counts['name'][0], 80)}"
    usable = records.filter("usable").join(cases.select("case", "benchmark", "measured"), on="case", how="left")
    if not usable.filter(~pl.col("measured") | ~pl.col("value").is_finite()).is_empty():
        return "a figure no measurement gives"
    kinds = usable.select("benchmark", "perf_var", "unit").unique()
    ranges = pl.DataFrame([(*kind, *bounds(registry.lookup(kind[0]), kind[1], kind[2]))
                           for kind in kinds.iter_rows()],
                          schema={"benchmark": pl.Utf8, "perf_var": pl.Utf8, "unit": pl.Utf8, "low": pl.Float64,
                                  "included": pl.Boolean, "high": pl.Float64, "words": pl.Utf8}, orient="row")
    value = pl.col("value")
    above_low = pl.when("included").then(value >= pl.col("low")).otherwise(value > pl.col("low"))
    wrong = usable.join(ranges, on=["benchmark", "perf_var", "unit"]).filter(~(above_low & (value <= pl.col("high"))))
    if not wrong.is_empty():
        first = wrong.row(0, named=True)
        return (f"figure {excerpt_text(first['perf_var'], 40)} of {excerpt_text(first['benchmark'], 40)} is "
                f"{first['value']:g}, not {first['words']}")
    return ""


def _placed_frames(sessions: pl.DataFrame, cases: pl.DataFrame, records: pl.DataFrame, placed: pl.DataFrame
                   ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The frames with each session's place in the load (`order`) on every row."""
    sessions = sessions.join(placed, on="session", how="inner").select(*SESSION_SCHEMA, "order")
    cases = cases.join(placed, on="session", how="inner", maintain_order="left")
    records = records.with_row_index("position").join(cases.select("case", "order"), on="case", how="inner")
    return sessions, cases, records


def _renumber(pieces: list[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]]) -> Table:
    """One table: sessions in load order, cases and figures in their session's order, ids renumbered."""
    sessions = pl.concat([p[0] for p in pieces]).sort("order")
    cases = pl.concat([p[1].select(*CASE_SCHEMA, "order") for p in pieces]).sort(["order", "case"])
    records = pl.concat([p[2] for p in pieces]).sort(["order", "case", "position"])
    session_ids = sessions.select("order", new=pl.int_range(pl.len(), dtype=pl.UInt32))
    case_ids = cases.select("order", "case", new=pl.int_range(pl.len(), dtype=pl.UInt32))
    sessions = sessions.with_columns(session=pl.int_range(pl.len(), dtype=pl.UInt32)).drop("order")
    cases = cases.join(session_ids, on="order", how="left", maintain_order="left").with_columns(
        session=pl.col("new"), case=pl.int_range(pl.len(), dtype=pl.UInt32)).drop("new", "order")
    records = records.join(case_ids, on=["order", "case"], how="left", maintain_order="left").with_columns(
        case=pl.col("new")).drop("new", "order", "position")
    return Table(sessions, cases.select(*CASE_SCHEMA), records.select(*RECORD_SCHEMA))
