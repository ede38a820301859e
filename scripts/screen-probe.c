/*
 * screen-probe: screens every node of one MPI job at once, and links between them (ScreeningCheck).
 * Built by scripts/build-screen-probe.sh with mpicc against the system's CBLAS, as xhpl is.
 *
 * Run one rank per core. Every rank times DGEMM of a fixed order (the BLAS call of the HPL DGEMM
 * ceiling, scripts/xhpl-driver.c), then STREAM's triad a = b + s*c, each for a fixed time split into
 * --passes slices, DGEMM and STREAM alternating. A rate is the median of windows of at least
 * --window-s seconds: a window spans several scheduler periods, so a CPU quota or a throttled clock
 * shows in every window, while one noisy window does not move the median. Per node: the sum over its
 * ranks and the slowest rank, over all windows and over each pass's alone.
 *
 * Then the first rank of each node probes links in rounds, all pairs of a round at once: the ring
 * over the nodes in job order (two rounds, three for an odd count), then --random-rounds random
 * perfect matchings that avoid pairs already measured where they can. Per pair: the low decile of
 * ping-pong latencies of small messages (all pairs of the round, then a barrier), and the median over
 * windows of the bandwidth of messages streamed both ways at once (the in-flight count grows while a
 * burst is short, so a slow link keeps the round near its duration). The rounds are run --passes
 * times, each for a share of the durations: every pair is measured early, midway and late alike.
 *
 * Every figure is reported over all passes and for each pass alone (*_by_pass, comma-separated, in
 * pass order): a node or link is flagged only when it is behind in every pass, a re-measurement in
 * the same job (scalebench.screening.verdict), so that a transient does not drain a healthy node.
 *
 * Rank 0 prints key=value lines (scalebench.screening.probe reads them):
 *   screen-probe version=2 nodes=N ranks=R ... (the settings)
 *   node name=... ranks=... dgemm_gflops=... dgemm_min_rank_gflops=... stream_gbs=... windows=...
 *        dgemm_gflops_by_pass=p1,p2,... dgemm_min_rank_gflops_by_pass=... stream_gbs_by_pass=...
 *   pair round=... kind=ring|random a=... b=... latency_us=... bandwidth_mbs=...
 *        latency_us_by_pass=... bandwidth_mbs_by_pass=...
 *   end compute_s=... links_s=...
 * Nodes are named by SLURMD_NODENAME (several slurmd on one host have distinct names), else by MPI.
 */
#include <cblas.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NAME_LEN 64
#define TAG_CONTROL 11
#define TAG_PING 12
#define TAG_DATA 13
#define MAX_IN_FLIGHT 64
#define SHUFFLES 16 /* tries per random round at a matching with no pair measured before */
#define VERSION 2

struct settings {
    long dgemm_n, stream_n, message_bytes, in_flight, random_rounds, latency_bytes, passes;
    double dgemm_s, stream_s, window_s, latency_s, bandwidth_s;
    unsigned long long seed;
};


static void fail(int rank, const char *message, const char *value)
{
    if (rank == 0)
        fprintf(stderr, "screen-probe: error: %s%s\n", message, value ? value : "");
    MPI_Finalize();
    exit(2);
}

static long long_option(int rank, const char *name, const char *text, long low, long high)
{
    char *end;
    long value = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value < low || value > high)
        fail(rank, name, ": not a whole number in range");
    return value;
}

static double seconds_option(int rank, const char *name, const char *text)
{
    char *end;
    double value = strtod(text, &end);
    if (*text == '\0' || *end != '\0' || !(value > 0.0 && value <= 600.0))
        fail(rank, name, ": not a number of seconds in (0, 600]");
    return value;
}

