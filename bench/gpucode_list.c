/* Prints, per file, the GPU code inventory and the comm-library banner in one
 * line: "FILE: sm_75 sm_90 compute_90 | NCCL version ...". Used by
 * bench/gpucode_corpus.sh to compare with cuobjdump over a library directory. */
#include <stdio.h>

#include "cclforge/commlib.h"
#include "cclforge/elf.h"
#include "cclforge/gpucode.h"

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        struct cf_elf *elf;
        cf_error err = CF_ERROR_INIT;
        struct cf_gpucode_inventory inv;
        struct cf_commlib_identity id;
        if (cf_elf_open(argv[i], &elf, &err) != 0 || cf_gpucode_inventory(elf, &inv, &err) != 0) {
            printf("%s: error: %s\n", argv[i], cf_error_message(&err));
            rc = 1;
            continue;
        }
        printf("%s:", argv[i]);
        for (size_t k = 0; k < inv.n_sass; k++)
            printf(" %s", inv.sass[k].name);
        for (size_t k = 0; k < inv.n_ptx; k++)
            printf(" %s", inv.ptx[k].name);
        for (size_t k = 0; k < inv.amd_targets.n; k++)
            printf(" %s", inv.amd_targets.v[k]);
        if (cf_commlib_identify(elf, &id, &err) == 0 && id.found)
            printf(" | %s%s", id.banner.text, id.embeds_copy ? " (embedded copy)" : "");
        if (inv.problem)
            printf(" | problem: %s", inv.problem);
        printf("\n");
        cf_gpucode_inventory_release(&inv);
        cf_elf_close(elf);
        cf_error_clear(&err);
    }
    return rc;
}
