/*
 * main and HPCC_Defaults for the HPL 2.0 inside Debian's hpcc source package, linked by
 * scripts/build-xhpl.sh into a stock-behaving xhpl.
 *
 * hpcc calls HPL_main from its own main, and its copy of HPL_pdinfo calls HPCC_Defaults to run
 * built-in defaults when the input file is illegal. Stock HPL stops instead, and so does this xhpl:
 * a deck that does not fit the launched ranks must not quietly measure something else.
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

int main(int argc, char **argv)
{
    HPL_RuntimeData rdata;
    int failure = 0;

    MPI_Init(&argc, &argv);
    HPL_main(argc, argv, &rdata, &failure);
    MPI_Finalize();
    /* Like stock xhpl: a failed residual is reported in the output, not in the exit status. */
    return 0;
}
