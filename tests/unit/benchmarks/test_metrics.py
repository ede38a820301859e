"""scalebench.analysis and scalebench.interconnect.curves on small hand-computed curves; the hand computation sits next to each number."""
import math

import pytest

from scalebench.analysis import scaling
from scalebench.analysis.comparison import (aggregate_then_normalise, health_warnings, normalise_to_baseline,
                                            summarise)
from scalebench.analysis.scaling import (improvement_at, interconnect_value, karp_flatt, parallel_efficiency,
                                         speedup, speedup_peak, stack_improvement, weak_scaling_efficiency)
from scalebench.errors import InputError
from scalebench.interconnect.curves import (half_power_point, ideal_latency, latency_surprise, message_rate,
                                            ring_vs_pingpong_ratio,
                                            surprise_area)

approx = pytest.approx

# Strong scaling times (s) that improve up to 4 processes, then degrade.
TIMES = {1: 100.0, 2: 60.0, 4: 40.0, 8: 50.0}


# --- speedup ----------------------------------------------------------------------------------

def test_speedup_of_times_is_relative_to_the_smallest_count():
    # 100/100, 100/60, 100/40, 100/50
    assert speedup(TIMES) == approx({1: 1.0, 2: 1.6666667, 4: 2.5, 8: 2.0})


def test_speedup_with_a_given_baseline():
    # T(2) = 60: 60/100, 60/60, 60/40, 60/50
    assert speedup(TIMES, baseline=2) == approx({1: 0.6, 2: 1.0, 4: 1.5, 8: 1.2})


def test_speedup_of_rates_divides_the_other_way():
    # Gflop/s: 18/10, 30/10
    assert speedup({1: 10.0, 2: 18.0, 4: 30.0}, higher_is_better=True) == approx({1: 1.0, 2: 1.8, 4: 3.0})


def test_speedup_direction_is_what_the_caller_says():
    values = {1: 10.0, 2: 20.0}
    assert speedup(values)[2] == approx(0.5)  # a time that doubled: twice as slow (10/20)
    assert speedup(values, higher_is_better=True)[2] == approx(2.0)  # a rate that doubled (20/10)


def test_speedup_is_sorted_by_process_count_whatever_the_input_order():
    assert list(speedup({8: 1.0, 1: 4.0, 2: 3.0})) == [1, 2, 8]


def test_speedup_of_a_single_count_is_one():
    assert speedup({16: 3.5}) == {16: 1.0}


