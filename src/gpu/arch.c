/* GPU arch parsing, normalization, toolkit support tables and NVCC_GENCODE. */
#include "cclforge/arch.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* When each NVIDIA arch became targetable and when a CUDA release dropped it.
 * Sources: the CUDA toolkit release notes (11.0 dropped sm_3x except 35/37,
 * 12.0 dropped sm_35/37, 13.0 dropped everything below sm_75 and renamed
 * sm_101 to sm_110). `dropped` 0 = still supported. */
struct nvidia_arch_row {
    int sm;
    int introduced; /* CUDA version code, 11080 = 11.8 */
    int dropped;
    const char *note;
};
static const struct nvidia_arch_row nvidia_archs[] = {
    { 30, 6000, 11000, "Kepler sm_30 was removed in CUDA 11.0" },
    { 35, 5000, 12000, "Kepler sm_35/sm_37 were removed in CUDA 12.0" },
    { 37, 6050, 12000, "Kepler sm_35/sm_37 were removed in CUDA 12.0" },
    { 50, 6000, 13000, "CUDA 13.0 removed offline compilation for archs before sm_75 (Maxwell, Pascal, Volta)" },
    { 52, 7000, 13000, "CUDA 13.0 removed offline compilation for archs before sm_75 (Maxwell, Pascal, Volta)" },
    { 53, 7000, 13000, "CUDA 13.0 removed offline compilation for archs before sm_75 (Maxwell, Pascal, Volta)" },
    { 60, 8000, 13000, "CUDA 13.0 removed offline compilation for archs before sm_75 (Maxwell, Pascal, Volta)" },
    { 61, 8000, 13000, "CUDA 13.0 removed offline compilation for archs before sm_75 (Maxwell, Pascal, Volta)" },
    { 62, 8000, 13000, "CUDA 13.0 removed offline compilation for archs before sm_75 (Maxwell, Pascal, Volta)" },
    { 70, 9000, 13000, "CUDA 13.0 removed offline compilation for archs before sm_75 (Maxwell, Pascal, Volta)" },
    { 72, 10000, 13000, "CUDA 13.0 removed offline compilation for archs before sm_75 (Maxwell, Pascal, Volta)" },
    { 75, 10000, 0, NULL },
    { 80, 11000, 0, NULL },
    { 86, 11010, 0, NULL },
    { 87, 11040, 0, NULL },
    { 88, 13000, 0, NULL },
    { 89, 11080, 0, NULL },
    { 90, 11080, 0, NULL },
    { 100, 12080, 0, NULL },
    { 101, 12080, 13000, "CUDA 13.0 renamed sm_101 to sm_110" },
    { 103, 12090, 0, NULL },
    { 110, 13000, 0, NULL },
    { 120, 12080, 0, NULL },
    { 121, 12090, 0, NULL },
};

/* AMD GPU targets that ROCm (and DTK for the Hygon gfx9xx parts) compile for. */
static const char *const amd_archs[] = {
    "gfx803", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx926", "gfx928", "gfx936",
    "gfx940", "gfx941", "gfx942", "gfx950", "gfx1010", "gfx1030", "gfx1100", "gfx1101",
    "gfx1102", "gfx1150", "gfx1151", "gfx1200", "gfx1201",
};

/* The family names torch.utils.cpp_extension accepts in TORCH_CUDA_ARCH_LIST. */
static const struct {
    const char *name;
    const char *archs;
} nvidia_names[] = {
    { "kepler", "3.5+PTX" }, { "maxwell", "5.0;5.2+PTX" }, { "pascal", "6.0;6.1+PTX" },
    { "volta", "7.0+PTX" },  { "turing", "7.5+PTX" },      { "ampere", "8.0;8.6+PTX" },
    { "ada", "8.9+PTX" },    { "hopper", "9.0+PTX" },
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const struct nvidia_arch_row *nvidia_row(int sm)
{
    for (size_t i = 0; i < ARRAY_LEN(nvidia_archs); i++)
        if (nvidia_archs[i].sm == sm)
            return &nvidia_archs[i];
    return NULL;
}

static int amd_index(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(amd_archs); i++)
        if (!strcmp(amd_archs[i], name))
            return (int)i;
    return -1;
}

