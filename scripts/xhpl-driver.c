/*
 * main and HPCC_Defaults for the HPL 2.0 inside Debian's hpcc source package, linked by
 * scripts/build-xhpl.sh into a stock-behaving xhpl.
 *
 * hpcc calls HPL_main from its own main, and its copy of HPL_pdinfo calls HPCC_Defaults to run
 * built-in defaults when the input file is illegal. Stock HPL stops instead, and so does this xhpl:
 * a deck that does not fit the launched ranks must not quietly measure something else.
 *
 * Opt-in, and only then unlike stock xhpl: with SCALEBENCH_DGEMM_N=n every rank times DGEMM of order
 * n at once, as hpcc's StarDGEMM does, in short repeats before HPL (rank 0 prints hpcc's summary keys
 * and the repeats before HPL's output) and again after it (the repeats after HPL's output). The run
 * then carries its DGEMM ceiling from the same processes, binding and BLAS, and how steady it was.
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

/* Short repeats, each one DGEMM call on every rank at once, before the solves and again after them:
 * the best is the ceiling; repeats that disagree, or a ceiling that moved between before and after,
 * say the node was not quiet or its clock changed. */
#define DGEMM_REPEATS 5

struct dgemm_data {
    int n;
    double *a, *b, *c;
};

/* 0 when the matrices do not fit. */
static int dgemm_setup(struct dgemm_data *d, int n)
{
    size_t count = (size_t)n * (size_t)n, i;

    d->n = n;
    d->a = malloc(count * sizeof(double));
    d->b = malloc(count * sizeof(double));
    d->c = malloc(count * sizeof(double));
    if (d->a == NULL || d->b == NULL || d->c == NULL) {
        free(d->a); free(d->b); free(d->c);
        return 0;
    }
    for (i = 0; i < count; i++) {
        d->a[i] = (double)(i % 1021) / 1021.0 - 0.5;
        d->b[i] = (double)(i % 1031) / 1031.0 - 0.5;
        d->c[i] = 0.0;
    }
    return 1;
}

static double dgemm_gflops(struct dgemm_data *d)
{
    int n = d->n;
    double start = MPI_Wtime(), seconds;

    HPL_dgemm(HplColumnMajor, HplNoTrans, HplNoTrans, n, n, n, 1.0, d->a, n, d->b, n, 1.0, d->c, n);
    seconds = MPI_Wtime() - start;
    return seconds > 0.0 ? 2.0 * n * n * (double)n / seconds / 1e9 : 0.0;
}

/* Every rank times DGEMM_REPEATS calls, each after a barrier (the first run of the job after an
 * untimed call: page faults and BLAS thread start-up). Rank 0 prints, per repeat, the sum of the
 * ranks' rates as DGEMM_<phase>_Gflops; before the solves also hpcc's StarDGEMM keys (per rank: the
 * mean, min and max of each rank's best). Returns 0 when the order is no order. */
static int star_dgemm(const char *order, const char *phase, int warm_up)
{
    char *end;
    long n = strtol(order, &end, 10);
    double rates[DGEMM_REPEATS], sums[DGEMM_REPEATS], best = 0.0, low, sum, high;
    struct dgemm_data d;
    int rank, size, r, fits;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (*order == '\0' || *end != '\0' || n < 1 || n > 65536) {
        if (rank == 0)
            fprintf(stderr, "xhpl: SCALEBENCH_DGEMM_N=%s is not an order from 1 to 65536: no DGEMM\n", order);
        return 0;
    }
    fits = dgemm_setup(&d, (int)n);
    if (fits && warm_up)
        dgemm_gflops(&d);
    for (r = 0; r < DGEMM_REPEATS; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        rates[r] = fits ? dgemm_gflops(&d) : 0.0;
        if (rates[r] > best)
            best = rates[r];
    }
    if (fits) {
        free(d.a); free(d.b); free(d.c);
    }
    MPI_Reduce(rates, sums, DGEMM_REPEATS, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&best, &low, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&best, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&best, &high, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (warm_up)
            printf("StarDGEMM_N=%ld\nCommWorldProcs=%d\nStarDGEMM_Gflops=%f\n"
                   "StarDGEMM_Gflops_min=%f\nStarDGEMM_Gflops_max=%f\n", n, size, sum / size, low, high);
        printf("DGEMM_%s_Gflops=", phase);
        for (r = 0; r < DGEMM_REPEATS; r++)
            printf(r ? " %f" : "%f", sums[r]);
        printf("\n\n");
        fflush(stdout);
    }
    return 1;
}

int main(int argc, char **argv)
{
    HPL_RuntimeData rdata;
    int failure = 0;
    const char *dgemm = getenv("SCALEBENCH_DGEMM_N");

    MPI_Init(&argc, &argv);
    if (dgemm != NULL && star_dgemm(dgemm, "Before", 1)) {
        HPL_main(argc, argv, &rdata, &failure);
        star_dgemm(dgemm, "After", 0);
    } else {
        HPL_main(argc, argv, &rdata, &failure);
    }
    MPI_Finalize();
    /* Like stock xhpl: a failed residual is reported in the output, not in the exit status. */
    return 0;
}
