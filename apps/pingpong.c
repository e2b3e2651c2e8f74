/* pingpong: ranks 0 and 1 bounce messages of each size; prints the half round-trip time per
 * size as CSV (used to calibrate L, o, G). Other ranks only initialise and finalise. */
#include "common.h"

static const char *usage =
    "usage: pingpong [--sizes 0,8,1024,...] [--iters N] [--warmup N] [--report-calls]\n"
    "  --sizes    message sizes in bytes, comma separated (default 0,8,64,512,4096,32768,262144)\n"
    "  --iters    timed round trips per size (default 1000)\n"
    "  --warmup   untimed round trips per size (default 10)\n"
    "Prints CSV on stdout: size_bytes,iters,half_rtt_us (one row per size), then a checksum.\n";

static int parse_sizes(const char *s, long *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0)
            return -1;
        out[n++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n;
}

/* n round trips of `bytes` between ranks 0 and 1; returns the elapsed seconds */
static double bounce(int rank, char *buf, long bytes, int n)
{
    double t0 = C(MPI_Wtime)();
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            C(MPI_Send)(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
            C(MPI_Recv)(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            C(MPI_Recv)(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (long k = 0; k < bytes; k += 64)
                buf[k]++; /* the reply differs from the ping: the checksum sees both */
            C(MPI_Send)(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        }
    }
    return C(MPI_Wtime)() - t0;
}

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    long sizes[64];
    int nsizes = parse_sizes(arg_str("--sizes", "0,8,64,512,4096,32768,262144"), sizes, 64);
    int iters = (int)arg_int("--iters", 1000), warmup = (int)arg_int("--warmup", 10);
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    if (nsizes <= 0 || size < 2 || iters <= 0) {
        if (rank == 0)
            fprintf(stderr, "pingpong: needs >= 2 ranks, --iters > 0 and a list of sizes\n");
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    long maxb = 1;
    for (int i = 0; i < nsizes; i++)
        maxb = sizes[i] > maxb ? sizes[i] : maxb;
    char *buf = calloc((size_t)maxb, 1);
    unsigned long checksum = 0;

    app_timer_start(MPI_COMM_WORLD);
    if (rank == 0)
        printf("size_bytes,iters,half_rtt_us\n");
    for (int s = 0; s < nsizes && rank < 2; s++) {
        memset(buf, s + 1, (size_t)maxb);
        bounce(rank, buf, sizes[s], warmup);
        double t = bounce(rank, buf, sizes[s], iters);
        for (long k = 0; k < sizes[s]; k++)
            checksum = checksum * 31 + (unsigned char)buf[k];
        if (rank == 0)
            printf("%ld,%d,%.3f\n", sizes[s], iters, t / iters / 2 * 1e6);
    }
    app_timer_stop(MPI_COMM_WORLD, rank);
    if (rank == 0)
        printf("checksum %lu\n", checksum);
    free(buf);
    app_finish(MPI_COMM_WORLD, rank, size);
    return 0;
}
