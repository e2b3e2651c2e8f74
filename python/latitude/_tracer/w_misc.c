/* Datatypes, reduction operations and MPI-IO: logged with the plain liballprof rules
 * (no extension lines). Their time is not communication, but a converter must see them to
 * keep the computation gaps honest. */
#include "lt_log.h"

#define W0 uint64_t t0 = lt_now()

/* ---- datatypes ---- */
int MPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *newtype)
{
    W0;
    int rc = PMPI_Type_contiguous(count, old, newtype);
    LT_REC("MPI_Type_contiguous", t0, p = lt_int(p, count); p = lt_dtype(p, old);
           p = lt_ptr(p, newtype));
    return rc;
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype old,
                    MPI_Datatype *newtype)
{
    W0;
    int rc = PMPI_Type_vector(count, blocklength, stride, old, newtype);
    LT_REC("MPI_Type_vector", t0, p = lt_int(p, count); p = lt_int(p, blocklength);
           p = lt_int(p, stride); p = lt_dtype(p, old); p = lt_ptr(p, newtype));
    return rc;
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old,
                            MPI_Datatype *newtype)
{
    W0;
    int rc = PMPI_Type_create_hvector(count, blocklength, stride, old, newtype);
    LT_REC("MPI_Type_create_hvector", t0, p = lt_int(p, count); p = lt_int(p, blocklength);
           p = lt_int(p, stride); p = lt_dtype(p, old); p = lt_ptr(p, newtype));
    return rc;
}

int MPI_Type_indexed(int count, const int blocklengths[], const int displs[], MPI_Datatype old,
                     MPI_Datatype *newtype)
{
    W0;
    int rc = PMPI_Type_indexed(count, blocklengths, displs, old, newtype);
    LT_REC("MPI_Type_indexed", t0, p = lt_int(p, count); p = lt_ptr(p, blocklengths);
           p = lt_ptr(p, displs); p = lt_dtype(p, old); p = lt_ptr(p, newtype));
    return rc;
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int displs[],
                                  MPI_Datatype old, MPI_Datatype *newtype)
{
    W0;
    int rc = PMPI_Type_create_indexed_block(count, blocklength, displs, old, newtype);
    LT_REC("MPI_Type_create_indexed_block", t0, p = lt_int(p, count); p = lt_int(p, blocklength);
           p = lt_ptr(p, displs); p = lt_dtype(p, old); p = lt_ptr(p, newtype));
    return rc;
}

int MPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displs[],
                             MPI_Datatype old, MPI_Datatype *newtype)
{
    W0;
    int rc = PMPI_Type_create_hindexed(count, blocklengths, displs, old, newtype);
    LT_REC("MPI_Type_create_hindexed", t0, p = lt_int(p, count); p = lt_ptr(p, blocklengths);
           p = lt_ptr(p, displs); p = lt_dtype(p, old); p = lt_ptr(p, newtype));
    return rc;
}

int MPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displs[],
                           const MPI_Datatype types[], MPI_Datatype *newtype)
{
    W0;
    int rc = PMPI_Type_create_struct(count, blocklengths, displs, types, newtype);
    LT_REC("MPI_Type_create_struct", t0, p = lt_int(p, count); p = lt_ptr(p, blocklengths);
           p = lt_ptr(p, displs); p = lt_ptr(p, types); p = lt_ptr(p, newtype));
    return rc;
}

int MPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype *newtype)
{
    W0;
    int rc = PMPI_Type_create_resized(old, lb, extent, newtype);
    LT_REC("MPI_Type_create_resized", t0, p = lt_dtype(p, old); p = lt_int(p, lb);
           p = lt_int(p, extent); p = lt_ptr(p, newtype));
    return rc;
}

int MPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[],
                             const int starts[], int order, MPI_Datatype old,
                             MPI_Datatype *newtype)
{
    W0;
    int rc = PMPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, old, newtype);
    LT_REC("MPI_Type_create_subarray", t0, p = lt_int(p, ndims); p = lt_ptr(p, sizes);
           p = lt_ptr(p, subsizes); p = lt_ptr(p, starts); p = lt_int(p, order);
           p = lt_dtype(p, old); p = lt_ptr(p, newtype));
    return rc;
}

int MPI_Type_dup(MPI_Datatype old, MPI_Datatype *newtype)
{
    W0;
    int rc = PMPI_Type_dup(old, newtype);
    LT_REC("MPI_Type_dup", t0, p = lt_dtype(p, old); p = lt_ptr(p, newtype));
    return rc;
}

int MPI_Type_commit(MPI_Datatype *type)
{
    W0;
    int rc = PMPI_Type_commit(type);
    LT_REC("MPI_Type_commit", t0, p = lt_ptr(p, type));
    return rc;
}

int MPI_Type_free(MPI_Datatype *type)
{
    W0;
    int rc = PMPI_Type_free(type);
    LT_REC("MPI_Type_free", t0, p = lt_ptr(p, type));
    return rc;
}

int MPI_Type_size(MPI_Datatype type, int *size)
{
    W0;
    int rc = PMPI_Type_size(type, size);
    LT_REC("MPI_Type_size", t0, p = lt_dtype(p, type); p = lt_ptr(p, size));
    return rc;
}

int MPI_Type_get_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent)
{
    W0;
    int rc = PMPI_Type_get_extent(type, lb, extent);
    LT_REC("MPI_Type_get_extent", t0, p = lt_dtype(p, type); p = lt_ptr(p, lb);
           p = lt_ptr(p, extent));
    return rc;
}

int MPI_Pack(const void *inbuf, int incount, MPI_Datatype type, void *outbuf, int outsize,
             int *position, MPI_Comm comm)
{
    W0;
    int rc = PMPI_Pack(inbuf, incount, type, outbuf, outsize, position, comm);
    LT_REC("MPI_Pack", t0, p = lt_ptr(p, inbuf); p = lt_int(p, incount); p = lt_dtype(p, type);
           p = lt_ptr(p, outbuf); p = lt_int(p, outsize); p = lt_ptr(p, position);
           p = lt_comm(p, comm));
    return rc;
}

int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype type, MPI_Comm comm)
{
    W0;
    int rc = PMPI_Unpack(inbuf, insize, position, outbuf, outcount, type, comm);
    LT_REC("MPI_Unpack", t0, p = lt_ptr(p, inbuf); p = lt_int(p, insize); p = lt_ptr(p, position);
           p = lt_ptr(p, outbuf); p = lt_int(p, outcount); p = lt_dtype(p, type);
           p = lt_comm(p, comm));
    return rc;
}

int MPI_Pack_size(int incount, MPI_Datatype type, MPI_Comm comm, int *size)
{
    W0;
    int rc = PMPI_Pack_size(incount, type, comm, size);
    LT_REC("MPI_Pack_size", t0, p = lt_int(p, incount); p = lt_dtype(p, type);
           p = lt_comm(p, comm); p = lt_ptr(p, size));
    return rc;
}

/* ---- operations ---- */
int MPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
    W0;
    int rc = PMPI_Op_create(fn, commute, op);
    LT_REC("MPI_Op_create", t0, p = lt_ptr(p, (const void *)(uintptr_t)fn);
           p = lt_int(p, commute); p = lt_ptr(p, op));
    return rc;
}

int MPI_Op_free(MPI_Op *op)
{
    W0;
    int rc = PMPI_Op_free(op);
    LT_REC("MPI_Op_free", t0, p = lt_ptr(p, op));
    return rc;
}

/* ---- MPI-IO ---- */
int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    W0;
    int rc = PMPI_File_open(comm, filename, amode, info, fh);
    LT_REC("MPI_File_open", t0, p = lt_comm(p, comm); p = lt_ptr(p, filename);
           p = lt_int(p, amode); p = lt_hdl(p, info); p = lt_ptr(p, fh));
    return rc;
}

