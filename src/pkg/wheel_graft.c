/* `wheel graft`: an existing wheel with built files added at a package path
 * (the bridge into a plugin's own wheel), written as a new wheel: every
 * original member kept byte for byte with its mode and time, the new ones
 * after them (fixed time, SOURCE_DATE_EPOCH), .dist-info last with WHEEL's
 * tags and Root-Is-Purelib updated for native code, a cclforge.json marker
 * naming the grafted extension and the site-packages directories its RPATH
 * reaches outside the wheel, and RECORD rewritten over everything. The same
 * inputs give the same bytes. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/wheel.h"
#include "pkg/elf_facts.h"
#include "pkg/member_name.h"
#include "pkg/wheel_write.h"
#include "pkg/zip_loader.h"
#include "pkg/zip_scan.h"

/* What a graft holds in memory: every member, unpacked (a zip bomb stops here). */
#define GRAFT_MAX_TOTAL ((uint64_t)4 << 30)

struct member {
    char *name;
    struct strbuf data;
    int executable;
    time_t mtime;
};

struct members {
    struct member *v;
    size_t n;
};

static struct member *find(struct members *ms, const char *name)
{
    for (size_t i = 0; i < ms->n; i++)
        if (!strcmp(ms->v[i].name, name))
            return &ms->v[i];
    return NULL;
}

static struct member *push(struct members *ms, const char *name)
{
    ms->v = cf_xrealloc(ms->v, (ms->n + 1) * sizeof *ms->v);
    struct member *m = &ms->v[ms->n++];
    memset(m, 0, sizeof *m);
    m->name = cf_strdup(name);
    return m;
}

static void members_free(struct members *ms)
{
    for (size_t i = 0; i < ms->n; i++) {
        free(ms->v[i].name);
        cf_sb_release(&ms->v[i].data);
    }
    free(ms->v);
}

static int read_wheel(const char *path, struct members *ms, cf_error *err)
{
    int zerr = 0;
    if (!cf_is_file(path)) /* a FIFO would block the open */
        return cf_error_set(err, CF_ERR_NOTFOUND, "%s: no such file, or not a regular file (a wheel is a zip file)",
                            path);
    zip_t *za = cf_zip_open(path, ZIP_RDONLY, &zerr);
    if (!za)
        return cf_error_set(err, CF_ERR_FORMAT, "%s is not a readable zip (libzip error %d)", path, zerr);
    zip_int64_t n = cf_zip_get_num_entries(za, 0);
    int rc = 0;
    uint64_t total = 0;
    for (zip_int64_t i = 0; i < n && rc == 0; i++) {
        zip_stat_t st;
        cf_zip_stat_init(&st);
        const char *name = cf_zip_get_name(za, (zip_uint64_t)i, ZIP_FL_ENC_GUESS);
        if (!name || cf_zip_stat_index(za, (zip_uint64_t)i, 0, &st) < 0) {
            rc = cf_error_set(err, CF_ERR_FORMAT, "%s: entry %lld unreadable", path, (long long)i);
            break;
        }
        if (cf_ends_with(name, "/"))
            continue; /* directory entries carry nothing */
        long ctl = cf_member_name_control(name, strlen(name));
        if (ctl >= 0 || !cf_member_name_ok(name) || find(ms, name)) {
            struct strbuf shown = STRBUF_INIT;
            cf_zip_name_display(&shown, name, strlen(name));
            rc = cf_error_set(err, CF_ERR_FORMAT, "%s: member '%s' is %s; `cclforge wheel verify` says more", path,
                              shown.buf, ctl >= 0          ? "named with a control character"
                                         : find(ms, name) ? "there twice"
                                                          : "not a clean relative path");
            cf_sb_release(&shown);
            break;
        }
        if (st.size > GRAFT_MAX_TOTAL - total) {
            rc = cf_error_set(err, CF_ERR_FORMAT,
                              "%s: its members unpack to more than %llu bytes (at %s): too large to graft in memory",
                              path, (unsigned long long)GRAFT_MAX_TOTAL, name);
            break;
        }
        total += st.size;
        struct member *m = push(ms, name);
        zip_uint8_t opsys;
        zip_uint32_t attr = 0;
        if (cf_zip_file_get_external_attributes(za, (zip_uint64_t)i, 0, &opsys, &attr) == 0 && opsys == ZIP_OPSYS_UNIX)
            m->executable = ((attr >> 16) & 0111) != 0;
        m->mtime = (st.valid & ZIP_STAT_MTIME) ? st.mtime : (time_t)cf_wheel_fixed_mtime();
        zip_file_t *zf = cf_zip_fopen_index(za, (zip_uint64_t)i, 0);
        if (!zf) {
            rc = cf_error_set(err, CF_ERR_FORMAT, "%s: cannot open member %s: %s", path, name, cf_zip_strerror(za));
            break;
        }
        char buf[65536];
        zip_int64_t got = 0;
        /* never more than the size it declared (and was counted by) */
        while (m->data.len <= st.size && (got = cf_zip_fread(zf, buf, sizeof buf)) > 0)
            cf_sb_add(&m->data, buf, (size_t)got);
        cf_zip_fclose(zf);
        if (got < 0 || m->data.len != st.size)
            rc = cf_error_set(err, CF_ERR_FORMAT, "%s: member %s is damaged (read %zu of %llu bytes)", path, name,
                              m->data.len, (unsigned long long)st.size);
    }
    cf_zip_discard(za);
    return rc;
}

