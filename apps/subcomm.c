/* subcomm: sub-communicators and wildcard receives. The ranks form a px x py grid split
 * into row and column communicators (MPI_Comm_split); a communicator of the even world ranks
 * is built from a group (MPI_Comm_create). Each iteration: a row broadcast and allreduce,
 * a gather to each column root by MPI_ANY_SOURCE receives (blocking, answered to the actual
 * source), the same on rows with MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) + MPI_Waitany, and an
 * allreduce over the even ranks. */
#include "common.h"

static const char *usage =
    "usage: subcomm [--px P] [--py P] [--iters N] [--n N] [--report-calls]\n"
    "  --px, --py   process grid (default: MPI_Dims_create)\n"
    "  --iters      iterations (default 50)\n"
    "  --n          integers per message (default 1024)\n"
    "Prints a checksum of everything received.\n";

static long sum_ints(const int *v, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

/* column: members send to column rank 0, which receives from MPI_ANY_SOURCE and replies */
static long column_gather(MPI_Comm col, int it, int *buf, int n)
{
    int r, sz;
    long got = 0;
    C(MPI_Comm_rank)(col, &r);
    C(MPI_Comm_size)(col, &sz);
    if (r == 0) {
        for (int k = 1; k < sz; k++) {
            MPI_Status st;
            C(MPI_Recv)(buf, n, MPI_INT, MPI_ANY_SOURCE, it, col, &st);
            got += sum_ints(buf, n) * (st.MPI_SOURCE + 1);
            buf[0] = st.MPI_SOURCE;
            C(MPI_Send)(buf, 1, MPI_INT, st.MPI_SOURCE, it, col);
        }
    } else {
        for (int i = 0; i < n; i++)
            buf[i] = r * 1000 + it + i;
        C(MPI_Send)(buf, n, MPI_INT, 0, it, col);
        C(MPI_Recv)(buf, 1, MPI_INT, 0, it, col, MPI_STATUS_IGNORE);
        got += buf[0] == r;
    }
    return got;
}

/* row: members Isend to row rank 0, which posts wildcard MPI_Irecvs and drains them with
 * MPI_Waitany */
static long row_gather(MPI_Comm row, int it, int *bufs, int n)
{
    int r, sz;
    long got = 0;
    C(MPI_Comm_rank)(row, &r);
    C(MPI_Comm_size)(row, &sz);
    if (r == 0) {
        MPI_Request req[sz > 1 ? sz - 1 : 1];
        for (int k = 0; k < sz - 1; k++)
            C(MPI_Irecv)(bufs + (size_t)k * n, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, row,
                         &req[k]);
        for (int k = 0; k < sz - 1; k++) {
            int idx;
            MPI_Status st;
            C(MPI_Waitany)(sz - 1, req, &idx, &st);
            got += sum_ints(bufs + (size_t)idx * n, n) + st.MPI_TAG;
        }
    } else {
        MPI_Request req;
        for (int i = 0; i < n; i++)
            bufs[i] = r * 7 + i;
        C(MPI_Isend)(bufs, n, MPI_INT, 0, 100 + it, row, &req);
        C(MPI_Wait)(&req, MPI_STATUS_IGNORE);
    }
    return got;
}

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    C(MPI_Init)(&argc, &argv);
    int rank, size;
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    int dims[2] = {(int)arg_int("--px", 0), (int)arg_int("--py", 0)};
    int iters = (int)arg_int("--iters", 50), n = (int)arg_int("--n", 1024);
    C(MPI_Dims_create)(size, 2, dims);
    if (dims[0] * dims[1] != size || n <= 0) {
        if (rank == 0)
            fprintf(stderr, "subcomm: px * py must equal the number of ranks\n");
        C(MPI_Abort)(MPI_COMM_WORLD, 2);
    }
    int cx = rank / dims[1], cy = rank % dims[1];
    MPI_Comm row, col, even;
    C(MPI_Comm_split)(MPI_COMM_WORLD, cx, cy, &row);
    C(MPI_Comm_split)(MPI_COMM_WORLD, cy, cx, &col);
    MPI_Group world, evens;
    int nev = (size + 1) / 2, ev[nev];
    for (int i = 0; i < nev; i++)
        ev[i] = 2 * i;
    C(MPI_Comm_group)(MPI_COMM_WORLD, &world);
    C(MPI_Group_incl)(world, nev, ev, &evens);
    C(MPI_Comm_create)(MPI_COMM_WORLD, evens, &even); /* MPI_COMM_NULL on odd ranks */
    C(MPI_Group_free)(&evens);
    C(MPI_Group_free)(&world);
    int *buf = malloc(sizeof(int) * (size_t)n * (size_t)(size > 1 ? size : 1));
    long acc = 0;

    app_timer_start(MPI_COMM_WORLD);
    for (int it = 0; it < iters; it++) {
        int v[4] = {it, cx, cy, rank};
        C(MPI_Bcast)(v, 4, MPI_INT, 0, row);
        long rs = 0, x = v[0] + v[2];
        C(MPI_Allreduce)(&x, &rs, 1, MPI_LONG, MPI_SUM, row);
        acc += rs;
        acc += column_gather(col, it, buf, n);
        acc += row_gather(row, it, buf, n);
        if (even != MPI_COMM_NULL) {
            long e = rank + it, es = 0;
            C(MPI_Allreduce)(&e, &es, 1, MPI_LONG, MPI_SUM, even);
            acc += es;
        }
    }
    app_timer_stop(MPI_COMM_WORLD, rank);

    long total = 0;
    C(MPI_Reduce)(&acc, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("subcomm %dx%d ranks, %d iterations, n=%d: checksum %ld\n", dims[0], dims[1],
               iters, n, total);
    C(MPI_Comm_free)(&row);
    C(MPI_Comm_free)(&col);
    if (even != MPI_COMM_NULL)
        C(MPI_Comm_free)(&even);
    free(buf);
    app_finish(MPI_COMM_WORLD, rank, size);
    return 0;
}
