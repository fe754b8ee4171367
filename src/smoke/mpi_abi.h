/* The two binary interfaces a libmpi speaks, as data: what smoke's MPI backend needs
 * to call a libmpi it dlopens without ever having seen its mpi.h. Every value comes
 * from the real headers (Debian's libopenmpi-dev 4.1.4 and the `mpich` 5.0.2 wheel's
 * include/mpi.h); tests/cli/mpi_abi.sh compiles tests/support/mpi_abi_check.c
 * against each real mpi.h present and compares every entry. */
#ifndef CCLFORGE_SMOKE_MPI_ABI_H
#define CCLFORGE_SMOKE_MPI_ABI_H

#include <stddef.h>
#include <stdint.h>

/* The predefined handles the backend uses. */
enum cf_mpi_handle_id {
    CF_MPI_COMM_WORLD,
    CF_MPI_COMM_NULL,
    CF_MPI_ERRORS_RETURN,
    CF_MPI_OP_NULL,
    CF_MPI_SUM,
    CF_MPI_PROD,
    CF_MPI_MAX,
    CF_MPI_MIN,
    CF_MPI_INT8_T,
    CF_MPI_UINT8_T,
    CF_MPI_UINT16_T,
    CF_MPI_INT32_T,
    CF_MPI_UINT32_T,
    CF_MPI_INT64_T,
    CF_MPI_UINT64_T,
    CF_MPI_FLOAT,
    CF_MPI_DOUBLE,
    CF_MPI_BYTE,
    CF_MPI_HANDLE_COUNT
};

enum cf_mpi_abi_id { CF_MPI_ABI_OPENMPI, CF_MPI_ABI_MPICH, CF_MPI_ABI_COUNT };

/* A list of strings ends at its first NULL, and its last slot is always
 * NULL. */
struct cf_mpi_abi {
    const char *name;                    /* "Open MPI", "MPICH" */
    const char *speakers;                /* the implementations that ship it */
    const char *sonames[3];              /* the loader names of its libmpi */
    const char *marker;                  /* a symbol only a libmpi of this ABI exports */
    const char *rank_vars[3];            /* its launchers' rank variables: the strongest sign */
    const char *env_prefixes[5];         /* any variable so named: its launcher or its runtime */
    const char *install;                 /* how to get one */
    /* MPI_Comm, MPI_Datatype, MPI_Op, MPI_Errhandler and MPI_Request are all one kind:
     * a pointer (Open MPI) or an int (MPICH) */
    size_t handle_size;
    /* a predefined handle is the address of an exported global (Open MPI: the symbol)
     * or an integer constant (MPICH: the value; symbol NULL) */
    const char *handle_symbol[CF_MPI_HANDLE_COUNT];
    int32_t handle_value[CF_MPI_HANDLE_COUNT];
    intptr_t in_place;      /* MPI_IN_PLACE */
    intptr_t status_ignore; /* MPI_STATUS_IGNORE */
    int undefined;          /* MPI_UNDEFINED */
    int max_error_string;   /* MPI_MAX_ERROR_STRING */
    int max_library_version_string;
    /* MPI_Status: its size and where its public fields are */
    size_t status_size, status_source, status_tag, status_error;
    /* its libmpi's exit handlers finish a rank's part in the launcher: a rank must
     * leave by exit(), not _exit() */
    int leave_by_exit;
};

/* The largest MPI_Status of the table (a backend's status buffer). */
#define CF_MPI_STATUS_MAX 32

const struct cf_mpi_abi *cf_mpi_abi(enum cf_mpi_abi_id id);
/* The macro name of a handle ("MPI_COMM_WORLD"), for messages and the check. */
const char *cf_mpi_handle_name(enum cf_mpi_handle_id id);

#endif