/* "torch_fl-0.3.0.dist-info" of the wheel: the one directory holding WHEEL. */
static char *dist_info_dir(const struct members *ms)
{
    for (size_t i = 0; i < ms->n; i++) {
        const char *n = ms->v[i].name, *slash = strchr(n, '/');
        if (slash && !strchr(slash + 1, '/') && cf_ends_with(n, ".dist-info/WHEEL"))
            return cf_strndup(n, (size_t)(slash - n));
    }
    return NULL;
}

/* ".cpython-311-x86_64-linux-gnu.so" -> "cp311"; NULL when not a CPython extension name. */
static char *python_tag_of(const char *file)
{
    const char *at = strstr(file, ".cpython-");
    if (!at)
        return NULL;
    at += strlen(".cpython-");
    size_t n = strspn(at, "0123456789");
    return n >= 2 ? cf_asprintf("cp%.*s", (int)n, at) : NULL;
}

/* Replaces (or adds) "Key: value" in RFC 822 headers text. */
static void set_header(struct strbuf *text, const char *key, const char *value)
{
    struct strvec lines = STRVEC_INIT;
    cf_strvec_split(&lines, cf_sb_str(text), "\n", 0);
    struct strbuf out = STRBUF_INIT;
    int done = 0;
    size_t kl = strlen(key);
    for (size_t i = 0; i < lines.n; i++) {
        if (!lines.v[i][0] && i + 1 == lines.n)
            continue;
        if (!strncmp(lines.v[i], key, kl) && lines.v[i][kl] == ':') {
            if (!done)
                cf_sb_addf(&out, "%s: %s\n", key, value);
            done = 1;
        } else {
            cf_sb_addf(&out, "%s\n", lines.v[i]);
        }
    }
    if (!done)
        cf_sb_addf(&out, "%s: %s\n", key, value);
    cf_sb_release(text);
    *text = out;
    cf_strvec_clear(&lines);
}

/* The site-packages directories an ELF member's $ORIGIN RPATH reaches outside the wheel. */
static void outside_dirs(const char *name, const struct elf_facts *f, const struct members *ms, struct strvec *out)
{
    char *dir = cf_dirname(name);
    for (size_t i = 0; i < f->rpath.n; i++) {
        const char *e = f->rpath.v[i];
        const char *rest = cf_starts_with(e, "$ORIGIN") ? e + 7 : cf_starts_with(e, "${ORIGIN}") ? e + 9 : NULL;
        if (!rest)
            continue;
        char *abs = cf_asprintf("/%s%s", dir, rest);
        int escaped = 0;
        char *norm = cf_path_normalize(abs, &escaped);
        const char *rel = norm + 1;
        size_t rl = strlen(rel);
        int inside = 0;
        for (size_t k = 0; k < ms->n && !inside; k++)
            inside = !strncmp(ms->v[k].name, rel, rl) && ms->v[k].name[rl] == '/';
        if (!escaped && *rel && !inside && !cf_strvec_contains(out, rel))
            cf_strvec_push(out, rel);
        free(abs);
        free(norm);
    }
    free(dir);
}

