/* The verifier's result: checks are added as they run, and released together. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/wheel.h"
#include "pkg/wheel_verify_internal.h"

void cf_wheel_add_check(struct cf_wheel_verify_result *res, const char *name, int ok, const char *fmt, ...)
{
    res->checks = cf_xrealloc(res->checks, (res->n_checks + 1) * sizeof *res->checks);
    struct cf_wheel_check *c = &res->checks[res->n_checks++];
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cf_sb_addvf(&sb, fmt, ap);
    va_end(ap);
    c->name = cf_strdup(name);
    c->ok = ok;
    c->detail = cf_sb_detach(&sb);
    if (ok == 0)
        res->failed++;
}

void cf_wheel_problem(struct cf_wheel_problems *p, const char *fmt, ...)
{
    if (p->n++ >= CF_WHEEL_SHOWN)
        return;
    va_list ap;
    va_start(ap, fmt);
    cf_sb_addvf(&p->text, fmt, ap);
    va_end(ap);
    cf_sb_adds(&p->text, "; ");
}

void cf_wheel_problems_finish(struct cf_wheel_problems *p)
{
    if (p->n > CF_WHEEL_SHOWN)
        cf_sb_addf(&p->text, "... and %zu more", p->n - CF_WHEEL_SHOWN);
}

void cf_wheel_report(struct cf_wheel_verify_result *res, const char *check, struct cf_wheel_problems *p,
                     const char *ok_fmt, ...)
{
    cf_wheel_problems_finish(p);
    if (p->n) {
        cf_wheel_add_check(res, check, 0, "%s", p->text.buf);
    } else {
        struct strbuf sb = STRBUF_INIT;
        va_list ap;
        va_start(ap, ok_fmt);
        cf_sb_addvf(&sb, ok_fmt, ap);
        va_end(ap);
        cf_wheel_add_check(res, check, 1, "%s", sb.buf);
        cf_sb_release(&sb);
    }
    cf_sb_release(&p->text);
    p->n = 0;
}

void cf_wheel_verify_result_release(struct cf_wheel_verify_result *res)
{
    free(res->wheel);
    free(res->dist);
    free(res->version);
    free(res->python_tag);
    free(res->abi_tag);
    free(res->platform_tag);
    free(res->policy_needed);
    cf_strvec_clear(&res->extensions);
    cf_strvec_clear(&res->elf_members);
    for (size_t i = 0; i < res->n_checks; i++) {
        free(res->checks[i].name);
        free(res->checks[i].detail);
    }
    free(res->checks);
    free(res->venv);
    free(res->module);
    free(res->module_file);
    cf_strvec_clear(&res->smoke_lines);
    cf_strvec_clear(&res->imported);
    cf_strvec_clear(&res->import_failed);
    memset(res, 0, sizeof *res);
}
