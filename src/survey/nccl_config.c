/* NCCL's effective configuration (cclforge/ncclconf.h): the environment, then the
 * configuration files in NCCL's (or RCCL's) order, each line applied as
 * setenv(KEY, VALUE, 0) would apply it. */
#include "cclforge/ncclconf.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/fs.h"

#define KEY_MAX 1023   /* envVar[1024] in setEnvFile */
#define VALUE_MAX 1023 /* envValue[1024] */
#define FILE_MAX (1u << 20)

extern char **environ;

void cf_nccl_conf_parse(const char *text, size_t len, int rccl, cf_nccl_conf_visit_fn visit, void *ctx)
{
    char key[KEY_MAX + 1], value[VALUE_MAX + 1];
    unsigned line_no = 0;
    size_t pos = 0;
    while (pos < len) {
        /* getline: up to and including '\n' (the last line may lack one) */
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - line) : len - pos;
        pos += n + (nl ? 1 : 0);
        line_no++;
        /* the C string ends at the first NUL: setEnvFile sees no more */
        const char *nul = memchr(line, 0, n);
        if (nul)
            n = (size_t)(nul - line);
        if (!rccl && n > 0 && line[0] == '#')
            continue;
        const char *eq = memchr(line, '=', n);
        if (!eq)
            continue;
        size_t klen = (size_t)(eq - line);
        size_t vlen = n - klen - 1;
        /* released NCCL strips only '\n': a CR LF file leaves '\r' in the value */
        unsigned flags = vlen > 0 && vlen <= VALUE_MAX && eq[vlen] == '\r' ? CF_NCCL_LINE_CRLF : 0;
        /* strncpy into envVar[1024] / envValue[1024]: the rest is dropped */
        if (klen > KEY_MAX) {
            klen = KEY_MAX;
            flags |= CF_NCCL_LINE_KEY_CUT;
        }
        if (vlen > VALUE_MAX) {
            vlen = VALUE_MAX;
            flags |= CF_NCCL_LINE_VALUE_CUT;
        }
        memcpy(key, line, klen);
        key[klen] = 0;
        memcpy(value, eq + 1, vlen);
        value[vlen] = 0;
        visit(ctx, line_no, key, value, flags);
    }
}

/* ---- building ---- */

struct builder {
    struct cf_nccl_config *c;
    size_t cap_settings, cap_notes;
    const char *path; /* the file being applied */
    int file_settings;
};

static struct cf_nccl_setting *find(struct cf_nccl_config *c, const char *name)
{
    for (size_t i = 0; i < c->n_settings; i++)
        if (!strcmp(c->settings[i].name, name))
            return &c->settings[i];
    return NULL;
}

/* v (n of *cap elements used) with room for one more: doubled when full, first when empty. */
static void *room_for_one(void *v, size_t n, size_t *cap, size_t first, size_t size)
{
    if (n < *cap)
        return v;
    *cap = *cap ? 2 * *cap : first;
    return cf_xrealloc(v, *cap * size);
}

