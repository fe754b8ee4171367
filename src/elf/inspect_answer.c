/* inspect's whole answer remembered (cclforge/inspect.h): one process per
 * file, as scripts and build systems run it, otherwise repeats the loader
 * emulation and the symbol check (~60 % of a run) to print what it printed
 * last time. The answer is kept as printed, so a warm run is byte-identical
 * to the run that computed it, for every output form (each is its own key).
 * It stays valid while every input is as it was: this executable, every
 * object and every candidate rejected for its content, every directory and
 * file the loader emulation and the RPATH lint asked about (present or
 * absent), the ld.so.cache and the glibc files (cf_ldso_result_depends). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/depcache.h"
#include "cclforge/fs.h"
#include "cclforge/inspect.h"

#define MAGIC "CFINSPECT1 "
/* dep_cache.c refuses entries over 1 MB (key and dependencies included) */
enum { MAX_OUT = 768 << 10 };

/* Built with appends, not printf: this is the warm path of every run, and
 * printf's code is pages of libc a replay need not fault in. */
void cf_inspect_answer_key(const char *const *args, size_t n_args, struct strbuf *key)
{
    char *self = cf_self_exe(); /* another cclforge may answer otherwise */
    char *cwd = cf_getcwd(); /* relative FILEs, $ORIGIN of them */
    cf_sb_adds(key, "inspect/1\nexe=");
    cf_sb_adds(key, self ? self : "?");
    cf_sb_adds(key, "\ncwd=");
    cf_sb_adds(key, cwd ? cwd : "?");
    cf_sb_addc(key, '\n');
    free(self);
    free(cwd);
    for (size_t i = 0; i < n_args; i++) {
        size_t n = strlen(args[i]);
        cf_sb_addu(key, n);
        cf_sb_addc(key, ':');
        cf_sb_add(key, args[i], n);
        cf_sb_addc(key, '\n');
    }
    cf_ldso_env_key(key);
}

/* What the printers write: text through the one sanitiser (cli_safe) and
 * JSON with escaped control characters. Anything else is not ours. */
static int printable(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f)
            return 0;
    }
    return 1;
}

int cf_inspect_answer_decode(const char *value, size_t value_len, int *code, const char **out, size_t *len)
{
    size_t m = sizeof MAGIC - 1;
    /* "CFINSPECT1 <0|1>\n" then the printed bytes */
    if (value_len < m + 2 || memcmp(value, MAGIC, m) != 0 || (value[m] != '0' && value[m] != '1') ||
        value[m + 1] != '\n' || value_len - m - 2 > MAX_OUT || !printable(value + m + 2, value_len - m - 2))
        return -1;
    *code = value[m] - '0';
    *out = value + m + 2;
    *len = value_len - m - 2;
    return 0;
}

int cf_inspect_answer_get(const char *root, const struct strbuf *key, int *code, struct strbuf *out)
{
    struct strbuf value = STRBUF_INIT;
    const char *p;
    size_t n;
    int ok = cf_depcache_get_at(root, "inspect", key->buf, key->len, &value) &&
             cf_inspect_answer_decode(value.buf, value.len, code, &p, &n) == 0;
    if (ok)
        cf_sb_add(out, p, n);
    cf_sb_release(&value);
    return ok;
}

void cf_inspect_answer_put(const struct strbuf *key, const struct cf_inspect_result *r, int code, const char *out,
                           size_t len)
{
    if (r->default_mode || (code != 0 && code != 1) || len > MAX_OUT || !printable(out, len))
        return;
    for (size_t i = 0; i < r->n_targets; i++)
        if (r->targets[i].error)
            return;
    struct strvec deps = STRVEC_INIT;
    char *self = cf_self_exe();
    if (!self)
        return;
    cf_strvec_push(&deps, self);
    free(self);
    int bounded = 1;
    for (size_t i = 0; bounded && i < r->n_targets; i++) {
        const struct cf_inspect_target *t = &r->targets[i];
        cf_ldso_depend(&deps, t->file);
        bounded = cf_ldso_result_depends(&t->closure, &deps) == 0 &&
                  deps.n + t->inputs.n <= CF_DEPCACHE_MAX_DEPS;
        for (size_t k = 0; bounded && k < t->inputs.n; k++)
            cf_ldso_depend_nearest(&deps, t->inputs.v[k]);
    }
    if (!bounded) {
        cf_strvec_clear(&deps);
        return;
    }
    struct strbuf value = STRBUF_INIT;
    cf_sb_addf(&value, "%s%d\n", MAGIC, code);
    cf_sb_add(&value, out, len);
    cf_depcache_put("inspect", key->buf, key->len, value.buf, value.len, (const char *const *)cf_strvec_argv(&deps));
    cf_sb_release(&value);
    cf_strvec_clear(&deps);
}
