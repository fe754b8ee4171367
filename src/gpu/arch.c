/* GPU archs: the representation, the parser, the order, the CUDA toolkit's
 * target table, the coverage rule and the NCCL/RCCL compiler flags. */
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
    const char *note; /* why it was dropped or renamed; "" while supported */
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
    { 75, 10000, 0, "" },
    { 80, 11000, 0, "" },
    { 86, 11010, 0, "" },
    { 87, 11040, 0, "" },
    { 88, 13000, 0, "" },
    { 89, 11080, 0, "" },
    { 90, 11080, 0, "" },
    { 100, 12080, 0, "" },
    { 101, 12080, 13000, "CUDA 13.0 renamed sm_101 to sm_110" },
    { 103, 12090, 0, "" },
    { 110, 13000, 0, "" },
    { 120, 12080, 0, "" },
    { 121, 12090, 0, "" },
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

static const struct nvidia_arch_row *nvidia_row(unsigned sm)
{
    for (size_t i = 0; i < ARRAY_LEN(nvidia_archs); i++)
        if (nvidia_archs[i].sm == (int)sm)
            return &nvidia_archs[i];
    return NULL;
}

static int amd_known(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(amd_archs); i++)
        if (!strcmp(amd_archs[i], name))
            return 1;
    return 0;
}

/* ---- parsing ---- */

static int reject(const char *token, cf_error *err)
{
    return cf_error_set(err, CF_ERR_USAGE,
                        "unknown GPU arch '%s': use compute capabilities (\"6.1;12.0\", \"8.6+PTX\"), "
                        "sm names (\"sm_61,sm_120\") or AMD targets (\"gfx90a;gfx942\")",
                        token);
}

/* n decimal digits at s (n >= 1), their value in *out. */
static int digits(const char *s, size_t n, unsigned *out)
{
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = v;
    return n ? 0 : -1;
}

