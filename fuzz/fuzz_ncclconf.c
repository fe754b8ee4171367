/* libFuzzer target: the parsers of NCCL configuration text and host facts --
 * configuration files (setEnvFile's rules, NCCL and RCCL), NCCL_SOCKET_IFNAME /
 * NCCL_IB_HCA lists, NCCL_TOPO_FILE XML, Slurm hostlists and PCI config spaces. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/commlib_params.h"
#include "cclforge/fabric.h"
#include "cclforge/launch_collect.h"
#include "cclforge/ncclconf.h"
#include "fuzz_guard.h"

static void count(void *ctx, unsigned line, const char *key, const char *value, unsigned flags)
{
    size_t *n = ctx;
    size_t klen = strlen(key), vlen = strlen(value);
    /* setEnvFile's buffers: at most 1,023 bytes each, and a cut one is exactly that long */
    if (klen > 1023 || vlen > 1023 || ((flags & CF_NCCL_LINE_KEY_CUT) && klen != 1023) ||
        ((flags & CF_NCCL_LINE_VALUE_CUT) && vlen != 1023))
        __builtin_trap();
    *n += line + klen + vlen + (size_t)flags;
}

static void fuzz_one(const uint8_t *data, size_t size)
{
    size_t n = 0;
    cf_nccl_conf_parse((const char *)data, size, 0, count, &n);
    cf_nccl_conf_parse((const char *)data, size, 1, count, &n);
    char why[256];
    cf_nccl_topo_xml_check((const char *)data, size, why, sizeof why);
    unsigned ctrl;
    cf_pci_acs_ctrl(data, size, &ctrl);
    struct cf_commlib_params p;
    memset(&p, 0, sizeof p);
    cf_commlib_params_scan(data, size, &p);
    cf_commlib_params_finish(&p);
    cf_commlib_params_release(&p);
    char *text = malloc(size + 1);
    if (!text)
        return;
    memcpy(text, data, size);
    text[size] = 0;
    struct cf_nccl_if_list l;
    cf_nccl_if_list_parse(text, 32, &l);
    cf_nccl_if_list_match(&l, "eth0", 1);
    struct strvec hosts = STRVEC_INIT;
    cf_error err = CF_ERROR_INIT;
    cf_slurm_hostlist_expand(text, 4096, &hosts, &err);
    cf_error_clear(&err);
    cf_strvec_clear(&hosts);
    free(text);
}

FUZZ_GUARDED_TARGET(fuzz_one)
