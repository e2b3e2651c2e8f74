"""The DUMPI binary trace format (SST's sst-dumpi) as its own reader and writer define it:
the constants and the byte layout of the calls Latitude maps, shared by the reader
(:mod:`latitude.formats.dumpi`) and the test fixtures' writer.

A run is a text ``PREFIX.meta`` file (``numprocs=``, ``fileprefix=``; dumpi2dumpi's
``d2d_write_metadata``) and one ``PREFIX-NNNN.bin`` per rank. A ``.bin`` file
(dumpi/common/io.c) is, all integers big-endian:

* the head magic (u64), then the body (``dumpi_start_stream_write``): the CPU and wall
  clock second offsets (u32 each), then one record per call until the label
  ``END_OF_STREAM``;
* the header, footer, keyval, datatype sizes, ... sections, found through
* the index, the file's last 8 u64 (``dumpi_write_index``): head magic, offsets of the
  datatype sizes (``sizelbl``), function addresses, counter labels, header, body, footer,
  keyval. Older files lack the first one to three (``dumpi_open_input_file`` finds the
  magic further on).

A record (dumpi/common/iodefs.h, ``STARTWRITE``) is: function label (u16), config mask
(u8), thread (u16, when the mask has ``THREADID``), CPU then wall times (each start and
stop as seconds u16 since the stream's offset and nanoseconds u32, when the mask has
``TIME_CPU`` / ``TIME_WALL``), counters (u8 n, then n pairs of u64, when the mask has
``PERFINFO``), then the call's arguments in the order of its ``dumpi_write_*`` function in
dumpi/common/dumpiio.c. Records carry no length, so a call whose layout is not known here
cannot be skipped: it is refused.
"""

from __future__ import annotations

HEAD_MAGIC = (0xFFAADD44 << 32) | 0x554D5049  # io.c DUMPI_HEAD_MAGIC
FOOT_MAGIC = 0xF007FEE7  # io.c DUMPI_FOOT_MAGIC

# dumpi/common/funclabels.h `dumpi_function`, in enum order (label = index).
FUNCTIONS = """Send Recv Get_count Bsend Ssend Rsend Buffer_attach Buffer_detach Isend Ibsend
Issend Irsend Irecv Wait Test Request_free Waitany Testany Waitall Testall Waitsome Testsome
Iprobe Probe Cancel Test_cancelled Send_init Bsend_init Ssend_init Rsend_init Recv_init Start
Startall Sendrecv Sendrecv_replace Type_contiguous Type_vector Type_hvector Type_indexed
Type_hindexed Type_struct Address Type_extent Type_size Type_lb Type_ub Type_commit Type_free
Get_elements Pack Unpack Pack_size Barrier Bcast Gather Gatherv Scatter Scatterv Allgather
Allgatherv Alltoall Alltoallv Reduce Op_create Op_free Allreduce Reduce_scatter Scan Group_size
Group_rank Group_translate_ranks Group_compare Comm_group Group_union Group_intersection
Group_difference Group_incl Group_excl Group_range_incl Group_range_excl Group_free Comm_size
Comm_rank Comm_compare Comm_dup Comm_create Comm_split Comm_free Comm_test_inter
Comm_remote_size Comm_remote_group Intercomm_create Intercomm_merge Keyval_create Keyval_free
Attr_put Attr_get Attr_delete Topo_test Cart_create Dims_create Graph_create Graphdims_get
Graph_get Cartdim_get Cart_get Cart_rank Cart_coords Graph_neighbors_count Graph_neighbors
Cart_shift Cart_sub Cart_map Graph_map Get_processor_name Get_version Errhandler_create
Errhandler_set Errhandler_get Errhandler_free Error_string Error_class Wtime Wtick Init
Finalize Initialized Abort Pcontrol Close_port Comm_accept Comm_connect Comm_disconnect
Comm_get_parent Comm_join Comm_spawn Comm_spawn_multiple Lookup_name Open_port Publish_name
Unpublish_name Accumulate Get Put Win_complete Win_create Win_fence Win_free Win_get_group
Win_lock Win_post Win_start Win_test Win_unlock Win_wait Alltoallw Exscan Add_error_class
Add_error_code Add_error_string Comm_call_errhandler Comm_create_keyval Comm_delete_attr
Comm_free_keyval Comm_get_attr Comm_get_name Comm_set_attr Comm_set_name File_call_errhandler
Grequest_complete Grequest_start Init_thread Is_thread_main Query_thread Status_set_cancelled
Status_set_elements Type_create_keyval Type_delete_attr Type_dup Type_free_keyval Type_get_attr
Type_get_contents Type_get_envelope Type_get_name Type_set_attr Type_set_name Type_match_size
Win_call_errhandler Win_create_keyval Win_delete_attr Win_free_keyval Win_get_attr Win_get_name
Win_set_attr Win_set_name Alloc_mem Comm_create_errhandler Comm_get_errhandler
Comm_set_errhandler File_create_errhandler File_get_errhandler File_set_errhandler Finalized
Free_mem Get_address Info_create Info_delete Info_dup Info_free Info_get Info_get_nkeys
Info_get_nthkey Info_get_valuelen Info_set Pack_external Pack_external_size Request_get_status
Type_create_darray Type_create_hindexed Type_create_hvector Type_create_indexed_block
Type_create_resized Type_create_struct Type_create_subarray Type_get_extent
Type_get_true_extent Unpack_external Win_create_errhandler Win_get_errhandler
Win_set_errhandler File_open File_close File_delete File_set_size File_preallocate
File_get_size File_get_group File_get_amode File_set_info File_get_info File_set_view
File_get_view File_read_at File_read_at_all File_write_at File_write_at_all File_iread_at
File_iwrite_at File_read File_read_all File_write File_write_all File_iread File_iwrite
File_seek File_get_position File_get_byte_offset File_read_shared File_write_shared
File_iread_shared File_iwrite_shared File_read_ordered File_write_ordered File_seek_shared
File_get_position_shared File_read_at_all_begin File_read_at_all_end File_write_at_all_begin
File_write_at_all_end File_read_all_begin File_read_all_end File_write_all_begin
File_write_all_end File_read_ordered_begin File_read_ordered_end File_write_ordered_begin
File_write_ordered_end File_get_type_extent Register_datarep File_set_atomicity
File_get_atomicity File_sync IO_Test IO_Wait IO_Testall IO_Waitall IO_Testany IO_Waitany
IO_Waitsome IO_Testsome""".split()
# DUMPI_ALL_FUNCTIONS, the sentinel after the last function, then the special labels.
ALL_FUNCTIONS = len(FUNCTIONS)
FUNCTION_ENTER, FUNCTION_EXIT, END_OF_STREAM = ALL_FUNCTIONS + 1, ALL_FUNCTIONS + 2, ALL_FUNCTIONS + 3
LABEL = {name: i for i, name in enumerate(FUNCTIONS)}

