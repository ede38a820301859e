"""An emulated power meter for the throwaway cluster: HPE Cray's pm_counters files, written for each
node from a power that is known in advance, so that a test knows the joules Slurm must account.

`python -m scalebench_lab.meter --dir DIR --nodes n1,n2 ...` writes DIR/<node>/energy and
DIR/<node>/power every `--step` seconds, in the format of /sys/cray/pm_counters ("<value> J
<timestamp> us"), and DIR/profile.json with the power law, before the first sample:

    power(node, t) = base_w[node] + ramp_w_per_s * (t - t0)      (watts, t in epoch seconds)

The energy file holds `start_j` plus the exact integral of that power since t0, rounded down to whole
joules (and taken modulo `--wrap-j` when given, to emulate a counter that wraps). The cluster binds DIR/<node>
onto /sys/cray/pm_counters in the node's own mount namespace, where Slurm's acct_gather_energy/
pm_counters plugin, and scalebench's own reader, find it.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

PROFILE_FILE = "profile.json"


@dataclass(frozen=True)
class PowerLaw:
    t0: float
    base_w: dict[str, float]
    ramp_w_per_s: float
    start_j: float = 0.0  # the counter at t0
    wrap_j: int | None = None

    def watts(self, node: str, t: float) -> float:
        return self.base_w[node] + self.ramp_w_per_s * (t - self.t0)

    def joules(self, node: str, start: float, end: float) -> float:
        """The exact energy between two times (seconds since the epoch)."""
        def integral(t: float) -> float:
            return self.base_w[node] * (t - self.t0) + self.ramp_w_per_s * (t - self.t0) ** 2 / 2
        return integral(end) - integral(start)

    def counter(self, node: str, t: float) -> int:
        value = int(self.start_j + self.joules(node, self.t0, t))
        return value % self.wrap_j if self.wrap_j else value

    def to_json(self) -> dict:
        return {"t0": self.t0, "base_w": self.base_w, "ramp_w_per_s": self.ramp_w_per_s,
                "start_j": self.start_j, "wrap_j": self.wrap_j}

    @classmethod
    def from_json(cls, data: dict) -> PowerLaw:
        return cls(float(data["t0"]), {str(k): float(v) for k, v in data["base_w"].items()},
                   float(data["ramp_w_per_s"]), float(data.get("start_j", 0.0)), data.get("wrap_j"))


def load_law(directory: Path) -> PowerLaw:
    return PowerLaw.from_json(json.loads((Path(directory) / PROFILE_FILE).read_text()))


def _write(path: Path, text: str) -> None:
    """Replace a file at once (readers never see half a line): a rename within the bound directory."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_sample(directory: Path, law: PowerLaw, node: str, t: float) -> None:
    stamp = int(t * 1e6)
    _write(directory / node / "power", f"{int(law.watts(node, t))} W {stamp} us\n")
    _write(directory / node / "energy", f"{law.counter(node, t)} J {stamp} us\n")


def prepare(directory: Path, law: PowerLaw) -> None:
    """profile.json and a first sample, so that the plugin finds a non-zero counter when slurmd starts
    (it disables itself on a zero or missing one)."""
    directory.mkdir(parents=True, exist_ok=True)
    for node in law.base_w:
        (directory / node).mkdir(exist_ok=True)
    _write(directory / PROFILE_FILE, json.dumps(law.to_json(), indent=2) + "\n")
    for node in law.base_w:
        write_sample(directory, law, node, time.time())


def run(directory: Path, law: PowerLaw, step_s: float) -> None:
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    while not stopping:
        now = time.time()
        for node in law.base_w:
            write_sample(directory, law, node, now)
        time.sleep(step_s)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scalebench_lab.meter", description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--nodes", required=True, help="comma-separated node names")
    parser.add_argument("--base-w", type=float, default=150.0, help="power of the first node at t0 (W)")
    parser.add_argument("--node-step-w", type=float, default=25.0, help="each further node draws this much more")
    parser.add_argument("--ramp-w-per-s", type=float, default=4.0)
    parser.add_argument("--start-j", type=float, default=1_000_000.0,
                        help="the counter at t0 (Slurm's plugin ignores a meter reading 0)")
    parser.add_argument("--wrap-j", type=int, default=None)
    parser.add_argument("--step", type=float, default=0.1, help="seconds between samples (Cray's: 0.1)")
    args = parser.parse_args(argv)
    nodes = [n for n in args.nodes.split(",") if n]
    law = PowerLaw(time.time(), {n: args.base_w + i * args.node_step_w for i, n in enumerate(nodes)},
                   args.ramp_w_per_s, args.start_j, args.wrap_j)
    prepare(args.dir, law)
    run(args.dir, law, args.step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
