/* The parameter names an NCCL/RCCL library knows, read from its read-only data:
 * NCCL_PARAM(name, "ENV", default) compiles "NCCL_" "ENV" into one string literal,
 * and ncclGetEnv("NCCL_SOCKET_IFNAME") another, so the library's own .rodata lists
 * every variable it reads. The plugin entry points it looks up with dlsym
 * ("ncclNetPlugin_v11", ...) are string literals there too: they say which plugin
 * ABI versions this build accepts. */
#ifndef CCLFORGE_COMMLIB_PARAMS_H
#define CCLFORGE_COMMLIB_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_elf;

struct cf_commlib_params {
    struct strvec names;          /* "NCCL_ALGO", "RCCL_MSCCL_ENABLE", ...: sorted, unique */
    struct strvec plugin_symbols; /* "ncclNetPlugin_v11", "ncclCollNetPlugin_v9", ...: sorted, unique */
    uint64_t bytes_scanned;
};

/* Scans the .rodata* sections of an opened ELF file. -1 when a section lies
 * outside the file. */
int cf_commlib_params_read(struct cf_elf *elf, struct cf_commlib_params *out, cf_error *err);
/* The same over raw bytes: every NUL-terminated string starting at buf[0] or
 * after a NUL that is a parameter name or a plugin symbol (fuzzed). Appends. */
void cf_commlib_params_scan(const uint8_t *buf, size_t len, struct cf_commlib_params *out);
/* Sorts and removes repeats (the readers call it). */
void cf_commlib_params_finish(struct cf_commlib_params *p);
void cf_commlib_params_release(struct cf_commlib_params *p);
/* The plugin ABI versions of one kind this library accepts ("ncclNetPlugin_v"),
 * highest first, into versions (at most cap); returns how many. */
size_t cf_commlib_plugin_versions(const struct cf_commlib_params *p, const char *prefix, int *versions, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
