/* The .dist-info directory: finding it as pip does, RECORD against the
 * digests the streaming pass computed, and WHEEL's tags against the file
 * name's. Every pass is linear: members and RECORD entries meet through
 * hash indices, never a scan of one list per element of the other. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pkg/name_index.h"
#include "pkg/wheel_digest.h"
#include "cclforge/json.h"
#include "pkg/wheel_verify_internal.h"

#define MAX_RECORD ((size_t)32 << 20) /* torch's RECORD is 1.6 MB; 40,000 lines are 4 MB */
#define MAX_TAGS 4096

static long member_named(struct verify_ctx *c, const char *name)
{
    size_t i;
    return cf_name_index_find(&c->by_name, name, strlen(name), &i) ? (long)i : -1;
}

/* pip (wheel_dist_info_dir): exactly one top-level *.dist-info directory,
 * whose canonical name starts with the distribution's. */
void cf_wheel_find_dist_info(struct verify_ctx *c)
{
    struct cf_name_index tops = CF_NAME_INDEX_INIT;
    struct strvec found = STRVEC_INIT;
    static const char suffix[] = ".dist-info";
    for (size_t i = 0; i < c->n; i++) {
        const char *name = c->m[i].z->name, *slash = strchr(name, '/');
        size_t len = slash ? (size_t)(slash - name) : 0; /* a top-level file is no directory */
        if (len > sizeof suffix - 1 && !strncmp(name + len - (sizeof suffix - 1), suffix, sizeof suffix - 1) &&
            cf_name_index_add(&tops, name, len, i, NULL))
            cf_strvec_push_nodup(&found, cf_strndup(name, len));
    }
    cf_name_index_release(&tops);
    if (!found.n) {
        cf_sb_adds(&c->dist_info_problems, "no .dist-info directory: pip refuses the wheel");
    } else if (found.n > 1) {
        cf_sb_addf(&c->dist_info_problems, "%zu .dist-info directories (%s, %s%s): pip refuses the wheel", found.n,
                   found.v[0], found.v[1], found.n > 2 ? ", ..." : "");
    } else {
        char *want = cf_dist_canonical(c->wn.dist), *have = cf_dist_canonical(found.v[0]);
        if (!cf_starts_with(have, want))
            cf_sb_addf(&c->dist_info_problems, "%s does not belong to the distribution %s named by the file: pip "
                                               "refuses the wheel",
                       found.v[0], c->wn.dist);
        free(want);
        free(have);
        c->dist_info = cf_strdup(found.v[0]);
    }
    cf_strvec_clear(&found);
    if (!c->dist_info)
        return;
    const struct {
        const char *file;
        long *index;
    } files[] = {
        { "RECORD", &c->record },
        { "WHEEL", &c->wheel },
        { "METADATA", &c->metadata },
        { CF_WHEEL_MARKER, &c->marker },
    };
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char *name = cf_asprintf("%s/%s", c->dist_info, files[k].file);
        *files[k].index = member_named(c, name);
        free(name);
    }
}

void cf_wheel_read_record(struct verify_ctx *c)
{
    if (c->record < 0)
        return;
    struct strbuf text = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_wheel_member_read_all(c, (size_t)c->record, MAX_RECORD, &text, &err) < 0) {
        cf_sb_addf(&c->record_error, "%s/RECORD cannot be read: %s", c->dist_info, cf_error_message(&err));
    } else if (cf_record_parse(text.buf ? text.buf : "", text.len, &c->rec, &err) < 0) {
        cf_sb_addf(&c->record_error, "%s/RECORD: %s", c->dist_info, cf_error_message(&err));
    } else {
        c->rec_parsed = 1;
        for (size_t r = 0; r < c->rec.n; r++) {
            long i = member_named(c, c->rec.entries[r].path);
            if (i >= 0 && c->m[i].record_line < 0)
                c->m[i].record_line = (long)r;
        }
    }
    cf_error_clear(&err);
    cf_sb_release(&text);
}

/* RECORD's own signatures are the only other files it may leave out, and only in .dist-info/ (PEP 427). */
static int exempt_from_record(const struct verify_ctx *c, long i)
{
    if (i == c->record)
        return 1;
    const char *name = c->m[i].z->name;
    size_t dl = strlen(c->dist_info);
    return !strncmp(name, c->dist_info, dl) && (!strcmp(name + dl, "/RECORD.jws") || !strcmp(name + dl, "/RECORD.p7s"));
}