static void add_note(struct builder *b, const char *kind, const char *where, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void add_note(struct builder *b, const char *kind, const char *where, const char *name, const char *fmt, ...)
{
    struct cf_nccl_config *c = b->c;
    c->notes = room_for_one(c->notes, c->n_notes, &b->cap_notes, 8, sizeof *c->notes);
    struct cf_nccl_conf_note *n = &c->notes[c->n_notes++];
    memset(n, 0, sizeof *n);
    n->kind = cf_strdup(kind);
    n->where = cf_strdup(where);
    n->name = cf_strdup(name);
    va_list ap;
    va_start(ap, fmt);
    n->text = cf_vasprintf(fmt, ap);
    va_end(ap);
}

static struct cf_nccl_setting *add_setting(struct builder *b, const char *name, const char *value, const char *source)
{
    struct cf_nccl_config *c = b->c;
    c->settings = room_for_one(c->settings, c->n_settings, &b->cap_settings, 16, sizeof *c->settings);
    struct cf_nccl_setting *s = &c->settings[c->n_settings++];
    memset(s, 0, sizeof *s);
    s->name = cf_strdup(name);
    s->hidden = cf_nccl_param_secret(name);
    s->value = s->hidden ? NULL : cf_strdup(value);
    s->source = cf_strdup(source);
    return s;
}

static int has_space(const char *s)
{
    for (; *s; s++)
        if (*s == ' ' || *s == '\t')
            return 1;
    return 0;
}

/* leading or trailing blanks (before a final '\r') */
static int padded(const char *value, int crlf)
{
    size_t n = strlen(value) - (crlf ? 1 : 0);
    return n > 0 && (value[0] == ' ' || value[0] == '\t' || value[n - 1] == ' ' || value[n - 1] == '\t');
}

static void apply_line(void *ctx, unsigned line, const char *key, const char *value, unsigned flags)
{
    struct builder *b = ctx;
    int crlf = (flags & CF_NCCL_LINE_CRLF) != 0;
    b->file_settings++;
    char *where = cf_asprintf("%s:%u", b->path, line);
    if (!*key) {
        add_note(b, "syntax", where, "", "a line starting with '=' sets nothing (setenv refuses an empty name)");
        free(where);
        return;
    }
    if (flags & (CF_NCCL_LINE_KEY_CUT | CF_NCCL_LINE_VALUE_CUT))
        add_note(b, "cut", where, key,
                 "the %s on this line is longer than 1,023 characters: NCCL keeps the first 1,023 and drops the "
                 "rest (setEnvFile's 1,024-byte buffers)",
                 flags & CF_NCCL_LINE_KEY_CUT ? (flags & CF_NCCL_LINE_VALUE_CUT ? "name and the value" : "name")
                                              : "value");
    if (!strcmp(key, "NCCL_CONF_FILE") && !strcmp(b->c->flavour, "nccl"))
        add_note(b, "conf-file-in-file", where, key,
                 "NCCL_CONF_FILE set in a configuration file is not followed: NCCL chose its files before it read "
                 "this line and only sets the variable (%s is not read)",
                 value);
    if (has_space(key))
        add_note(b, "syntax", where, key,
                 "the name '%s' contains white space: NCCL sets that exact name, which nothing reads (write "
                 "KEY=VALUE without spaces)",
                 key);
    else if (padded(value, crlf))
        add_note(b, "syntax", where, key, "the value of %s has leading or trailing spaces, which NCCL keeps", key);
    if (crlf)
        add_note(b, "syntax", where, key, "the line ends with CR LF: the value of %s NCCL reads ends with '\\r'", key);
    struct cf_nccl_setting *s = find(b->c, key);
    if (s) {
        /* setenv(..., 0): the value already set stays */
        if (s->hidden)
            cf_strvec_push(&s->overridden, where);
        else
            cf_strvec_pushf(&s->overridden, "%s (%s=%s)", where, key, value);
        if (!strcmp(s->source, "environment") && s->value && !*s->value)
            add_note(b, "syntax", where, key,
                     "%s is set but empty in the environment, which keeps this line's value from NCCL (it "
                     "treats an empty value as unset)",
                     key);
    } else {
        add_setting(b, key, value, where);
    }
    free(where);
}

static void add_file(struct builder *b, const char *path, const char *role)
{
    struct cf_nccl_config *c = b->c;
    c->files = cf_xrealloc(c->files, (c->n_files + 1) * sizeof *c->files);
    struct cf_nccl_conf_file *f = &c->files[c->n_files++];
    memset(f, 0, sizeof *f);
    f->path = cf_strdup(path);
    f->role = cf_strdup(role);
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT)
            f->problem = cf_asprintf("%s: %s", path, strerror(errno));
        f->present = errno != ENOENT;
        return;
    }
    f->present = 1;
    if (S_ISDIR(st.st_mode)) {
        /* fopen(dir, "r") succeeds; getline then fails with EISDIR: nothing is applied */
        add_note(b, "not-applied", path, role,
                 "%s is a directory: NCCL opens it, the read fails (EISDIR) and it applies nothing from it%s", path,
                 strcmp(role, "NCCL_CONF_FILE") ? ""
                                                : "; as NCCL_CONF_FILE is set, NCCL does not read ~/.nccl.conf either");
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        /* fopen would read a FIFO or a device: NCCL would block or read garbage */
        f->problem = cf_asprintf("%s is not a regular file: NCCL would block or read it at every start", path);
        return;
    }
    struct strbuf text = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_read_file(path, FILE_MAX, &text, &err) < 0) {
        f->problem = cf_strdup(cf_error_message(&err));
        cf_error_clear(&err);
        cf_sb_release(&text);
        return;
    }
    f->read = 1;
    b->path = path;
    b->file_settings = 0;
    cf_nccl_conf_parse(text.buf ? text.buf : "", text.len, !strcmp(c->flavour, "rccl"), apply_line, b);
    f->settings = b->file_settings;
    cf_sb_release(&text);
}