static int add_files(struct members *ms, const char *const *files, size_t n, const char *at, time_t mtime,
                     struct cf_wheel_graft_result *res, cf_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!cf_is_file(files[i]))
            return cf_error_set(err, CF_ERR_USAGE, "%s: no such file, or not a regular file", files[i]);
        const char *base = cf_basename(files[i]);
        if (cf_member_name_control(base, strlen(base)) >= 0) {
            struct strbuf shown = STRBUF_INIT;
            cf_zip_name_display(&shown, files[i], strlen(files[i]));
            cf_error_set(err, CF_ERR_USAGE,
                         "FILE '%s': a control character in its name, which would become a member name (a RECORD "
                         "line break, a terminal escape): rename the file",
                         shown.buf);
            cf_sb_release(&shown);
            return -1;
        }
        char *name = cf_asprintf("%s/%s", at, base);
        struct member *m = find(ms, name);
        if (m) {
            cf_sb_release(&m->data);
            cf_strvec_push(&res->replaced, name);
        } else {
            m = push(ms, name);
            cf_strvec_push(&res->added, name);
        }
        free(name);
        struct stat st;
        m->executable = stat(files[i], &st) == 0 && (st.st_mode & 0111);
        m->mtime = mtime;
        if (cf_read_file(files[i], (size_t)GRAFT_MAX_TOTAL, &m->data, err) < 0)
            return -1;
    }
    return 0;
}

/* Two members that would be one file once installed (a case or Unicode
 * twin: a grafted _Ext.so beside _ext.so): refused, naming both. */
static int no_aliases(const struct members *ms, cf_error *err)
{
    struct cf_member_set set = CF_MEMBER_SET_INIT;
    int rc = 0;
    for (size_t i = 0; i < ms->n && rc == 0; i++) {
        long other = cf_member_set_add(&set, ms->v[i].name, strlen(ms->v[i].name), i);
        if (other < 0)
            continue;
        struct strbuf why = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;
        const char *x = ms->v[other].name, *y = ms->v[i].name;
        cf_zip_name_display(&a, x, strlen(x));
        cf_zip_name_display(&b, y, strlen(y));
        cf_member_alias_describe(&why, a.buf, x, b.buf, y, y);
        rc = cf_error_set(err, CF_ERR_FORMAT, "the grafted wheel would hold %s", why.buf);
        cf_sb_release(&why);
        cf_sb_release(&a);
        cf_sb_release(&b);
    }
    cf_member_set_release(&set);
    return rc;
}

static int clean_dir(const char *flag, const char *at, cf_error *err)
{
    size_t l = strlen(at);
    long ctl = cf_member_name_control(at, l);
    if (ctl >= 0) {
        struct strbuf shown = STRBUF_INIT;
        cf_zip_name_display(&shown, at, l);
        cf_error_set(err, CF_ERR_USAGE,
                     "%s '%s': a control character (byte %ld) in a package path, which would go raw into member "
                     "names and RECORD lines: give a path such as pkg/comm/_ext",
                     flag, shown.buf, ctl + 1);
        cf_sb_release(&shown);
        return -1;
    }
    if (!l || at[l - 1] == '/' || !cf_member_name_ok(at) || strstr(at, ".dist-info") || strstr(at, ".data/"))
        return cf_error_set(err, CF_ERR_USAGE, "%s '%s': give a package path inside the wheel, e.g. pkg/comm/_ext",
                            flag, at);
    return 0;
}

/* Signatures over the old RECORD no longer hold: dropped. */
static void drop_signatures(struct members *ms, const char *dist_info, struct cf_wheel_graft_result *res)
{
    for (size_t i = 0; i < ms->n; i++) {
        const char *b = cf_basename(ms->v[i].name);
        if ((!strcmp(b, "RECORD.jws") || !strcmp(b, "RECORD.p7s")) && cf_starts_with(ms->v[i].name, dist_info)) {
            cf_strvec_push(&res->dropped, ms->v[i].name);
            free(ms->v[i].name);
            cf_sb_release(&ms->v[i].data);
            memmove(&ms->v[i], &ms->v[i + 1], (ms->n - i - 1) * sizeof *ms->v);
            ms->n--;
            i--;
        }
    }
}

