"""Synthetic HPL and hpcc outputs, printed with HPL 2.3's own formats (HPL_pdtest.c): row
"W%c%1d%c%c%1d%c%1d%12d %5d %5d %5d %18.2f %19.4e", then the scaled-residual line."""

BCAST_CODE = {"1ring": 0, "1ringM": 1, "2ring": 2, "2ringM": 3, "long": 4, "longM": 5}


def tv(pmap="R", depth=1, bcast=1, rfact="C", ndiv=2, pfact="R", nbmin=4):
    return "W%c%1d%c%c%1d%c%1d" % (pmap, depth, str(bcast), rfact, ndiv, pfact, nbmin)


def solve(gflops, n, nb=192, p=1, q=1, status="PASSED", code=None):
    """A row whose Gflops follows from N and the printed time, as HPL's does: about `gflops`."""
    time_s = round((2 / 3 * n**3 + 1.5 * n**2) / gflops / 1e9, 2)
    return (code or tv(), n, nb, p, q, time_s, (2 / 3 * n**3 + 1.5 * n**2) / time_s / 1e9, status)


def hpl_output(rows, residuals=None, end_of_tests=True):
    """HPL 2.3 output text; rows are (tv, n, nb, p, q, time_s, gflops, status) with status
    PASSED, FAILED or None (the run stops before the residual line). residuals: the printed
    scaled residual per row (default: a small one when PASSED, a large one when FAILED)."""
    out = ["=" * 80, "HPLinpack 2.3  --  High-Performance Linpack benchmark  --   December 2, 2018",
           "=" * 80, "",
           "- The relative machine precision (eps) is taken to be               1.110223e-16",
           "- Computational tests pass if scaled residuals are less than                16.0", ""]
    for index, (code, n, nb, p, q, time_s, gflops, status) in enumerate(rows):
        out += ["=" * 80,
                "T/V                N    NB     P     Q               Time                 Gflops",
                "-" * 80,
                "%s%12d %5d %5d %5d %18.2f %19.4e" % (code, n, nb, p, q, time_s, gflops),
                "HPL_pdgesv() start time Thu Nov  5 12:00:00 2026", "",
                "HPL_pdgesv() end time   Thu Nov  5 12:00:09 2026", ""]
        if status is None:
            break
        residual = residuals[index] if residuals else (1.23456789e-03 if status == "PASSED" else 3.4e+02)
        out += ["-" * 80,
                "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   %.8e ...... %s" % (residual, status)]
    else:
        passed = sum(r[7] == "PASSED" for r in rows)
        out += ["=" * 80, "",
                "Finished %6d tests with the following results:" % len(rows),
                "         %6d tests completed and passed residual checks," % passed,
                "         %6d tests completed and failed residual checks," % (len(rows) - passed),
                "         %6d tests skipped because of illegal input values." % 0,
                "-" * 80, ""]
        if end_of_tests:
            out += ["End of Tests.", "=" * 80]
    return "\n".join(out) + "\n"


def hpcc_output(hpl_text):
    """hpcc's output around an HPL section, with the Summary hpcc's io.c prints for it: the fastest row's
    rate in Tflop/s, and Success=0 when a test failed."""
    rows = [line.split() for line in hpl_text.splitlines() if line.startswith("W")]
    best = max(rows, key=lambda fields: float(fields[6]))
    success = 0 if "FAILED" in hpl_text else 1
    return ("This is the DARPA/DOE HPC Challenge Benchmark version 1.5.0 October 2012\n"
            "Begin of HPL section.\n" + hpl_text + "End of HPL section.\n"
            f"Begin of Summary section.\nHPL_Tflops={float(best[6]) / 1000:g}\nHPL_N={best[1]}\n"
            f"Success={success}\nEnd of Summary section.\nEnd of HPC Challenge tests.\n")
