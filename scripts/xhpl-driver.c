/*
 * main and HPCC_Defaults for the HPL 2.0 inside Debian's hpcc source package, linked by
 * scripts/build-xhpl.sh into a stock-behaving xhpl.
 *
 * hpcc calls HPL_main from its own main, and its copy of HPL_pdinfo calls HPCC_Defaults to run
 * built-in defaults when the input file is illegal. Stock HPL stops instead, and so does this xhpl:
 * a deck that does not fit the launched ranks must not quietly measure something else.
 *
 * Opt-in, and only then unlike stock xhpl: with SCALEBENCH_DGEMM_N=n every rank first times DGEMM of
 * order n at once, as hpcc's StarDGEMM does, and rank 0 prints hpcc's summary keys before HPL's
 * output. The run then carries its DGEMM ceiling from the same processes, binding and BLAS.
 */
#include <stdio.h>
#include <stdlib.h>

#include "hpl.h"

int HPL_main(int argc, char **argv, HPL_RuntimeData *rdata, int *failure);

/* Reached on every rank once HPL_pdinfo has reported the offending value on rank 0; the message
 * is stock HPL's. */
int HPCC_Defaults(HPL_T_test *test, int *ns, int *n, int *nbs, int *nb, HPL_T_ORDER *pmapping,
                  int *npqs, int *p, int *q, int *npfs, HPL_T_FACT *pf, int *nbms, int *nbm,
                  int *ndvs, int *ndv, int *nrfs, HPL_T_FACT *rf, int *ntps, HPL_T_TOP *tp,
                  int *ndhs, int *dh, HPL_T_SWAP *fswap, int *tswap, int *l1notran, int *unotran,
                  int *equil, int *align, MPI_Comm comm)
{
    int rank;

    MPI_Comm_rank(comm, &rank);
    if (rank == 0)
        HPL_pwarn(stderr, __LINE__, "HPCC_Defaults", "Illegal input in file HPL.dat. Exiting ...");
    MPI_Finalize();
    exit(1);
}

/* Best rate of repeated n x n x n DGEMMs on this rank over at least a second (and 2 calls): the
 * first call also pays for page faults and thread start-up. 0 when the matrices do not fit. */
static double dgemm_gflops(int n)
{
    size_t count = (size_t)n * (size_t)n;
    double *a = malloc(count * sizeof(double)), *b = malloc(count * sizeof(double));
    double *c = malloc(count * sizeof(double));
    double best = 0.0, spent = 0.0;
    size_t i;
    int calls;

    if (a == NULL || b == NULL || c == NULL) {
        free(a); free(b); free(c);
        return 0.0;
    }
    for (i = 0; i < count; i++) {
        a[i] = (double)(i % 1021) / 1021.0 - 0.5;
        b[i] = (double)(i % 1031) / 1031.0 - 0.5;
        c[i] = 0.0;
    }
    for (calls = 0; calls < 2 || spent < 1.0; calls++) {
        double start = MPI_Wtime(), seconds;
        HPL_dgemm(HplColumnMajor, HplNoTrans, HplNoTrans, n, n, n, 1.0, a, n, b, n, 1.0, c, n);
        seconds = MPI_Wtime() - start;
        spent += seconds;
        if (seconds > 0.0 && 2.0 * n * n * (double)n / seconds / 1e9 > best)
            best = 2.0 * n * n * (double)n / seconds / 1e9;
    }
    free(a); free(b); free(c);
    return best;
}

static void star_dgemm(const char *order)
{
    char *end;
    long n = strtol(order, &end, 10);
    double local, low, sum, high;
    int rank, size;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (*order == '\0' || *end != '\0' || n < 1 || n > 65536) {
        if (rank == 0)
            fprintf(stderr, "xhpl: SCALEBENCH_DGEMM_N=%s is not an order from 1 to 65536: no DGEMM\n", order);
        return;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    local = dgemm_gflops((int)n);
    MPI_Reduce(&local, &low, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&local, &high, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("StarDGEMM_N=%ld\nCommWorldProcs=%d\nStarDGEMM_Gflops=%f\n"
               "StarDGEMM_Gflops_min=%f\nStarDGEMM_Gflops_max=%f\n\n", n, size, sum / size, low, high);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    HPL_RuntimeData rdata;
    int failure = 0;
    const char *dgemm = getenv("SCALEBENCH_DGEMM_N");

    MPI_Init(&argc, &argv);
    if (dgemm != NULL)
        star_dgemm(dgemm);
    HPL_main(argc, argv, &rdata, &failure);
    MPI_Finalize();
    /* Like stock xhpl: a failed residual is reported in the output, not in the exit status. */
    return 0;
}
