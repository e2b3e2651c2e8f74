/* callmix: calls (nearly) every MPI function the tracer wraps, a few times each, so tests can
 * check that each one is traced, counted and encoded. Not a benchmark. */
#include "common.h"

static const char *usage =
    "usage: callmix [--rounds N] [--report-calls]\n"
    "  --rounds   repetitions of the whole mix (default 2)\n"
    "Exercises p2p modes, probes, every Wait/Test variant, persistent requests, blocking and\n"
    "nonblocking collectives (with v-variants), communicator and topology calls.\n"
    "Prints a checksum.\n";

static int rank, size;
static long acc;

static void p2p_modes(MPI_Comm comm)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[4] = {rank, 1, 2, 3}, in[4];
    MPI_Request r[2];
    /* Ssend / Recv, ordered by parity to avoid deadlock */
    for (int phase = 0; phase < 2; phase++) {
        if ((rank % 2) == phase)
            C(MPI_Ssend)(out, 4, MPI_INT, right, 1, comm);
        else
            C(MPI_Recv)(in, 4, MPI_INT, left, 1, comm, MPI_STATUS_IGNORE);
    }
    /* Bsend with an attached buffer */
    int bsz = 1024 + MPI_BSEND_OVERHEAD;
    char *bbuf = malloc((size_t)bsz);
    C(MPI_Buffer_attach)(bbuf, bsz);
    C(MPI_Irecv)(in, 4, MPI_INT, left, 2, comm, &r[0]);
    C(MPI_Bsend)(out, 4, MPI_INT, right, 2, comm);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);
    C(MPI_Buffer_detach)(&bbuf, &bsz);
    free(bbuf);
    /* Rsend needs the receive posted first: Irecv, barrier, Rsend */
    C(MPI_Irecv)(in, 4, MPI_INT, left, 3, comm, &r[0]);
    C(MPI_Barrier)(comm);
    C(MPI_Rsend)(out, 4, MPI_INT, right, 3, comm);
    C(MPI_Wait)(&r[0], MPI_STATUS_IGNORE);
    /* nonblocking sends completed by each Test/Wait variant */
    C(MPI_Irecv)(in, 4, MPI_INT, left, 4, comm, &r[0]);
    C(MPI_Issend)(out, 4, MPI_INT, right, 4, comm, &r[1]);
    int flag = 0;
    while (!flag)
        C(MPI_Testall)(2, r, &flag, MPI_STATUSES_IGNORE);
    C(MPI_Irecv)(in, 4, MPI_INT, left, 5, comm, &r[0]);
    C(MPI_Isend)(out, 4, MPI_INT, right, 5, comm, &r[1]);
    for (int done = 0; done < 2;) {
        int idx;
        C(MPI_Testany)(2, r, &idx, &flag, MPI_STATUS_IGNORE);
        done += flag && idx != MPI_UNDEFINED;
    }
    C(MPI_Irecv)(in, 4, MPI_INT, left, 6, comm, &r[0]);
    C(MPI_Isend)(out, 4, MPI_INT, right, 6, comm, &r[1]);
    for (int done = 0; done < 2;) {
        int n, idx[2];
        C(MPI_Testsome)(2, r, &n, idx, MPI_STATUSES_IGNORE);
        done += n == MPI_UNDEFINED ? 0 : n;
    }
    C(MPI_Irecv)(in, 4, MPI_INT, left, 7, comm, &r[0]);
    C(MPI_Isend)(out, 4, MPI_INT, right, 7, comm, &r[1]);
    for (int done = 0; done < 2;) {
        int n, idx[2];
        C(MPI_Waitsome)(2, r, &n, idx, MPI_STATUSES_IGNORE);
        done += n;
    }
    C(MPI_Irecv)(in, 4, MPI_INT, left, 8, comm, &r[0]);
    C(MPI_Isend)(out, 4, MPI_INT, right, 8, comm, &r[1]);
    flag = 0;
    while (!flag)
        C(MPI_Test)(&r[0], &flag, MPI_STATUS_IGNORE);
    C(MPI_Wait)(&r[1], MPI_STATUS_IGNORE);
    acc += in[0];
}