/* What the ELF members say: each written out under tmpdir for the platform
 * tag (paths and member names in order), and of the grafted ones the
 * libraries they reach outside the wheel, the module (PyInit_) and the
 * Python tag. */
struct elf_members {
    struct strvec paths, names, externals;
    char *module, *py;
};

static int read_elf_members(const struct members *ms, const char *tmpdir, const struct cf_wheel_graft_result *res,
                            struct elf_members *e, cf_error *err)
{
    for (size_t i = 0; i < ms->n; i++) {
        const struct member *m = &ms->v[i];
        if (!cf_elf_facts_is_elf(m->data.buf, m->data.len))
            continue;
        struct elf_facts f;
        if (cf_elf_facts_read_memory(m->data.buf, m->data.len, m->name, &f, err) < 0)
            return -1;
        if (cf_strvec_contains(&res->added, m->name) || cf_strvec_contains(&res->replaced, m->name)) {
            outside_dirs(m->name, &f, ms, &e->externals);
            if (!e->module && f.pyinit.n) {
                char *dir = cf_dirname(m->name);
                e->module = cf_asprintf("%s.%s", dir, f.pyinit.v[0] + strlen("PyInit_"));
                for (char *c = e->module; *c; c++)
                    if (*c == '/')
                        *c = '.';
                free(dir);
            }
            if (!e->py)
                e->py = python_tag_of(m->name);
        }
        cf_elf_facts_release(&f);
        char *p = cf_asprintf("%s/%zu-%s", tmpdir, i, cf_basename(m->name));
        if (cf_write_file_atomic(p, m->data.buf, m->data.len, err) < 0) {
            free(p);
            return -1;
        }
        cf_strvec_push_nodup(&e->paths, p);
        cf_strvec_push(&e->names, m->name);
    }
    return 0;
}

/* res->tag: a pure wheel becomes one for this Python and platform; the
 * platform is the one given, else what the ELF members need, and a manylinux
 * wheel keeps the higher of its ceiling and that. */
static int graft_tag(const struct cf_wheel_graft_opts *o, const struct cf_wheel_name *wn, const struct elf_members *e,
                     struct cf_wheel_graft_result *res, struct strbuf *why, cf_error *err)
{
    char *tag = NULL;
    int pure = !strcmp(wn->abi_tag, "none") && !strcmp(wn->platform_tag, "any");
    if (o->platform_tag)
        tag = cf_strdup(o->platform_tag);
    else if (e->paths.n && cf_wheel_platform_tag((const char *const *)e->paths.v, (const char *const *)e->names.v,
                                                 e->paths.n, (const char *const *)e->externals.v, e->externals.n, &tag,
                                                 why, err) < 0) {
        free(tag);
        return -1;
    }
    if (!tag)
        tag = cf_strdup(wn->platform_tag);
    int have = cf_platform_glibc_ceiling(wn->platform_tag), need = cf_platform_glibc_ceiling(tag);
    if (!o->platform_tag && have && need && have > need) {
        free(tag);
        tag = cf_strdup(wn->platform_tag);
    }
    const char *pytag = pure && e->py ? e->py : wn->python_tag, *abitag = pure && e->py ? e->py : wn->abi_tag;
    res->tag = cf_asprintf("%s-%s-%s", pytag, abitag, tag);
    free(tag);
    return 0;
}

/* .dist-info's WHEEL (purelib, tag) and the marker cclforge reads back
 * (schema, module, externals: what was there kept, the new added). */