# Config mask bits (dumpi/common/settings.h).
STATUSES = 0b11  # DUMPI_ENABLE: statuses were written
TIME_CPU, TIME_WALL, THREADID, PERFINFO = 1 << 2, 1 << 3, 1 << 6, 1 << 7

# Special values (dumpi/common/constants.h).
ANY_SOURCE = ANY_TAG = -1
ROOT = -2
COMM_NULL, COMM_WORLD, COMM_SELF, FIRST_USER_COMM = 1, 2, 3, 4
REQUEST_NULL = 1
BYTE = 5  # DUMPI_BYTE
FIRST_USER_DATATYPE = 28

# Argument layouts of the mapped calls, in their dumpi_write_* order (dumpiio.c). Codes:
# i int (u32, signed), d datatype (u16), c communicator (u16), o op (u8), r request (u32),
# s status (only when the mask has STATUSES: u32 n, then n × bytes u32, source u32,
# cancelled u8, error u8, tag u32 (since 0.6.3)), a int array / R request array (u32 n, n × u32),
# S status array (as s). Gather and Scatter add fields at the root (see `record_layout`).
LAYOUTS = {
    "Send": "i d i i c",
    "Bsend": "i d i i c",
    "Ssend": "i d i i c",
    "Rsend": "i d i i c",
    "Recv": "i d i i c s",
    "Isend": "i d i i c r",
    "Ibsend": "i d i i c r",
    "Issend": "i d i i c r",
    "Irsend": "i d i i c r",
    "Irecv": "i d i i c r",
    "Wait": "r s",
    "Test": "r i s",
    "Request_free": "r",
    "Waitany": "i R i s",
    "Testany": "i R i i s",
    "Waitall": "i R S",
    "Testall": "i R i S",
    "Waitsome": "i R i a S",
    "Testsome": "i R i a S",
    "Sendrecv": "i d i i i d i i c s",
    "Barrier": "c",
    "Bcast": "i d i c",
    "Gather": "i i d i c",  # commrank sendcount sendtype root comm [recvcount recvtype at the root]
    "Scatter": "i i d i c",  # commrank recvcount recvtype root comm [sendcount sendtype at the root]
    "Allgather": "i d i d c",
    "Alltoall": "i d i d c",
    "Reduce": "i d o i c",
    "Allreduce": "i d o c",
    "Scan": "i d o c",
    "Exscan": "i d o c",
    "Allgatherv": "i i d a a d c",  # commsize sendcount sendtype recvcounts displs recvtype comm
    "Alltoallv": "i a a d a a d c",  # commsize sendcounts senddispls sendtype recvcounts recvdispls recvtype comm
    "Reduce_scatter": "i a d o c",  # commsize recvcounts datatype op comm
    "Dims_create": "i i a a",  # nodes, ndim, dims in, dims out
    "Type_contiguous": "i d d",
    "Type_vector": "i i i d d",  # count, blocklength, stride, oldtype, newtype
    "Type_commit": "d",
    "Type_free": "d",
    "Comm_dup": "c c",  # oldcomm newcomm
    "Comm_split": "c i i c",  # oldcomm color key newcomm
    "Comm_free": "c",
    "Comm_size": "c i",
    "Comm_rank": "c i",
    "Get_count": "s d i",
    "Wtime": "",
    "Wtick": "",
    "Finalize": "",
}
ROOTED_EXTRA = {"Gather": "i d", "Scatter": "i d"}
# The v-variants' count arrays come at the root only, Gatherv's before a last field:
# (fields before, the commrank and root positions in them, fields at the root, fields after).
ROOTED_V = {
    # dumpi_write_gatherv: commrank commsize sendcount sendtype root comm [recvcounts displs] recvtype
    "Gatherv": ("i i i d i c", 4, "a a", "d"),
    # dumpi_write_scatterv: commrank commsize sendtype recvcount recvtype root comm [sendcounts displs]
    "Scatterv": ("i i d i d i c", 5, "a a", ""),
}
# Init: argc (u32; written twice before 0.6.2), then argc strings (u32 length, bytes).
INIT = "Init"


def record_layout(name: str) -> str | None:
    return LAYOUTS.get(name)


def function_name(label: int) -> str:
    if label < len(FUNCTIONS):
        name = FUNCTIONS[label]
        return "DUMP" + name if name.startswith("IO_") else "MPI_" + name
    return {FUNCTION_ENTER: "function entry", FUNCTION_EXIT: "function exit"}.get(label, f"label {label}")