void cf_wheel_check_record(struct verify_ctx *c)
{
    struct cf_wheel_verify_result *r = c->res;
    if (!c->dist_info) {
        cf_wheel_add_check(r, "record", 0, "no RECORD: %s", cf_sb_str(&c->dist_info_problems));
        return;
    }
    if (c->record < 0) {
        cf_wheel_add_check(r, "record", 0, "%s/RECORD is missing: the wheel's file list cannot be checked", c->dist_info);
        return;
    }
    if (!c->rec_parsed) {
        cf_wheel_add_check(r, "record", 0, "%s", cf_sb_str(&c->record_error));
        return;
    }
    struct cf_wheel_problems bad = { STRBUF_INIT, 0 };
    struct strbuf name = STRBUF_INIT;
    size_t checked = 0;
    for (size_t k = 0; k < c->rec.n; k++) {
        const struct cf_record_entry *e = &c->rec.entries[k];
        long i = member_named(c, e->path);
        cf_sb_reset(&name);
        cf_zip_name_display(&name, e->path, strlen(e->path));
        if (i < 0) {
            cf_wheel_problem(&bad, "'%s' listed but not in the archive", name.buf);
            continue;
        }
        const struct vmember *m = &c->m[i];
        if (m->record_line != (long)k) {
            cf_wheel_problem(&bad, "'%s' listed twice", name.buf);
            continue;
        }
        enum cf_digest_algo algo;
        if (!e->algo) {
            if (!exempt_from_record(c, i))
                cf_wheel_problem(&bad, "'%s' has no hash", name.buf);
            continue;
        }
        if (cf_digest_algo_named(e->algo, &algo) < 0) {
            cf_wheel_problem(&bad, "'%s': hash algorithm '%s' is not allowed (PEP 427 wants sha256 or stronger)", name.buf, e->algo);
            continue;
        }
        if (m->data != DATA_OK)
            continue; /* unreadable: said under zip */
        if (m->z->is_dir) {
            cf_wheel_problem(&bad, "'%s' is a directory, yet listed with a hash", name.buf);
            continue;
        }
        if (m->bad_digest)
            cf_wheel_problem(&bad, "'%s': %s is %s, RECORD says %s (tampered or stale RECORD)", name.buf, e->algo,
                             m->bad_digest, e->digest);
        if (e->size >= 0 && (uint64_t)e->size != m->size_read)
            cf_wheel_problem(&bad, "'%s': size is %llu, RECORD says %lld", name.buf, (unsigned long long)m->size_read, e->size);
        checked++;
    }
    for (size_t i = 0; i < c->n; i++) {
        const struct vmember *m = &c->m[i];
        if (m->z->is_dir || m->record_line >= 0 || exempt_from_record(c, (long)i))
            continue;
        cf_wheel_problem(&bad, "'%s' is in the archive but not in RECORD", m->shown);
    }
    cf_wheel_report(r, "record", &bad, "%zu files match RECORD (digest and size), none unlisted", checked);
    cf_sb_release(&name);
}

/* The marker of a cclforge bridge wheel: its module and declared externals. */
static void read_marker(struct verify_ctx *c)
{
    if (c->marker < 0 || !c->marker_text.len)
        return;
    cJSON *doc = cJSON_ParseWithLength(c->marker_text.buf, c->marker_text.len);
    const cJSON *mod = cJSON_GetObjectItemCaseSensitive(doc, "module");
    const cJSON *ext = cJSON_GetObjectItemCaseSensitive(doc, "externals");
    if (cJSON_IsString(mod))
        c->wf.bridge_module = cf_strdup(mod->valuestring);
    const cJSON *it;
    cJSON_ArrayForEach(it, ext) if (cJSON_IsString(it)) cf_strvec_push(&c->externals, it->valuestring);
    /* what the host's toolkit provides (bridge-wheel/2) */
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(doc, "toolkit_libs");
    cJSON_ArrayForEach(it, tl) if (cJSON_IsString(it) && !strchr(it->valuestring, '/'))
        cf_strvec_push(&c->wf.toolkit_libs, it->valuestring);
    const cJSON *tk = cJSON_GetObjectItemCaseSensitive(doc, "toolkit");
    const char *tv = cf_json_str(tk, "vendor"), *tver = cf_json_str(tk, "version");
    c->wf.toolkit_vendor = tv ? cf_strdup(tv) : NULL;
    c->wf.toolkit_version = tver ? cf_strdup(tver) : NULL;
    cJSON_Delete(doc);
}