static int all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

static int reject(const char *token, cf_error *err)
{
    return cf_error_set(err, CF_ERR_USAGE,
                        "unknown GPU arch '%s': use compute capabilities (\"6.1;12.0\", \"8.6+PTX\"), "
                        "sm names (\"sm_61,sm_120\") or AMD targets (\"gfx90a;gfx942\")",
                        token);
}

/* "6.1" -> 61, "12.0" -> 120, "61" -> 61; -1 when it is none of these. */
static int parse_sm_number(const char *s)
{
    const char *dot = strchr(s, '.');
    if (dot) {
        char major[8];
        size_t mlen = (size_t)(dot - s);
        if (mlen == 0 || mlen >= sizeof major || strlen(dot + 1) != 1 || !isdigit((unsigned char)dot[1]))
            return -1;
        memcpy(major, s, mlen);
        major[mlen] = 0;
        if (!all_digits(major))
            return -1;
        return atoi(major) * 10 + (dot[1] - '0');
    }
    if (!all_digits(s) || strlen(s) > 4)
        return -1;
    return atoi(s);
}

int cf_arch_parse_one(const char *token, struct cf_arch *out, int *ptx, cf_error *err)
{
    char buf[64];
    size_t len = strlen(token);
    while (len && isspace((unsigned char)token[len - 1]))
        len--;
    while (len && isspace((unsigned char)*token)) {
        token++;
        len--;
    }
    if (len == 0 || len >= sizeof buf)
        return reject(len ? "(too long)" : "(empty)", err);
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)tolower((unsigned char)token[i]);
    buf[len] = 0;
    *ptx = 0;
    if (cf_ends_with(buf, "+ptx")) {
        *ptx = 1;
        buf[len - 4] = 0;
    }
    memset(out, 0, sizeof *out);

    if (cf_starts_with(buf, "gfx")) {
        char *colon = strchr(buf, ':'); /* "gfx90a:xnack-": features do not change the target */
        if (colon)
            *colon = 0;
        if (*ptx)
            return cf_error_set(err, CF_ERR_USAGE, "'%.*s': +PTX applies to NVIDIA archs only", (int)len, token);
        if (amd_index(buf) < 0)
            return reject(buf, err);
        out->vendor = CF_VENDOR_AMD;
        snprintf(out->name, sizeof out->name, "%.15s", buf);
        return 0;
    }

    const char *num = buf;
    static const char *const prefixes[] = { "sm_", "compute_", "sm" };
    for (size_t i = 0; i < ARRAY_LEN(prefixes); i++)
        if (cf_starts_with(buf, prefixes[i])) {
            num = buf + strlen(prefixes[i]);
            break;
        }
    int sm = parse_sm_number(num);
    if (sm < 0) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%.*s", (int)len, token);
        return reject(tmp, err);
    }
    if (!nvidia_row(sm)) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%.*s", (int)len, token);
        return reject(tmp, err);
    }
    out->vendor = CF_VENDOR_NVIDIA;
    out->sm = sm;
    snprintf(out->name, sizeof out->name, "sm_%d", sm);
    return 0;
}

static int arch_order(const struct cf_arch *a)
{
    return a->vendor == CF_VENDOR_NVIDIA ? a->sm : amd_index(a->name);
}

void cf_arch_list_add(struct cf_arch_list *list, const struct cf_arch *a)
{
    size_t at = 0;
    for (; at < list->n; at++) {
        if (!strcmp(list->v[at].name, a->name))
            return;
        if (arch_order(&list->v[at]) > arch_order(a))
            break;
    }
    if (list->n == list->alloc) {
        list->alloc = list->alloc ? list->alloc * 2 : 8;
        list->v = cf_xrealloc(list->v, list->alloc * sizeof *list->v);
    }
    memmove(&list->v[at + 1], &list->v[at], (list->n - at) * sizeof *list->v);
    list->v[at] = *a;
    list->n++;
}

