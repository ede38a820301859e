"""scalebench.hpl.outcome: what one HPL job's output says, with the DGEMM ceiling of the same job:
hpcc's StarDGEMM, or the same keys the embedded xhpl prints before HPL when asked (xhpl-driver.c)."""
import pytest

from hpl_outputs import hpcc_output, hpl_output, tv
from scalebench.hpl.outcome import hpl_outcome, star_dgemm_keys

ROW = (tv(), 12288, 192, 1, 2, 16.0, 7.7e1, "PASSED")


def star(procs=2, gflops="38.5"):
    return (f"StarDGEMM_N=2048\nCommWorldProcs={procs}\nStarDGEMM_Gflops={gflops}\n"
            f"StarDGEMM_Gflops_min=37.0\nStarDGEMM_Gflops_max=40.0\n\n")


def outcome(text, tasks=2, hpcc=False):
    return hpl_outcome(text, "", hpcc=hpcc, expected_cases=1, tasks=tasks, rpeak_gflops=78.3)


def test_xhpl_dgemm_lines_give_the_ceiling_of_every_rank():
    result = outcome(star() + hpl_output([ROW]))
    assert result.problems == () and result.rmax_gflops == 77.0
    assert result.dgemm_ceiling_gflops == pytest.approx(2 * 38.5)


def test_xhpl_without_dgemm_lines_has_no_ceiling():
    result = outcome(hpl_output([ROW]))
    assert result.problems == () and result.dgemm_ceiling_gflops is None


def test_a_rank_count_other_than_the_tasks_is_a_problem():
    assert any("reports 1 MPI processes, 2 were launched" in p for p in outcome(star(procs=1) + hpl_output([ROW])).problems)


@pytest.mark.parametrize("value", ["0.000000", "nan", "-3", "fast"])
def test_a_dgemm_rate_that_cannot_be_is_no_ceiling(value):
    assert outcome(star(gflops=value) + hpl_output([ROW])).dgemm_ceiling_gflops is None


def test_only_lines_before_hpls_output_count():
    text = hpl_output([ROW]) + "StarDGEMM_Gflops=99\nCommWorldProcs=2\n"
    assert star_dgemm_keys(text) == {}


def test_hpcc_keeps_its_summary_ceiling():
    text = hpcc_output(hpl_output([ROW])).replace("Success=1\n", "Success=1\nCommWorldProcs=2\nStarDGEMM_Gflops=30.0\n")
    result = outcome(text, hpcc=True)
    assert result.problems == () and result.dgemm_ceiling_gflops == pytest.approx(60.0)


# --- the ceiling that is a ceiling, solves that agree, and warnings that follow the evidence ----------
# Figures recorded on a 2-vCPU first-generation EPYC (2.0 GHz nominal, 8 flop/cycle: Rpeak 16.0 Gflop/s a
# core) while other work ran on it (issue 28): 1-core solves 13.30, 18.05 and 13.31 Gflop/s; at 2 ranks
# a DGEMM ceiling of 13.3 Gflop/s for both ranks together and an Rmax of 23.41.
from hpl_outputs import solve  # noqa: E402
from scalebench.hpl.outcome import DgemmRepeats, ceiling_warnings  # noqa: E402

FLAGS = {"min_hpl_over_dgemm": 0.75, "min_dgemm_over_rpeak": 0.5, "noisy_cv": 0.05, "noisy_steal": 0.05,
         "noisy_foreign_cores": 0.25, "noisy_dgemm_spread": 0.10}
HOG = {"nodes": 1, "expected_nodes": 1, "steal_pct": 0.0, "steal_node": "vm", "foreign_cores": 0.48,
       "foreign_node": "vm", "foreign_top": "sb-cpu-hog[4242] 0.47"}


def repeats(before, after=""):
    return (star(gflops=f"{max(map(float, before.split())) / 2:f}") + f"DGEMM_Before_Gflops={before}\n\n",
            f"DGEMM_After_Gflops={after}\n" if after else "")


def test_the_ceiling_is_the_best_of_the_repeats_before_and_after_the_solves():
    head, tail = repeats("36.1 36.4 35.9 36.5 36.2", "35.8 36.0 36.9 36.3 36.1")
    result = outcome(head + hpl_output([solve(33.95, 11136, p=1, q=2)]) + tail)
    assert result.problems == ()
    assert result.dgemm_ceiling_gflops == 36.9  # after the solves
    assert result.dgemm.before == (36.1, 36.4, 35.9, 36.5, 36.2) and len(result.dgemm.after) == 5
    assert result.dgemm.spread == pytest.approx((36.9 - 35.8) / 36.9)


