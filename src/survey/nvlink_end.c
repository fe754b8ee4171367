/* What an NVLink's far end is (cclforge/fabric.h): the one rule doctor's topology
 * and smoke's GPU links share. */
#include <string.h>
#include <strings.h>

#include "cclforge/fabric.h"

enum cf_nvlink_end cf_nvlink_end_of(const struct cf_fabric *f, const struct cf_nvlink_peer *p)
{
    if (!p->bdf)
        return CF_NVLINK_TO_OTHER;
    if (p->type)
        return !strcmp(p->type, "gpu")      ? CF_NVLINK_TO_GPU
               : !strcmp(p->type, "switch") ? CF_NVLINK_TO_SWITCH
                                            : CF_NVLINK_TO_OTHER;
    for (size_t i = 0; i < f->n_pci; i++)
        if (f->pci[i].bdf && !strcasecmp(f->pci[i].bdf, p->bdf))
            return f->pci[i].role && !strcmp(f->pci[i].role, "gpu") ? CF_NVLINK_TO_GPU : CF_NVLINK_TO_OTHER;
    return CF_NVLINK_TO_SWITCH;
}