static void probes_and_wildcards(MPI_Comm comm)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[3] = {rank, rank, rank}, in[3], n;
    MPI_Status st;
    MPI_Request r;
    C(MPI_Isend)(out, 3, MPI_INT, right, 20, comm, &r);
    C(MPI_Probe)(MPI_ANY_SOURCE, 20, comm, &st);
    C(MPI_Get_count)(&st, MPI_INT, &n);
    C(MPI_Recv)(in, n, MPI_INT, st.MPI_SOURCE, 20, comm, MPI_STATUS_IGNORE);
    C(MPI_Wait)(&r, MPI_STATUS_IGNORE);
    C(MPI_Isend)(out, 3, MPI_INT, right, 21, comm, &r);
    int flag = 0;
    while (!flag)
        C(MPI_Iprobe)(left, MPI_ANY_TAG, comm, &flag, &st);
    C(MPI_Recv)(in, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE);
    C(MPI_Wait)(&r, MPI_STATUS_IGNORE);
    C(MPI_Sendrecv_replace)(out, 3, MPI_INT, right, 22, MPI_ANY_SOURCE, 22, comm,
                            MPI_STATUS_IGNORE);
    C(MPI_Sendrecv)(out, 3, MPI_INT, right, 23, in, 3, MPI_INT, MPI_ANY_SOURCE, 23, comm, &st);
    acc += in[0] + out[0] + st.MPI_SOURCE;
}

static void persistent(MPI_Comm comm)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = rank, in = -1;
    MPI_Request r[3];
    C(MPI_Recv_init)(&in, 1, MPI_INT, MPI_ANY_SOURCE, 30, comm, &r[0]);
    C(MPI_Send_init)(&out, 1, MPI_INT, right, 30, comm, &r[1]);
    C(MPI_Ssend_init)(&out, 1, MPI_INT, right, 31, comm, &r[2]);
    for (int k = 0; k < 3; k++) {
        C(MPI_Startall)(2, r);
        C(MPI_Waitall)(2, r, MPI_STATUSES_IGNORE);
        acc += in;
    }
    int in2;
    C(MPI_Start)(&r[2]);
    C(MPI_Recv)(&in2, 1, MPI_INT, left, 31, comm, MPI_STATUS_IGNORE);
    C(MPI_Wait)(&r[2], MPI_STATUS_IGNORE);
    for (int k = 0; k < 3; k++)
        C(MPI_Request_free)(&r[k]);
    acc += in2;
}