static void update_dist_info(struct members *ms, const char *dist_info, const struct elf_members *e, const char *tag,
                             time_t mtime)
{
    char *wheel_name = cf_asprintf("%s/WHEEL", dist_info), *marker_name = cf_asprintf("%s/%s", dist_info, CF_WHEEL_MARKER);
    struct member *wheel = find(ms, wheel_name);
    set_header(&wheel->data, "Root-Is-Purelib", e->paths.n ? "false" : "true");
    set_header(&wheel->data, "Tag", tag);
    struct member *marker = find(ms, marker_name);
    cJSON *doc = marker ? cJSON_Parse(cf_sb_str(&marker->data)) : NULL;
    if (!doc)
        doc = cJSON_CreateObject();
    if (!cJSON_GetObjectItemCaseSensitive(doc, "schema"))
        cJSON_AddStringToObject(doc, "schema", "cclforge.wheel-graft/1");
    if (e->module && !cJSON_GetObjectItemCaseSensitive(doc, "module"))
        cJSON_AddStringToObject(doc, "module", e->module);
    cJSON *ext = cJSON_GetObjectItemCaseSensitive(doc, "externals");
    if (!cJSON_IsArray(ext)) {
        cJSON_DeleteItemFromObjectCaseSensitive(doc, "externals");
        ext = cJSON_AddArrayToObject(doc, "externals");
    }
    for (size_t i = 0; i < e->externals.n; i++) {
        int seen = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, ext) seen |= cJSON_IsString(it) && !strcmp(it->valuestring, e->externals.v[i]);
        if (!seen)
            cJSON_AddItemToArray(ext, cJSON_CreateString(e->externals.v[i]));
    }
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!marker) {
        marker = push(ms, marker_name);
        marker->mtime = mtime;
    }
    cf_sb_reset(&marker->data);
    cf_sb_adds(&marker->data, text);
    cf_sb_addc(&marker->data, '\n');
    free(text);
    free(wheel_name);
    free(marker_name);
}

/* Writes res->wheel, <dist>-<ver>[-build]-<tags>.whl in out_dir (default:
 * beside the input), through a temporary file renamed into place: the
 * payload as it was plus the new files, then .dist-info, a fresh RECORD last. */
static int write_wheel(const struct cf_wheel_graft_opts *o, const struct cf_wheel_name *wn, struct members *ms,
                       const char *dist_info, time_t mtime, struct cf_wheel_graft_result *res, cf_error *err)
{
    struct members ordered = { 0 };
    char *record_name = cf_asprintf("%s/RECORD", dist_info);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < ms->n; i++) {
            int in_di = cf_starts_with(ms->v[i].name, dist_info) && ms->v[i].name[strlen(dist_info)] == '/';
            if (in_di != pass || !strcmp(ms->v[i].name, record_name))
                continue;
            ordered.v = cf_xrealloc(ordered.v, (ordered.n + 1) * sizeof *ordered.v);
            ordered.v[ordered.n++] = ms->v[i];
        }
    struct strbuf record = STRBUF_INIT;
    for (size_t i = 0; i < ordered.n; i++) {
        struct strbuf b64 = STRBUF_INIT;
        cf_wheel_sha256_b64(ordered.v[i].data.buf ? ordered.v[i].data.buf : "", ordered.v[i].data.len, &b64);
        cf_record_format_line(&record, ordered.v[i].name, cf_sb_str(&b64), (long long)ordered.v[i].data.len);
        cf_sb_release(&b64);
    }
    cf_record_format_line(&record, record_name, NULL, 0);
    const struct member *old_record = find(ms, record_name);
    time_t record_mtime = old_record ? old_record->mtime : mtime;
    char *in_dir = cf_dirname(o->wheel);
    const char *out_dir = o->out_dir ? o->out_dir : in_dir;
    char *base = cf_strndup(cf_basename(o->wheel), strcspn(cf_basename(o->wheel), "-"));
    res->wheel = wn->build ? cf_asprintf("%s/%s-%s-%s-%s.whl", out_dir, base, wn->version, wn->build, res->tag)
                           : cf_asprintf("%s/%s-%s-%s.whl", out_dir, base, wn->version, res->tag);
    free(base);
    char *tmp = cf_asprintf("%s.tmp.%d", res->wheel, (int)getpid());
    int zerr = 0;
    zip_t *za = NULL;
    if (cf_mkdir_p(out_dir, 0755, err) == 0)
        za = cf_zip_open(tmp, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    free(in_dir);
    int wrc = za ? 0 : -1;
    if (!za && !err->kind)
        cf_error_set(err, CF_ERR_IO, "cannot create %s (libzip error %d)", tmp, zerr);
    for (size_t i = 0; wrc == 0 && i < ordered.n; i++)
        wrc = cf_wheel_zip_add(za, ordered.v[i].name, &ordered.v[i].data, ordered.v[i].executable, ordered.v[i].mtime,
                               err);
    if (wrc == 0)
        wrc = cf_wheel_zip_add(za, record_name, &record, 0, record_mtime, err);
    if (wrc == 0 && cf_zip_close(za) < 0)
        wrc = cf_error_set(err, CF_ERR_IO, "writing %s: %s", tmp, cf_zip_strerror(za));
    else if (wrc == 0)
        za = NULL;
    if (za)
        cf_zip_discard(za);
    if (wrc == 0 && rename(tmp, res->wheel) < 0)
        wrc = cf_error_set(err, CF_ERR_IO, "cannot rename %s to %s", tmp, res->wheel);
    if (wrc < 0)
        unlink(tmp);
    free(tmp);
    free(ordered.v);
    free(record_name);
    cf_sb_release(&record);
    return wrc;
}

