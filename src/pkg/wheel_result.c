/* The verifier's result: checks are appended by the static part
 * (wheel_verify.c) and the install part (wheel_install.c), released here. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/wheel.h"
#include "pkg/wheel_internal.h"

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

void cf_wheel_verify_result_release(struct cf_wheel_verify_result *res)
{
    free(res->wheel);
    free(res->dist);
    free(res->version);
    free(res->python_tag);
    free(res->abi_tag);
    free(res->platform_tag);
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
    memset(res, 0, sizeof *res);
}
