/* Shared between the verifier's static checks and its install/import/smoke steps. */
#ifndef CCLFORGE_PKG_WHEEL_INTERNAL_H
#define CCLFORGE_PKG_WHEEL_INTERNAL_H

#include <time.h>

#include "cclforge/wheel.h"

/* The bridge marker a cclforge-built wheel carries in its .dist-info. */
#define CF_WHEEL_MARKER "cclforge.json"

void cf_wheel_add_check(struct cf_wheel_verify_result *res, const char *name, int ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* What the static part learnt that the install part needs. */
struct wheel_facts {
    char *bridge_module;          /* dotted module from the marker, NULL when not a cclforge bridge */
    struct strvec modules;        /* dotted names of every extension module */
};

/* --install and --smoke: a fresh venv, pip install, import from the installed location. */
void cf_wheel_install_checks(const struct cf_wheel_verify_opts *opts, const struct wheel_facts *wf,
                          struct cf_wheel_verify_result *res);

/* wheel_write.c, shared with wheel_graft.c: a clean relative member name (no
 * "/", "..", "." or empty components); the time stamp of written members
 * (SOURCE_DATE_EPOCH, else 1980-01-01); one deflated member with Unix mode
 * 0644/0755 and that time. */
int cf_wheel_member_name_ok(const char *name);
long cf_wheel_fixed_mtime(void);
typedef struct zip zip_t;
int cf_wheel_zip_add(zip_t *za, const char *name, const struct strbuf *data, int executable, time_t mtime,
                     cf_error *err);

/* wheel_abi.c: abi_info()'s sizes and NCCL versions against the libtorch file loaded. */
struct cJSON;
void cf_wheel_bridge_abi_check(struct cf_wheel_verify_result *res, const struct cJSON *abi);
/* wheel_smoke.c: --smoke N with opts->smoke_backend through the installed module. */
void cf_wheel_run_smoke(const struct cf_wheel_verify_opts *opts, const char *py, const char *work, const char *module,
                        int gpus, struct cf_wheel_verify_result *res);

#endif
