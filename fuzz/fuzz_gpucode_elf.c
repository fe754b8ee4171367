/* libFuzzer target: the per-file entry points over an ELF image — the
 * comm-library banner finder with the fatbin containers it meets, and the GPU
 * code inventory over the fatbin and bundle sections and those containers. */
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
        struct cf_commlib_identity id;
        struct cf_fatbin_sites sites = { 0 };
        cf_commlib_scan(elf, &id, &sites, &err);
        cf_error_clear(&err);
        struct cf_gpucode_inventory inv;
        if (cf_gpucode_inventory(elf, &inv, &err) == 0) {
            cf_error_clear(&err);
            cf_gpucode_inventory_add_sites(elf, &sites, &inv, &err);
            size_t sum = inv.problem ? strlen(inv.problem) : 0;
            for (size_t i = 0; i < inv.amd_targets.n; i++)
                sum += strlen(inv.amd_targets.v[i]);
            for (size_t i = 0; i < inv.n_sections; i++)
                sum += strlen(inv.sections[i].name) + inv.sections[i].n_sass;
            (void)sum;
            cf_gpucode_inventory_release(&inv);
        }
        cf_error_clear(&err);
        cf_fatbin_sites_release(&sites);
        cf_elf_close(elf);
    }
    cf_error_clear(&err);
}

FUZZ_GUARDED_TARGET(fuzz_one)
