"""What an OSU job measured (the OSU*Check classes in reframe_tests/microbench.py): the primary column of
its table by message size, with n1/2 for the bandwidth programs and the message rate of osu_mbw_mr."""
from __future__ import annotations

from scalebench.errors import ParseError
from scalebench.interconnect.microbench import Measured, finite_float, n_half_figure, sized
from scalebench.benchmarks.osu.output import OsuTable


def osu_curve(table: OsuTable) -> dict[int, float]:
    """The primary column by message size (osu_barrier's size-less row is not a curve)."""
    curve = {size: float(value) for size, value in table.rows
             if size is not None and finite_float(value) is not None}
    if not curve:
        raise ParseError(f"{table.benchmark or 'OSU'} output has no finite row with a message size")
    return curve


def osu_message_rate_curve(table: OsuTable) -> dict[int, float]:
    """osu_mbw_mr's Messages/s column by message size, as printed."""
    rates = table.other_columns.get("Messages/s") or []
    return {size: float(rate) for (size, _), rate in zip(table.rows, rates)
            if size is not None and finite_float(rate) is not None}


def osu_measured(table: OsuTable, figure: str, unit: str, extra: str = "") -> Measured:
    """The primary column per message size; extra: n_half (bandwidth programs) or pairs (osu_mbw_mr:
    message rate and n1/2 too)."""
    curve = osu_curve(table)
    figures = sized(figure, curve, unit)
    if extra in ("n_half", "pairs"):
        figures.update(n_half_figure(curve))
    if extra == "pairs":
        figures.update(sized("message_rate", osu_message_rate_curve(table), "msg/s"))
    return Measured(figures)
