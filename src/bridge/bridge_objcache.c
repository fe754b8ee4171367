/* The bridge's object cache: one compiled object per key, where the key is
 * over everything that decides the object (the compiler, its command less the
 * output, the source's bytes and the bytes of every file the preprocessor
 * reads). An entry is the object followed by its own sha256, so a damaged or
 * truncated entry is a miss, never a bad object. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bridge/bridge_internal.h"
#include "cclforge/atomic_file.h"
#include "cclforge/fs.h"
#include "cclforge/spawn.h"

/* an entry ends with TAG, the object's sha256 in hex, and a newline */
#define ENTRY_TAG "\ncclforge-object-sha256 "
#define ENTRY_TRAILER (sizeof ENTRY_TAG - 1 + 64 + 1)
/* what the dependency rule is named, so its prerequisites are found by prefix */
#define DEP_TARGET "cclforge-object"

/* each file once; *n counts the names read */
static void flush_name(struct strbuf *name, struct strvec *files, int *n)
{
    if (name->len && !cf_strvec_contains(files, name->buf))
        cf_strvec_push(files, name->buf);
    *n += name->len > 0;
    cf_sb_reset(name);
}

/* make's escapes in a name: "\ " a space, "\#" a hash, "$$" a dollar */
int cf_bridge_read_depfile(const char *text, size_t len, struct strvec *files)
{
    static const char head[] = DEP_TARGET ":";
    if (len < sizeof head - 1 || memcmp(text, head, sizeof head - 1) != 0)
        return -1;
    struct strbuf name = STRBUF_INIT;
    int n = 0;
    for (size_t i = sizeof head - 1; i < len; i++) {
        char c = text[i], next = i + 1 < len ? text[i + 1] : '\0';
        if (c == '\\' && next == '\n') { /* the rule goes on */
            i++;
            flush_name(&name, files, &n);
        } else if ((c == '\\' && (next == ' ' || next == '#')) || (c == '$' && next == '$')) {
            cf_sb_addc(&name, next);
            i++;
        } else if (c == '\n') {
            break; /* the rule's end */
        } else if (c == ' ' || c == '\t' || c == '\r') {
            flush_name(&name, files, &n);
        } else if (c != '\0') {
            cf_sb_addc(&name, c);
        }
    }
    flush_name(&name, files, &n);
    cf_sb_release(&name);
    return n;
}

int cf_bridge_files_read(const struct strvec *argv, const char *source, const char *tmp_dir, struct strvec *files,
                         cf_error *err)
{
    struct cf_atomic_file dep = { .fd = -1, .dir_fd = -1 };
    char *dep_name = cf_asprintf("%s/%s.d", tmp_dir, cf_basename(source));
    int rc = cf_atomic_begin(&dep, AT_FDCWD, dep_name, 0600, err);
    free(dep_name);
    if (rc < 0)
        return -1;
    struct strvec scan = STRVEC_INIT;
    for (size_t i = 0; i < argv->n; i++) {
        if (!strcmp(argv->v[i], "-o") && i + 1 < argv->n)
            i++;
        else if (strcmp(argv->v[i], "-c") != 0)
            cf_strvec_push(&scan, argv->v[i]);
    }
    cf_strvec_push(&scan, "-M");
    cf_strvec_push(&scan, "-MT");
    cf_strvec_push(&scan, DEP_TARGET);
    cf_strvec_push(&scan, "-MF");
    cf_strvec_push(&scan, dep.tmp_path);
    struct cf_spawn_opts so = cf_spawn_probe_opts(1800);
    so.capture_limit = 64 * 1024;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    rc = cf_spawn_run((const char *const *)cf_strvec_argv(&scan), &so, &r, err);
    if (rc == 0 && !cf_spawn_ok(&r)) {
        char *how = cf_spawn_describe(&r);
        rc = cf_error_set(err, CF_ERR_FAILED, "%s -M (the files %s reads) failed (%s)", scan.v[0], source, how);
        free(how);
    }
    struct strbuf text = STRBUF_INIT;
    if (rc == 0)
        rc = cf_read_file(dep.tmp_path, 256u << 20, &text, err);
    if (rc == 0) {
        cf_strvec_push(files, source); /* first, whatever the rule's order */
        /* a rule that names nothing would key the source alone: no key rather than a stale one */
        if (cf_bridge_read_depfile(cf_sb_str(&text), text.len, files) <= 0) {
            cf_strvec_clear(files);
            rc = cf_error_set(err, CF_ERR_FAILED, "%s -M named no files for %s", scan.v[0], source);
        }
    }
    cf_sb_release(&text);
    cf_spawn_result_release(&r);
    cf_strvec_clear(&scan);
    cf_atomic_abort(&dep);
    return rc;
}

