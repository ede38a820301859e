/* main() for hpcc's STREAM (STREAM/stream.c, HPCC_Stream), built by scripts/build-stream.sh.
 *
 *   stream ELEMENTS [OUTPUT]     (OUTPUT: default /dev/stdout, appended to as hpcc does)
 *
 * Every MPI rank times Copy, Scale, Add and Triad over its own three arrays of ELEMENTS doubles, with
 * its OpenMP threads, between barriers; rank 0 prints hpcc's table, whose rates are per rank. One rank
 * per node with a thread on every core (OMP_NUM_THREADS, OMP_PLACES=cores) makes them per node. The
 * lines before the table say how many ranks ran, so a parser can tell. Exit status: 0 when the
 * solution validates, 3 when it does not, 1 when STREAM could not run, 2 on a bad argument. */
#include <errno.h>
#include <limits.h>

#include "hpcc.h"

int main(int argc, char **argv) {
  int rank, ranks, failure = 0, status;
  double copy = 0.0, scale = 0.0, add = 0.0, triad = 0.0;
  HPCC_Params params;
  char *end = NULL;
  long elements;
  FILE *out;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  errno = 0;
  elements = argc >= 2 ? strtol(argv[1], &end, 10) : 0;
  /* hpcc's STREAM indexes its arrays with an int */
  if (argc < 2 || argc > 3 || errno || *end != '\0' || elements < 1 || elements > INT_MAX) {
    if (rank == 0)
      fprintf(stderr, "usage: %s ELEMENTS [OUTPUT]  (ELEMENTS: doubles per array per rank, 1 to %d)\n",
              argv[0], INT_MAX);
    MPI_Finalize();
    return 2;
  }
  memset(&params, 0, sizeof params);
  params.StreamElements = (int)elements;
  snprintf(params.outFname, sizeof params.outFname, "%s", argc == 3 ? argv[2] : "/dev/stdout");
  if (rank == 0) {
    out = fopen(params.outFname, "a");
    if (out == NULL) {
      fprintf(stderr, "%s: cannot open %s\n", argv[0], params.outFname);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fprintf(out, "STREAM of hpcc 1.5.0 (STREAM/stream.c): each MPI rank has its own arrays\n");
    fprintf(out, "Number of MPI ranks = %d\n", ranks);
    fclose(out);
  }
  status = HPCC_Stream(&params, rank == 0, MPI_COMM_WORLD, rank, &copy, &scale, &add, &triad, &failure);
  MPI_Finalize();
  if (status)
    return 1;
  return rank == 0 && failure ? 3 : 0;
}