/* $HOME without its trailing slashes, NULL when unset or empty. */
static char *env_home(char *const *envp)
{
    for (char *const *e = envp; e && *e; e++)
        if (cf_starts_with(*e, "HOME=") && (*e)[5]) {
            char *h = cf_strdup(*e + 5);
            for (size_t n = strlen(h); n > 1 && h[n - 1] == '/';)
                h[--n] = 0;
            return h;
        }
    return NULL;
}

/* NCCL takes the home directory from the passwd entry, never from $HOME:
 * said when they differ and either one holds the file. */
static void home_differs(struct builder *b, char *const *envp, const char *name)
{
    char *home = env_home(envp);
    char *pw = cf_strdup(b->c->home);
    for (size_t n = strlen(pw); n > 1 && pw[n - 1] == '/';)
        pw[--n] = 0;
    if (home && strcmp(home, pw)) {
        char *in_home = cf_asprintf("%s/.%s.conf", home, name);
        char *in_pw = cf_asprintf("%s/.%s.conf", pw, name);
        struct stat st;
        int at_home = stat(in_home, &st) == 0, at_pw = stat(in_pw, &st) == 0;
        if (at_home || at_pw)
            add_note(b, "home", "environment", "HOME",
                     "$HOME is %s, but NCCL reads .%s.conf from the passwd home directory %s: %s%s", home, name, pw,
                     at_home ? in_home : in_pw, at_home ? " is not read" : " is read");
        free(in_home);
        free(in_pw);
    }
    free(home);
    free(pw);
}

static int is_param_name(const char *entry, int rccl)
{
    return cf_starts_with(entry, "NCCL_") || (rccl && cf_starts_with(entry, "RCCL_"));
}

static void add_environment(struct builder *b, char *const *envp, int rccl)
{
    for (char *const *e = envp; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || !is_param_name(*e, rccl))
            continue;
        char *name = cf_strndup(*e, (size_t)(eq - *e));
        if (!find(b->c, name))
            add_setting(b, name, eq + 1, "environment");
        free(name);
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct cf_nccl_setting *)a)->name, ((const struct cf_nccl_setting *)b)->name);
}

void cf_nccl_config_build(const struct cf_nccl_config_inputs *in, struct cf_nccl_config *out)
{
    memset(out, 0, sizeof *out);
    int rccl = in->flavour && !strcmp(in->flavour, "rccl");
    out->flavour = cf_strdup(rccl ? "rccl" : "nccl");
    char *const *envp = in->envp ? in->envp : environ;
    struct builder b = { out, 0, 0, NULL, 0 };
    add_environment(&b, envp, rccl);

    if (in->home) {
        out->home = cf_strdup(in->home);
    } else {
        struct passwd *pw = getpwuid(getuid());
        out->home = pw && pw->pw_dir ? cf_strdup(pw->pw_dir) : NULL;
    }
    const char *etc = in->etc_dir ? in->etc_dir : "/etc";
    const char *name = rccl ? "rccl" : "nccl";
    /* NCCL_CONF_FILE comes from the real environment only: the files cannot set it */
    const char *user_file = NULL;
    for (char *const *e = envp; !rccl && e && *e; e++)
        if (cf_starts_with(*e, "NCCL_CONF_FILE="))
            user_file = *e + strlen("NCCL_CONF_FILE=");
    if (user_file && *user_file) {
        add_file(&b, user_file, "NCCL_CONF_FILE");
        if (!out->files[out->n_files - 1].present)
            add_note(&b, "not-applied", "environment", "NCCL_CONF_FILE",
                     "NCCL_CONF_FILE names %s, which does not exist: NCCL applies nothing from it and, as "
                     "NCCL_CONF_FILE is set, does not read ~/.nccl.conf either",
                     user_file);
    } else if (out->home) {
        home_differs(&b, envp, name);
        char *path = cf_asprintf("%s/.%s.conf", out->home, name);
        char *role = cf_asprintf("~/.%s.conf", name);
        add_file(&b, path, role);
        free(path);
        free(role);
    }
    char *path = cf_asprintf("%s/%s.conf", etc, name);
    char *role = cf_asprintf("/etc/%s.conf", name);
    add_file(&b, path, role);
    free(path);
    free(role);
    if (out->n_settings > 1)
        qsort(out->settings, out->n_settings, sizeof *out->settings, by_name);
}

const struct cf_nccl_setting *cf_nccl_config_get(const struct cf_nccl_config *c, const char *name)
{
    for (size_t i = 0; c && i < c->n_settings; i++)
        if (c->settings[i].name && !strcmp(c->settings[i].name, name)) /* a loaded report may lack one */
            return &c->settings[i];
    return NULL;
}

