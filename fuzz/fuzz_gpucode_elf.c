/* libFuzzer target: the per-file entry points over an ELF image — the GPU code
 * inventory (fatbin and bundle sections) and the comm-library banner finder. */
#include <stdint.h>
#include <string.h>

#include "cclforge/commlib.h"
#include "cclforge/elf.h"
#include "cclforge/gpucode.h"
#include "fuzz_guard.h"

static void fuzz_one(const uint8_t *data, size_t size)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open_memory(data, size, "fuzz", &elf, &err) == 0) {
        struct cf_gpucode_inventory inv;
        if (cf_gpucode_inventory(elf, &inv, &err) == 0) {
            size_t sum = inv.problem ? strlen(inv.problem) : 0;
            for (size_t i = 0; i < inv.amd_targets.n; i++)
                sum += strlen(inv.amd_targets.v[i]);
            (void)sum;
            cf_gpucode_inventory_release(&inv);
        }
        cf_error_clear(&err);
        struct cf_commlib_identity id;
        cf_commlib_identify(elf, &id, &err);
        cf_error_clear(&err);
        cf_elf_close(elf);
    }
    cf_error_clear(&err);
}

FUZZ_GUARDED_TARGET(fuzz_one)
