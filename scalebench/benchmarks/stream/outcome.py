"""What a STREAM job measured per node, and what is wrong with it (the check's sanity).

The rates STREAM prints are of one rank (hpcc's form) or of the whole run (STREAM's); a node's is
then that times the ranks per node, or the run's over its nodes. With the node's theoretical memory
bandwidth from the site file (partition `memory_bandwidth_gbs`), triad is also a fraction of it: a
node cannot stream from memory faster than that, so a rate above it means the arrays fit in the
caches (STREAM's rule: each array at least 4 times the caches), not a fast node.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scalebench.benchmark import JobOutput
from scalebench.benchmarks.stream.output import KERNELS, StreamOutput, parse_stream

UNIT = "GB/s"


@dataclass(frozen=True)
class StreamOutcome:
    output: StreamOutput
    node_gbs: dict[str, float]  # kernel -> GB/s per node, for the kernels measured
    theoretical_gbs: float | None  # the node's, from the site file
    problems: tuple[str, ...]
    asked_elements: int | None = None  # the array the job asked for (stream.c fixes its own when compiled)

    @property
    def triad_fraction(self) -> float | None:
        """Triad per node as a percentage of the node's theoretical bandwidth."""
        triad = self.node_gbs.get("triad")
        return None if triad is None or not self.theoretical_gbs else 100 * triad / self.theoretical_gbs

    @property
    def figures(self) -> dict[str, tuple[float, str]]:
        """{figure: (value, unit)}, named as scalebench/data/benchmarks.yaml's STREAMCheck."""
        out = {name: (value, UNIT) for name, value in self.node_gbs.items()}
        if self.theoretical_gbs and self.triad_fraction is not None:
            out["memory_bandwidth"] = (self.theoretical_gbs, UNIT)
            out["triad_fraction"] = (self.triad_fraction, "%")
        return out

    @property
    def recorded(self) -> dict[str, Any]:
        """The provenance a STREAMCheck keeps: the array STREAM printed, else the one asked for, and the
        form of its rates."""
        output = self.output
        return {"array_elements": output.array_elements or self.asked_elements or 0,
                "stream_rates": f"{output.rate_unit} per {output.rates_per} ({output.form} form)"}


def job_outcome(job: JobOutput) -> StreamOutcome:
    """The outcome of a STREAMCheck job: its standard output, against the geometry it ran and the node's
    theoretical bandwidth (partition `memory_bandwidth_gbs`)."""
    return stream_outcome(parse_stream(job.stdout), nodes=job.nodes, ranks=job.ranks, threads=job.threads,
                          theoretical_gbs=job.partition.get("memory_bandwidth_gbs"),
                          asked_elements=int(job.args[0]) if job.args else None)


def stream_outcome(output: StreamOutput, *, nodes: int, ranks: int, threads: int | None = None,
                   theoretical_gbs: float | None = None, asked_elements: int | None = None) -> StreamOutcome:
    """The per-node rates of `output`, from a job of `ranks` ranks of `threads` threads on `nodes`
    nodes, and every reason not to trust them."""
    problems = list(output.problems)
    if output.validated is False:
        problems.append("STREAM's solution did not validate: " + (output.failures[0] if output.failures else "?"))
    elif output.validated is None:
        problems.append("no 'Solution Validates' line: STREAM did not finish (the output was cut?)")
    if output.ranks is not None and output.ranks != ranks:
        problems.append(f"STREAM ran {output.ranks} rank(s), the job launched {ranks} (a launcher of another MPI "
                        f"starts independent copies)")
    if output.form == "hpcc" and output.ranks is None:
        problems.append("hpcc's STREAM printed no rank count ('Number of MPI ranks = R'): its rates per rank "
                        "cannot be made per node")
    if threads is not None and output.threads is not None and output.threads != threads:
        problems.append(f"STREAM ran {output.threads} thread(s) per rank, the job asked for {threads} "
                        f"(OMP_NUM_THREADS)")
    if output.threads_counted is not None and output.threads is not None and output.threads_counted != output.threads:
        problems.append(f"STREAM counted {output.threads_counted} thread(s) of the {output.threads} requested")
    scale = ranks / nodes if output.rates_per == "rank" else 1 / nodes
    node_gbs = {name: output.kernels[name].rate_gbs * scale for name in KERNELS  # type: ignore[operator]
                if name in output.kernels and output.kernels[name].rate_gbs is not None}
    if theoretical_gbs:
        above = [f"{name} {value:.4g}" for name, value in node_gbs.items() if value > theoretical_gbs]
        if above:
            problems.append(f"{', '.join(above)} GB/s per node, above the node's theoretical {theoretical_gbs:g} GB/s "
                            f"(memory_bandwidth_gbs): the arrays fit in the caches; make each at least 4 times "
                            f"their size (-S array_elements)")
    return StreamOutcome(output, node_gbs, theoretical_gbs, tuple(problems), asked_elements)
