/* NCCL/RCCL parameter names and plugin entry points from read-only data
 * (cclforge/commlib_params.h). */
#include "cclforge/commlib_params.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/elf.h"

enum { NAME_MIN = 6, NAME_MAX = 96 };

/* The names NCCL and RCCL give the plugin entry points they dlsym. */
static const char *const plugin_prefixes[] = {
    "ncclNetPlugin_v", "ncclCollNetPlugin_v", "ncclTunerPlugin_v", "ncclProfiler_v", "ncclEnvPlugin_v",
    "ncclGinPlugin_v",
};

static int is_param(const char *s, size_t n)
{
    if (n < NAME_MIN || n > NAME_MAX || (memcmp(s, "NCCL_", 5) && memcmp(s, "RCCL_", 5)))
        return 0;
    for (size_t i = 5; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return 0;
    return 1;
}

static int is_plugin_symbol(const char *s, size_t n)
{
    for (size_t k = 0; k < sizeof plugin_prefixes / sizeof plugin_prefixes[0]; k++) {
        size_t pl = strlen(plugin_prefixes[k]);
        if (n <= pl || n > pl + 3 || memcmp(s, plugin_prefixes[k], pl))
            continue;
        for (size_t i = pl; i < n; i++)
            if (s[i] < '0' || s[i] > '9')
                return 0;
        return 1;
    }
    return 0;
}

void cf_commlib_params_scan(const uint8_t *buf, size_t len, struct cf_commlib_params *out)
{
    size_t pos = 0;
    while (pos < len) {
        const uint8_t *nul = memchr(buf + pos, 0, len - pos);
        if (!nul)
            break; /* an unterminated tail is not a C string */
        size_t n = (size_t)(nul - (buf + pos));
        const char *s = (const char *)buf + pos;
        if (n && (s[0] == 'N' || s[0] == 'R') && is_param(s, n))
            cf_strvec_push_nodup(&out->names, cf_strndup(s, n));
        else if (n && s[0] == 'n' && is_plugin_symbol(s, n))
            cf_strvec_push_nodup(&out->plugin_symbols, cf_strndup(s, n));
        pos += n + 1;
    }
    out->bytes_scanned += len;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_unique(struct strvec *sv)
{
    if (sv->n < 2)
        return;
    qsort(sv->v, sv->n, sizeof *sv->v, cmp_str);
    size_t w = 1;
    for (size_t r = 1; r < sv->n; r++) {
        if (!strcmp(sv->v[r], sv->v[w - 1]))
            free(sv->v[r]);
        else
            sv->v[w++] = sv->v[r];
    }
    sv->n = w;
    sv->v[w] = NULL;
}

void cf_commlib_params_finish(struct cf_commlib_params *p)
{
    sort_unique(&p->names);
    sort_unique(&p->plugin_symbols);
}

int cf_commlib_params_read(struct cf_elf *elf, struct cf_commlib_params *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    size_t n = cf_elf_section_count(elf);
    for (size_t i = 0; i < n; i++) {
        const struct cf_elf_section *s = cf_elf_section_at(elf, i);
        /* .rodata and .rodata.str1.1 and friends: where string literals live */
        if (!s || s->type != SHT_PROGBITS || !(s->flags & SHF_ALLOC) || (s->flags & (SHF_WRITE | SHF_EXECINSTR)) ||
            !cf_starts_with(s->name, ".rodata"))
            continue;
        const uint8_t *data;
        size_t len;
        if (cf_elf_section_bytes(elf, s, &data, &len, err) < 0) {
            cf_commlib_params_release(out);
            return -1;
        }
        cf_commlib_params_scan(data, len, out);
    }
    cf_commlib_params_finish(out);
    return 0;
}

void cf_commlib_params_release(struct cf_commlib_params *p)
{
    cf_strvec_clear(&p->names);
    cf_strvec_clear(&p->plugin_symbols);
    memset(p, 0, sizeof *p);
}

size_t cf_commlib_plugin_versions(const struct cf_commlib_params *p, const char *prefix, int *versions, size_t cap)
{
    size_t k = 0, pl = strlen(prefix);
    for (size_t i = 0; i < p->plugin_symbols.n && k < cap; i++)
        if (!strncmp(p->plugin_symbols.v[i], prefix, pl))
            versions[k++] = atoi(p->plugin_symbols.v[i] + pl);
    for (size_t i = 1; i < k; i++) /* highest first */
        for (size_t j = i; j > 0 && versions[j] > versions[j - 1]; j--) {
            int t = versions[j];
            versions[j] = versions[j - 1];
            versions[j - 1] = t;
        }
    return k;
}