static int parse_token(struct cf_arch_list *list, const char *token, cf_error *err)
{
    for (size_t i = 0; i < ARRAY_LEN(nvidia_names); i++)
        if (!strcasecmp(token, nvidia_names[i].name))
            return cf_arch_list_parse(list, nvidia_names[i].archs, err);
    struct cf_arch a;
    int ptx = 0;
    if (cf_arch_parse_one(token, &a, &ptx, err) < 0)
        return -1;
    enum cf_gpu_vendor have = cf_arch_list_vendor(list);
    if (have != CF_VENDOR_NONE && have != a.vendor)
        return cf_error_set(err, CF_ERR_USAGE,
                            "'%s' mixes NVIDIA and AMD archs: build NCCL and RCCL separately", token);
    if (ptx)
        list->ptx_requested = 1;
    cf_arch_list_add(list, &a);
    return 0;
}

int cf_arch_list_parse(struct cf_arch_list *list, const char *text, cf_error *err)
{
    struct strvec tokens = STRVEC_INIT;
    cf_strvec_split(&tokens, text ? text : "", ";, \t\n", 0);
    int rc = 0;
    if (tokens.n == 0)
        rc = cf_error_set(err, CF_ERR_USAGE, "no GPU archs given: write them like \"7.5;9.0\" or \"sm_75,sm_90\"");
    for (size_t i = 0; rc == 0 && i < tokens.n; i++)
        rc = parse_token(list, tokens.v[i], err);
    cf_strvec_clear(&tokens);
    return rc;
}

void cf_arch_list_release(struct cf_arch_list *list)
{
    free(list->v);
    memset(list, 0, sizeof *list);
}

enum cf_gpu_vendor cf_arch_list_vendor(const struct cf_arch_list *list)
{
    return list->n ? list->v[0].vendor : CF_VENDOR_NONE;
}

int cf_arch_list_contains(const struct cf_arch_list *list, const char *name)
{
    for (size_t i = 0; i < list->n; i++)
        if (!strcmp(list->v[i].name, name))
            return 1;
    return 0;
}

const struct cf_arch *cf_arch_list_newest(const struct cf_arch_list *list)
{
    return list->n ? &list->v[list->n - 1] : NULL;
}

void cf_arch_list_join(const struct cf_arch_list *list, const char *sep, struct strbuf *out)
{
    for (size_t i = 0; i < list->n; i++)
        cf_sb_addf(out, "%s%s", i ? sep : "", list->v[i].name);
    cf_sb_adds(out, "");
}

void cf_arch_list_dirname(const struct cf_arch_list *list, struct strbuf *out)
{
    for (size_t i = 0; i < list->n; i++) {
        if (i)
            cf_sb_addc(out, '-');
        if (list->v[i].vendor == CF_VENDOR_NVIDIA)
            cf_sb_addf(out, "sm%d", list->v[i].sm);
        else
            cf_sb_adds(out, list->v[i].name);
    }
    cf_sb_adds(out, "");
}

int cf_cuda_version_code(const char *version)
{
    if (!version)
        return -1;
    char *end = NULL;
    long major = strtol(version, &end, 10);
    if (end == version || major <= 0 || major > 99)
        return -1;
    long minor = 0;
    if (*end == '.') {
        const char *m = end + 1;
        minor = strtol(m, &end, 10);
        if (end == m || minor < 0 || minor > 99)
            return -1;
    }
    return (int)(major * 1000 + minor * 10);
}