static void collectives(MPI_Comm comm)
{
    int n = size, one = rank + 1, sum = 0;
    int *s = malloc(sizeof(int) * 4 * (size_t)n), *r = malloc(sizeof(int) * 4 * (size_t)n);
    int *cnt = malloc(sizeof(int) * (size_t)n), *dsp = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < 4 * n; i++)
        s[i] = rank * 100 + i;
    for (int i = 0; i < n; i++) {
        cnt[i] = 2;
        dsp[i] = 2 * i;
    }
    C(MPI_Barrier)(comm);
    C(MPI_Bcast)(s, 2, MPI_INT, 0, comm);
    C(MPI_Reduce)(&one, &sum, 1, MPI_INT, MPI_SUM, 0, comm);
    C(MPI_Allreduce)(MPI_IN_PLACE, &one, 1, MPI_INT, MPI_MAX, comm);
    C(MPI_Gather)(s, 2, MPI_INT, r, 2, MPI_INT, n - 1, comm);
    C(MPI_Gatherv)(s, 2, MPI_INT, r, cnt, dsp, MPI_INT, 0, comm);
    C(MPI_Scatter)(s, 2, MPI_INT, r, 2, MPI_INT, 0, comm);
    C(MPI_Scatterv)(s, cnt, dsp, MPI_INT, r, 2, MPI_INT, 0, comm);
    C(MPI_Allgather)(s, 2, MPI_INT, r, 2, MPI_INT, comm);
    C(MPI_Allgatherv)(s, 2, MPI_INT, r, cnt, dsp, MPI_INT, comm);
    C(MPI_Alltoall)(s, 2, MPI_INT, r, 2, MPI_INT, comm);
    C(MPI_Alltoallv)(s, cnt, dsp, MPI_INT, r, cnt, dsp, MPI_INT, comm);
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)n);
    int *bd = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        ty[i] = MPI_INT;
        bd[i] = dsp[i] * (int)sizeof(int);
    }
    C(MPI_Alltoallw)(s, cnt, bd, ty, r, cnt, bd, ty, comm);
    C(MPI_Reduce_scatter)(s, r, cnt, MPI_INT, MPI_SUM, comm);
    C(MPI_Reduce_scatter_block)(s, r, 2, MPI_INT, MPI_SUM, comm);
    C(MPI_Scan)(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
    C(MPI_Exscan)(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
    acc += r[0] + sum;

    MPI_Request q[15];
    C(MPI_Ibarrier)(comm, &q[0]);
    C(MPI_Ibcast)(s, 2, MPI_INT, 0, comm, &q[1]);
    C(MPI_Ireduce)(&one, &sum, 1, MPI_INT, MPI_SUM, 0, comm, &q[2]);
    C(MPI_Waitall)(3, q, MPI_STATUSES_IGNORE);
    int a = rank, b = 0;
    C(MPI_Iallreduce)(&a, &b, 1, MPI_INT, MPI_SUM, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    C(MPI_Igather)(s, 2, MPI_INT, r, 2, MPI_INT, 0, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    C(MPI_Igatherv)(s, 2, MPI_INT, r, cnt, dsp, MPI_INT, 0, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    C(MPI_Iscatter)(s, 2, MPI_INT, r, 2, MPI_INT, 0, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    C(MPI_Iscatterv)(s, cnt, dsp, MPI_INT, r, 2, MPI_INT, 0, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    C(MPI_Iallgather)(s, 2, MPI_INT, r, 2, MPI_INT, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    C(MPI_Iallgatherv)(s, 2, MPI_INT, r, cnt, dsp, MPI_INT, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    C(MPI_Ialltoall)(s, 2, MPI_INT, r, 2, MPI_INT, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    C(MPI_Ialltoallv)(s, cnt, dsp, MPI_INT, r, cnt, dsp, MPI_INT, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    C(MPI_Ireduce_scatter)(s, r, cnt, MPI_INT, MPI_SUM, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    C(MPI_Ireduce_scatter_block)(s, r, 2, MPI_INT, MPI_SUM, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    C(MPI_Iscan)(&a, &b, 1, MPI_INT, MPI_SUM, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    C(MPI_Iexscan)(&a, &b, 1, MPI_INT, MPI_SUM, comm, &q[0]);
    C(MPI_Wait)(&q[0], MPI_STATUS_IGNORE);
    acc += b + r[1];
    free(s), free(r), free(cnt), free(dsp), free(ty), free(bd);
}

static void communicators(void)
{
    MPI_Comm dup, idup, half, cart, line;
    MPI_Request q;
    C(MPI_Comm_dup)(MPI_COMM_WORLD, &dup);
    C(MPI_Comm_idup)(MPI_COMM_WORLD, &idup, &q);
    C(MPI_Wait)(&q, MPI_STATUS_IGNORE);
    C(MPI_Comm_split)(dup, rank % 2, -rank, &half); /* key reverses the order */
    int dims[2] = {0, 0}, periods[2] = {1, 0}, src, dst, hs;
    C(MPI_Dims_create)(size, 2, dims);
    C(MPI_Cart_create)(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    C(MPI_Cart_shift)(cart, 0, 1, &src, &dst);
    int remain[2] = {0, 1};
    C(MPI_Cart_sub)(cart, remain, &line);
    C(MPI_Comm_size)(half, &hs);
    int x = rank, y = 0;
    C(MPI_Allreduce)(&x, &y, 1, MPI_INT, MPI_SUM, half);
    C(MPI_Sendrecv)(&x, 1, MPI_INT, dst, 40, &y, 1, MPI_INT, src, 40, cart, MPI_STATUS_IGNORE);
    C(MPI_Allreduce)(&x, &y, 1, MPI_INT, MPI_SUM, idup);
    acc += y + hs;
    MPI_Datatype t2;
    C(MPI_Type_contiguous)(2, MPI_DOUBLE, &t2);
    C(MPI_Type_commit)(&t2);
    double d[2] = {rank, 1}, e[2];
    C(MPI_Allreduce)(d, e, 2, MPI_DOUBLE, MPI_SUM, line);
    C(MPI_Bcast)(d, 1, t2, 0, line);
    C(MPI_Type_free)(&t2);
    acc += (long)e[0];
    C(MPI_Comm_free)(&line);
    C(MPI_Comm_free)(&cart);
    C(MPI_Comm_free)(&half);
    C(MPI_Comm_free)(&idup);
    C(MPI_Comm_free)(&dup);
}

int main(int argc, char **argv)
{
    app_args(argc, argv, usage);
    C(MPI_Init)(&argc, &argv);
    C(MPI_Comm_rank)(MPI_COMM_WORLD, &rank);
    C(MPI_Comm_size)(MPI_COMM_WORLD, &size);
    int rounds = (int)arg_int("--rounds", 2);
    app_timer_start(MPI_COMM_WORLD);
    for (int i = 0; i < rounds; i++) {
        p2p_modes(MPI_COMM_WORLD);
        probes_and_wildcards(MPI_COMM_WORLD);
        persistent(MPI_COMM_WORLD);
        collectives(MPI_COMM_WORLD);
        communicators();
    }
    app_timer_stop(MPI_COMM_WORLD, rank);
    long total = 0;
    C(MPI_Reduce)(&acc, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("callmix %d ranks, %d rounds: checksum %ld\n", size, rounds, total);
    app_finish(MPI_COMM_WORLD, rank, size);
    return 0;
}