static int hex_digit(char c)
{
    return isdigit((unsigned char)c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "gfx" + <major><minor hex><stepping hex> ("90a", "1100"), or a generic
 * target ("9-generic", "10-3-generic"). */
static int parse_gfx(const char *body, struct cf_arch *out)
{
    size_t len = strlen(body);
    out->family = CF_ARCH_AMD;
    unsigned major;
    if (len >= 3 && len <= 4 && digits(body, len - 2, &major) == 0 && major > 0) {
        int minor = hex_digit(body[len - 2]), stepping = hex_digit(body[len - 1]);
        if (minor < 0 || stepping < 0)
            return -1;
        out->gfx = major << 8 | (unsigned)minor << 4 | (unsigned)stepping;
    } else if (cf_ends_with(body, "-generic") && len > 8 && len < 16) {
        for (size_t i = 0; i < len - 8; i++)
            if (!isdigit((unsigned char)body[i]) && body[i] != '-')
                return -1;
    } else {
        return -1;
    }
    snprintf(out->name, sizeof out->name, "gfx%s", body);
    return 0;
}

/* "61", "120", "90a", "100f" after an sm_/compute_/lto_ prefix. */
static int parse_sm(const char *num, enum cf_arch_code code, struct cf_arch *out)
{
    size_t len = strlen(num);
    char variant = 0;
    if (len && (num[len - 1] == 'a' || num[len - 1] == 'f'))
        variant = num[--len];
    unsigned sm;
    if (len < 2 || len > 4 || digits(num, len, &sm) < 0 || sm < 10)
        return -1;
    cf_arch_nvidia(sm, variant, code, out);
    return 0;
}

/* "6.1", "12.0": a compute capability, major.minor with one minor digit. */
static int parse_cc(const char *s, struct cf_arch *out)
{
    const char *dot = strchr(s, '.');
    unsigned major, minor;
    if (!dot || dot == s || (size_t)(dot - s) > 3 || digits(s, (size_t)(dot - s), &major) < 0 ||
        strlen(dot + 1) != 1 || digits(dot + 1, 1, &minor) < 0 || major == 0)
        return -1;
    cf_arch_nvidia(major * 10 + minor, 0, CF_CODE_SASS, out);
    return 0;
}

void cf_arch_nvidia(unsigned sm, char variant, enum cf_arch_code code, struct cf_arch *out)
{
    static const char *const prefixes[] = { [CF_CODE_SASS] = "sm_", [CF_CODE_PTX] = "compute_",
                                            [CF_CODE_LTOIR] = "lto_" };
    memset(out, 0, sizeof *out);
    out->family = CF_ARCH_NVIDIA;
    out->code = code;
    out->sm = sm;
    out->variant = variant == 'a' || variant == 'f' ? variant : 0;
    if (out->variant)
        snprintf(out->name, sizeof out->name, "%s%u%c", prefixes[code], sm, out->variant);
    else
        snprintf(out->name, sizeof out->name, "%s%u", prefixes[code], sm);
}

int cf_arch_parse(const char *text, struct cf_arch *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    if (!text)
        return reject("(none)", err);
    while (isspace((unsigned char)*text))
        text++;
    size_t len = strlen(text);
    while (len && isspace((unsigned char)text[len - 1]))
        len--;
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return reject(len ? "(too long)" : "(empty)", err);
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)tolower((unsigned char)text[i]);
    buf[len] = 0;

    int rc;
    if (cf_starts_with(buf, "gfx")) {
        buf[strcspn(buf, ":")] = 0; /* "gfx90a:xnack-": features do not change the target */
        rc = parse_gfx(buf + 3, out);
    } else {
        static const struct {
            const char *prefix;
            enum cf_arch_code code;
        } prefixes[] = { { "sm_", CF_CODE_SASS }, { "compute_", CF_CODE_PTX }, { "lto_", CF_CODE_LTOIR },
                         { "sm", CF_CODE_SASS } };
        rc = -2;
        for (size_t i = 0; rc == -2 && i < ARRAY_LEN(prefixes); i++)
            if (cf_starts_with(buf, prefixes[i].prefix))
                rc = parse_sm(buf + strlen(prefixes[i].prefix), prefixes[i].code, out);
        if (rc == -2)
            rc = strchr(buf, '.') ? parse_cc(buf, out) : parse_sm(buf, CF_CODE_SASS, out);
        if (rc == 0 && !strchr(buf, '_') && !cf_starts_with(buf, "sm") && out->variant)
            rc = -1; /* "90a" is no compute capability */
    }
    if (rc < 0) {
        memset(out, 0, sizeof *out);
        char shown[40];
        snprintf(shown, sizeof shown, "%.*s", (int)len, text);
        return reject(shown, err);
    }
    return 0;
}

/* 1 when the toolkit tables know the arch (NVIDIA: some CUDA release
 * targets it; AMD: ROCm or DTK compiles for it). */
static int arch_known(const struct cf_arch *a)
{
    if (a->family == CF_ARCH_NVIDIA)
        return nvidia_row(a->sm) != NULL;
    return a->family == CF_ARCH_AMD && amd_known(a->name);
}

static int variant_rank(char v)
{
    return v == 'a' ? 1 : v == 'f' ? 2 : 0;
}

int cf_arch_cmp(const struct cf_arch *a, const struct cf_arch *b)
{
    unsigned na = a->family == CF_ARCH_AMD ? a->gfx : a->sm, nb = b->family == CF_ARCH_AMD ? b->gfx : b->sm;
    if (a->family != b->family)
        return a->family < b->family ? -1 : 1;
    if (na != nb)
        return na < nb ? -1 : 1;
    if (a->variant != b->variant)
        return variant_rank(a->variant) - variant_rank(b->variant);
    if (a->code != b->code)
        return a->code < b->code ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* KFD encodes gfx_target_version as major*10000 + minor*100 + stepping (decimal);
 * the gfx name prints major in decimal, then minor and stepping as one hex digit
 * each: 90010 -> 9,0,10 -> "gfx90a"; 90402 -> "gfx942"; 90208 -> "gfx928";
 * 110000 -> "gfx1100". */
void cf_gfx_target_name(unsigned v, char *buf, size_t len)
{
    if (!v) {
        snprintf(buf, len, "%s", "");
        return;
    }
    unsigned major = v / 10000, minor = (v / 100) % 100, stepping = v % 100;
    if (minor > 15 || stepping > 15) {
        snprintf(buf, len, "gfx?%u", v);
        return;
    }
    snprintf(buf, len, "gfx%u%x%x", major, minor, stepping);
}

void cf_sm_name(int cc_major, int cc_minor, char *buf, size_t len)
{
    snprintf(buf, len, "sm_%d%d", cc_major, cc_minor);
}

/* ---- the coverage rule (see arch.h) ---- */

enum cf_arch_fit cf_arch_fit(const struct cf_arch *code, const struct cf_arch *gpu)
{
    if (code->family != gpu->family || code->family == CF_ARCH_NONE)
        return CF_FIT_NONE;
    if (code->family == CF_ARCH_AMD)
        return !strcmp(code->name, gpu->name) ? CF_FIT_NATIVE : CF_FIT_NONE;
    if (code->code == CF_CODE_LTOIR)
        return CF_FIT_NONE;
    int same_major_up = code->sm / 10 == gpu->sm / 10 && code->sm % 10 <= gpu->sm % 10;
    int runs;
    if (code->variant == 'a')
        runs = code->sm == gpu->sm;
    else if (code->variant == 'f')
        runs = same_major_up;
    else
        runs = code->code == CF_CODE_SASS ? same_major_up : code->sm <= gpu->sm;
    if (!runs)
        return CF_FIT_NONE;
    return code->code == CF_CODE_SASS ? CF_FIT_NATIVE : CF_FIT_JIT;
}

enum cf_arch_fit cf_arch_best_fit(const struct strvec *code, const char *gpu)
{
    struct cf_arch g, c;
    enum cf_arch_fit best = CF_FIT_NONE;
    if (!gpu || cf_arch_parse(gpu, &g, NULL) < 0)
        return best;
    for (size_t i = 0; i < code->n && best != CF_FIT_NATIVE; i++) {
        if (cf_arch_parse(code->v[i], &c, NULL) < 0)
            continue;
        enum cf_arch_fit f = cf_arch_fit(&c, &g);
        if (f > best)
            best = f;
    }
    return best;
}

int cf_arch_covered(const struct strvec *code, const char *gpu)
{
    return cf_arch_best_fit(code, gpu) != CF_FIT_NONE;
}

/* ---- build targets ---- */

void cf_arch_list_add(struct cf_arch_list *list, const struct cf_arch *a)
{
    size_t at = 0;
    for (; at < list->n; at++) {
        int c = cf_arch_cmp(&list->v[at], a);
        if (c == 0)
            return;
        if (c > 0)
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

static int parse_target(struct cf_arch_list *list, const char *token, cf_error *err)
{
    for (size_t i = 0; i < ARRAY_LEN(nvidia_names); i++)
        if (!strcasecmp(token, nvidia_names[i].name))
            return cf_arch_list_parse(list, nvidia_names[i].archs, err);
    char buf[64];
    snprintf(buf, sizeof buf, "%s", token);
    int ptx = 0;
    if (cf_ends_with(buf, "+PTX") || cf_ends_with(buf, "+ptx")) {
        ptx = 1;
        buf[strlen(buf) - 4] = 0;
    }
    struct cf_arch a;
    if (cf_arch_parse(buf, &a, err) < 0)
        return -1;
    if (ptx && a.family != CF_ARCH_NVIDIA)
        return cf_error_set(err, CF_ERR_USAGE, "'%s': +PTX applies to NVIDIA archs only", token);
    if (a.variant)
        return cf_error_set(err, CF_ERR_USAGE,
                            "'%s': arch-specific ('a') and family ('f') variants are not build targets; give the "
                            "plain arch (sm_%u)",
                            token, a.sm);
    if (a.family == CF_ARCH_NVIDIA && a.code != CF_CODE_SASS) {
        if (a.code == CF_CODE_LTOIR)
            return reject(token, err);
        cf_arch_nvidia(a.sm, 0, CF_CODE_SASS, &a); /* "compute_90" asks for sm_90 */
    }
    if (!arch_known(&a))
        return reject(token, err);
    enum cf_arch_family have = cf_arch_list_family(list);
    if (have != CF_ARCH_NONE && have != a.family)
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
        rc = parse_target(list, tokens.v[i], err);
    cf_strvec_clear(&tokens);
    return rc;
}

void cf_arch_list_release(struct cf_arch_list *list)
{
    free(list->v);
    memset(list, 0, sizeof *list);
}

enum cf_arch_family cf_arch_list_family(const struct cf_arch_list *list)
{
    return list->n ? list->v[0].family : CF_ARCH_NONE;
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
        if (list->v[i].family == CF_ARCH_NVIDIA)
            cf_sb_addf(out, "sm%u", list->v[i].sm);
        else
            cf_sb_adds(out, list->v[i].name);
    }
    cf_sb_adds(out, "");
}

cJSON *cf_arch_list_json(const struct cf_arch_list *list)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < list->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(list->v[i].name));
    return a;
}

/* ---- the CUDA toolkit ---- */

int cf_cuda_version_code(const char *version)
{
    if (!version)
        return 0;
    char *end = NULL;
    long major = strtol(version, &end, 10);
    if (end == version || major <= 0 || major > 99)
        return 0;
    long minor = 0;
    if (*end == '.') {
        const char *m = end + 1;
        minor = strtol(m, &end, 10);
        if (end == m || minor < 0 || minor > 99)
            return 0;
    }
    return (int)(major * 1000 + minor * 10);
}

/* "compute_75 compute_80" contains compute_<sm> as a whole word. */
static int nvcc_lists(const char *nvcc_archs, unsigned sm)
{
    struct strvec words = STRVEC_INIT;
    cf_strvec_split(&words, nvcc_archs, " \t\r\n", 0);
    char want[32];
    snprintf(want, sizeof want, "compute_%u", sm);
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
        if (a->family != CF_ARCH_NVIDIA)
            return cf_error_set(err, CF_ERR_USAGE, "%s is an AMD target: the NVIDIA toolkit cannot build it (use --vendor rocm)",
                                a->name);
        const struct nvidia_arch_row *row = nvidia_row(a->sm);
        if (nvcc_archs && *nvcc_archs) {
            if (nvcc_lists(nvcc_archs, a->sm))
                continue;
            return cf_error_set(err, CF_ERR_USAGE,
                                "%s cannot be targeted by CUDA %s (nvcc --list-gpu-arch lacks compute_%u)%s%s; "
                                "use a CUDA toolkit that supports it or drop the arch",
                                a->name, cuda_version ? cuda_version : "?", a->sm,
                                row && row->note[0] ? ": " : "", row ? row->note : "");
        }
        if (!code || !row)
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
        if (list->v[i].family == CF_ARCH_NVIDIA)
            cf_sb_addf(out, "%s-gencode=arch=compute_%u,code=sm_%u", out->len ? " " : "", list->v[i].sm, list->v[i].sm);
    const struct cf_arch *newest = cf_arch_list_newest(list);
    if (ptx && newest && newest->family == CF_ARCH_NVIDIA)
        cf_sb_addf(out, "%s-gencode=arch=compute_%u,code=compute_%u", out->len ? " " : "", newest->sm, newest->sm);
    cf_sb_adds(out, "");
}

