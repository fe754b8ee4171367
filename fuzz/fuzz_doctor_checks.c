/* libFuzzer target for doctor's checks over a survey built straight from the
 * bytes (no JSON in between, so every field combination is reachable): up to
 * thousands of GPUs of any vendor and arch text, comm libraries with arch
 * lists, libtorch entries, toolkits. Properties: diagnose and compare finish
 * (libFuzzer's -timeout catches a quadratic blow-up) and every finding has an
 * id, a subject and a reason. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/doctor.h"
#include "cclforge/survey.h"
#include "survey/survey_internal.h"

struct reader {
    const uint8_t *p;
    size_t left;
};

static unsigned byte(struct reader *r)
{
    if (!r->left)
        return 0;
    r->left--;
    return *r->p++;
}

/* A short string from the input: a known word or raw bytes. */
static char *text(struct reader *r, const char *const *words, size_t n_words)
{
    unsigned pick = byte(r);
    if (pick < 200 && n_words)
        return cf_strdup(words[pick % n_words]);
    size_t len = byte(r) % 24;
    if (len > r->left)
        len = r->left;
    char *s = cf_strndup((const char *)r->p, len);
    r->p += len;
    r->left -= len;
    return s;
}

static const char *const vendors[] = { "nvidia", "amd", "hygon", "intel" };
static const char *const archs[] = { "sm_61", "sm_75", "sm_90", "sm_100f", "sm_120", "compute_90", "gfx90a", "gfx928", "gfx942" };
static const char *const kinds[] = { "nccl", "rccl" };
static const char *const versions[] = { "2.28.9", "2.21.5", "2.18.3", "13.0", "6.2.4", "24.04.1" };
static const char *const tk_vendors[] = { "cuda", "rocm", "dtk" };

static void fill_comm(struct reader *r, struct cf_comm_lib *c)
{
    c->kind = text(r, kinds, 2);
    c->path = text(r, NULL, 0);
    c->version = text(r, versions, 6);
    c->version_code = (int)(byte(r) << 8 | byte(r));
    c->archs_known = byte(r) & 1;
    for (unsigned i = 0, n = byte(r) % 8; i < n; i++)
        cf_strvec_push_nodup(&c->archs, text(r, archs, 9));
}

static void build(struct reader *r, struct cf_survey *s)
{
    size_t n_gpus = (size_t)byte(r) << 4; /* up to 4080 */
    for (size_t i = 0; i < n_gpus && r->left; i++) {
        struct cf_gpu *g = cf_survey_add_gpu(s);
        g->index = (int)i;
        g->vendor = text(r, vendors, 4);
        g->arch = text(r, archs, 9);
        g->visible = byte(r) & 1;
    }
    for (unsigned i = 0, n = byte(r) % 4; i < n; i++)
        fill_comm(r, cf_survey_add_comm_lib(s));
    for (unsigned i = 0, n = byte(r) % 3; i < n; i++) {
        struct cf_libtorch *t = cf_survey_add_torch(s);
        t->version = text(r, versions, 6);
        t->flavour = (enum cf_torch_flavour)(byte(r) % 4);
        t->archs_known = byte(r) & 1;
        if (byte(r) & 1) {
            t->embedded = cf_xcalloc(1, sizeof *t->embedded);
            fill_comm(r, t->embedded);
        }
        if (byte(r) & 1) {
            t->loaded = cf_xcalloc(1, sizeof *t->loaded);
            fill_comm(r, t->loaded);
        }
    }
    for (unsigned i = 0, n = byte(r) % 3; i < n; i++) {
        struct cf_toolkit *t = cf_survey_add_toolkit(s);
        t->vendor = text(r, tk_vendors, 3);
        t->version = text(r, versions, 6);
    }
}

static void check(const struct cf_findings *f)
{
    for (size_t i = 0; i < f->n; i++)
        if (!f->v[i].id || !f->v[i].subject || !f->v[i].why)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct reader r = { data, size };
    struct cf_survey s[2] = { CF_SURVEY_INIT, CF_SURVEY_INIT };
    build(&r, &s[0]);
    build(&r, &s[1]);
    struct cf_findings f = CF_FINDINGS_INIT;
    cf_doctor_diagnose(&s[0], &f);
    check(&f);
    cf_findings_release(&f);
    const char *labels[2] = { "a", "b" };
    struct cf_findings c = CF_FINDINGS_INIT;
    cf_doctor_compare(s, labels, 2, &c);
    check(&c);
    cf_findings_release(&c);
    cf_survey_release(&s[0]);
    cf_survey_release(&s[1]);
    return 0;
}
