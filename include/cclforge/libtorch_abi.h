/* What a vendor libtorch (libtorch_cuda.so / libtorch_hip.so) was compiled with,
 * read from its machine code without loading it:
 *  - the sizes of c10d::ProcessGroupNCCL and ProcessGroupNCCL::Options: each
 *    class's deleting destructor (slot 1 of its vtable) ends by handing `this`
 *    and the class size to sized operator delete, `mov $size,%esi; jmp _ZdlPvm`;
 *  - the NCCL_VERSION_CODE of the nccl.h its ProcessGroupNCCL was compiled with:
 *    the Options constructor fills ncclConfig_t with NCCL_CONFIG_INITIALIZER,
 *    whose magic 0xcafebeef is followed by NCCL_VERSION(major, minor, patch).
 * Both are x86-64 machine-code facts; on other machines they stay unknown. A
 * static NCCL's banner and the wheel's nvidia-nccl pin are the other sources of
 * the NCCL version (cf_libtorch_nccl_read). */
#ifndef CCLFORGE_LIBTORCH_ABI_H
#define CCLFORGE_LIBTORCH_ABI_H

#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_elf;

struct cf_libtorch_abi {
    long options_size;        /* sizeof(ProcessGroupNCCL::Options) in the library, -1 unknown */
    long process_group_size;  /* sizeof(ProcessGroupNCCL), -1 unknown */
    char *options_from;       /* the evidence in words, or why it is unknown */
    char *process_group_from;
    unsigned nccl_code;       /* NCCL_VERSION_CODE ProcessGroupNCCL was compiled with, 0 unknown */
    char *nccl_version;       /* "2.30.7"; NULL unknown */
    char *nccl_from;          /* "the ncclConfig_t initializer in ProcessGroupNCCL::Options::Options(bool)", ... */
};

/* The machine-code facts of one opened library (never fails: unknown facts say why). */
void cf_libtorch_abi_of_elf(struct cf_elf *elf, struct cf_libtorch_abi *abi);
/* Opens gpu_lib and reads the machine-code facts; the NCCL version falls back to
 * an embedded NCCL/RCCL banner, then to torch_dir's dist-info pin
 * (Requires-Dist: nvidia-nccl-cuXX==V) when torch_dir is given. -1 with err when
 * gpu_lib cannot be read. */
int cf_libtorch_abi_read(const char *gpu_lib, const char *torch_dir, struct cf_libtorch_abi *abi, cf_error *err);
void cf_libtorch_abi_release(struct cf_libtorch_abi *abi);

#ifdef __cplusplus
}
#endif
#endif