char *cf_bridge_object_key(const char *compiler, const struct strvec *argv, const char *source,
                           const struct strvec *files)
{
    struct strbuf sb = STRBUF_INIT;
    cf_sb_addf(&sb, "cxx %s\n", compiler);
    /* the source by its content alone: the same source from another copy of a tree is the same object */
    for (size_t i = 0; i < argv->n; i++) {
        int output = i > 0 && !strcmp(argv->v[i - 1], "-o");
        cf_sb_addf(&sb, "%s\n", output ? "-" : !strcmp(argv->v[i], source) ? "<source>" : argv->v[i]);
    }
    int ok = files->n > 0;
    for (size_t i = 0; ok && i < files->n; i++) {
        char hex[65];
        cf_error err = CF_ERROR_INIT;
        ok = cf_sha256_file(files->v[i], hex, &err) == 0;
        if (ok)
            cf_sb_addf(&sb, "%s %s\n", i == 0 ? "<source>" : files->v[i], hex);
        cf_error_clear(&err);
    }
    char key[65];
    cf_sha256_hex(sb.buf, sb.len, key);
    cf_sb_release(&sb);
    return ok ? cf_strdup(key) : NULL;
}

int cf_bridge_objcache_get(const char *entry, const char *object, cf_error *err)
{
    struct strbuf sb = STRBUF_INIT;
    cf_error rerr = CF_ERROR_INIT;
    int whole = 0;
    if (cf_is_file(entry) && cf_read_file(entry, (size_t)4 << 30, &sb, &rerr) == 0 && sb.len >= ENTRY_TRAILER) {
        size_t body = sb.len - ENTRY_TRAILER;
        const char *tag = sb.buf + body;
        char hex[65];
        cf_sha256_hex(sb.buf, body, hex);
        whole = !memcmp(tag, ENTRY_TAG, sizeof ENTRY_TAG - 1) && !memcmp(tag + sizeof ENTRY_TAG - 1, hex, 64) &&
                sb.buf[sb.len - 1] == '\n';
    }
    cf_error_clear(&rerr);
    int rc = whole ? cf_write_file_at(AT_FDCWD, object, sb.buf, sb.len - ENTRY_TRAILER, 0644, err) : 0;
    cf_sb_release(&sb);
    return rc < 0 ? -1 : whole;
}

int cf_bridge_objcache_put(const char *entry, const char *object, cf_error *err)
{
    struct strbuf sb = STRBUF_INIT;
    int rc = cf_read_file(object, (size_t)4 << 30, &sb, err);
    if (rc == 0) {
        char hex[65];
        cf_sha256_hex(sb.buf ? sb.buf : "", sb.len, hex);
        cf_sb_addf(&sb, "%s%s\n", ENTRY_TAG, hex);
        char *dir = cf_dirname(entry);
        rc = cf_mkdir_p(dir, 0755, err);
        free(dir);
        if (rc == 0)
            rc = cf_write_file_at(AT_FDCWD, entry, sb.buf, sb.len, 0644, err);
    }
    cf_sb_release(&sb);
    return rc;
}
