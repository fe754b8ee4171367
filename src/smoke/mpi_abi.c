/* The Open MPI and MPICH ABI tables (see mpi_abi.h). Open MPI's values are from
 * /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h of Debian's libopenmpi-dev 4.1.4
 * (OMPI_PREDEFINED_GLOBAL: a handle is &ompi_mpi_<name>); MPICH's from the `mpich`
 * 5.0.2 wheel's include/mpi.h, which MPICH, Intel MPI, MVAPICH and Cray MPICH share
 * (the MPICH ABI compatibility initiative, libmpi.so.12). Checked against both
 * headers by tests/cli/mpi_abi.sh. */
#include "smoke/mpi_abi.h"

#include <stddef.h>

static const char *const handle_names[CF_MPI_HANDLE_COUNT] = {
    [CF_MPI_COMM_WORLD] = "MPI_COMM_WORLD", [CF_MPI_COMM_NULL] = "MPI_COMM_NULL",
    [CF_MPI_ERRORS_RETURN] = "MPI_ERRORS_RETURN", [CF_MPI_OP_NULL] = "MPI_OP_NULL",
    [CF_MPI_SUM] = "MPI_SUM", [CF_MPI_PROD] = "MPI_PROD", [CF_MPI_MAX] = "MPI_MAX", [CF_MPI_MIN] = "MPI_MIN",
    [CF_MPI_INT8_T] = "MPI_INT8_T", [CF_MPI_UINT8_T] = "MPI_UINT8_T", [CF_MPI_UINT16_T] = "MPI_UINT16_T",
    [CF_MPI_INT32_T] = "MPI_INT32_T", [CF_MPI_UINT32_T] = "MPI_UINT32_T", [CF_MPI_INT64_T] = "MPI_INT64_T",
    [CF_MPI_UINT64_T] = "MPI_UINT64_T", [CF_MPI_FLOAT] = "MPI_FLOAT", [CF_MPI_DOUBLE] = "MPI_DOUBLE",
    [CF_MPI_BYTE] = "MPI_BYTE",
};

static const struct cf_mpi_abi abis[CF_MPI_ABI_COUNT] = {
    [CF_MPI_ABI_OPENMPI] = {
        .name = "Open MPI",
        .speakers = "Open MPI 3.0 and later",
        .sonames = { "libmpi.so.40" },
        .marker = "ompi_mpi_comm_world",
        .rank_vars = { "OMPI_COMM_WORLD_RANK" },
        .env_prefixes = { "OMPI_" },
        .install = "Open MPI (apt-get install libopenmpi3, dnf install openmpi)",
        .handle_size = sizeof(void *),
        .handle_symbol = {
            [CF_MPI_COMM_WORLD] = "ompi_mpi_comm_world", [CF_MPI_COMM_NULL] = "ompi_mpi_comm_null",
            [CF_MPI_ERRORS_RETURN] = "ompi_mpi_errors_return", [CF_MPI_OP_NULL] = "ompi_mpi_op_null",
            [CF_MPI_SUM] = "ompi_mpi_op_sum", [CF_MPI_PROD] = "ompi_mpi_op_prod", [CF_MPI_MAX] = "ompi_mpi_op_max",
            [CF_MPI_MIN] = "ompi_mpi_op_min", [CF_MPI_INT8_T] = "ompi_mpi_int8_t",
            [CF_MPI_UINT8_T] = "ompi_mpi_uint8_t", [CF_MPI_UINT16_T] = "ompi_mpi_uint16_t",
            [CF_MPI_INT32_T] = "ompi_mpi_int32_t", [CF_MPI_UINT32_T] = "ompi_mpi_uint32_t",
            [CF_MPI_INT64_T] = "ompi_mpi_int64_t", [CF_MPI_UINT64_T] = "ompi_mpi_uint64_t",
            [CF_MPI_FLOAT] = "ompi_mpi_float", [CF_MPI_DOUBLE] = "ompi_mpi_double", [CF_MPI_BYTE] = "ompi_mpi_byte",
        },
        .in_place = 1,      /* ((void *) 1) */
        .status_ignore = 0, /* ((MPI_Status *) 0) */
        .undefined = -32766,
        .max_error_string = 256, /* OPAL_MAX_ERROR_STRING */
        .max_library_version_string = 256,
        /* struct ompi_status_public_t { int MPI_SOURCE, MPI_TAG, MPI_ERROR, _cancelled; size_t _ucount; } */
        .status_size = 24, .status_source = 0, .status_tag = 4, .status_error = 8,
    },
    [CF_MPI_ABI_MPICH] = {
        .name = "MPICH",
        .speakers = "MPICH 3.1 and later, Intel MPI 5 and later, MVAPICH2, Cray MPICH",
        /* Debian's and Ubuntu's MPICH name it libmpich.so.12 */
        .sonames = { "libmpi.so.12", "libmpich.so.12" },
        .marker = "MPIR_Dup_fn", /* MPI_DUP_FN; the MPI 5 standard ABI's libmpi_abi.so has none */
        .rank_vars = { "PMI_RANK", "MPI_LOCALRANKID" },
        .env_prefixes = { "PMI_", "HYDRA_", "MPI_LOCALRANKID", "I_MPI_" },
        .install = "MPICH (pip install mpich, apt-get install libmpich12, dnf install mpich) or Intel MPI "
                   "(pip install impi-rt)",
        .handle_size = sizeof(int),
        .handle_value = {
            [CF_MPI_COMM_WORLD] = 0x44000000, [CF_MPI_COMM_NULL] = 0x04000000,
            [CF_MPI_ERRORS_RETURN] = 0x54000001, [CF_MPI_OP_NULL] = 0x18000000,
            [CF_MPI_SUM] = 0x58000003, [CF_MPI_PROD] = 0x58000004, [CF_MPI_MAX] = 0x58000001,
            [CF_MPI_MIN] = 0x58000002, [CF_MPI_INT8_T] = 0x4c000137, [CF_MPI_UINT8_T] = 0x4c00013b,
            [CF_MPI_UINT16_T] = 0x4c00023c, [CF_MPI_INT32_T] = 0x4c000439, [CF_MPI_UINT32_T] = 0x4c00043d,
            [CF_MPI_INT64_T] = 0x4c00083a, [CF_MPI_UINT64_T] = 0x4c00083e, [CF_MPI_FLOAT] = 0x4c00040a,
            [CF_MPI_DOUBLE] = 0x4c00080b, [CF_MPI_BYTE] = 0x4c00010d,
        },
        .in_place = -1,     /* (void *) -1 */
        .status_ignore = 1, /* (MPI_Status *)1 */
        .undefined = -32766,
        .max_error_string = 512,
        .max_library_version_string = 8192,
        /* struct MPI_Status { int count_lo, count_hi_and_cancelled, MPI_SOURCE, MPI_TAG, MPI_ERROR; } */
        .status_size = 20, .status_source = 8, .status_tag = 12, .status_error = 16,
        /* MPICH 5.0.2: 4 ranks that _exit after MPI_Finalize make Hydra's mpiexec exit 9 */
        .leave_by_exit = 1,
    },
};

const struct cf_mpi_abi *cf_mpi_abi(enum cf_mpi_abi_id id)
{
    return id < CF_MPI_ABI_COUNT ? &abis[id] : NULL;
}

const char *cf_mpi_handle_name(enum cf_mpi_handle_id id)
{
    return id < CF_MPI_HANDLE_COUNT ? handle_names[id] : "?";
}