/* WHEEL's Tag lines must be exactly the tags the file name stands for. */
static void compare_tags(struct verify_ctx *c, const struct cf_kv *kv, struct cf_wheel_problems *bad)
{
    struct strvec want = STRVEC_INIT;
    if (cf_wheel_tags_expand(&c->wn, MAX_TAGS, &want) < 0) {
        cf_wheel_problem(bad, "the file name stands for more than %d tags", MAX_TAGS);
        return;
    }
    struct cf_name_index named = CF_NAME_INDEX_INIT, given = CF_NAME_INDEX_INIT;
    for (size_t i = 0; i < want.n; i++)
        cf_name_index_add(&named, want.v[i], strlen(want.v[i]), i, NULL);
    size_t n_tags = 0;
    for (size_t k = 0; k < kv->n; k++) {
        if (strcasecmp(kv->keys[k], "Tag"))
            continue;
        n_tags++;
        const char *t = kv->values[k];
        cf_name_index_add(&given, t, strlen(t), k, NULL);
        if (!cf_name_index_find(&named, t, strlen(t), NULL))
            cf_wheel_problem(bad, "WHEEL has 'Tag: %s', which the file name does not", t);
    }
    for (size_t i = 0; i < want.n; i++)
        if (!cf_name_index_find(&given, want.v[i], strlen(want.v[i]), NULL))
            cf_wheel_problem(bad, "the file name has the tag %s, which WHEEL does not list", want.v[i]);
    if (!n_tags)
        cf_wheel_problem(bad, "WHEEL has no Tag line");
    cf_name_index_release(&named);
    cf_name_index_release(&given);
    cf_strvec_clear(&want);
}

void cf_wheel_check_metadata(struct verify_ctx *c)
{
    struct cf_wheel_verify_result *r = c->res;
    read_marker(c);
    if (c->dist_info_problems.len) {
        cf_wheel_add_check(r, "wheel-metadata", 0, "%s", c->dist_info_problems.buf);
        return;
    }
    struct cf_wheel_problems bad = { STRBUF_INIT, 0 };
    struct cf_kv kv = { 0 };
    cf_error err = CF_ERROR_INIT;
    const char *version = NULL;
    if (c->wheel < 0)
        cf_wheel_problem(&bad, "%s/WHEEL is missing", c->dist_info);
    else if (c->m[c->wheel].data != DATA_OK)
        cf_wheel_problem(&bad, "%s/WHEEL could not be read (see zip)", c->dist_info);
    else if (cf_kv_parse(c->wheel_text.buf ? c->wheel_text.buf : "", c->wheel_text.len, &kv, &err) < 0)
        cf_wheel_problem(&bad, "%s/WHEEL: %s", c->dist_info, cf_error_message(&err));
    else if (!(version = cf_kv_get(&kv, "Wheel-Version")))
        cf_wheel_problem(&bad, "%s/WHEEL has no Wheel-Version", c->dist_info);
    else if (version[0] != '1' || (version[1] && version[1] != '.'))
        cf_wheel_problem(&bad, "%s/WHEEL says Wheel-Version %s: pip installs 1.x only", c->dist_info, version);
    else
        compare_tags(c, &kv, &bad);
    cf_error_clear(&err);

    struct cf_kv meta = { 0 };
    if (c->metadata < 0) {
        cf_wheel_problem(&bad, "%s/METADATA is missing", c->dist_info);
    } else if (c->m[c->metadata].data == DATA_OK) {
        if (cf_kv_parse(c->metadata_text.buf ? c->metadata_text.buf : "", c->metadata_text.len, &meta, &err) < 0) {
            cf_wheel_problem(&bad, "%s/METADATA: %s", c->dist_info, cf_error_message(&err));
        } else {
            const char *name = cf_kv_get(&meta, "Name");
            char *have = name ? cf_dist_canonical(name) : NULL, *want = cf_dist_canonical(c->wn.dist);
            if (!name)
                cf_wheel_problem(&bad, "%s/METADATA has no Name", c->dist_info);
            else if (strcmp(have, want))
                cf_wheel_problem(&bad, "%s/METADATA names the distribution '%s', the file name '%s'", c->dist_info, name,
                    c->wn.dist);
            free(have);
            free(want);
        }
        cf_error_clear(&err);
    }
    cf_wheel_problems_finish(&bad);
    if (bad.n) {
        cf_wheel_add_check(r, "wheel-metadata", 0, "%s", bad.text.buf);
    } else {
        const char *purelib = cf_kv_get(&kv, "Root-Is-Purelib");
        cf_wheel_add_check(r, "wheel-metadata", 1, "Wheel-Version %s, Root-Is-Purelib %s, WHEEL's tags are the file name's",
                           version, purelib ? purelib : "(unset)");
    }
    cf_kv_release(&kv);
    cf_kv_release(&meta);
    cf_sb_release(&bad.text);
}
