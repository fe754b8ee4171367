/* `wheel verify`, the static part: zip sanity, RECORD hashes and sizes, the
 * extension modules, RPATH and NEEDED resolution inside the wheel or to
 * declared externals, glibc symbol versions within the platform tag. Any wheel
 * with native code, not only cclforge's. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "pkg/zip_loader.h"

#include "cclforge/dst.h"
#include "cclforge/fs.h"
#include "cclforge/wheel.h"
#include "pkg/elf_facts.h"
#include "pkg/wheel_internal.h"

#define MEMBER_MAX ((zip_uint64_t)4 << 30)

struct member {
    char *name;
    int is_dir;
    int is_symlink;
    zip_uint64_t size;
    struct strbuf data; /* loaded on demand */
    int loaded;
    struct elf_facts elf;
};

static int load_member(zip_t *za, zip_uint64_t idx, struct member *m, cf_error *err)
{
    if (m->loaded)
        return 0;
    if (m->size > MEMBER_MAX)
        return cf_error_set(err, CF_ERR_FORMAT, "%s: member larger than 4 GiB", m->name);
    zip_file_t *zf = cf_zip_fopen_index(za, idx, 0);
    if (!zf)
        return cf_error_set(err, CF_ERR_FORMAT, "%s: cannot read (%s)", m->name, cf_zip_strerror(za));
    cf_sb_grow(&m->data, (size_t)m->size);
    char buf[65536];
    zip_int64_t got;
    while ((got = cf_zip_fread(zf, buf, sizeof buf)) > 0) {
        if (m->data.len + (size_t)got > (size_t)m->size) {
            cf_zip_fclose(zf);
            return cf_error_set(err, CF_ERR_FORMAT, "%s: more data than its declared size", m->name);
        }
        cf_sb_add(&m->data, buf, (size_t)got);
    }
    int bad = got < 0;
    cf_zip_fclose(zf);
    if (bad)
        return cf_error_set(err, CF_ERR_FORMAT, "%s: corrupt data (%s)", m->name, cf_zip_strerror(za));
    m->loaded = 1;
    return 0;
}

/* Lexically resolves `rel` against directory `dir` inside the archive; returns
 * NULL when it climbs above the archive root (site-packages). "" is the root. */
static char *resolve_in_root(const char *dir, const char *rel)
{
    char *joined = cf_asprintf("/%s/%s", dir, rel); /* "/" stands for the archive root */
    int escaped = 0;
    char *norm = cf_path_normalize(joined, &escaped);
    char *out = escaped ? NULL : cf_strdup(norm + 1);
    free(norm);
    free(joined);
    return out;
}

/* Where an RPATH entry of member directory `mdir` points inside the archive:
 * $ORIGIN expanded as the loader does (cclforge/dst.h). NULL when the entry is
 * not $ORIGIN-relative (*is_origin_relative 0) or climbs above the archive root. */
static char *origin_target(const char *entry, const char *mdir, int *is_origin_relative)
{
    *is_origin_relative = cf_elf_rpath_is_origin_relative(entry);
    if (!*is_origin_relative)
        return NULL;
    char *origin = cf_asprintf("/%s", mdir);
    char *expanded = cf_dst_expand(entry, origin, NULL, NULL);
    char *out = expanded ? resolve_in_root("", expanded) : NULL;
    free(expanded);
    free(origin);
    return out;
}

static int has_member(const struct member *ms, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (!ms[i].is_dir && !strcmp(ms[i].name, path))
            return 1;
    return 0;
}

static int has_dir(const struct member *ms, size_t n, const char *dir)
{
    if (!*dir)
        return 1;
    size_t len = strlen(dir);
    for (size_t i = 0; i < n; i++)
        if (!strncmp(ms[i].name, dir, len) && ms[i].name[len] == '/')
            return 1;
    return 0;
}

static int declared(const struct strvec *externals, const char *dir)
{
    for (size_t i = 0; i < externals->n; i++) {
        size_t l = strlen(externals->v[i]);
        while (l && externals->v[i][l - 1] == '/')
            l--;
        if (strlen(dir) == l && !strncmp(externals->v[i], dir, l))
            return 1;
    }
    return 0;
}

