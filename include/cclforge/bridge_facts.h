/* The ABI facts cclforge's ABI guard links into every bridge it builds (the C
 * symbol cclforge_abi_info, share/cclforge/bridge/cclforge_abi_guard.cpp),
 * read from the file without loading it: the sizes of ProcessGroupNCCL and its
 * Options in the bridge's headers and in the libtorch it was built against,
 * the NCCL of its nccl.h, and the libraries the host's toolkit must provide. */
#ifndef CCLFORGE_BRIDGE_FACTS_H
#define CCLFORGE_BRIDGE_FACTS_H

#include <stdint.h>

#include "cclforge/elf.h"
#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CF_BRIDGE_FACTS_SYMBOL "cclforge_abi_info"
#define CF_BRIDGE_FACTS_MAGIC "cclforge-abi/1"
/* *why when the file has no such symbol at all: not a cclforge-built bridge (no fault of the file) */
#define CF_BRIDGE_FACTS_ABSENT "no cclforge_abi_info symbol: not built by cclforge bridge build"
/* The guard's struct, byte for byte (all fields naturally aligned, no padding). */
#define CF_BRIDGE_FACTS_SIZE 504

struct cf_bridge_facts {
    int found;                  /* the symbol is defined and holds CF_BRIDGE_FACTS_MAGIC */
    int64_t options_size_headers, options_size_libtorch;             /* -1 unknown */
    int64_t process_group_size_headers, process_group_size_libtorch; /* -1 unknown */
    int32_t nccl_header_code;   /* NCCL_VERSION_CODE of the nccl.h compiled */
    char nccl_libtorch[17];     /* "2.30.7", "" unknown (all strings NUL-terminated, sanitised to printable) */
    char torch_gpu_lib[65];
    char comm_lib[65];
    char vendor[17];
    char toolkit_version[33];
    char toolkit_libs[257];     /* space-separated sonames the host's toolkit provides */
};

/* Reads the facts of an opened ELF (untrusted bytes: every read bounds-checked).
 * 0 with facts->found 0 when the symbol is absent (a bridge not built by
 * cclforge) or in another format (why says which); -1 with err only when the
 * file cannot be read at all. */
int cf_bridge_facts_read(struct cf_elf *elf, struct cf_bridge_facts *facts, const char **why, cf_error *err);
int cf_bridge_facts_read_file(const char *path, struct cf_bridge_facts *facts, const char **why, cf_error *err);

#ifdef __cplusplus
}
#endif
#endif
