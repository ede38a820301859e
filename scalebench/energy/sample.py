"""The per-node energy sampler: `python -m scalebench.energy.sample --out DIR [--interval S]`.

Run once on every node of a job, beside the program (started before it, stopped after it: SIGTERM,
SIGINT, --stop-file or --duration), it writes DIR/<host>.energy.jsonl: a header line naming the host,
its UTC offset (HPL dates its solves in local time) and the counters found
(scalebench.energy.counters), then one line per round of readings, flushed as it is taken, so a
killed sampler loses nothing already read. A node with no readable counter writes the header (with
"counters": []) and exits at once: the job goes on, and the figures say "no energy source".

For a probe that samples other things on the same tick: Sampler.discover(), then .header() once and
.sample() per tick, each a JSON-ready dict (the lines this module writes); read_samples() reads them.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from scalebench import textfile
from scalebench.energy import counters as energy_counters
from scalebench.energy.counters import Counter, Reader, Segment, unwrap
from scalebench.errors import InputError

FORMAT = "scalebench.energy.sample/1"
SUFFIX = ".energy.jsonl"
DEFAULT_INTERVAL_S = 1.0
SAMPLES_LIMIT = 64 * 2**20  # a day of 1 s rounds of a dozen counters is about 40 MiB


@dataclass
class Sampler:
    counters: list[Counter]
    readers: list[Reader]
    interval_s: float = DEFAULT_INTERVAL_S

    @classmethod
    def discover(cls, interval_s: float = DEFAULT_INTERVAL_S) -> Sampler:
        found, readers = energy_counters.discover()
        return cls(found, readers, interval_s)

    def header(self) -> dict:
        return {"format": FORMAT, "host": socket.gethostname(), "utc_offset_s": time.localtime().tm_gmtoff,
                "interval_s": self.interval_s, "counters": [c.to_json() for c in self.counters]}

    def sample(self) -> dict:
        readings = [r for read in self.readers for r in read()]
        return {"t": time.time(), "r": {r.key: [r.t, r.joules] for r in readings}}


def output_path(directory: Path, host: str | None = None) -> Path:
    return Path(directory) / f"{host or socket.gethostname()}{SUFFIX}"


def run(sampler: Sampler, out: Path, stop_file: Path | None = None, duration_s: float | None = None) -> int:
    """Sample into `out` until told to stop; returns the rounds written."""
    stopping: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: stopping.append(signum))
    deadline = None if duration_s is None else time.monotonic() + duration_s
    rounds = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "x", encoding="utf-8") as handle:  # never another node's or run's file
        handle.write(json.dumps(sampler.header()) + "\n")
        handle.flush()
        if not sampler.counters:
            return 0
        while True:
            handle.write(json.dumps(sampler.sample()) + "\n")
            handle.flush()
            rounds += 1
            if stopping or (stop_file and stop_file.exists()) or (deadline and time.monotonic() >= deadline):
                return rounds  # the last round is taken after the stop, so it covers the program's end
            next_round = time.monotonic() + sampler.interval_s
            while not stopping and time.monotonic() < next_round:
                time.sleep(min(0.05, sampler.interval_s))


# --- reading what the samplers wrote ------------------------------------------------------------

@dataclass(frozen=True)
class NodeSamples:
    host: str
    utc_offset_s: int
    interval_s: float
    counters: tuple[Counter, ...]
    segments: dict[str, list[Segment]] = field(default_factory=dict)  # counter key -> unwrapped readings
    notes: tuple[str, ...] = ()


def read_samples(path: Path) -> NodeSamples:
    """One node's sample file; InputError naming the file when its header is not one."""
    text = textfile.read_text(path, "energy samples", limit=SAMPLES_LIMIT)
    lines = text.splitlines()
    if not text.endswith("\n") and lines:
        lines = lines[:-1]  # the sampler was writing it
    try:
        header = json.loads(lines[0]) if lines else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise InputError(f"{path}: not a scalebench energy sample file (first line: {FORMAT} header)")
    try:
        found = tuple(Counter.from_json(c) for c in header.get("counters", []))
        offset, interval = int(header.get("utc_offset_s", 0)), float(header.get("interval_s", DEFAULT_INTERVAL_S))
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{path}: unreadable counters in the header") from None
    readings: dict[str, list[tuple[float, float]]] = {c.key: [] for c in found}
    skipped = 0
    for line in lines[1:]:
        try:
            values = json.loads(line)["r"]
            for key, (t, joules) in values.items():
                if key in readings and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                           for v in (t, joules)) and joules >= 0:
                    readings[key].append((float(t), float(joules)))
        except (ValueError, KeyError, TypeError, AttributeError):
            skipped += 1
    notes = [f"{path.name}: {skipped} unreadable line(s) skipped"] if skipped else []
    segments = {}
    for counter in found:
        segments[counter.key], counter_notes = unwrap(readings[counter.key], counter.wrap_j)
        notes += [f"{header.get('host')}: {counter.key}: {note}" for note in counter_notes]
    return NodeSamples(str(header.get("host", path.stem)), offset, interval, found, segments, tuple(notes))


def read_directory(directory: Path) -> list[NodeSamples]:
    return [read_samples(path) for path in sorted(Path(directory).glob(f"*{SUFFIX}"))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scalebench.energy.sample", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="directory for <host>.energy.jsonl")
    parser.add_argument("--interval", type=float, default=DEFAULT_INTERVAL_S, help="seconds between rounds")
    parser.add_argument("--stop-file", type=Path, default=None, help="stop once this file exists")
    parser.add_argument("--duration", type=float, default=None, help="stop after this many seconds")
    args = parser.parse_args(argv)
    if not 0.01 <= args.interval <= 3600:
        print("scalebench energy sample: error: --interval must be 0.01..3600 s", file=sys.stderr)
        return 2
    out = output_path(args.out)
    try:
        run(Sampler.discover(args.interval), out, args.stop_file, args.duration)
    except FileExistsError:
        print(f"scalebench energy sample: error: {out} exists (one sampler per node and run)", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"scalebench energy sample: error: {out}: {err.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
