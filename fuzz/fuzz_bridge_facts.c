/* libFuzzer target for the bridge's ABI facts reader (cclforge_abi_info from
 * an untrusted ELF: the symbol's size, section and bytes). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/bridge_facts.h"
#include "fuzz_guard.h"

static void fuzz_one(const uint8_t *data, size_t size)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open_memory(data, size, "fuzz-input", &elf, &err) == 0) {
        struct cf_bridge_facts f;
        const char *why = NULL;
        if (cf_bridge_facts_read(elf, &f, &why, &err) == 0) {
            /* found, or says why not; every string terminated within its field */
            if (!f.found == !why)
                abort();
            if (strlen(f.toolkit_libs) >= sizeof f.toolkit_libs || strlen(f.vendor) >= sizeof f.vendor)
                abort();
            /* printable only: doctor's module walk stores these fields tab- and
             * newline-separated (src/survey/bridge_needs.c) */
            const char *fields[] = { f.nccl_libtorch, f.torch_gpu_lib, f.comm_lib, f.vendor, f.toolkit_version,
                                     f.toolkit_libs };
            for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
                for (const char *c = fields[i]; *c; c++)
                    if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
                        abort();
        }
        cf_elf_close(elf);
    }
    cf_error_clear(&err);
}

FUZZ_GUARDED_TARGET(fuzz_one)
