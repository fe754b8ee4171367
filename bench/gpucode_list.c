/* Prints, per file, the GPU code inventory and the comm-library banner in one
 * line: "FILE: sm_75 sm_90 compute_90 | elsewhere: sm_70 compute_70 | NCCL
 * version ...": the archs of the fatbin / offload-bundle sections, then those
 * of fatbin containers found in other sections (read-only data). Used by
 * bench/gpucode_corpus.sh to compare with cuobjdump over a library directory. */
#include <stdio.h>

#include "cclforge/commlib.h"
#include "cclforge/elf.h"
#include "cclforge/gpucode.h"

static void print_archs(const struct cf_gpucode_inventory *inv, int embedded)
{
    for (size_t s = 0; s < inv->n_sections; s++) {
        const struct cf_gpucode_section *g = &inv->sections[s];
        if (g->embedded != embedded)
            continue;
        for (size_t k = 0; k < g->n_sass; k++)
            printf(" %s", g->sass[k].name);
        for (size_t k = 0; k < g->n_ptx; k++)
            printf(" %s", g->ptx[k].name);
    }
}

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        struct cf_elf *elf;
        cf_error err = CF_ERROR_INIT;
        struct cf_gpucode_inventory inv;
        struct cf_commlib_identity id;
        struct cf_fatbin_sites sites = { 0 };
        if (cf_elf_open(argv[i], &elf, &err) != 0 || cf_commlib_scan(elf, &id, &sites, &err) != 0 ||
            cf_gpucode_inventory(elf, &inv, &err) != 0 || cf_gpucode_inventory_add_sites(elf, &sites, &inv, &err) != 0) {
            printf("%s: error: %s\n", argv[i], cf_error_message(&err));
            rc = 1;
            continue;
        }
        printf("%s:", argv[i]);
        print_archs(&inv, 0);
        for (size_t k = 0; k < inv.amd_targets.n; k++)
            printf(" %s", inv.amd_targets.v[k]);
        printf(" | elsewhere:");
        print_archs(&inv, 1);
        if (id.found)
            printf(" | %s%s", id.banner.text, id.embeds_copy ? " (embedded copy)" : "");
        if (inv.problem)
            printf(" | problem: %s", inv.problem);
        printf("\n");
        cf_fatbin_sites_release(&sites);
        cf_gpucode_inventory_release(&inv);
        cf_elf_close(elf);
        cf_error_clear(&err);
    }
    return rc;
}
