"""Charts drawn in a second process while the report's data are read and its tables written.

Importing matplotlib (about 0.6 s here) and drawing (about 0.2 s a chart) are the largest part of a big
report, and need nothing but the charts' data. A worker process started when the report starts imports
matplotlib while this process reads the results, then draws while this process writes the CSV; then
both draw what is left.
The worker is spawned, not forked: a caller may be running threads. Where no worker can be started,
or it fails, the charts are drawn here instead: the same pictures, later, with the reason returned.
"""
from __future__ import annotations

import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Sequence

from scalebench.reporting.document import Chart

_TIMEOUT_S = 600  # far beyond any report: only a hung worker gets here


def _warm() -> None:
    """Worker start-up: import matplotlib before any chart arrives."""
    from scalebench.reporting import plots

    del plots  # imported for its side effect: matplotlib loaded


def _ready() -> None:
    """A first task, so the worker process starts now rather than at the first chart."""


def draw_here(charts: Sequence[Chart], everything: Sequence[Chart] | None = None) -> dict[Chart, bytes]:
    """The charts drawn in this process (matplotlib imported on first use), coloured as `everything`."""
    from scalebench.reporting import plots

    return plots.render_all(charts, everything)


class ChartWorker:
    """`ChartWorker()` starts the worker; `submit(charts)` hands it the charts, one task each; `result()`
    gives {chart: PNG} and stops it: this process draws, from the last, those the worker has not begun,
    so that both cores draw once this one's own work is done. `failure` says why the charts were drawn in
    this process, if they were."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._charts: list[Chart] = []
        self._futures: list[Future[dict[Chart, bytes]]] = []
        self.failure = ""
        try:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_warm)
            self._pool.submit(_ready)
        except (OSError, RuntimeError) as err:
            self._give_up(err)

    def _give_up(self, err: BaseException) -> None:
        self.failure = f"charts drawn in the report's own process: the chart worker failed ({type(err).__name__}: {err})"
        if self._pool is not None:
            # A hung worker would hold up the shutdown (and the interpreter's exit) forever; there is no
            # public way to stop it before Python 3.14.
            for process in list((getattr(self._pool, "_processes", None) or {}).values()):
                process.terminate()
        self.close()

    def submit(self, charts: Sequence[Chart]) -> None:
        self._charts = list(charts)
        if self._pool is not None and self._charts:
            try:
                self._futures = [self._pool.submit(draw_here, [chart], self._charts) for chart in self._charts]
            except RuntimeError as err:  # the pool broke while starting
                self._give_up(err)

    def result(self) -> dict[Chart, bytes]:
        images: dict[Chart, bytes] = {}
        pending = list(zip(self._charts, self._futures))
        while pending and pending[-1][1].cancel():  # not begun by the worker: drawn here
            chart, _ = pending.pop()
            images.update(draw_here([chart], self._charts))
        try:
            for _, future in pending:
                images.update(future.result(timeout=_TIMEOUT_S))
        except Exception as err:  # noqa: BLE001 - whatever broke the worker, draw here instead
            self._give_up(err)
        self.close()
        missing = [c for c in self._charts if c not in images]
        if missing:
            images.update(draw_here(missing, self._charts))
        return images

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
