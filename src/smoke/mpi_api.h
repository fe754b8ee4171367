/* The slice of the MPI C API that smoke's MPI backend uses, loaded from a libmpi by
 * dlopen: no mpi.h and no libmpi at build time. Which library is chosen, how its ABI
 * is told (mpi_abi.h) and how its predefined handles are resolved live here.
 *
 * A handle (MPI_Comm, MPI_Datatype, MPI_Op, MPI_Errhandler) travels as an intptr_t:
 * a pointer (Open MPI) or an int sign-extended to 64 bits (MPICH). On the LP64
 * psABIs cclforge runs on (x86-64, AArch64, and little-endian ppc64 and riscv64) an
 * int argument is the low half of the register or 8-byte stack slot such an intptr_t
 * fills, so one set of function types calls either ABI; handles a call writes back
 * (MPI_Comm_split, MPI_Op_create, MPI_Ibarrier) go to a slot of the ABI's own size. */
#ifndef CCLFORGE_SMOKE_MPI_API_H
#define CCLFORGE_SMOKE_MPI_API_H

#include <stdint.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"
#include "smoke/mpi_abi.h"

typedef intptr_t cf_mpi_handle;
/* MPI_User_function: (invec, inoutvec, len, datatype) */
typedef void cf_mpi_user_fn(void *in, void *inout, int *len, void *dtype);
/* Storage for a handle or request that MPI writes (handle_size bytes of it are used). */
union cf_mpi_slot {
    void *p;
    int32_t i;
};

struct cf_mpi_api {
    void *dl;
    char *path;                   /* the file the loader chose */
    char *chosen_by;              /* "--mpi-lib", "CCLFORGE_MPI_LIB", "the launcher (PMI_RANK)", ... */
    const struct cf_mpi_abi *abi; /* what the loaded library itself says it is */
    cf_mpi_handle h[CF_MPI_HANDLE_COUNT];
    void *in_place, *status_ignore;
    int (*Init)(int *argc, char ***argv);
    int (*Initialized)(int *flag);
    int (*Finalized)(int *flag);
    int (*Finalize)(void);
    int (*Get_library_version)(char *version, int *len);
    int (*Error_string)(int code, char *text, int *len);
    int (*Comm_set_errhandler)(cf_mpi_handle comm, cf_mpi_handle errhandler);
    int (*Comm_rank)(cf_mpi_handle comm, int *rank);
    int (*Comm_size)(cf_mpi_handle comm, int *size);
    int (*Comm_split)(cf_mpi_handle comm, int color, int key, union cf_mpi_slot *newcomm);
    int (*Comm_free)(union cf_mpi_slot *comm);
    int (*Op_create)(cf_mpi_user_fn *fn, int commute, union cf_mpi_slot *op);
    int (*Op_free)(union cf_mpi_slot *op);
    int (*Allreduce)(const void *send, void *recv, int count, cf_mpi_handle dtype, cf_mpi_handle op,
                     cf_mpi_handle comm);
    int (*Reduce)(const void *send, void *recv, int count, cf_mpi_handle dtype, cf_mpi_handle op, int root,
                  cf_mpi_handle comm);
    int (*Reduce_scatter_block)(const void *send, void *recv, int count, cf_mpi_handle dtype, cf_mpi_handle op,
                                cf_mpi_handle comm);
    int (*Bcast)(void *buf, int count, cf_mpi_handle dtype, int root, cf_mpi_handle comm);
    int (*Allgather)(const void *send, int scount, cf_mpi_handle stype, void *recv, int rcount, cf_mpi_handle rtype,
                     cf_mpi_handle comm);
    int (*Gather)(const void *send, int scount, cf_mpi_handle stype, void *recv, int rcount, cf_mpi_handle rtype,
                  int root, cf_mpi_handle comm);
    int (*Scatter)(const void *send, int scount, cf_mpi_handle stype, void *recv, int rcount, cf_mpi_handle rtype,
                   int root, cf_mpi_handle comm);
    int (*Alltoall)(const void *send, int scount, cf_mpi_handle stype, void *recv, int rcount, cf_mpi_handle rtype,
                    cf_mpi_handle comm);
    int (*Sendrecv)(const void *send, int scount, cf_mpi_handle stype, int dest, int stag, void *recv, int rcount,
                    cf_mpi_handle rtype, int source, int rtag, cf_mpi_handle comm, void *status);
    int (*Sendrecv_replace)(void *buf, int count, cf_mpi_handle dtype, int dest, int stag, int source, int rtag,
                            cf_mpi_handle comm, void *status);
    int (*Ibarrier)(cf_mpi_handle comm, union cf_mpi_slot *request);
    int (*Test)(union cf_mpi_slot *request, int *flag, void *status);
};

/* Where libmpi is looked for: an explicit choice (mpi_lib, then CCLFORGE_MPI_LIB) alone;
 * else the sonames of the ABI the launcher's variables name, first beside the
 * launcher's own executable (<its dir>/../lib), then through the loader; else every
 * ABI's sonames, Open MPI's first. *expect is that launcher's ABI (NULL: any);
 * *chosen_by says which rule chose (free it). */
void cf_mpi_candidates(const char *mpi_lib, char *const *envp, struct strvec *out, const struct cf_mpi_abi **expect,
                       char **chosen_by);
/* Loads the first candidate that is a libmpi of a known ABI (RTLD_GLOBAL: Open MPI's
 * MCA components resolve libmpi's symbols through the global scope) and resolves the
 * API and the predefined handles; a clear error naming every file tried otherwise. */
int cf_mpi_api_load(struct cf_mpi_api *api, const char *mpi_lib, char *const *envp, cf_error *err);
/* Not dlclose'd (MPI's progress threads and atexit handlers outlive a close). */
void cf_mpi_api_unload(struct cf_mpi_api *api);
/* A handle MPI wrote into a slot, widened as the API passes it. */
cf_mpi_handle cf_mpi_slot_get(const struct cf_mpi_api *api, const union cf_mpi_slot *slot);
void cf_mpi_slot_set(const struct cf_mpi_api *api, union cf_mpi_slot *slot, cf_mpi_handle h);

#endif