/* Every option is required: the values are site_configs/screening.yaml's, which the check passes. */
static struct settings parse_options(int argc, char **argv, int rank)
{
    struct settings s = {-1, -1, -1, -1, -1, -1, -1, -1.0, -1.0, -1.0, -1.0, -1.0, 0};
    int i, seed = 0;
    for (i = 1; i < argc; i++) {
        const char *name = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (value == NULL)
            fail(rank, "option without a value: ", name);
        i++;
        if (!strcmp(name, "--dgemm-n"))
            s.dgemm_n = long_option(rank, name, value, 16, 16384);
        else if (!strcmp(name, "--stream-n"))
            s.stream_n = long_option(rank, name, value, 1024, 1L << 30);
        else if (!strcmp(name, "--message-bytes"))
            s.message_bytes = long_option(rank, name, value, 1024, 1L << 28);
        else if (!strcmp(name, "--latency-bytes"))
            s.latency_bytes = long_option(rank, name, value, 1, 65536);
        else if (!strcmp(name, "--in-flight"))
            s.in_flight = long_option(rank, name, value, 1, MAX_IN_FLIGHT);
        else if (!strcmp(name, "--random-rounds"))
            s.random_rounds = long_option(rank, name, value, 0, 64);
        else if (!strcmp(name, "--passes"))
            s.passes = long_option(rank, name, value, 1, 16);
        else if (!strcmp(name, "--seed")) {
            s.seed = (unsigned long long)long_option(rank, name, value, 0, 2147483647L);
            seed = 1;
        }
        else if (!strcmp(name, "--dgemm-s"))
            s.dgemm_s = seconds_option(rank, name, value);
        else if (!strcmp(name, "--stream-s"))
            s.stream_s = seconds_option(rank, name, value);
        else if (!strcmp(name, "--window-s"))
            s.window_s = seconds_option(rank, name, value);
        else if (!strcmp(name, "--latency-s"))
            s.latency_s = seconds_option(rank, name, value);
        else if (!strcmp(name, "--bandwidth-s"))
            s.bandwidth_s = seconds_option(rank, name, value);
        else
            fail(rank, "unknown option: ", name);
    }
    if (s.dgemm_n < 0 || s.stream_n < 0 || s.message_bytes < 0 || s.in_flight < 0 || s.random_rounds < 0 ||
        s.latency_bytes < 0 || s.passes < 0 || s.dgemm_s < 0 || s.stream_s < 0 || s.window_s < 0 ||
        s.latency_s < 0 || s.bandwidth_s < 0 || !seed)
        fail(rank, "every option is required: --dgemm-n --dgemm-s --stream-n --stream-s --window-s "
                   "--latency-bytes --latency-s --message-bytes --in-flight --bandwidth-s --passes "
                   "--random-rounds --seed", NULL);
    return s;
}