/* "compute_75 compute_80" contains compute_<sm> as a whole word. */
static int nvcc_lists(const char *nvcc_archs, int sm)
{
    struct strvec words = STRVEC_INIT;
    cf_strvec_split(&words, nvcc_archs, " \t\r\n", 0);
    char want[32];
    snprintf(want, sizeof want, "compute_%d", sm);
    int found = cf_strvec_contains(&words, want);
    cf_strvec_clear(&words);
    return found;
}

int cf_arch_check_cuda(const struct cf_arch_list *list, const char *cuda_version,
                       const char *nvcc_archs, cf_error *err)
{
    int code = cf_cuda_version_code(cuda_version);
    for (size_t i = 0; i < list->n; i++) {
        const struct cf_arch *a = &list->v[i];
        if (a->vendor != CF_VENDOR_NVIDIA)
            return cf_error_set(err, CF_ERR_USAGE, "%s is an AMD target: the NVIDIA toolkit cannot build it (use --vendor rocm)",
                                a->name);
        const struct nvidia_arch_row *row = nvidia_row(a->sm);
        if (nvcc_archs && *nvcc_archs) {
            if (nvcc_lists(nvcc_archs, a->sm))
                continue;
            return cf_error_set(err, CF_ERR_USAGE,
                                "%s cannot be targeted by CUDA %s (nvcc --list-gpu-arch lacks compute_%d)%s%s; "
                                "use a CUDA toolkit that supports it or drop the arch",
                                a->name, cuda_version ? cuda_version : "?", a->sm,
                                row && row->note ? ": " : "", row && row->note ? row->note : "");
        }
        if (code < 0 || !row)
            continue; /* unknown toolkit: nvcc itself will decide */
        if (code < row->introduced)
            return cf_error_set(err, CF_ERR_USAGE, "%s needs CUDA %d.%d or newer; the toolkit is CUDA %s",
                                a->name, row->introduced / 1000, row->introduced % 1000 / 10, cuda_version);
        if (row->dropped && code >= row->dropped)
            return cf_error_set(err, CF_ERR_USAGE,
                                "%s cannot be targeted by CUDA %s: %s; use a CUDA %d.x toolkit for it",
                                a->name, cuda_version, row->note, row->dropped / 1000 - 1);
    }
    return 0;
}

void cf_arch_nvcc_gencode(const struct cf_arch_list *list, int ptx, struct strbuf *out)
{
    for (size_t i = 0; i < list->n; i++)
        if (list->v[i].vendor == CF_VENDOR_NVIDIA)
            cf_sb_addf(out, "%s-gencode=arch=compute_%d,code=sm_%d", out->len ? " " : "", list->v[i].sm, list->v[i].sm);
    const struct cf_arch *newest = cf_arch_list_newest(list);
    if (ptx && newest && newest->vendor == CF_VENDOR_NVIDIA)
        cf_sb_addf(out, "%s-gencode=arch=compute_%d,code=compute_%d", out->len ? " " : "", newest->sm, newest->sm);
    cf_sb_adds(out, "");
}

static const struct {
    const char *word;
    enum cf_gpu_vendor vendor;
} vendor_words[] = {
    { "nvidia", CF_VENDOR_NVIDIA }, { "cuda", CF_VENDOR_NVIDIA }, { "rocm", CF_VENDOR_AMD },
    { "amd", CF_VENDOR_AMD },       { "dtk", CF_VENDOR_AMD },     { "hip", CF_VENDOR_AMD },
};

int cf_vendor_from_word(const char *word, enum cf_gpu_vendor *out)
{
    for (size_t i = 0; word && i < ARRAY_LEN(vendor_words); i++)
        if (!strcasecmp(word, vendor_words[i].word)) {
            *out = vendor_words[i].vendor;
            return 0;
        }
    return -1;
}

const char *cf_vendor_name(enum cf_gpu_vendor v)
{
    return v == CF_VENDOR_NVIDIA ? "nvidia" : v == CF_VENDOR_AMD ? "amd" : "none";
}

cJSON *cf_arch_list_json(const struct cf_arch_list *list)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < list->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(list->v[i].name));
    return a;
}