int cf_wheel_graft(const struct cf_wheel_graft_opts *o, struct cf_wheel_graft_result *res, cf_error *err)
{
    memset(res, 0, sizeof *res);
    if (!o->n_files)
        return cf_error_set(err, CF_ERR_USAGE, "nothing to graft: name the built files");
    char *bundle_at = o->bundle_at ? cf_strdup(o->bundle_at) : o->at ? cf_asprintf("%s/lib", o->at) : NULL;
    if (!o->at || clean_dir("--at", o->at, err) < 0 || clean_dir("--bundle-at", bundle_at, err) < 0) {
        if (!o->at)
            cf_error_set(err, CF_ERR_USAGE, "--at PKG/PATH is required: where in the wheel the files go");
        free(bundle_at);
        return -1;
    }
    struct cf_wheel_name wn;
    if (cf_wheel_name_parse(cf_basename(o->wheel), &wn, err) < 0) {
        free(bundle_at);
        return -1;
    }
    struct members ms = { 0 };
    struct elf_members e = { STRVEC_INIT, STRVEC_INIT, STRVEC_INIT, NULL, NULL };
    struct strbuf why = STRBUF_INIT;
    char *dist_info = NULL, *tmpdir = NULL;
    int rc = -1;
    time_t mtime = (time_t)cf_wheel_fixed_mtime();
    if (read_wheel(o->wheel, &ms, err) < 0)
        goto out;
    dist_info = dist_info_dir(&ms);
    if (!dist_info) {
        cf_error_set(err, CF_ERR_FORMAT, "%s has no *.dist-info/WHEEL: not a wheel", o->wheel);
        goto out;
    }
    if (add_files(&ms, o->files, o->n_files, o->at, mtime, res, err) < 0 ||
        add_files(&ms, o->bundle, o->n_bundle, bundle_at, mtime, res, err) < 0 || no_aliases(&ms, err) < 0)
        goto out;
    drop_signatures(&ms, dist_info, res);
    tmpdir = cf_mkdtemp(NULL, "cclforge-graft-", err);
    if (!tmpdir || read_elf_members(&ms, tmpdir, res, &e, err) < 0)
        goto out;
    for (size_t i = 0; i < o->n_externals; i++)
        if (!cf_strvec_contains(&e.externals, o->externals[i]))
            cf_strvec_push(&e.externals, o->externals[i]);
    if (graft_tag(o, &wn, &e, res, &why, err) < 0)
        goto out;
    update_dist_info(&ms, dist_info, &e, res->tag, mtime);
    res->module = e.module;
    e.module = NULL;
    rc = write_wheel(o, &wn, &ms, dist_info, mtime, res, err);
    res->why = cf_sb_detach(&why);
out:
    if (tmpdir) {
        cf_error rerr = CF_ERROR_INIT;
        cf_rm_rf(tmpdir, &rerr);
        cf_error_clear(&rerr);
    }
    members_free(&ms);
    cf_strvec_clear(&e.externals);
    cf_strvec_clear(&e.paths);
    cf_strvec_clear(&e.names);
    cf_sb_release(&why);
    cf_wheel_name_release(&wn);
    free(dist_info);
    free(e.module);
    free(e.py);
    free(tmpdir);
    free(bundle_at);
    return rc;
}

void cf_wheel_graft_result_release(struct cf_wheel_graft_result *res)
{
    free(res->wheel);
    free(res->tag);
    free(res->module);
    free(res->why);
    cf_strvec_clear(&res->added);
    cf_strvec_clear(&res->replaced);
    cf_strvec_clear(&res->dropped);
    memset(res, 0, sizeof *res);
}