/* A barrier that sleeps between tests: ranks waiting for others leave the cores to those working. */
static void quiet_barrier(MPI_Comm comm)
{
    MPI_Request request;
    int done = 0;
    struct timespec nap = {0, 200000};
    MPI_Ibarrier(comm, &request);
    for (;;) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        nanosleep(&nap, NULL);
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A growing list of measurements; its median is what a probe reports. */
struct samples {
    double *values;
    int count, capacity;
};

static void push(struct samples *s, double value)
{
    if (s->count == s->capacity) {
        s->capacity = s->capacity ? 2 * s->capacity : 64;
        s->values = realloc(s->values, (size_t)s->capacity * sizeof(double));
    }
    s->values[s->count++] = value;
}

/* The median of values[from, to) (sorted in place). */
static double median_range(double *values, int from, int to)
{
    int n = to - from;
    if (n <= 0)
        return 0.0;
    qsort(values + from, (size_t)n, sizeof(double), by_value);
    values += from;
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static double median_of(struct samples *s)
{
    return median_range(s->values, 0, s->count);
}

/* The value a tenth of values[from, to) are below (sorted in place): a round trip is delayed, never
 * sped up, by another process taking the core, so the low tail is the link's own latency even where
 * most round trips wait for a time slice; a slow NIC or link moves every round trip, and so this too. */
static double low_decile_range(double *values, int from, int to)
{
    if (to <= from)
        return 0.0;
    qsort(values + from, (size_t)(to - from), sizeof(double), by_value);
    return values[from + (to - from) / 10];
}

/* Rates over windows: work is added as it is done; a window closes once window_s long. */
struct windows {
    struct samples *rates;
    double work, start, window_s;
};

static void windows_open(struct windows *w, struct samples *rates, double window_s)
{
    w->rates = rates;
    w->work = 0.0;
    w->window_s = window_s;
    w->start = MPI_Wtime();
}

static void windows_add(struct windows *w, double work)
{
    double now = MPI_Wtime();
    w->work += work;
    if (now - w->start >= w->window_s) {
        push(w->rates, w->work / (now - w->start));
        w->work = 0.0;
        w->start = now;
    }
}

/* A last, partial window counts only when no window closed at all (one call outlasting the probe). */
static void windows_close(struct windows *w)
{
    if (w->rates->count == 0 && w->work > 0.0)
        push(w->rates, w->work / (MPI_Wtime() - w->start));
}

/* DGEMM's three n x n matrices and STREAM's three arrays share one allocation, used one after the
 * other: a rank holds no more than either needs, and its pages fault once. */
struct compute {
    double *buffer;
    long n, stream_n;
};

/* DGEMMs of order n (2 n^3 flops each) repeated for at least seconds; rates in flop/s per window into
 * `rates`. The first slice makes one untimed call: page faults and thread start-up. */
static void dgemm_slice(struct compute *m, double seconds, double window_s, int first, struct samples *rates)
{
    long n = m->n;
    size_t count = (size_t)n * (size_t)n, i;
    double *a = m->buffer, *b = a + count, *c = b + count, flops = 2.0 * n * n * (double)n, start;
    struct windows w;

    for (i = 0; i < count; i++) { /* STREAM wrote over them since the last slice */
        a[i] = (double)(i % 1021) / 1021.0 - 0.5;
        b[i] = (double)(i % 1031) / 1031.0 - 0.5;
        c[i] = 0.0;
    }
    if (first)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, a, (int)n, b,
                    (int)n, 1.0, c, (int)n);
    windows_open(&w, rates, window_s);
    start = MPI_Wtime();
    do {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, a, (int)n, b,
                    (int)n, 1.0, c, (int)n);
        windows_add(&w, flops);
    } while (MPI_Wtime() - start < seconds);
    windows_close(&w);
}

/* STREAM's triad (24 bytes per element, as STREAM counts) repeated for at least seconds; rates in
 * bytes/s per window into `rates`. Returns 0 when the triad's value is wrong (the loop did not run as
 * written), else 1. */
static int stream_slice(struct compute *m, double seconds, double window_s, struct samples *rates)
{
    long n = m->stream_n, j;
    double *a = m->buffer, *b = a + n, *c = b + n, scalar = 3.0, start, bytes = 24.0 * (double)n;
    struct windows w;

    for (j = 0; j < n; j++) {
        a[j] = 1.0;
        b[j] = 2.0;
        c[j] = 0.5;
    }
    for (j = 0; j < n; j++) /* untimed pass */
        a[j] = b[j] + scalar * c[j];
    windows_open(&w, rates, window_s);
    start = MPI_Wtime();
    do {
        for (j = 0; j < n; j++)
            a[j] = b[j] + scalar * c[j];
        windows_add(&w, bytes);
    } while (MPI_Wtime() - start < seconds);
    windows_close(&w);
    return a[n / 2] == 3.5;
}

/* Each rank's figures into mine: DGEMM Gflop/s and STREAM GB/s over all windows, the fewer windows of
 * the two, then DGEMM per pass and STREAM per pass. DGEMM and STREAM alternate, pass after pass, every
 * rank at once; all zero without memory (the output then says so). */
