"""Charts (scalebench.reporting.document.Chart) drawn as PNG with matplotlib's Agg renderer.

No pyplot: figures are built directly on an Agg canvas, so nothing depends on a display or on global
pyplot state, and a chart costs only its own drawing.
"""
from __future__ import annotations

import io
import logging
import warnings
from typing import Iterable, Sequence

# The Agg canvas directly, without pyplot or matplotlib.use(): no global backend state is touched.
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from scalebench.reporting.document import Chart, Panel

# Colour-blind-safe (Okabe-Ito), then matplotlib's defaults for more stacks than that.
_PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
            "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
_PANEL_SIZE = (5.2, 3.6)  # inches
_DPI = 100  # 520 x 360 pixels per panel: two side by side fill the report's body (72em) at their own size
_FONT = {"title": 10, "label": 9, "tick": 8, "legend": 8, "mark": 8}  # points: 11 px and up at this DPI
_MAX_TICKS = 9  # label every measured x up to this many (each tick is several artists to draw)
_MARKED_POINTS = 40  # a line of more points (a year of days) is drawn without a marker on each


_IDEAL = "ideal"  # the group of reference lines shared by all stacks: always grey
_GREY = "#777777"


def colours(charts: Iterable[Chart]) -> dict[str, str]:
    """One colour per group (stack) over all the charts, so a stack looks the same in every chart."""
    groups = sorted({line.group for chart in charts for panel in chart.panels for line in panel.lines} - {_IDEAL})
    return {_IDEAL: _GREY, **{g: _PALETTE[i % len(_PALETTE)] for i, g in enumerate(groups)}}


def _short(x: float) -> str:
    """1, 512, 4K, 1M: binary multiples as message sizes are written."""
    for suffix, factor in (("G", 2 ** 30), ("M", 2 ** 20), ("K", 2 ** 10)):
        if x >= factor and x % factor == 0:
            return f"{x // factor:g}{suffix}"
    return f"{x:g}"


def _draw(ax, panel: Panel, colour: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    ideal = ""  # the ideal lines share one grey legend entry: half the legend, which is a quarter of the time
    for line in panel.lines:
        # A log axis cannot show 0 (OSU's zero-byte message): those points are left out of the picture.
        band = (line.low, line.high) if line.low and line.high else (line.ys, line.ys)
        points = [p for p in zip(line.xs, line.ys, *band)
                  if not (panel.xlog and p[0] <= 0) and not (panel.ylog and min(p[1:]) <= 0)]
        if not points:
            continue
        xs, ys, lows, highs = zip(*points)
        if line.style == "ideal":
            ax.plot(xs, ys, linestyle="--", linewidth=1, color=colour[line.group], alpha=0.7)
            ideal = ideal or line.label
        elif line.style == "model":  # a model's curve: dashed, in its stack's colour
            ax.plot(xs, ys, linestyle="--", linewidth=1.2, color=colour[line.group], label=line.label)
        else:
            if line.low and line.high:
                ax.fill_between(xs, lows, highs, color=colour[line.group], alpha=0.2, linewidth=0)
            ax.plot(xs, ys, marker="o" if len(xs) <= _MARKED_POINTS else "", markersize=4, linewidth=1.5,
                    color=colour[line.group], label=line.label)
    if ideal:
        ax.plot([], [], linestyle="--", linewidth=1, color=colour[_IDEAL], label=f"{ideal} (dashed)")
    for i, mark in enumerate(panel.marks):
        if mark.vertical:
            ax.axvline(mark.x, linestyle=":", linewidth=1, color=colour[mark.group])
        ax.plot([mark.x], [mark.y], marker="*", markersize=11, color=colour[mark.group], linestyle="none")
        if mark.text:  # staggered, so the marks of stacks peaking at the same point stay readable
            ax.annotate(mark.text, (mark.x, mark.y), textcoords="offset points", xytext=(6, 6 - 10 * i),
                        fontsize=_FONT["mark"], color=colour[mark.group])
    if panel.xlog:
        ax.set_xscale("log", base=2)
    if panel.ylog:
        ax.set_yscale("log")
        # Plain labels (1, 10, 100): matplotlib's default 10^n labels go through its slow mathtext parser.
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    elif panel.y_from_zero:
        ax.set_ylim(bottom=0)
    ax.minorticks_off()  # minor ticks on log axes cost more to lay out than the rest of the chart
    measured = sorted({x for line in panel.lines for x in line.xs if not (panel.xlog and x <= 0)})
    if len(measured) > 1:
        # The measured counts (1, 2, 4 nodes), not 1.2, 1.4, ...: every one, or every k-th of a long
        # message-size sweep; byte counts as 4K, 1M.
        shown = measured[::-(-len(measured) // _MAX_TICKS)]
        ax.set_xticks(shown, [_short(x) for x in shown])
    ax.set_title(panel.title, fontsize=_FONT["title"], y=1.01)  # a fixed place: placing it measures every tick label
    ax.set_xlabel(panel.xlabel, fontsize=_FONT["label"])
    ax.set_ylabel(panel.ylabel, fontsize=_FONT["label"])
    ax.tick_params(labelsize=_FONT["tick"])
    ax.grid(True, alpha=0.3)
    if panel.lines:
        ax.legend(fontsize=_FONT["legend"], loc="best")


def render(chart: Chart, colour: dict[str, str] | None = None) -> bytes:
    """One chart as PNG bytes, its panels side by side."""
    width, height = _PANEL_SIZE
    figure = Figure(figsize=(width * len(chart.panels), height), dpi=_DPI)
    FigureCanvasAgg(figure)
    # Fixed margins: matplotlib's constrained layout measures every label and took a third of the time.
    figure.subplots_adjust(left=0.7 / (width * len(chart.panels)), right=0.985, bottom=0.15, top=0.91, wspace=0.25)
    colour = colour or colours([chart])
    for ax, panel in zip(figure.subplots(1, len(chart.panels), squeeze=False)[0], chart.panels):
        _draw(ax, panel, colour)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI, pil_kwargs={"compress_level": 1})  # encoding speed over size
    return buffer.getvalue()


def render_all(charts: Sequence[Chart], everything: Sequence[Chart] | None = None) -> dict[Chart, bytes]:
    """Each distinct chart drawn once, coloured as all of `everything` (default: `charts`) are. What
    matplotlib has to say while drawing (a glyph missing from the font, a log axis over one value) is
    about a picture, not the results: it does not reach stderr, where a command's warnings about the
    results go."""
    colour = colours(everything or charts)
    quiet = logging.getLogger("matplotlib")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {chart: render(chart, colour) for chart in dict.fromkeys(charts)}
    finally:
        quiet.setLevel(level)
