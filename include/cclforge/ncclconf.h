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

/* What NCCL does with a line or a file that its author likely did not mean,
 * silently. kind says which (doctor's finding per kind, docs/doctor.md):
 * "syntax" (white space, CR LF, an empty name), "cut" (a key or value past
 * 1,023 characters), "conf-file-in-file" (NCCL_CONF_FILE set by a file, not
 * followed), "not-applied" (a file NCCL opens and applies nothing from: a
 * directory, a missing NCCL_CONF_FILE), "home" ($HOME is not the passwd
 * home directory NCCL reads .nccl.conf from). */
struct cf_nccl_conf_note {
    char *kind;
    char *where;    /* "/etc/nccl.conf:4" or "environment" */
    char *name;     /* the variable concerned (as NCCL sets it, e.g. "NCCL_DEBUG ") */
    char *text;     /* what happens, in words */
};

/* A plugin library NCCL will dlopen (openPluginLib: the value as given, then
 * libnccl-<kind>-<value>.so; unset: libnccl-<kind>.so), as the loader emulation
 * resolves a dlopen called from the library NCCL is in (its RPATH chain, its
 * RUNPATH, cclforge/ldso.h cf_ldso_dlopen_from), and the entry points it exports. */
struct cf_nccl_plugin {
    char *kind;             /* "net", "tuner", "profiler" */
    char *variable;         /* "NCCL_NET_PLUGIN"; NULL when NCCL's default name was tried */
    char *requested;        /* the value (one name of a NCCL_NET_PLUGIN list) or the default name */
    struct strvec tried;    /* names dlopen would get, in order */
    char *loader;           /* the library whose dlopen it is (libnccl.so.2); NULL: none known here */
    char *path;             /* where the first one resolves; NULL when none does */
    char *found_by;         /* why there: "runpath of /x/libnccl.so.2", "LD_LIBRARY_PATH", "ld.so.cache" */
    struct strvec symbols;  /* its defined ncclNetPlugin_v9, ncclTunerPlugin_v4, ... */
};

struct cf_nccl_config {
    char *flavour;  /* "nccl" or "rccl": whose file rules were applied */
    char *home;     /* the home directory used for ~/.nccl.conf; NULL unknown */
    struct cf_nccl_conf_file *files;  size_t n_files;
    struct cf_nccl_setting *settings; size_t n_settings; /* sorted by name */
    struct cf_nccl_conf_note *notes;  size_t n_notes;
    struct cf_nccl_plugin *plugins;   size_t n_plugins;
    char *topo_file_problem; /* NCCL_TOPO_FILE is set and missing or not NCCL's XML; NULL otherwise */
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
 * each cut at 1023 bytes). flags: CF_NCCL_LINE_*. Used by the builder and the
 * fuzz target. */
enum {
    CF_NCCL_LINE_CRLF = 1,      /* the value ends with '\r' */
    CF_NCCL_LINE_KEY_CUT = 2,   /* the key was longer than 1,023 bytes: NCCL sets its first 1,023 */
    CF_NCCL_LINE_VALUE_CUT = 4, /* the same for the value */
};
typedef void (*cf_nccl_conf_visit_fn)(void *ctx, unsigned line, const char *key, const char *value, unsigned flags);
void cf_nccl_conf_parse(const char *text, size_t len, int rccl, cf_nccl_conf_visit_fn visit, void *ctx);

/* 0 when text is a topology NCCL's XML reader loads (a <system> element at the
 * top), -1 with why otherwise (bounded; fuzzed). */
int cf_nccl_topo_xml_check(const char *text, size_t len, char *why, size_t why_len);

/* One element of a topology as NCCL's reader takes it: names and values under
 * 256 bytes, the first 16 attributes (NCCL's MAX_ATTR_COUNT; it ignores more). */
#define CF_TOPO_XML_MAX_STR 256
#define CF_TOPO_XML_MAX_ATTRS 16
struct cf_topo_xml_elem {
    size_t depth; /* 0 for <system> */
    char name[CF_TOPO_XML_MAX_STR];
    char keys[CF_TOPO_XML_MAX_ATTRS][CF_TOPO_XML_MAX_STR];
    char values[CF_TOPO_XML_MAX_ATTRS][CF_TOPO_XML_MAX_STR];
    size_t n_attrs;
};
typedef void (*cf_topo_xml_visit_fn)(void *ctx, const struct cf_topo_xml_elem *e);
/* The same reader, calling visit (NULL: none) for each element as it opens, in
 * document order; a later error still returns -1 with why. */
int cf_nccl_topo_xml_walk(const char *text, size_t len, cf_topo_xml_visit_fn visit, void *ctx, char *why,
                          size_t why_len);
/* The value of an attribute of e; NULL when absent. */
const char *cf_topo_xml_attr(const struct cf_topo_xml_elem *e, const char *key);

/* NCCL_SOCKET_IFNAME and NCCL_IB_HCA as NCCL parses them (misc/utils.cc
 * parseStringList, matchIfList): an optional '^' (exclude), then an optional '='
 * (exact names instead of prefixes), then names separated by ',', each with an
 * optional ":port" (HCAs). Empty entries are skipped; NCCL keeps at most `max`
 * entries (16 interfaces, 32 HCAs) in 64-byte buffers it does not bound. */
#define CF_NCCL_IF_MAX 32
struct cf_nccl_if_list {
    int exclude, exact;
    size_t n;
    struct {
        char name[64];
        int port;         /* -1: any */
        int too_long;     /* 64 bytes or more: overflows NCCL's buffer */
    } v[CF_NCCL_IF_MAX];
    int truncated;        /* entries past max were dropped */
};
void cf_nccl_if_list_parse(const char *value, size_t max, struct cf_nccl_if_list *out);
/* 1 when NCCL would use interface/HCA `name` (port -1 for interfaces) under the list. */
int cf_nccl_if_list_match(const struct cf_nccl_if_list *l, const char *name, int port);

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
    const char *benign; /* debug class: comma-separated values that are no workaround ("WARN,VERSION"), or "" */
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