def test_a_ceiling_below_rmax_is_not_valid_and_says_why():
    head, tail = repeats("13.3 13.1 13.2 12.9 13.0")
    text = head + hpl_output([solve(21.27, 11136, p=1, q=2), solve(23.41, 11136, p=1, q=2),
                              solve(21.30, 11136, p=1, q=2)]) + tail
    quiet = hpl_outcome(text, "", hpcc=False, expected_cases=3, tasks=2, rpeak_gflops=31.9)
    assert quiet.dgemm_ceiling_gflops == 13.3 and quiet.rmax_gflops == pytest.approx(23.41, abs=0.01)
    assert quiet.ceiling_warnings.startswith("ceiling not valid: Rmax 23.41 exceeds the best DGEMM 13.30 Gflop/s "
                                             "(interference or clock change")
    assert "none measured: the clock may have changed" in quiet.ceiling_warnings
    assert "BLAS" not in quiet.ceiling_warnings  # DGEMM at 42% of Rpeak, of a ceiling that is none
    disturbed = hpl_outcome(text, "", hpcc=False, expected_cases=3, tasks=2, rpeak_gflops=31.9, interference=HOG)
    assert disturbed.ceiling_warnings.endswith("(interference or clock change; foreign load 0.48 cores on vm "
                                               "(> 0.25): sb-cpu-hog[4242] 0.47)")


def test_solves_that_disagree_have_a_high_coefficient_of_variation():
    text = repeats("16.9 16.8 16.9 16.7 16.9")[0] + hpl_output([solve(g, 8832) for g in (13.30, 18.05, 13.31)])
    result = hpl_outcome(text, "", hpcc=False, expected_cases=3, tasks=1, rpeak_gflops=16.0)
    assert result.rmax_gflops == pytest.approx(18.05, abs=0.01)
    assert result.solve_cv == pytest.approx(0.184, abs=0.002)  # the 36% spread of best over worst
    assert outcome(star() + hpl_output([ROW])).solve_cv is None  # one solve: nothing to compare


def test_a_low_dgemm_is_blamed_on_the_kernel_only_when_the_kernel_is_the_likely_cause():
    low = DgemmRepeats((29.0, 28.8, 29.1), ())
    wrong = ceiling_warnings(27.0, low, 128.0, ["Prescott", "Prescott"], "SkylakeX", None, FLAGS)
    assert wrong == ["DGEMM reaches 23% of Rpeak (< 50%) and OpenBLAS ran Prescott, not SkylakeX: a wrong BLAS "
                     "kernel (check OPENBLAS_CORETYPE)"]
    # no core forced (OpenBLAS detects the CPU itself), and it fell back to a generic core
    fallen = ceiling_warnings(27.0, low, 128.0, ["Prescott"], None, None, FLAGS)
    assert fallen == ["DGEMM reaches 23% of Rpeak (< 50%): the fallback kernel OpenBLAS ran"]
    chosen = ceiling_warnings(27.0, low, 128.0, ["SkylakeX"], "SkylakeX", None, FLAGS)
    assert "as chosen and no interference measured: a clock held below nominal" in chosen[0]
    disturbed = ceiling_warnings(27.0, low, 128.0, ["Prescott"], "SkylakeX", HOG, FLAGS)
    assert "interference, not the BLAS kernel" in disturbed[0] and "sb-cpu-hog" in disturbed[0]
    unsteady = ceiling_warnings(27.0, DgemmRepeats((29.0, 20.0), (28.0,)), 128.0, ["Prescott"], "SkylakeX", None,
                                FLAGS)
    assert "DGEMM repeats disagree by 31% (> 10%)" in unsteady[0] and "not the BLAS kernel" in unsteady[0]


def test_hpl_far_below_a_steady_ceiling_points_at_the_deck():
    (warning,) = ceiling_warnings(60.0, DgemmRepeats((100.0, 99.0), (99.5,)), 128.0, ["SkylakeX"], "SkylakeX",
                                  None, FLAGS)
    assert warning == "HPL reaches 60% of the DGEMM ceiling (< 75%): look at the deck (NB, grid), binding or network"


@pytest.mark.parametrize("line", ["DGEMM_Before_Gflops=12.0 0.000000 11.0", "DGEMM_Before_Gflops=12 nan",
                                  "DGEMM_Before_Gflops=fast", "DGEMM_Before_Gflops="])
def test_repeats_that_cannot_be_give_the_one_figure_of_hpccs_keys(line):
    result = outcome(star() + line + "\n" + hpl_output([ROW]))
    assert result.dgemm.all == (77.0,) and result.dgemm_ceiling_gflops == 77.0


@pytest.mark.parametrize("kernels, flagged", [(["Prescott", "Prescott"], True), (["SkylakeX"], False), ([], False),
                                              (["SkylakeX", "generic"], True)])
def test_a_fallback_kernel_that_openblas_reports_is_a_warning(kernels, flagged):
    stderr = "".join(f"Core: {kernel}\n" for kernel in kernels)
    result = hpl_outcome(hpl_output([ROW]), stderr, hpcc=False, expected_cases=1, tasks=2, rpeak_gflops=78.3)
    assert ("OpenBLAS ran its fallback kernel" in result.ceiling_warnings) is flagged
    assert result.problems == ()  # a slow kernel is a warning: the result still stands