@pytest.mark.parametrize("values, message", [
    ({}, "values_by_procs"),
    ([(1, 2.0)], "values_by_procs"),
    ({0: 1.0}, "values_by_procs process count"),
    ({-2: 1.0}, "values_by_procs process count"),
    ({1.5: 1.0}, "values_by_procs process count"),
    ({True: 1.0}, "values_by_procs process count"),
    ({1: 0.0}, "values_by_procs[1]"),
    ({1: -3.0}, "values_by_procs[1]"),
    ({1: math.nan}, "values_by_procs[1]"),
    ({1: math.inf}, "values_by_procs[1]"),
    ({1: "fast"}, "values_by_procs[1]"),
])
def test_speedup_rejects_bad_curves(values, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        speedup(values)


def test_speedup_rejects_a_baseline_that_was_not_measured():
    with pytest.raises(InputError, match="baseline: 3 is not a process count"):
        speedup(TIMES, baseline=3)
    with pytest.raises(InputError, match="baseline"):
        speedup(TIMES, baseline=0)


# --- parallel efficiency --------------------------------------------------------------------------

def test_parallel_efficiency_of_times():
    # S * 1 / p: 1/1, 1.6667/2, 2.5/4, 2/8
    assert parallel_efficiency(TIMES) == approx({1: 1.0, 2: 0.8333333, 4: 0.625, 8: 0.25})


def test_parallel_efficiency_with_a_baseline_above_one():
    # S relative to p0=2 (0.6, 1, 1.5, 1.2) times 2/p: 0.6*2/1, 1*2/2, 1.5*2/4, 1.2*2/8
    assert parallel_efficiency(TIMES, baseline=2) == approx({1: 1.2, 2: 1.0, 4: 0.75, 8: 0.3})


def test_parallel_efficiency_of_rates():
    # Gflop/s from p0=2: S = 1, 30/18 = 1.6667, 48/18 = 2.6667; E = S*2/p: 1, 0.8333, 0.6667
    rates = {2: 18.0, 4: 30.0, 8: 48.0}
    assert parallel_efficiency(rates, higher_is_better=True) == approx({2: 1.0, 4: 0.8333333, 8: 0.6666667})


def test_parallel_efficiency_rejects_bad_input():
    with pytest.raises(InputError, match="values_by_procs"):
        parallel_efficiency({})
    with pytest.raises(InputError, match="baseline"):
        parallel_efficiency(TIMES, baseline=16)


# --- Karp-Flatt -----------------------------------------------------------------------------------

def test_karp_flatt_from_one_process():
    # (1/3 - 1/4) / (1 - 1/4) = (1/12) / (3/4) = 1/9
    assert karp_flatt(3.0, 4) == approx(1 / 9)


def test_karp_flatt_of_perfect_speedup_is_zero():
    # (1/4 - 1/4) / (3/4) = 0
    assert karp_flatt(4.0, 4) == approx(0.0)


def test_karp_flatt_relative_to_a_larger_baseline():
    # q = 8/4 = 2: (1/1.5 - 1/2) / (1 - 1/2) = (1/6) / (1/2) = 1/3
    assert karp_flatt(1.5, 8, p0=4) == approx(1 / 3)


def test_karp_flatt_is_negative_for_superlinear_speedup():
    # (1/5 - 1/4) / (3/4) = -0.05 / 0.75 = -1/15
    assert karp_flatt(5.0, 4) == approx(-1 / 15)


def test_karp_flatt_below_the_baseline_count():
    # q = 2/4 = 0.5, perfect scaling down gives S = 0.5: (2 - 2) / (1 - 2) = 0
    assert karp_flatt(0.5, 2, p0=4) == approx(0.0)


def test_karp_flatt_is_undefined_at_the_baseline():
    assert karp_flatt(1.0, 1) is None
    assert karp_flatt(1.0, 4, p0=4) is None


@pytest.mark.parametrize("args, message", [
    ((0.0, 4), "speedup"),
    ((-1.0, 4), "speedup"),
    ((math.nan, 4), "speedup"),
    ((2.0, 0), "p:"),
    ((2.0, 2.5), "p:"),
    ((2.0, 4, 0), "p0"),
    ((2.0, 4, -1), "p0"),
])
def test_karp_flatt_rejects_bad_input(args, message):
    with pytest.raises(InputError, match=message):
        karp_flatt(*args)


# --- weak scaling ---------------------------------------------------------------------------------

def test_weak_scaling_efficiency_of_times():
    # constant work per process: 10/10, 10/10, 10/12.5
    assert weak_scaling_efficiency({1: 10.0, 2: 10.0, 4: 12.5}) == approx({1: 1.0, 2: 1.0, 4: 0.8})


def test_weak_scaling_efficiency_of_total_rates():
    # R(p) / (R(1) * p/1): 5/5, 10/(5*2), 16/(5*4)
    rates = {1: 5.0, 2: 10.0, 4: 16.0}
    assert weak_scaling_efficiency(rates, higher_is_better=True) == approx({1: 1.0, 2: 1.0, 4: 0.8})


def test_weak_scaling_efficiency_of_rates_with_a_baseline():
    # R(p0=2) = 10: 5/(10*1/2), 10/(10*2/2), 16/(10*4/2)
    rates = {1: 5.0, 2: 10.0, 4: 16.0}
    assert weak_scaling_efficiency(rates, baseline=2, higher_is_better=True) == approx({1: 1.0, 2: 1.0, 4: 0.8})


def test_weak_scaling_efficiency_rejects_bad_input():
    with pytest.raises(InputError, match="values_by_procs"):
        weak_scaling_efficiency({2: -1.0})


# --- speedup peak ---------------------------------------------------------------------------------

def test_speedup_peak_finds_the_interior_maximum_of_a_degrading_curve():
    # speedups 1, 1.67, 2.5, 2.0: highest at 4
    assert speedup_peak(speedup(TIMES)) == (4, approx(2.5))


def test_speedup_peak_ties_go_to_the_smallest_count():
    assert speedup_peak({1: 1.0, 2: 2.0, 4: 2.0, 8: 1.5}) == (2, 2.0)


def test_speedup_peak_of_a_rising_curve_is_its_last_point():
    assert speedup_peak({8: 7.0, 1: 1.0, 4: 3.5}) == (8, 7.0)


def test_speedup_peak_of_one_point():
    assert speedup_peak({4: 1.0}) == (4, 1.0)


def test_speedup_peak_rejects_empty_curves():
    with pytest.raises(InputError, match="speedups"):
        speedup_peak({})


# --- stack improvement ----------------------------------------------------------------------------

def test_improvement_at_is_the_time_ratio_minus_one():
    # 40 / 32 - 1 = 0.25: the other stack is 25% faster at 4 processes
    assert improvement_at(TIMES, {1: 80.0, 2: 48.0, 4: 32.0}, 4) == approx(0.25)


def test_improvement_at_is_negative_when_slower():
    # 60 / 75 - 1 = -0.2
    assert improvement_at(TIMES, {2: 75.0}, 2) == approx(-0.2)


def test_improvement_at_for_rates():
    # 36 / 30 - 1 = 0.2
    assert improvement_at({4: 30.0}, {4: 36.0}, 4, higher_is_better=True) == approx(0.2)


def test_improvement_at_needs_both_stacks_measured_at_p():
    with pytest.raises(InputError, match="p: 8 is not a process count of other_curve"):
        improvement_at(TIMES, {4: 32.0}, 8)
    with pytest.raises(InputError, match="p: 16 is not a process count of baseline_curve"):
        improvement_at(TIMES, {16: 32.0}, 16)
    with pytest.raises(InputError, match="p:"):
        improvement_at(TIMES, TIMES, 0)


def test_stack_improvement_at_and_up_to_the_baseline_peak():
    other = {1: 100.0, 2: 30.0, 4: 32.0, 8: 20.0}
    result = stack_improvement(TIMES, other)
    assert result.p_peak == 4  # baseline time is lowest (speedup highest) at 4
    assert result.at_peak == approx(0.25)  # 40/32 - 1
    # ratios at 1, 2, 4: 100/100 = 1, 60/30 = 2, 40/32 = 1.25; (1*2*1.25)^(1/3) = 2.5^(1/3) = 1.35721
    # (the arithmetic mean would say 0.41667; p=8, beyond the peak, is not averaged)
    assert result.mean_to_peak == approx(2.5 ** (1 / 3) - 1)
    assert result.mean_to_peak == approx(0.357209, abs=1e-6)
    assert result.average_to_peak == approx((0 + 1 + 0.25) / 3)  # the study's "Average %": 41.7%
    assert result.counts == (1, 2, 4)
    assert result.missing == ()


def test_stack_improvement_gain_and_loss_of_the_same_factor_cancel():
    # ratios 100/50 = 2 and 60/120 = 0.5: geometric mean sqrt(2*0.5) = 1 -> 0
    # (the arithmetic mean of ratios would report a 25% gain)
    result = stack_improvement({1: 100.0, 2: 60.0}, {1: 50.0, 2: 120.0})
    assert result.p_peak == 2
    assert result.mean_to_peak == approx(0.0, abs=1e-12)
    assert result.average_to_peak == approx(0.25)  # the arithmetic mean is biased toward the gain


def test_stack_improvement_skips_and_lists_counts_the_other_stack_lacks():
    # counts 1 and 4 only: ratios 100/100 = 1, 40/32 = 1.25; sqrt(1.25) = 1.118034
    result = stack_improvement(TIMES, {1: 100.0, 4: 32.0})
    assert result.counts == (1, 4)
    assert result.missing == (2,)
    assert result.mean_to_peak == approx(math.sqrt(1.25) - 1)


def test_stack_improvement_of_rates():
    base = {1: 10.0, 2: 18.0, 4: 30.0, 8: 24.0}  # peak at 4
    other = {1: 10.0, 2: 20.0, 4: 36.0}
    result = stack_improvement(base, other, higher_is_better=True)
    assert result.p_peak == 4
    assert result.at_peak == approx(0.2)  # 36/30 - 1
    # ratios 10/10 = 1, 20/18 = 1.1111, 36/30 = 1.2: product 1.3333, cube root 1.100642
    assert result.mean_to_peak == approx((4 / 3) ** (1 / 3) - 1)


def test_stack_improvement_needs_the_other_stack_at_the_peak():
    with pytest.raises(InputError, match="p: 4 is not a process count of other_curve"):
        stack_improvement(TIMES, {1: 90.0, 2: 50.0, 8: 30.0})


# --- interconnect value ---------------------------------------------------------------------------

BASE_S = {1: 1.0, 2: 1.8, 4: 3.0, 8: 2.5}


def test_interconnect_value_interpolates_the_other_curve():
    # target S = 3.0 (baseline at 4); other crosses between (2, 1.9) and (4, 3.5):
    # 2 + (3.0 - 1.9) * (4 - 2) / (3.5 - 1.9) = 2 + 2.2 / 1.6 = 3.375; 4 - 3.375 = 0.625 fewer
    value = interconnect_value(BASE_S, {1: 1.0, 2: 1.9, 4: 3.5, 8: 4.0}, 4)
    assert value.p_other == approx(3.375)
    assert value.fewer_procs == approx(0.625)
    assert value.upper_bound is False


def test_interconnect_value_takes_the_first_crossing():
    # other rises through 3.0 between (1, 1) and (2, 3.2), dips, rises again after 4:
    # 1 + (3 - 1) * 1 / 2.2 = 1.909091; 4 - 1.909091 = 2.090909
    value = interconnect_value(BASE_S, {1: 1.0, 2: 3.2, 4: 2.0, 8: 3.6}, 4)
    assert value.p_other == approx(1 + 2 / 2.2)
    assert value.fewer_procs == approx(4 - (1 + 2 / 2.2))


def test_interconnect_value_ignores_falling_segments():
    # (2, 2.5) -> (4, 2.0) falls; the rising crossing is (4, 2.0) -> (8, 4.0):
    # 4 + (3 - 2) * 4 / 2 = 6; 4 - 6 = -2 (the other stack needs 2 more processes)
    value = interconnect_value(BASE_S, {1: 1.0, 2: 2.5, 4: 2.0, 8: 4.0}, 4)
    assert value.p_other == approx(6.0)
    assert value.fewer_procs == approx(-2.0)


def test_interconnect_value_exact_hit_on_a_measured_point():
    # baseline at 2 has S = 1.8; other measured exactly 1.8 at 2: no fewer processes
    value = interconnect_value(BASE_S, {1: 1.0, 2: 1.8, 4: 3.0}, 2)
    assert value.p_other == approx(2.0)
    assert value.fewer_procs == approx(0.0)


def test_interconnect_value_at_the_smallest_count_is_an_upper_bound_when_already_beaten():
    # other's first point (2, 2.0) already beats the target 1.8: at most 2 processes, 0 fewer
    value = interconnect_value(BASE_S, {2: 2.0, 4: 3.5}, 2)
    assert value.p_other == 2.0
    assert value.fewer_procs == 0.0
    assert value.upper_bound is True


def test_interconnect_value_is_none_when_the_target_is_never_reached():
    assert interconnect_value(BASE_S, {1: 1.0, 2: 1.5, 4: 2.0, 8: 2.9}, 4) is None


def test_interconnect_value_rejects_bad_input():
    with pytest.raises(InputError, match="p: 16 is not a process count of baseline_speedups"):
        interconnect_value(BASE_S, BASE_S, 16)
    with pytest.raises(InputError, match="other_speedups"):
        interconnect_value(BASE_S, {}, 4)
    with pytest.raises(InputError, match="baseline_speedups"):
        interconnect_value({1: -1.0}, BASE_S, 1)


# --- half-power point -----------------------------------------------------------------------------

def test_half_power_point_least_squares_over_two_points_each_side():
    curve = [(1, 5.0), (2, 10.0), (4, 20.0), (8, 40.0), (16, 80.0), (32, 90.0), (64, 100.0)]
    # peak 100, half 50, first reached at 16; fit (4,20) (8,40) (16,80) (32,90):
    # mean x = 15, mean y = 57.5; Sxx = 121+49+1+289 = 460; Sxy = 412.5+122.5+22.5+552.5 = 1110
    # slope = 111/46, intercept = 57.5 - 15*111/46 = 980/46; n = (50 - 980/46) / (111/46) = 1320/111
    result = half_power_point(curve)
    assert result.n_half == approx(1320 / 111)  # 11.8919 bytes
    assert result.peak_bandwidth == 100.0
    assert result.peak_size == 64
    assert result.at_or_below_smallest is False
    assert result.method == "least-squares"


def test_half_power_point_on_a_straight_line_is_exact():
    # bandwidth = 10 * size: peak 80, half 40, reached exactly at size 4
    curve = [(size, 10.0 * size) for size in range(1, 9)]
    assert half_power_point(curve).n_half == approx(4.0)


def test_half_power_point_with_one_point_each_side():
    # only (1, 10) and (2, 100): 1 + (50 - 10) / (100 - 10) = 1 + 40/90 = 1.4444
    assert half_power_point([(1, 10.0), (2, 100.0)]).n_half == approx(1 + 4 / 9)


def test_half_power_point_with_one_point_below_and_two_above():
    # half 50 first reached at 2; fit (1,20) (2,60) (4,100): mean x = 7/3, mean y = 60;
    # Sxx = 16/9+1/9+25/9 = 42/9; Sxy = (-4/3)(-40)+(-1/3)(0)+(5/3)(40) = 360/3 = 120
    # slope = 120 / (42/9) = 180/7; n = 7/3 + (50 - 60) * 7/180 = 7/3 - 7/18 = 35/18 = 1.9444
    assert half_power_point([(1, 20.0), (2, 60.0), (4, 100.0)]).n_half == approx(35 / 18)


def test_half_power_point_falls_back_to_the_bracket_when_the_fit_leaves_it():
    curve = [(1, 10.0), (2, 20.0), (3, 30.0), (4, 40.0), (5, 100.0)]
    # half 50 between (4, 40) and (5, 100); the fit through (3,30) (4,40) (5,100) gives
    # slope 35, intercept -83.33, n = 133.33/35 = 3.81 < 4: outside the bracket, so
    # 4 + (50 - 40) / (100 - 40) = 4.1667
    result = half_power_point(curve)
    assert result.n_half == approx(4 + 1 / 6)
    assert result.method == "bracket"


def test_half_power_point_is_first_reached_even_if_the_curve_dips_later():
    # peak 100 at 8, half 50 first reached at 4; later 16 dips to 40
    # fit (1,0) (2,10) (4,60) (8,100): mean x = 3.75, mean y = 42.5;
    # Sxx = 7.5625+3.0625+0.0625+18.0625 = 28.75; Sxy = 116.875+56.875+4.375+244.375 = 422.5
    # slope = 14.695652; n = 3.75 + (50 - 42.5) / 14.695652 = 4.260355 > 4: outside [2, 4],
    # so bracket: 2 + (50 - 10) * 2 / 50 = 3.6
    result = half_power_point([(1, 0.0), (2, 10.0), (4, 60.0), (8, 100.0), (16, 40.0)])
    assert result.n_half == approx(3.6)
    assert result.peak_size == 8


def test_half_power_point_at_or_below_the_smallest_size():
    # 60 >= 100/2 already at 1 byte
    result = half_power_point([(1, 60.0), (2, 80.0), (4, 100.0)])
    assert result.n_half is None
    assert result.at_or_below_smallest is True
    assert result.peak_bandwidth == 100.0


@pytest.mark.parametrize("curve, message", [
    ([], "curve: needs at least one"),
    ((), "curve: needs at least one"),
    ("1,2", "curve: needs at least one"),
    ([(4, 10.0), (2, 20.0)], "strictly increasing"),
    ([(4, 10.0), (4, 20.0)], "strictly increasing"),
    ([(1, 10.0), (2, -1.0)], r"curve\[2\]"),
    ([(-1, 10.0)], "curve size"),
    ([(1, 10.0, 3)], "pair"),
    ([(1, 0.0), (2, 0.0)], "zero everywhere"),
])
def test_half_power_point_rejects_bad_curves(curve, message):
    with pytest.raises(InputError, match=message):
        half_power_point(curve)


# --- message rate, latency model ------------------------------------------------------------------

def test_message_rate_uses_decimal_megabytes():
    # 80 MB/s = 80e6 bytes/s in 8-byte messages: 1e7 messages/s
    assert message_rate(8, 80.0) == approx(1e7)


def test_message_rate_rejects_bad_input():
    with pytest.raises(InputError, match="size_bytes"):
        message_rate(0, 80.0)
    with pytest.raises(InputError, match="bandwidth_MBps"):
        message_rate(8, -1.0)


def test_ideal_latency_is_t0_plus_size_over_bandwidth():
    # 1.5 us + 4000 bytes / (1000 bytes/us) = 5.5 us
    assert ideal_latency(1.5, 1000.0, 4000) == approx(5.5)
    assert ideal_latency(1.5, 1000.0, 0) == approx(1.5)


def test_ideal_latency_rejects_bad_input():
    with pytest.raises(InputError, match="b_inf_MBps"):
        ideal_latency(1.0, 0.0, 8)
    with pytest.raises(InputError, match="t0_us"):
        ideal_latency(-1.0, 1.0, 8)
    with pytest.raises(InputError, match="size"):
        ideal_latency(1.0, 1.0, -8)


# t0 = 1 us, B_inf = 1024 MB/s = 1024 bytes/us: ideal 1, 2, 3, 5 us at 0, 1024, 2048, 4096 bytes
LATENCY = [(0, 1.0), (1024, 2.0), (2048, 4.5), (4096, 5.0)]


def test_latency_surprise_is_measured_over_ideal():
    # 1/1, 2/2, 4.5/3, 5/5
    surprise = latency_surprise(LATENCY, 1.0, 1024.0)
    assert [size for size, _ in surprise] == [0, 1024, 2048, 4096]
    assert [ratio for _, ratio in surprise] == approx([1.0, 1.0, 1.5, 1.0])


def test_surprise_area_is_trapezoidal_in_log2_size():
    # excess 0, 0.5, 0 at log2 = 10, 11, 12: (0 + 0.5)/2 * 1 + (0.5 + 0)/2 * 1 = 0.5; size 0 left out
    assert surprise_area(LATENCY, 1.0, 1024.0) == approx(0.5)


def test_surprise_area_of_the_ideal_model_is_zero():
    curve = [(size, 1.0 + size / 1024) for size in (1, 8, 64, 512)]
    assert surprise_area(curve, 1.0, 1024.0) == approx(0.0, abs=1e-12)


def test_surprise_area_is_signed():
    # faster than the model: ideal 2 and 3 us at 1024 and 2048, measured 1 and 1.5: excess -0.5, -0.5
    # one doubling: (-0.5 - 0.5)/2 = -0.5
    assert surprise_area([(1024, 1.0), (2048, 1.5)], 1.0, 1024.0) == approx(-0.5)


def test_surprise_area_spans_uneven_size_steps():
    # ideal 1 + s/1024: at 256 (log2 8) 1.25, at 1024 (log2 10) 2; measured 2.5 and 2: excess 1, 0
    # width 2 doublings: (1 + 0)/2 * 2 = 1
    assert surprise_area([(256, 2.5), (1024, 2.0)], 1.0, 1024.0) == approx(1.0)


def test_surprise_area_rejects_bad_input():
    with pytest.raises(InputError, match="two sizes above 0"):
        surprise_area([(0, 1.0), (8, 1.0)], 1.0, 1024.0)
    with pytest.raises(InputError, match="t0_us"):
        latency_surprise(LATENCY, 0.0, 1024.0)
    with pytest.raises(InputError, match="curve_latency_us"):
        latency_surprise([], 1.0, 1024.0)


def test_ring_vs_pingpong_ratio():
    # 3.0 us random ring / 1.5 us ping-pong = 2
    assert ring_vs_pingpong_ratio(3.0, 1.5) == approx(2.0)
    with pytest.raises(InputError, match="pingpong_latency_us"):
        ring_vs_pingpong_ratio(3.0, 0.0)
    with pytest.raises(InputError, match="random_ring_latency_us"):
        ring_vs_pingpong_ratio(math.inf, 1.0)


# --- comparisons across configurations ------------------------------------------------------------

OSU = {
    "switch-a": {0: 1.0, 1: 2.0, 4: 2.0, 8: 4.0, 16: 8.0},
    "switch-b": {4: 1.0, 8: 5.0, 32: 1.0},
}


def test_normalise_to_baseline_keeps_common_sizes_from_min_size():
    ratios = normalise_to_baseline(OSU, "switch-a")
    # b: 2/1 at 4, 4/5 at 8; 32 has no baseline time; 0 and 1 are below 4 bytes
    assert ratios["switch-b"] == approx({4: 2.0, 8: 0.8})
    assert ratios["switch-a"] == {4: 1.0, 8: 1.0, 16: 1.0}


def test_normalise_to_baseline_with_a_lower_min_size():
    assert list(normalise_to_baseline(OSU, "switch-a", min_size=0)["switch-a"]) == [0, 1, 4, 8, 16]


def test_normalise_to_baseline_rejects_bad_input():
    with pytest.raises(InputError, match="baseline: 'switch-c' is not a configuration"):
        normalise_to_baseline(OSU, "switch-c")
    with pytest.raises(InputError, match=r"times\['x'\]\[4\]"):
        normalise_to_baseline({"x": {4: 0.0}}, "x")
    with pytest.raises(InputError, match="times"):
        normalise_to_baseline({}, "x")
    with pytest.raises(InputError, match="min_size"):
        normalise_to_baseline(OSU, "switch-a", min_size=-1)


def test_summarise_gives_min_geometric_mean_max_per_configuration():
    summary = summarise({"b": {4: 2.0, 8: 0.5, 16: 1.0}, "a": {4: 1.0}})
    # b: min 0.5, (2 * 0.5 * 1)^(1/3) = 1 (the arithmetic mean would be 1.1667), max 2
    assert (summary["b"].minimum, summary["b"].geomean, summary["b"].maximum) == (0.5, approx(1.0), 2.0)
    assert summary["b"].count == 3
    assert summary["a"].geomean == approx(1.0)


def test_summarise_rejects_bad_input():
    with pytest.raises(InputError, match=r"ratios\['b'\]: no ratios"):
        summarise({"b": {}})
    with pytest.raises(InputError, match=r"ratios\['b'\]"):
        summarise({"b": {4: -1.0}})
    with pytest.raises(InputError, match="ratios"):
        summarise({})


def test_health_warnings_flag_times_over_factor_times_the_best():
    times = {
        "a": {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0},
        "b": {0: 20.0, 1: 5.0, 2: 10.0, 3: 100.0, 4: 10.5},
    }
    warnings = health_warnings(times)
    # 0: 20 > 10*1 flagged; 1: 5 no; 2: 10 is not > 10; 3 not a power of two; 4: 10.5 > 10 flagged
    assert [(w.config, w.size) for w in warnings] == [("b", 0), ("b", 4)]
    assert warnings[1].best_time == 1.0 and warnings[1].best_config == "a"
    assert warnings[1].times_best == approx(10.5)


def test_health_warnings_with_a_custom_factor_and_best_per_size():
    times = {"a": {8: 3.0, 16: 1.0}, "b": {8: 1.0, 16: 2.5}, "c": {8: 2.0}}
    # best at 8 is b (1.0): a is 3x; best at 16 is a (1.0): b is 2.5x; factor 2 flags a@8 and b@16
    warnings = health_warnings(times, factor=2.0)
    assert [(w.config, w.size, w.best_config) for w in warnings] == [("a", 8, "b"), ("b", 16, "a")]


def test_health_warnings_none_for_a_single_configuration():
    assert health_warnings({"a": {1: 1.0, 2: 500.0}}) == []


def test_health_warnings_rejects_bad_input():
    with pytest.raises(InputError, match="factor"):
        health_warnings(OSU, factor=0.5)
    with pytest.raises(InputError, match="factor"):
        health_warnings(OSU, factor=math.nan)
    with pytest.raises(InputError, match=r"times\['a'\]\[1\]"):
        health_warnings({"a": {1: -1.0}})


def test_aggregate_then_normalise_sums_common_keys_first():
    times = {
        "gcc": {("fft", 1): 10.0, ("lu", 1): 20.0, ("fft", 2): 6.0},
        "icx": {("fft", 1): 5.0, ("lu", 1): 10.0},
    }
    result = aggregate_then_normalise(times, "gcc")
    # common keys (fft,1) and (lu,1): gcc 10+20 = 30, icx 5+10 = 15; ratios 30/30, 30/15
    assert result.keys == (("fft", 1), ("lu", 1))
    assert result.totals == {"gcc": 30.0, "icx": 15.0}
    assert result.ratios == {"gcc": 1.0, "icx": 2.0}
    assert result.missing == {"gcc": (), "icx": (("fft", 2),)}


def test_aggregate_then_normalise_weights_runs_by_their_time():
    # per-run ratios 100/50 = 2 and 1/2 = 0.5 would average to 1; summed: 101/52 = 1.942308
    result = aggregate_then_normalise({"a": {"long": 100.0, "short": 1.0},
                                       "b": {"long": 50.0, "short": 2.0}}, "a")
    assert result.ratios["b"] == approx(101 / 52)


def test_aggregate_then_normalise_rejects_bad_input():
    with pytest.raises(InputError, match="baseline: 'c' is not a configuration"):
        aggregate_then_normalise({"a": {"k": 1.0}}, "c")
    with pytest.raises(InputError, match="no \\(function, procs\\) key is measured for every"):
        aggregate_then_normalise({"a": {"k": 1.0}, "b": {"j": 1.0}}, "a")
    with pytest.raises(InputError, match=r"times\['a'\]\['k'\]"):
        aggregate_then_normalise({"a": {"k": math.inf}}, "a")


def test_scaling_figures_strong_rates():
    # Gflop/s 50 on 1 core, 90 on 2: speedup 1.8, efficiency 90%, Karp-Flatt (1/1.8 - 1/2)/(1 - 1/2) = 0.1111.
    figures = {f.name: (f.value, f.unit) for f in scaling.scaling_figures({1: 50.0, 2: 90.0},
                                                                         higher_is_better=True, weak=False)}
    assert figures["speedup_p2"] == (pytest.approx(1.8), "x")
    assert figures["efficiency_p2"] == (pytest.approx(90.0), "%")
    assert figures["karp_flatt_p2"][0] == pytest.approx(0.111111, rel=1e-5)


def test_scaling_figures_weak_times_and_too_short_series():
    # Times 10 s on 1 node, 12.5 s on 4 (same work per node): weak efficiency 10/12.5 = 80%.
    figures = scaling.scaling_figures({1: 10.0, 4: 12.5}, higher_is_better=False, weak=True)
    assert [(f.name, f.value, f.unit) for f in figures] == [("weak_efficiency_p4", pytest.approx(80.0), "%")]
    with pytest.raises(InputError, match="at least two process counts"):
        scaling.scaling_figures({1: 10.0}, higher_is_better=False, weak=True)
