/* `wheel verify`'s host check: the libraries a bridge wheel's marker says the
 * host's toolkit provides (--toolkit-lib at build: DTK's librccl.so.1, the HIP
 * runtime), each looked up as this host's loader would find it
 * (cclforge/survey.h, cf_host_lib_locate). One the host lacks is named as a
 * host requirement, not a fault of the wheel: the wheel is right to leave it
 * out, and this host cannot import it until the toolkit is there. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/bridge_facts.h"
#include "cclforge/strbuf.h"
#include "cclforge/survey.h"
#include "pkg/wheel_verify_internal.h"

/* The toolkit libraries the extensions' own ABI facts name (any cclforge-built
 * bridge, with or without the marker: a plugin's own wheel). */
void cf_wheel_toolkit_libs_from_facts(struct verify_ctx *c)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct vmember *m = &c->m[i];
        if (!m->elf || !m->is_extension || !m->placed)
            continue;
        struct cf_bridge_facts f;
        const char *why;
        cf_error err = CF_ERROR_INIT;
        if (cf_bridge_facts_read_file(m->placed, &f, &why, &err) == 0 && f.found) {
            struct strvec libs = STRVEC_INIT;
            cf_strvec_split(&libs, f.toolkit_libs, " ", 0);
            for (size_t k = 0; k < libs.n; k++)
                if (*libs.v[k] && !cf_strvec_contains(&c->wf.toolkit_libs, libs.v[k]))
                    cf_strvec_push(&c->wf.toolkit_libs, libs.v[k]);
            cf_strvec_clear(&libs);
            if (!c->wf.toolkit_vendor && *f.vendor)
                c->wf.toolkit_vendor = cf_strdup(f.vendor);
            if (!c->wf.toolkit_version && *f.toolkit_version)
                c->wf.toolkit_version = cf_strdup(f.toolkit_version);
        }
        cf_error_clear(&err);
    }
}

void cf_wheel_check_host(struct verify_ctx *c)
{
    const struct wheel_facts *wf = &c->wf;
    if (!wf->toolkit_libs.n) {
        cf_wheel_add_check(c->res, "host", -1, "no host requirements: the wheel declares no library of the host's "
                                               "toolkit");
        return;
    }
    struct strbuf ok = STRBUF_INIT, lack = STRBUF_INIT;
    size_t missing = 0;
    for (size_t i = 0; i < wf->toolkit_libs.n; i++) {
        const char *so = wf->toolkit_libs.v[i];
        struct cf_host_lib h;
        cf_error err = CF_ERROR_INIT;
        if (cf_host_lib_locate(so, wf->toolkit_vendor, &h, &err) < 0) {
            cf_sb_addf(&lack, "%s%s (%s)", lack.len ? "; " : "", so, cf_error_message(&err));
            missing++;
        } else if (h.path) {
            cf_sb_addf(&ok, "%s%s -> %s (%s)", ok.len ? ", " : "", so, h.path, h.how);
        } else {
            missing++;
            if (h.in_toolkit)
                cf_sb_addf(&lack, "%s%s is in the toolkit %s names (%s) but not where the loader looks (%s): put "
                                  "its directory on LD_LIBRARY_PATH (the toolkit's environment script does) or in "
                                  "ld.so.conf",
                           lack.len ? "; " : "", so, h.toolkit_var, h.in_toolkit, h.considered);
            else
                cf_sb_addf(&lack, "%s%s is not on this host (the loader looked in: %s; no toolkit root variable "
                                  "names one that has it)",
                           lack.len ? "; " : "", so, h.considered && *h.considered ? h.considered : "nothing");
        }
        cf_host_lib_release(&h);
        cf_error_clear(&err);
    }
    const char *tk = wf->toolkit_vendor ? wf->toolkit_vendor : "the vendor";
    if (missing)
        cf_wheel_add_check(c->res, "host", -1,
                           "host requirement: %zu of %zu toolkit libraries missing here (%s toolkit %s at build): "
                           "%s%s%s. Install that toolkit (set ROCM_PATH / DTK_HOME / CUDA_HOME) before the bridge "
                           "can import on this host",
                           missing, wf->toolkit_libs.n, tk, wf->toolkit_version ? wf->toolkit_version : "(version ?)",
                           lack.buf, ok.len ? "; found: " : "", ok.len ? ok.buf : "");
    else
        cf_wheel_add_check(c->res, "host", 1, "the host's toolkit provides %s (%s toolkit %s at build)", ok.buf, tk,
                           wf->toolkit_version ? wf->toolkit_version : "(version ?)");
    cf_sb_release(&ok);
    cf_sb_release(&lack);
}
