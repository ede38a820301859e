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


@pytest.mark.parametrize("kernels, flagged", [(["Prescott", "Prescott"], True), (["SkylakeX"], False), ([], False),
                                              (["SkylakeX", "generic"], True)])
def test_a_fallback_kernel_that_openblas_reports_is_a_warning(kernels, flagged):
    stderr = "".join(f"Core: {kernel}\n" for kernel in kernels)
    result = hpl_outcome(hpl_output([ROW]), stderr, hpcc=False, expected_cases=1, tasks=2, rpeak_gflops=78.3)
    assert ("OpenBLAS ran its fallback kernel" in result.ceiling_warnings) is flagged
    assert result.problems == ()  # a slow kernel is a warning: the result still stands