static void compute_probe(const struct settings *s, double *mine)
{
    struct compute m = {NULL, s->dgemm_n, s->stream_n};
    struct samples dgemm = {NULL, 0, 0}, stream = {NULL, 0, 0};
    long pass, passes = s->passes;
    size_t elements = 3 * (size_t)(s->dgemm_n * s->dgemm_n > s->stream_n ? s->dgemm_n * s->dgemm_n : s->stream_n);
    int valid = 1, from;

    memset(mine, 0, (size_t)(3 + 2 * passes) * sizeof(double));
    m.buffer = malloc(elements * sizeof(double));
    for (pass = 0; pass < passes; pass++) {
        quiet_barrier(MPI_COMM_WORLD);
        if (m.buffer != NULL) {
            from = dgemm.count;
            dgemm_slice(&m, s->dgemm_s / passes, s->window_s, pass == 0, &dgemm);
            mine[3 + pass] = median_range(dgemm.values, from, dgemm.count) / 1e9;
        }
        quiet_barrier(MPI_COMM_WORLD);
        if (m.buffer != NULL) {
            from = stream.count;
            valid &= stream_slice(&m, s->stream_s / passes, s->window_s, &stream);
            mine[3 + passes + pass] = valid ? median_range(stream.values, from, stream.count) / 1e9 : 0.0;
        }
    }
    quiet_barrier(MPI_COMM_WORLD);
    if (m.buffer != NULL) {
        mine[2] = dgemm.count < stream.count ? dgemm.count : stream.count;
        mine[0] = median_of(&dgemm) / 1e9;
        mine[1] = valid ? median_of(&stream) / 1e9 : 0.0;
    }
    free(m.buffer); free(dgemm.values); free(stream.values);
}

/* --- the pairs of each round ------------------------------------------------------------------ */

