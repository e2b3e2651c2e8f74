/* Argument encodings of liballprof v1: datatypes, communicators, ops, count lists. */
#include "lt_log.h"

/* liballprof numbers.h codes (MPI_COMPLEX and MPI_CHARACTER share 21); 0 = not predefined */
static uint64_t dtype_code(MPI_Datatype dt)
{
    if (dt == MPI_INT) return 1;
    if (dt == MPI_INTEGER) return 2;
    if (dt == MPI_CHARACTER) return 21;
    if (dt == MPI_LONG) return 3;
    if (dt == MPI_SHORT) return 4;
    if (dt == MPI_UNSIGNED) return 5;
    if (dt == MPI_UNSIGNED_LONG) return 6;
    if (dt == MPI_UNSIGNED_SHORT) return 7;
    if (dt == MPI_FLOAT) return 8;
    if (dt == MPI_REAL) return 9;
    if (dt == MPI_DOUBLE) return 10;
    if (dt == MPI_DOUBLE_PRECISION) return 11;
    if (dt == MPI_LONG_DOUBLE) return 12;
    if (dt == MPI_BYTE) return 13;
    if (dt == MPI_FLOAT_INT) return 14;
    if (dt == MPI_DOUBLE_INT) return 15;
    if (dt == MPI_LONG_INT) return 16;
    if (dt == MPI_2INT) return 17;
    if (dt == MPI_SHORT_INT) return 18;
    if (dt == MPI_LONG_DOUBLE_INT) return 19;
    if (dt == MPI_LOGICAL) return 20;
    if (dt == MPI_COMPLEX) return 21;
    if (dt == MPI_DOUBLE_COMPLEX) return 22;
    return 0;
}

char *lt_dtype(char *p, MPI_Datatype dt)
{
    if (dt == MPI_DATATYPE_NULL)
        return lt_dtype_unused(p, dt);
    uint64_t code = dtype_code(dt);
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_size(dt, &size);
    PMPI_Type_get_extent(dt, &lb, &extent);
    *p++ = ':';
    p = lt_u64(p, code ? code : LT_HANDLE(dt));
    *p++ = ',';
    p = lt_i64(p, size);
    *p++ = ',';
    return lt_i64(p, (int64_t)extent);
}

/* A datatype argument MPI ignores on this rank (e.g. recvtype of MPI_Gather off the root)
 * may be garbage, so it is not queried. */
char *lt_dtype_unused(char *p, MPI_Datatype dt)
{
    *p++ = ':';
    p = lt_u64(p, LT_HANDLE(dt));
    return LT_LIT(p, ",0,0");
}

char *lt_comm(char *p, MPI_Comm c)
{
    int rank = 0, size = 0;
    if (c != MPI_COMM_NULL) {
        PMPI_Comm_rank(c, &rank);
        PMPI_Comm_size(c, &size);
    }
    *p++ = ':';
    p = lt_u64(p, LT_HANDLE(c));
    *p++ = ',';
    p = lt_i64(p, rank);
    *p++ = ',';
    return lt_i64(p, size);
}

char *lt_op(char *p, MPI_Op op)
{
    static MPI_Op table[12]; /* filled at first use */
    static int init;
    if (!init) {
        MPI_Op t[12] = {MPI_MIN, MPI_MAX,  MPI_SUM, MPI_PROD, MPI_LAND,   MPI_BAND,
                        MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
        memcpy(table, t, sizeof t);
        init = 1;
    }
    *p++ = ':';
    for (int i = 0; i < 12; i++)
        if (table[i] == op)
            return lt_u64(p, (uint64_t)i + 1);
    return lt_u64(p, LT_HANDLE(op));
}

char *lt_list(char *p, const int *counts, int n)
{
    p = lt_ptr(p, counts);
    *p++ = ':';
    for (int i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        p = lt_i64(p, counts ? counts[i] : 0);
    }
    return p;
}

/* Entries of a count list: the remote group for intercommunicators. */
int lt_comm_peers(MPI_Comm c)
{
    int inter = 0, n = 0;
    if (c == MPI_COMM_NULL)
        return 0;
    PMPI_Comm_test_inter(c, &inter);
    if (inter)
        PMPI_Comm_remote_size(c, &n);
    else
        PMPI_Comm_size(c, &n);
    return n;
}

/* Which arguments of a rooted collective MPI reads on this rank: 1 root, 0 other member, -1
 * not taking part (an intercommunicator's MPI_PROC_NULL side). */
int lt_root_role(MPI_Comm comm, int root)
{
    int inter = 0, rank = -1;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        return root == MPI_ROOT ? 1 : root == MPI_PROC_NULL ? -1 : 0;
    PMPI_Comm_rank(comm, &rank);
    return rank == root;
}

/* per-peer type sizes (zeros where the types are not significant) */
static char *type_sizes(char *p, const MPI_Datatype *types, int np, int used)
{
    for (int i = 0; i < np; i++) {
        int sz = 0;
        if (used && types[i] != MPI_DATATYPE_NULL)
            PMPI_Type_size(types[i], &sz);
        if (i)
            *p++ = ',';
        p = lt_i64(p, sz);
    }
    return p;
}

/* "#@ typesizes send=<s0,...> recv=<r0,...>": MPI_Alltoallw's datatype arrays are only
 * addresses in the call line. */
char *lt_ext_typesizes(char *p, const MPI_Datatype *stypes, const MPI_Datatype *rtypes, int np,
                       int send_used)
{
    p = lt_ensure(p, 2 * LT_LIST_BYTES(np) + 32);
    p = LT_EXT(p, "typesizes send=");
    p = type_sizes(p, stypes, np, send_used);
    p = LT_LIT(p, " recv=");
    p = type_sizes(p, rtypes, np, 1);
    *p++ = '\n';
    return p;
}