/* A member name must be a clean relative path; the problem in words, or NULL. */
static const char *name_problem(const char *n)
{
    if (!n[0])
        return "empty name";
    if (n[0] == '/')
        return "absolute path";
    if (strchr(n, '\\'))
        return "backslash in the name";
    if (n[1] == ':')
        return "drive letter";
    struct strvec parts = STRVEC_INIT;
    cf_strvec_split(&parts, n, "/", 1);
    const char *why = NULL;
    for (size_t i = 0; i < parts.n && !why; i++)
        if (!strcmp(parts.v[i], ".."))
            why = "'..' component (zip slip)";
    cf_strvec_clear(&parts);
    return why;
}

static char *normalise_dist(const char *name)
{
    struct strbuf sb = STRBUF_INIT;
    for (const char *c = name; *c; c++)
        cf_sb_addc(&sb, (*c == '-' || *c == '.') ? '_' : (char)((*c >= 'A' && *c <= 'Z') ? *c + 32 : *c));
    return cf_sb_detach(&sb);
}

static char *module_of(const char *archive_name)
{
    /* pkg/sub/_mod.cpython-311-x86_64-linux-gnu.so -> pkg.sub._mod */
    char *copy = cf_strdup(archive_name);
    char *base = strrchr(copy, '/');
    base = base ? base + 1 : copy;
    char *dot = strchr(base, '.');
    if (dot)
        *dot = '\0';
    for (char *c = copy; *c; c++)
        if (*c == '/')
            *c = '.';
    return copy;
}

