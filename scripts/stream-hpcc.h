/* What hpcc's STREAM/stream.c takes from hpcc.h, and no more: scripts/build-stream.sh compiles that
 * file unchanged against this header and scripts/stream-driver.c. HPCC_LocalVectorSize returns the
 * array length the driver was given instead of sizing it from hpcc's input file. */
#ifndef SCALEBENCH_STREAM_HPCC_H
#define SCALEBENCH_STREAM_HPCC_H

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char outFname[256 + 1];
  int StreamThreads, StreamVectorSize;
  int StreamElements; /* elements per array on each rank: the driver's argument */
} HPCC_Params;

#define Mmin(a, b) (((a) < (b)) ? (a) : (b))
#define Mmax(a, b) (((a) > (b)) ? (a) : (b))
#define HPCC_XMALLOC(t, s) ((t *)malloc(sizeof(t) * (s)))
#define HPCC_free(p) free(p)

static inline int HPCC_LocalVectorSize(HPCC_Params *params, int vecCnt, size_t size, int pow2) {
  (void)vecCnt; (void)size; (void)pow2;
  return params->StreamElements;
}

int HPCC_Stream(HPCC_Params *params, int doIO, MPI_Comm comm, int world_rank, double *copyGBs,
                double *scaleGBs, double *addGBs, double *triadGBs, int *failure);

#endif
