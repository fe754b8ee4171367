/* NCCL's (and RCCL's) effective configuration, built the way the library builds
 * it at its first ncclGetEnv (src/misc/param.cc, initEnv/setEnvFile, released
 * NCCL 2.x and RCCL): the process environment first; then NCCL_CONF_FILE when
 * set and non-empty, else ~/.nccl.conf (the home directory of the real user,
 * getpwuid(getuid())->pw_dir, not $HOME); then /etc/nccl.conf. RCCL reads
 * ~/.rccl.conf then /etc/rccl.conf and knows no NCCL_CONF_FILE. Every file line
 * is KEY=VALUE applied with setenv(KEY, VALUE, 0): whatever is already set wins,
 * so the environment beats every file, the first file beats the later ones and,
 * inside one file, the first line for a key beats later ones. NCCL skips lines
 * starting with '#'; RCCL does not (such a line sets a variable nobody reads).
 * Nothing is trimmed: "KEY = VALUE" sets "KEY " to " VALUE"; a CRLF file leaves
 * '\r' at the end of every value. See docs/doctor.md. */
#ifndef CCLFORGE_NCCLCONF_H
#define CCLFORGE_NCCLCONF_H

#include <stddef.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One variable NCCL will see, and where its value came from. */
struct cf_nccl_setting {
    char *name;               /* "NCCL_SOCKET_IFNAME"; from a file, any key it sets */
    char *value;              /* as NCCL reads it; NULL when hidden */
    int hidden;               /* the name looks like a secret: value withheld */
    char *source;             /* "environment" or "/etc/nccl.conf:3" */
    struct strvec overridden; /* lost to source: "/etc/nccl.conf:7 (NCCL_DEBUG=WARN)" */
};

/* One configuration file NCCL would read. */
struct cf_nccl_conf_file {
    char *path;
    char *role;     /* "NCCL_CONF_FILE", "~/.nccl.conf", "/etc/nccl.conf", "~/.rccl.conf", "/etc/rccl.conf" */
    int present;    /* the path exists */
    int read;       /* read as a regular file */
    int settings;   /* KEY=VALUE lines it holds */
    char *problem;  /* why it was not read (not a regular file, unreadable, too large); NULL */
};

/* A line NCCL accepts but reads differently than its author likely meant. */
struct cf_nccl_conf_note {
    char *where;    /* "/etc/nccl.conf:4" or "environment" */
    char *name;     /* the variable concerned (as NCCL sets it, e.g. "NCCL_DEBUG ") */
    char *text;     /* what happens, in words */
};

struct cf_nccl_config {
    char *flavour;  /* "nccl" or "rccl": whose file rules were applied */
    char *home;     /* the home directory used for ~/.nccl.conf; NULL unknown */
    struct cf_nccl_conf_file *files;  size_t n_files;
    struct cf_nccl_setting *settings; size_t n_settings; /* sorted by name */
    struct cf_nccl_conf_note *notes;  size_t n_notes;
};

struct cf_nccl_config_inputs {
    const char *flavour;  /* "nccl" (NULL) or "rccl" */
    char *const *envp;    /* the environment the library starts with */
    const char *home;     /* NULL: getpwuid(getuid())->pw_dir, as NCCL */
    const char *etc_dir;  /* NULL: "/etc" */
};

/* Builds the configuration. Never fails: unreadable files and odd lines are data. */
void cf_nccl_config_build(const struct cf_nccl_config_inputs *in, struct cf_nccl_config *out);
void cf_nccl_config_release(struct cf_nccl_config *c);
/* The setting named name, NULL when NCCL will not see it. */
const struct cf_nccl_setting *cf_nccl_config_get(const struct cf_nccl_config *c, const char *name);

/* JSON of the survey's "nccl_config" section (a cJSON object, typed void *). */
void *cf_nccl_config_to_json(const struct cf_nccl_config *c);
int cf_nccl_config_from_json(const void *json, struct cf_nccl_config *c, cf_error *err);

/* Splits a configuration file's bytes as setEnvFile does and calls visit for each
 * line that sets a variable (key and value as setenv gets them: NUL-terminated,
 * each cut at 1023 bytes). crlf: the value ends with '\r'. Used by the builder and
 * the fuzz target. */
typedef void (*cf_nccl_conf_visit_fn)(void *ctx, unsigned line, const char *key, const char *value, int crlf);
void cf_nccl_conf_parse(const char *text, size_t len, int rccl, cf_nccl_conf_visit_fn visit, void *ctx);

/* ---- what the variables are (src/survey/nccl_params.c, documented in docs/doctor.md) ---- */

enum cf_nccl_param_class {
    CF_NCCL_PARAM_UNLISTED = 0, /* a real name not in cclforge's table */
    CF_NCCL_PARAM_SYSTEM,       /* describes the machine: interfaces, HCAs, plugins, topology */
    CF_NCCL_PARAM_TUNING,       /* performance knobs that are safe to leave */
    CF_NCCL_PARAM_DEBUG,        /* debugging or a workaround: should not stay set in production */
    CF_NCCL_PARAM_FOREIGN,      /* NCCL_* names other tools use (NCCL_HOME, NCCL_VERSION): NCCL ignores them */
};
struct cf_nccl_param_info {
    const char *name;
    enum cf_nccl_param_class cls;
    const char *benign; /* debug class: comma-separated values that are no workaround ("WARN,VERSION"), or NULL */
    const char *what;   /* one line */
};
/* The table entry for name, NULL when unlisted. */
const struct cf_nccl_param_info *cf_nccl_param_info(const char *name);
const char *cf_nccl_param_class_name(enum cf_nccl_param_class cls); /* "system", "tuning", "debug", "foreign", "" */
/* 1 when a debug-class value is one of info's benign values (case-insensitive). */
int cf_nccl_param_benign(const struct cf_nccl_param_info *info, const char *value);
/* 1 when a variable of that name probably holds a secret (its value is not shown). */
int cf_nccl_param_secret(const char *name);

#ifdef __cplusplus
}
#endif
#endif