int MPI_File_close(MPI_File *fh)
{
    W0;
    int rc = PMPI_File_close(fh);
    LT_REC("MPI_File_close", t0, p = lt_ptr(p, fh));
    return rc;
}

int MPI_File_delete(const char *filename, MPI_Info info)
{
    W0;
    int rc = PMPI_File_delete(filename, info);
    LT_REC("MPI_File_delete", t0, p = lt_ptr(p, filename); p = lt_hdl(p, info));
    return rc;
}

int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    W0;
    int rc = PMPI_File_get_size(fh, size);
    LT_REC("MPI_File_get_size", t0, p = lt_hdl(p, fh); p = lt_ptr(p, size));
    return rc;
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    W0;
    int rc = PMPI_File_set_size(fh, size);
    LT_REC("MPI_File_set_size", t0, p = lt_hdl(p, fh); p = lt_int(p, size));
    return rc;
}

int MPI_File_sync(MPI_File fh)
{
    W0;
    int rc = PMPI_File_sync(fh);
    LT_REC("MPI_File_sync", t0, p = lt_hdl(p, fh));
    return rc;
}

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    W0;
    int rc = PMPI_File_seek(fh, offset, whence);
    LT_REC("MPI_File_seek", t0, p = lt_hdl(p, fh); p = lt_int(p, offset); p = lt_int(p, whence));
    return rc;
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info)
{
    W0;
    int rc = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
    LT_REC("MPI_File_set_view", t0, p = lt_hdl(p, fh); p = lt_int(p, disp);
           p = lt_dtype(p, etype); p = lt_dtype(p, filetype); p = lt_ptr(p, datarep);
           p = lt_hdl(p, info));
    return rc;
}

/* explicit-offset reads/writes: fh, offset, buf, count, datatype, status */
#define FILE_AT(NAME, PNAME, BUF)                                                              \
    int NAME(MPI_File fh, MPI_Offset off, BUF buf, int count, MPI_Datatype dt,                 \
             MPI_Status *status)                                                               \
    {                                                                                          \
        W0;                                                                                    \
        int rc = PNAME(fh, off, buf, count, dt, status);                                       \
        LT_REC(#NAME, t0, p = lt_hdl(p, fh); p = lt_int(p, off); p = lt_ptr(p, buf);           \
               p = lt_int(p, count); p = lt_dtype(p, dt); p = lt_ptr(p, status));              \
        return rc;                                                                             \
    }
FILE_AT(MPI_File_read_at, PMPI_File_read_at, void *)
FILE_AT(MPI_File_read_at_all, PMPI_File_read_at_all, void *)
FILE_AT(MPI_File_write_at, PMPI_File_write_at, const void *)
FILE_AT(MPI_File_write_at_all, PMPI_File_write_at_all, const void *)

/* individual-pointer reads/writes: fh, buf, count, datatype, status */
#define FILE_RW(NAME, PNAME, BUF)                                                              \
    int NAME(MPI_File fh, BUF buf, int count, MPI_Datatype dt, MPI_Status *status)             \
    {                                                                                          \
        W0;                                                                                    \
        int rc = PNAME(fh, buf, count, dt, status);                                            \
        LT_REC(#NAME, t0, p = lt_hdl(p, fh); p = lt_ptr(p, buf); p = lt_int(p, count);         \
               p = lt_dtype(p, dt); p = lt_ptr(p, status));                                    \
        return rc;                                                                             \
    }
FILE_RW(MPI_File_read, PMPI_File_read, void *)
FILE_RW(MPI_File_read_all, PMPI_File_read_all, void *)
FILE_RW(MPI_File_write, PMPI_File_write, const void *)
FILE_RW(MPI_File_write_all, PMPI_File_write_all, const void *)