int cf_wheel_verify(const struct cf_wheel_verify_opts *opts, struct cf_wheel_verify_result *res, cf_error *err)
{
    memset(res, 0, sizeof *res);
    res->wheel = cf_strdup(opts->wheel);
    struct cf_wheel_name wn;
    if (!cf_is_file(opts->wheel))
        return cf_error_set(err, CF_ERR_NOTFOUND, "%s: no such file", opts->wheel);
    if (cf_wheel_name_parse(opts->wheel, &wn, err) < 0)
        return -1;
    res->dist = wn.dist;
    res->version = wn.version;
    res->python_tag = wn.python_tag;
    res->abi_tag = wn.abi_tag;
    res->platform_tag = wn.platform_tag;
    free(wn.build);
    res->glibc_ceiling = cf_platform_glibc_ceiling(res->platform_tag);

    int zerr = 0;
    zip_t *za = cf_zip_open(opts->wheel, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    if (!za) {
        zip_error_t ze;
        cf_zip_error_init_with_code(&ze, zerr);
        cf_error_set(err, CF_ERR_FORMAT, "%s: not a readable zip archive (%s)", opts->wheel, cf_zip_error_strerror(&ze));
        cf_zip_error_fini(&ze);
        return -1;
    }

    zip_int64_t count = cf_zip_get_num_entries(za, 0);
    size_t n = count > 0 ? (size_t)count : 0;
    struct member *ms = cf_xcalloc(n ? n : 1, sizeof *ms);
    struct strvec externals = STRVEC_INIT;
    struct wheel_facts wf = { 0 };
    for (size_t i = 0; i < opts->n_externals; i++)
        cf_strvec_push(&externals, opts->externals[i]);

    /* 1. zip sanity */
    struct strbuf zip_problems = STRBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        zip_stat_t st;
        cf_zip_stat_init(&st);
        const char *name = cf_zip_get_name(za, i, ZIP_FL_ENC_RAW);
        ms[i].name = cf_strdup(name ? name : "");
        if (cf_zip_stat_index(za, i, 0, &st) == 0 && (st.valid & ZIP_STAT_SIZE))
            ms[i].size = st.size;
        ms[i].is_dir = cf_ends_with(ms[i].name, "/");
        zip_uint8_t opsys;
        zip_uint32_t attr;
        if (cf_zip_file_get_external_attributes(za, i, 0, &opsys, &attr) == 0 && opsys == ZIP_OPSYS_UNIX &&
            S_ISLNK((attr >> 16) & 0170000))
            ms[i].is_symlink = 1;
        const char *why = name_problem(ms[i].name);
        if (why)
            cf_sb_addf(&zip_problems, "'%s': %s; ", ms[i].name, why);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(ms[j].name, ms[i].name)) {
                cf_sb_addf(&zip_problems, "'%s': duplicate entry; ", ms[i].name);
                break;
            }
        if (ms[i].is_symlink) {
            /* a symlink's data is its target; one that points outside the wheel is an escape */
            cf_error lerr = CF_ERROR_INIT;
            if (load_member(za, i, &ms[i], &lerr) < 0) {
                cf_sb_addf(&zip_problems, "'%s': %s; ", ms[i].name, cf_error_message(&lerr));
                cf_error_clear(&lerr);
            } else {
                char *dir = cf_dirname(ms[i].name);
                char *target = resolve_in_root(strcmp(dir, ".") ? dir : "", cf_sb_str(&ms[i].data));
                if (cf_sb_str(&ms[i].data)[0] == '/' || !target)
                    cf_sb_addf(&zip_problems, "'%s': symlink to '%s' escapes the wheel; ", ms[i].name, cf_sb_str(&ms[i].data));
                free(target);
                free(dir);
            }
        }
    }
    if (zip_problems.len)
        cf_wheel_add_check(res, "zip", 0, "unsafe archive: %s", zip_problems.buf);
    else
        cf_wheel_add_check(res, "zip", 1, "%zu entries, no absolute, '..' or duplicate names, no escaping symlinks", n);
    cf_sb_release(&zip_problems);

    /* 2. the .dist-info and RECORD */
    char *norm = normalise_dist(res->dist);
    char *dist_info = cf_asprintf("%s-%s.dist-info", norm, res->version);
    free(norm);
    char *record_name = cf_asprintf("%s/RECORD", dist_info);
    char *wheel_name = cf_asprintf("%s/WHEEL", dist_info);
    char *marker_name = cf_asprintf("%s/%s", dist_info, CF_WHEEL_MARKER);
    zip_int64_t ridx = -1, widx = -1, midx = -1;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(ms[i].name, record_name))
            ridx = (zip_int64_t)i;
        else if (!strcmp(ms[i].name, wheel_name))
            widx = (zip_int64_t)i;
        else if (!strcmp(ms[i].name, marker_name))
            midx = (zip_int64_t)i;
    }
    if (ridx < 0) {
        cf_wheel_add_check(res, "record", 0, "%s is missing: the wheel's file list cannot be checked", record_name);
    } else {
        cf_error rerr = CF_ERROR_INIT;
        struct cf_record rec = { 0 };
        struct strbuf bad = STRBUF_INIT;
        size_t checked = 0;
        if (load_member(za, (zip_uint64_t)ridx, &ms[ridx], &rerr) < 0 ||
            cf_record_parse(ms[ridx].data.buf, ms[ridx].data.len, &rec, &rerr) < 0) {
            cf_sb_addf(&bad, "%s: %s; ", record_name, cf_error_message(&rerr));
            cf_error_clear(&rerr);
        }
        for (size_t r = 0; r < rec.n; r++) {
            const struct cf_record_entry *e = &rec.entries[r];
            for (size_t q = 0; q < r; q++)
                if (!strcmp(rec.entries[q].path, e->path)) {
                    cf_sb_addf(&bad, "'%s' listed twice; ", e->path);
                    break;
                }
            size_t i = 0;
            while (i < n && strcmp(ms[i].name, e->path))
                i++;
            if (i == n) {
                cf_sb_addf(&bad, "'%s' listed but not in the archive; ", e->path);
                continue;
            }
            if (!e->algo) {
                if (strcmp(e->path, record_name))
                    cf_sb_addf(&bad, "'%s' has no hash; ", e->path);
                continue;
            }
            if (strcmp(e->algo, "sha256") && strcmp(e->algo, "sha384") && strcmp(e->algo, "sha512")) {
                cf_sb_addf(&bad, "'%s': hash algorithm '%s' is not allowed (PEP 427 wants sha256 or stronger); ",
                        e->path, e->algo);
                continue;
            }
            if (load_member(za, i, &ms[i], &rerr) < 0) {
                cf_sb_addf(&bad, "%s; ", cf_error_message(&rerr));
                cf_error_clear(&rerr);
                continue;
            }
            if (!strcmp(e->algo, "sha256")) {
                struct strbuf b64 = STRBUF_INIT;
                cf_wheel_sha256_b64(ms[i].data.buf ? ms[i].data.buf : "", ms[i].data.len, &b64);
                if (strcmp(b64.buf, e->digest))
                    cf_sb_addf(&bad, "'%s': sha256 is %s, RECORD says %s (tampered or stale RECORD); ", e->path, b64.buf,
                            e->digest);
                cf_sb_release(&b64);
            }
            if (e->size >= 0 && (size_t)e->size != ms[i].data.len)
                cf_sb_addf(&bad, "'%s': size is %zu, RECORD says %lld; ", e->path, ms[i].data.len, e->size);
            checked++;
        }
        for (size_t i = 0; i < n; i++) {
            if (ms[i].is_dir || (zip_int64_t)i == ridx || cf_ends_with(ms[i].name, "RECORD.jws") ||
                cf_ends_with(ms[i].name, "RECORD.p7s"))
                continue;
            int listed = 0;
            for (size_t r = 0; r < rec.n && !listed; r++)
                listed = !strcmp(rec.entries[r].path, ms[i].name);
            if (!listed)
                cf_sb_addf(&bad, "'%s' is in the archive but not in RECORD; ", ms[i].name);
        }
        if (bad.len)
            cf_wheel_add_check(res, "record", 0, "%s", bad.buf);
        else
            cf_wheel_add_check(res, "record", 1, "%zu files match RECORD (sha256 and size)", checked);
        cf_sb_release(&bad);
        cf_record_release(&rec);
    }

    /* 3. WHEEL metadata */
    if (widx < 0) {
        cf_wheel_add_check(res, "wheel-metadata", 0, "%s is missing", wheel_name);
    } else {
        cf_error werr = CF_ERROR_INIT;
        struct cf_kv kv = { 0 };
        if (load_member(za, (zip_uint64_t)widx, &ms[widx], &werr) < 0 ||
            cf_kv_parse(ms[widx].data.buf, ms[widx].data.len, &kv, &werr) < 0) {
            cf_wheel_add_check(res, "wheel-metadata", 0, "%s: %s", wheel_name, cf_error_message(&werr));
            cf_error_clear(&werr);
        } else {
            char *want = cf_asprintf("%s-%s-%s", res->python_tag, res->abi_tag, res->platform_tag);
            int tag_found = 0;
            for (size_t k = 0; k < kv.n; k++)
                if (!strcasecmp(kv.keys[k], "Tag") && !strcmp(kv.values[k], want))
                    tag_found = 1;
            const char *purelib = cf_kv_get(&kv, "Root-Is-Purelib");
            if (!cf_kv_get(&kv, "Wheel-Version"))
                cf_wheel_add_check(res, "wheel-metadata", 0, "%s has no Wheel-Version", wheel_name);
            else if (!tag_found && !strchr(res->platform_tag, '.') && !strchr(res->python_tag, '.'))
                cf_wheel_add_check(res, "wheel-metadata", 0, "%s has no 'Tag: %s' matching the file name", wheel_name,
                                want);
            else
                cf_wheel_add_check(res, "wheel-metadata", 1, "Wheel-Version %s, Root-Is-Purelib %s, tag %s",
                                cf_kv_get(&kv, "Wheel-Version"), purelib ? purelib : "(unset)", want);
            free(want);
        }
        cf_kv_release(&kv);
    }

    /* the cclforge marker: which module is the bridge, which externals it declares */
    if (midx >= 0) {
        cf_error merr = CF_ERROR_INIT;
        if (load_member(za, (zip_uint64_t)midx, &ms[midx], &merr) == 0) {
            cJSON *doc = cJSON_ParseWithLength(ms[midx].data.buf ? ms[midx].data.buf : "", ms[midx].data.len);
            const cJSON *mod = cJSON_GetObjectItemCaseSensitive(doc, "module");
            const cJSON *ext = cJSON_GetObjectItemCaseSensitive(doc, "externals");
            if (cJSON_IsString(mod))
                wf.bridge_module = cf_strdup(mod->valuestring);
            const cJSON *it;
            cJSON_ArrayForEach(it, ext) if (cJSON_IsString(it)) cf_strvec_push(&externals, it->valuestring);
            cJSON_Delete(doc);
        }
        cf_error_clear(&merr);
    }

    /* 4. native code: extension modules, RPATH, NEEDED, glibc */
    struct strbuf rpath_bad = STRBUF_INIT, needed_bad = STRBUF_INIT, glibc_bad = STRBUF_INIT, notes = STRBUF_INIT;
    size_t n_external_needed = 0;
    for (size_t i = 0; i < n; i++) {
        if (ms[i].is_dir || ms[i].is_symlink || name_problem(ms[i].name) || ms[i].size < 4)
            continue;
        cf_error eerr = CF_ERROR_INIT;
        if (load_member(za, i, &ms[i], &eerr) < 0) {
            cf_error_clear(&eerr);
            continue;
        }
        if (!cf_elf_facts_is_elf(ms[i].data.buf, ms[i].data.len))
            continue;
        if (cf_elf_facts_read_memory(ms[i].data.buf, ms[i].data.len, ms[i].name, &ms[i].elf, &eerr) < 0) {
            cf_sb_addf(&needed_bad, "%s; ", cf_error_message(&eerr));
            cf_error_clear(&eerr);
            continue;
        }
        cf_strvec_push(&res->elf_members, ms[i].name);
        const char *base = cf_basename(ms[i].name);
        char *modname = module_of(ms[i].name);
        const char *leaf = strrchr(modname, '.') ? strrchr(modname, '.') + 1 : modname;
        char *want_init = cf_asprintf("PyInit_%s", leaf);
        if (cf_strvec_contains(&ms[i].elf.pyinit, want_init)) {
            cf_strvec_push(&res->extensions, ms[i].name);
            cf_strvec_push(&wf.modules, modname);
        }
        free(want_init);
        free(modname);
        if (cf_elf_is_gpu_driver_lib(base))
            cf_sb_addf(&needed_bad, "%s is the GPU driver's library and must come from the host's driver, not a wheel; ",
                    ms[i].name);
        if (ms[i].elf.glibc_max > res->glibc_needed)
            res->glibc_needed = ms[i].elf.glibc_max;
        if (res->glibc_ceiling && ms[i].elf.glibc_max > res->glibc_ceiling)
            cf_sb_addf(&glibc_bad, "%s needs GLIBC_%d.%d but the tag %s promises glibc %d.%d; ", ms[i].name,
                    ms[i].elf.glibc_max / 1000, ms[i].elf.glibc_max % 1000, res->platform_tag,
                    res->glibc_ceiling / 1000, res->glibc_ceiling % 1000);

        /* RPATH entries, mapped into the installed layout (the archive root is site-packages) */
        char *dir = cf_dirname(ms[i].name);
        const char *mdir = strcmp(dir, ".") ? dir : "";
        struct strvec inside = STRVEC_INIT, outside = STRVEC_INIT;
        for (size_t r = 0; r < ms[i].elf.rpath.n; r++) {
            const char *entry = ms[i].elf.rpath.v[r];
            int is_origin_relative;
            char *target = origin_target(entry, mdir, &is_origin_relative);
            if (!is_origin_relative && entry[0] == '/' && declared(&externals, entry)) {
                cf_strvec_push(&outside, entry); /* an absolute directory the wheel declares it needs */
                continue;
            }
            if (!is_origin_relative) {
                cf_sb_addf(&rpath_bad, "%s has RPATH entry '%s', %s; use a $ORIGIN-relative entry or bundle the library; ",
                        ms[i].name, entry,
                        entry[0] == '/' ? "an absolute path of the build machine" : "not relative to $ORIGIN");
                continue;
            }
            if (!target) {
                cf_sb_addf(&rpath_bad, "%s: RPATH '%s' climbs above site-packages; ", ms[i].name, entry);
            } else if (has_dir(ms, n, target)) {
                cf_strvec_push(&inside, target);
            } else if (declared(&externals, target)) {
                cf_strvec_push(&outside, target);
            } else {
                cf_sb_addf(&rpath_bad,
                        "%s: RPATH '%s' resolves to site-packages/%s, which is neither in the wheel nor a declared "
                        "external (declare it with --external %s if a dependency provides it); ",
                        ms[i].name, entry, target, target);
            }
            free(target);
        }
        for (size_t k = 0; k < ms[i].elf.needed.n; k++) {
            const char *lib = ms[i].elf.needed.v[k];
            if (cf_elf_is_manylinux_system_lib(lib) || cf_elf_is_gpu_driver_lib(lib))
                continue;
            int found = 0;
            for (size_t r = 0; r < inside.n && !found; r++) {
                char *p = *inside.v[r] ? cf_asprintf("%s/%s", inside.v[r], lib) : cf_strdup(lib);
                found = has_member(ms, n, p);
                free(p);
            }
            if (found)
                continue;
            if (outside.n) {
                n_external_needed++;
                int seen = 0;
                for (size_t s = 0; s < opts->n_site_dirs && !seen; s++)
                    for (size_t r = 0; r < outside.n && !seen; r++) {
                        char *p = cf_asprintf("%s/%s/%s", opts->site_dirs[s], outside.v[r], lib);
                        seen = cf_path_exists(p);
                        free(p);
                    }
                if (opts->n_site_dirs && !seen)
                    cf_sb_addf(&needed_bad, "%s needs %s: not in the wheel nor under the given site dirs at its declared "
                                         "externals; ",
                            ms[i].name, lib);
                continue;
            }
            struct strbuf where = STRBUF_INIT;
            for (size_t r = 0; r < inside.n; r++)
                cf_sb_addf(&where, "%s%s/", r ? ", " : "", inside.v[r]);
            cf_sb_addf(&needed_bad,
                    "%s needs %s, which is missing: not a system library, not in the wheel%s%s, and no declared "
                    "external directory is on its RPATH; ",
                    ms[i].name, lib, where.len ? " at " : "", cf_sb_str(&where));
            cf_sb_release(&where);
        }
        cf_strvec_clear(&inside);
        cf_strvec_clear(&outside);
        free(dir);
    }
    if (res->extensions.n)
        cf_wheel_add_check(res, "extension", 1, "%zu extension module(s): %s%s", res->extensions.n, res->extensions.v[0],
                        res->extensions.n > 1 ? ", ..." : "");
    else
        cf_wheel_add_check(res, "extension", 0,
                        "no extension module: no ELF member exports PyInit_<name> matching its file name");
    if (wf.bridge_module && !cf_strvec_contains(&wf.modules, wf.bridge_module))
        cf_wheel_add_check(res, "extension", 0, "the marker names module %s, but the wheel has no such extension",
                        wf.bridge_module);
    cf_wheel_add_check(res, "rpath", rpath_bad.len ? 0 : 1, "%s",
                    rpath_bad.len ? rpath_bad.buf : "every RPATH entry is $ORIGIN-relative and lands in the wheel or "
                                                    "on a declared external");
    if (needed_bad.len)
        cf_wheel_add_check(res, "needed", 0, "%s", needed_bad.buf);
    else
        cf_wheel_add_check(res, "needed", 1,
                        "every NEEDED library is a system library or in the wheel%s (%zu left to declared externals%s)",
                        n_external_needed ? ", or on a declared external" : "", n_external_needed,
                        opts->n_site_dirs ? ", found under the site dirs" : "");
    if (glibc_bad.len)
        cf_wheel_add_check(res, "glibc", 0, "%s", glibc_bad.buf);
    else if (res->glibc_ceiling)
        cf_wheel_add_check(res, "glibc", 1, "highest symbol version GLIBC_%d.%d is within %s", res->glibc_needed / 1000,
                        res->glibc_needed % 1000, res->platform_tag);
    else
        cf_wheel_add_check(res, "glibc", -1, "tag %s sets no glibc ceiling (highest needed: GLIBC_%d.%d)",
                        res->platform_tag, res->glibc_needed / 1000, res->glibc_needed % 1000);
    cf_sb_release(&rpath_bad);
    cf_sb_release(&needed_bad);
    cf_sb_release(&glibc_bad);
    cf_sb_release(&notes);

    cf_zip_discard(za);
    for (size_t i = 0; i < n; i++) {
        free(ms[i].name);
        cf_sb_release(&ms[i].data);
        cf_elf_facts_release(&ms[i].elf);
    }
    free(ms);
    free(dist_info);
    free(record_name);
    free(wheel_name);
    free(marker_name);

    /* 5. install, import, smoke: only for a wheel that passed the static checks */
    if (opts->install || opts->smoke_ranks > 0) {
        if (res->failed)
            cf_wheel_add_check(res, "install", -1, "not attempted: the static checks above failed");
        else
            cf_wheel_install_checks(opts, &wf, res);
    }
    free(wf.bridge_module);
    cf_strvec_clear(&wf.modules);
    cf_strvec_clear(&externals);
    return 0;
}