static unsigned long long splitmix(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void pair_up(int *round, int a, int b)
{
    round[a] = b;
    round[b] = a;
}

/* Ring rounds into partner[r * nodes + i] (-1: idle); returns how many. */
static int ring_rounds(int nodes, int *partner)
{
    int i, rounds = nodes < 2 ? 0 : nodes == 2 ? 1 : nodes % 2 ? 3 : 2;
    for (i = 0; i < rounds * nodes; i++)
        partner[i] = -1;
    if (rounds == 0)
        return 0;
    for (i = 0; i + 1 < nodes; i += 2)
        pair_up(partner, i, i + 1);
    if (nodes == 2)
        return 1;
    for (i = 1; i + 1 < nodes; i += 2)
        pair_up(partner + nodes, i, i + 1);
    if (nodes % 2 == 0)
        pair_up(partner + nodes, nodes - 1, 0);
    else
        pair_up(partner + 2 * nodes, nodes - 1, 0);
    return rounds;
}

static int measured_before(const int *partner, int rounds, int nodes, int a, int b)
{
    int r;
    for (r = 0; r < rounds; r++)
        if (partner[r * nodes + a] == b)
            return 1;
    return 0;
}

/* One random matching after `done` rounds: of SHUFFLES shuffles, the one repeating fewest pairs. */
static void random_round(int nodes, int *partner, int done, unsigned long long *state)
{
    int *order = malloc((size_t)nodes * sizeof(int)), *best = malloc((size_t)nodes * sizeof(int));
    int try, i, fewest = nodes + 1;
    for (try = 0; try < SHUFFLES && fewest > 0; try++) {
        int repeats = 0;
        for (i = 0; i < nodes; i++)
            order[i] = i;
        for (i = nodes - 1; i > 0; i--) {
            int j = (int)(splitmix(state) % (unsigned long long)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (i = 0; i + 1 < nodes; i += 2)
            repeats += measured_before(partner, done, nodes, order[i], order[i + 1]);
        if (repeats < fewest) {
            fewest = repeats;
            memcpy(best, order, (size_t)nodes * sizeof(int));
        }
    }
    for (i = 0; i < nodes; i++)
        partner[done * nodes + i] = -1;
    for (i = 0; i + 1 < nodes; i += 2)
        pair_up(partner + done * nodes, best[i], best[i + 1]);
    free(order);
    free(best);
}

/* --- one pair: the lower node leads, deciding when each part ends ------------------------------ */

/* Round trips of small messages for latency_s, each half a round trip in us into `latency`. */
static void pair_latency(MPI_Comm comm, int peer, int lead, const struct settings *s, double seconds, char *buffer,
                         struct samples *latency)
{
    int bytes = (int)s->latency_bytes, go = 1, warm, count = 0;
    double start = MPI_Wtime();
    for (warm = 0; warm < 5; warm++) { /* connections are made on first use */
        if (lead) {
            MPI_Send(buffer, bytes, MPI_BYTE, peer, TAG_PING, comm);
            MPI_Recv(buffer, bytes, MPI_BYTE, peer, TAG_PING, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buffer, bytes, MPI_BYTE, peer, TAG_PING, comm, MPI_STATUS_IGNORE);
            MPI_Send(buffer, bytes, MPI_BYTE, peer, TAG_PING, comm);
        }
    }
    for (;;) {
        if (lead) {
            double t0;
            go = MPI_Wtime() - start < seconds || count < 10;
            MPI_Send(&go, 1, MPI_INT, peer, TAG_CONTROL, comm);
            if (!go)
                return;
            t0 = MPI_Wtime();
            MPI_Send(buffer, bytes, MPI_BYTE, peer, TAG_PING, comm);
            MPI_Recv(buffer, bytes, MPI_BYTE, peer, TAG_PING, comm, MPI_STATUS_IGNORE);
            push(latency, 0.5 * (MPI_Wtime() - t0) * 1e6);
            count++;
        } else {
            MPI_Recv(&go, 1, MPI_INT, peer, TAG_CONTROL, comm, MPI_STATUS_IGNORE);
            if (!go)
                return;
            MPI_Recv(buffer, bytes, MPI_BYTE, peer, TAG_PING, comm, MPI_STATUS_IGNORE);
            MPI_Send(buffer, bytes, MPI_BYTE, peer, TAG_PING, comm);
        }
    }
}

/* Messages streamed both ways at once for `seconds`; bytes sent plus received per second, in MB/s,
 * per window into `bandwidth`. A burst starts with one message per direction and doubles while it
 * takes under an eighth of a window, up to in_flight. */
static void pair_bandwidth(MPI_Comm comm, int peer, int lead, const struct settings *s, double seconds, char *out,
                           char *in, struct samples *bandwidth)
{
    MPI_Request requests[2 * MAX_IN_FLIGHT];
    struct windows w;
    int flight = 1, i, closed = bandwidth->count;
    long bytes = s->message_bytes;
    double start;

    windows_open(&w, bandwidth, s->window_s < seconds ? s->window_s : seconds);
    start = MPI_Wtime();
    for (;;) {
        double t0;
        if (lead) {
            int next = MPI_Wtime() - start < seconds || bandwidth->count == closed ? flight : 0;
            MPI_Send(&next, 1, MPI_INT, peer, TAG_CONTROL, comm);
            flight = next;
        } else {
            MPI_Recv(&flight, 1, MPI_INT, peer, TAG_CONTROL, comm, MPI_STATUS_IGNORE);
        }
        if (flight == 0)
            return;
        t0 = MPI_Wtime();
        for (i = 0; i < flight; i++) {
            MPI_Irecv(in + (size_t)i * bytes, (int)bytes, MPI_BYTE, peer, TAG_DATA, comm, &requests[i]);
            MPI_Isend(out + (size_t)i * bytes, (int)bytes, MPI_BYTE, peer, TAG_DATA, comm, &requests[flight + i]);
        }
        MPI_Waitall(2 * flight, requests, MPI_STATUSES_IGNORE);
        if (lead) {
            windows_add(&w, 2.0 * (double)flight * (double)bytes / 1e6);
            if (MPI_Wtime() - t0 < w.window_s / 8 && flight < s->in_flight)
                flight = flight * 2 > s->in_flight ? (int)s->in_flight : flight * 2;
        }
    }
}

/* --- main ----------------------------------------------------------------------------------------- */

static void node_name(char *name)
{
    const char *slurm = getenv("SLURMD_NODENAME");
    int length, i;
    if (slurm != NULL && *slurm) {
        snprintf(name, NAME_LEN, "%.63s", slurm);
    } else {
        char host[MPI_MAX_PROCESSOR_NAME];
        MPI_Get_processor_name(host, &length);
        snprintf(name, NAME_LEN, "%.63s", host);
    }
    for (i = 0; name[i]; i++) /* one key=value token whatever the host is called */
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
              (name[i] >= '0' && name[i] <= '9') || strchr("._-", name[i])))
            name[i] = '_';
}

static unsigned fnv1a(const char *text)
{
    unsigned hash = 2166136261u;
    for (; *text; text++)
        hash = (hash ^ (unsigned char)*text) * 16777619u;
    return hash & 0x7fffffff;
}

/* The ranks of this node: split by a hash of the name, then by the name itself within (collisions). */
static MPI_Comm node_comm(const char *name, int rank)
{
    MPI_Comm hashed, node;
    int size, i, colour = 0;
    char *names;
    MPI_Comm_split(MPI_COMM_WORLD, (int)fnv1a(name), rank, &hashed);
    MPI_Comm_size(hashed, &size);
    names = malloc((size_t)size * NAME_LEN);
    MPI_Allgather((void *)name, NAME_LEN, MPI_CHAR, names, NAME_LEN, MPI_CHAR, hashed);
    for (i = 0; i < size; i++)
        if (!strncmp(names + (size_t)i * NAME_LEN, name, NAME_LEN)) {
            colour = i;
            break;
        }
    MPI_Comm_split(hashed, colour, rank, &node);
    MPI_Comm_free(&hashed);
    free(names);
    return node;
}

/* ",p1,p2,...": a figure per pass, after its key. */
static void print_passes(const char *key, const double *values, long passes, long stride)
{
    long p;
    printf(" %s=", key);
    for (p = 0; p < passes; p++)
        printf(p ? ",%.6g" : "%.6g", values[p * stride]);
}

int main(int argc, char **argv)
{
    struct settings s;
    char name[NAME_LEN] = {0};
    int rank, ranks, node_rank, node_ranks, nodes = 0, leader_rank = -1, rounds = 0, random_from = 0;
    long p, figures, row_size;
    double compute_s, links_s = 0.0, *mine, *sums, *lows;
    MPI_Comm node, leaders = MPI_COMM_NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    s = parse_options(argc, argv, rank);
    node_name(name);
    node = node_comm(name, rank);
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_ranks);
    MPI_Comm_split(MPI_COMM_WORLD, node_rank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);
    if (leaders != MPI_COMM_NULL) {
        MPI_Comm_rank(leaders, &leader_rank);
        MPI_Comm_size(leaders, &nodes);
    }

    /* Compute: every rank at once, DGEMM and STREAM alternating pass after pass. Per node the sums and
     * the lows of every figure: [DGEMM, STREAM, windows, DGEMM by pass..., STREAM by pass...]. */
    figures = 3 + 2 * s.passes;
    mine = malloc((size_t)figures * sizeof(double));
    sums = malloc((size_t)figures * sizeof(double));
    lows = malloc((size_t)figures * sizeof(double));
    quiet_barrier(MPI_COMM_WORLD);
    compute_s = MPI_Wtime();
    compute_probe(&s, mine);
    compute_s = MPI_Wtime() - compute_s;
    MPI_Reduce(mine, sums, (int)figures, MPI_DOUBLE, MPI_SUM, 0, node);
    MPI_Reduce(mine, lows, (int)figures, MPI_DOUBLE, MPI_MIN, 0, node);

    /* Links: the first rank of each node, in passes over the rounds, so that every pair is measured
     * early, midway and late alike; the other ranks wait without spinning. */
    if (leaders != MPI_COMM_NULL) {
        int *partner, *latency_ends, *bandwidth_ends, i, r, pass, pair_size = (int)(2 + 2 * s.passes);
        double *results, *all = NULL, *node_rows = NULL, *node_row, links_start;
        char *names = NULL, *out, *in, small[65536];
        struct samples *latency, *bandwidth;

        /* [ranks, DGEMM sum, DGEMM slowest rank, STREAM sum, windows, then per pass the three figures] */
        row_size = 5 + 3 * s.passes;
        node_row = malloc((size_t)row_size * sizeof(double));
        node_row[0] = (double)node_ranks;
        node_row[1] = sums[0];
        node_row[2] = lows[0];
        node_row[3] = sums[1];
        node_row[4] = lows[2];
        for (p = 0; p < s.passes; p++) {
            node_row[5 + 3 * p] = sums[3 + p];
            node_row[6 + 3 * p] = lows[3 + p];
            node_row[7 + 3 * p] = sums[3 + s.passes + p];
        }
        partner = malloc((size_t)(3 + s.random_rounds) * (size_t)nodes * sizeof(int));
        if (leader_rank == 0) {
            unsigned long long state = s.seed;
            rounds = random_from = ring_rounds(nodes, partner);
            for (i = 0; i < s.random_rounds && nodes > 2; i++)
                random_round(nodes, partner, rounds++, &state);
        }
        MPI_Bcast(&rounds, 1, MPI_INT, 0, leaders);
        MPI_Bcast(&random_from, 1, MPI_INT, 0, leaders);
        MPI_Bcast(partner, rounds * nodes, MPI_INT, 0, leaders);
        out = malloc((size_t)s.in_flight * (size_t)s.message_bytes);
        in = malloc((size_t)s.in_flight * (size_t)s.message_bytes);
        memset(out, 1, (size_t)s.in_flight * (size_t)s.message_bytes);
        memset(small, 0, sizeof small);
        latency = calloc((size_t)rounds + 1, sizeof(struct samples));
        bandwidth = calloc((size_t)rounds + 1, sizeof(struct samples));
        /* where each pass's samples of a round end: [round * passes + pass] */
        latency_ends = calloc((size_t)(rounds + 1) * (size_t)s.passes, sizeof(int));
        bandwidth_ends = calloc((size_t)(rounds + 1) * (size_t)s.passes, sizeof(int));
        quiet_barrier(leaders);
        links_start = MPI_Wtime();
        for (pass = 0; pass < s.passes; pass++)
            for (r = 0; r < rounds; r++) {
                int peer = partner[r * nodes + leader_rank], lead = peer > leader_rank;
                /* latency while no pair streams: the others' traffic would queue before it */
                if (peer >= 0)
                    pair_latency(leaders, peer, lead, &s, s.latency_s / s.passes, small, &latency[r]);
                latency_ends[r * s.passes + pass] = latency[r].count;
                quiet_barrier(leaders);
                if (peer >= 0)
                    pair_bandwidth(leaders, peer, lead, &s, s.bandwidth_s / s.passes, out, in, &bandwidth[r]);
                bandwidth_ends[r * s.passes + pass] = bandwidth[r].count;
                quiet_barrier(leaders);
            }
        links_s = MPI_Wtime() - links_start;
        /* per round: [latency, bandwidth, latency by pass..., bandwidth by pass...]; each pass's part of
         * the samples first (sorted in place), then all of them */
        results = malloc((size_t)(rounds + 1) * (size_t)pair_size * sizeof(double));
        for (r = 0; r < rounds; r++) {
            double *row = results + (size_t)r * pair_size;
            for (pass = 0; pass < s.passes; pass++) {
                int at = r * (int)s.passes + pass;
                row[2 + pass] = low_decile_range(latency[r].values, pass ? latency_ends[at - 1] : 0, latency_ends[at]);
                row[2 + s.passes + pass] = median_range(bandwidth[r].values, pass ? bandwidth_ends[at - 1] : 0,
                                                        bandwidth_ends[at]);
            }
            row[0] = low_decile_range(latency[r].values, 0, latency[r].count);
            row[1] = median_of(&bandwidth[r]);
            free(latency[r].values);
            free(bandwidth[r].values);
        }
        if (leader_rank == 0) {
            names = malloc((size_t)nodes * NAME_LEN);
            all = malloc((size_t)nodes * (size_t)(rounds + 1) * (size_t)pair_size * sizeof(double));
            node_rows = malloc((size_t)nodes * (size_t)row_size * sizeof(double));
        }
        MPI_Gather(name, NAME_LEN, MPI_CHAR, names, NAME_LEN, MPI_CHAR, 0, leaders);
        MPI_Gather(node_row, (int)row_size, MPI_DOUBLE, node_rows, (int)row_size, MPI_DOUBLE, 0, leaders);
        MPI_Gather(results, pair_size * rounds, MPI_DOUBLE, all, pair_size * rounds, MPI_DOUBLE, 0, leaders);
        if (leader_rank == 0) {
            printf("screen-probe version=%d nodes=%d ranks=%d dgemm_n=%ld dgemm_s=%g stream_n=%ld stream_s=%g "
                   "window_s=%g latency_bytes=%ld latency_s=%g message_bytes=%ld in_flight=%ld bandwidth_s=%g "
                   "passes=%ld rounds=%d random_rounds=%d seed=%llu\n", VERSION, nodes, ranks, s.dgemm_n, s.dgemm_s,
                   s.stream_n, s.stream_s, s.window_s, s.latency_bytes, s.latency_s, s.message_bytes, s.in_flight,
                   s.bandwidth_s, s.passes, rounds, rounds - random_from, s.seed);
            for (i = 0; i < nodes; i++) {
                double *row = node_rows + row_size * i;
                printf("node name=%s ranks=%d dgemm_gflops=%.6g dgemm_min_rank_gflops=%.6g stream_gbs=%.6g "
                       "windows=%d", names + (size_t)i * NAME_LEN, (int)row[0], row[1], row[2], row[3],
                       (int)row[4]);
                print_passes("dgemm_gflops_by_pass", row + 5, s.passes, 3);
                print_passes("dgemm_min_rank_gflops_by_pass", row + 6, s.passes, 3);
                print_passes("stream_gbs_by_pass", row + 7, s.passes, 3);
                printf("\n");
            }
            for (r = 0; r < rounds; r++)
                for (i = 0; i < nodes; i++) {
                    double *pair = all + ((size_t)i * rounds + r) * pair_size;
                    int peer = partner[r * nodes + i];
                    if (peer <= i)
                        continue;
                    printf("pair round=%d kind=%s a=%s b=%s latency_us=%.6g bandwidth_mbs=%.6g", r + 1,
                           r < random_from ? "ring" : "random", names + (size_t)i * NAME_LEN,
                           names + (size_t)peer * NAME_LEN, pair[0], pair[1]);
                    print_passes("latency_us_by_pass", pair + 2, s.passes, 1);
                    print_passes("bandwidth_mbs_by_pass", pair + 2 + s.passes, s.passes, 1);
                    printf("\n");
                }
            printf("end compute_s=%.3f links_s=%.3f\n", compute_s, links_s);
            fflush(stdout);
            free(names); free(all); free(node_rows);
        }
        free(partner); free(out); free(in); free(results); free(latency); free(bandwidth); free(node_row);
        free(latency_ends); free(bandwidth_ends);
        MPI_Comm_free(&leaders);
    }
    free(mine); free(sums); free(lows);
    quiet_barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
