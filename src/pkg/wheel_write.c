/* A reproducible wheel writer on libzip: sorted entries, .dist-info last with
 * RECORD the final entry, fixed timestamps and permissions. */
#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pkg/zip_loader.h"

#include "cclforge/atomic_file.h"
#include "cclforge/fs.h"
#include "cclforge/wheel.h"
#include "pkg/elf_facts.h"
#include "pkg/manylinux_policy.h"
#include "pkg/member_name.h"
#include "pkg/wheel_write.h"

/* 1980-01-01T00:00:00Z, the earliest time a zip entry can hold. */
#define ZIP_EPOCH 315532800L
#define WHEEL_MAX_MEMBER ((size_t)4 << 30)

struct staged {
    char *name;
    struct strbuf data;
    int executable;
};

static int cmp_staged(const void *a, const void *b)
{
    return strcmp(((const struct staged *)a)->name, ((const struct staged *)b)->name);
}

/* PEP 503 normalisation with '_' for file names: runs of -_. become one '_'. */
static char *normalise_dist(const char *name)
{
    char *s = cf_dist_canonical(name);
    for (char *p = s; *p; p++)
        if (*p == '-')
            *p = '_';
    return s;
}

/* manylinux_2_X, the oldest policy at or above the newest of: 17, the highest GLIBC_2.X needed, the
 * oldest policy allowing every other symbol version (GLIBCXX_3.4.30 needs
 * manylinux_2_35) and every system library needed (libmvec.so.1 needs
 * manylinux_2_24): what `wheel verify` then holds the wheel to. */
int cf_wheel_platform_tag(const char *const *elf_paths, const char *const *archive_names, size_t n,
                          const char *const *declared_externals, size_t n_ext, char **tag, struct strbuf *why,
                          cf_error *err)
{
    int minor = 17, all_covered = 1, no_policy = 0;
    const char *arch = NULL, *reason = "GLIBC_2.17 at least";
    for (size_t i = 0; i < n; i++) {
        struct elf_facts f;
        if (cf_elf_facts_read_file(elf_paths[i], &f, err) < 0)
            return -1;
        if (!f.is_elf) {
            cf_elf_facts_release(&f);
            continue;
        }
        const char *a = cf_elf_machine_wheel_arch(f.machine, f.big_endian);
        if (!arch)
            arch = a;
        if (f.glibc_max % 1000 > minor && f.glibc_max / 1000 == 2) {
            minor = f.glibc_max % 1000;
            reason = "the highest GLIBC_ version needed";
        }
        for (size_t k = 0; k < f.versions.n; k++) {
            int v = cf_starts_with(f.versions.v[k], "GLIBC_") ? -1 : cf_policy_version_minor(a, f.versions.v[k]);
            no_policy |= v == 0;
            if (v > minor) {
                minor = v;
                reason = "the oldest manylinux policy allowing every symbol version";
            }
        }
        for (size_t k = 0; k < f.needed.n; k++) {
            const char *lib = f.needed.v[k];
            int lib_minor = cf_policy_lib_minor(lib), covered = lib_minor > 0;
            if (lib_minor > minor) {
                minor = lib_minor;
                reason = "the oldest manylinux policy whitelisting every system library needed";
            }
            for (size_t j = 0; !covered && j < n; j++)
                covered = !strcmp(cf_basename(archive_names[j]), lib);
            /* a library from a declared external (torch/lib) is the dependency's to provide */
            for (size_t r = 0; !covered && r < f.rpath.n; r++)
                for (size_t e = 0; !covered && e < n_ext; e++)
                    covered = cf_ends_with(f.rpath.v[r], declared_externals[e]);
            if (!covered) {
                if (all_covered && why)
                    cf_sb_addf(why, "%s needs %s, which is neither a manylinux system library, in the wheel, nor on a "
                                 "declared external directory; ",
                            archive_names[i], lib);
                all_covered = 0;
            }
        }
        cf_elf_facts_release(&f);
    }
    if (!arch)
        arch = "x86_64";
    if (no_policy && all_covered && why)
        cf_sb_adds(why, "a symbol version no manylinux policy allows is needed; ");
    /* the policy the verifier holds the wheel to, not a glibc no policy names */
    int policy = cf_policy_oldest_from(minor, arch);
    if (all_covered && !no_policy && policy) {
        *tag = cf_asprintf("manylinux_2_%d_%s", policy, arch);
        if (why)
            cf_sb_addf(why, "glibc 2.%d from %s, the oldest manylinux policy at or above it, manylinux_2_%d, and "
                            "every NEEDED library is covered",
                       minor, reason, policy);
    } else {
        *tag = cf_asprintf("linux_%s", arch);
        if (why)
            cf_sb_adds(why, "so the wheel is tagged for this platform only");
    }
    return 0;
}

static void stage(struct staged **v, size_t *n, size_t *alloc, const char *name, struct strbuf *data, int exec)
{
    if (*n == *alloc) {
        *alloc = *alloc ? *alloc * 2 : 16;
        *v = cf_xrealloc(*v, *alloc * sizeof **v);
    }
    (*v)[*n].name = cf_strdup(name);
    (*v)[*n].data = *data;
    (*v)[*n].executable = exec;
    (*n)++;
    memset(data, 0, sizeof *data);
}

long cf_wheel_fixed_mtime(void)
{
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    if (sde && *sde) {
        char *end;
        long v = strtol(sde, &end, 10);
        if (!*end && v >= ZIP_EPOCH)
            return v;
    }
    return ZIP_EPOCH;
}

int cf_wheel_zip_add(zip_t *za, const char *name, const struct strbuf *data, int executable, time_t mtime,
                     cf_error *err)
{
    zip_source_t *src = cf_zip_source_buffer(za, data->buf ? data->buf : "", data->len, 0);
    if (!src)
        return cf_error_set(err, CF_ERR_INTERNAL, "zip: %s", cf_zip_strerror(za));
    zip_int64_t idx = cf_zip_file_add(za, name, src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
        cf_zip_source_free(src);
        return cf_error_set(err, CF_ERR_IO, "zip: adding %s: %s", name, cf_zip_strerror(za));
    }
    zip_uint32_t mode = (executable ? 0100755u : 0100644u) << 16;
    if (cf_zip_file_set_external_attributes(za, (zip_uint64_t)idx, 0, ZIP_OPSYS_UNIX, mode) < 0 ||
        cf_zip_file_set_mtime(za, (zip_uint64_t)idx, mtime, 0) < 0 ||
        cf_zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_DEFLATE, 9) < 0)
        return cf_error_set(err, CF_ERR_IO, "zip: setting attributes of %s: %s", name, cf_zip_strerror(za));
    return 0;
}

int cf_wheel_write(const struct cf_wheel_spec *spec, const char *out_dir, char **wheel_path,
                   char **platform_tag_used, cf_error *err)
{
    struct staged *files = NULL;
    size_t n = 0, alloc = 0;
    int rc = -1;
    char *dist = normalise_dist(spec->dist_name);
    char *dist_info = cf_asprintf("%s-%s.dist-info", dist, spec->version);
    char *tag = NULL, *path = NULL;
    const char *tmp_path = NULL;
    struct cf_atomic_file tmp = { .fd = -1, .dir_fd = -1 };
    struct strvec elf_paths = STRVEC_INIT, elf_names = STRVEC_INIT;
    zip_t *za = NULL;

    for (size_t i = 0; i < spec->n_members; i++) {
        const struct cf_wheel_member *m = &spec->members[i];
        if (!cf_member_name_ok(m->archive_name) || cf_starts_with(m->archive_name, dist_info)) {
            cf_error_set(err, CF_ERR_USAGE, "wheel member name '%s' is not a clean relative path", m->archive_name);
            goto out;
        }
        for (size_t j = 0; j < n; j++)
            if (!strcmp(files[j].name, m->archive_name)) {
                cf_error_set(err, CF_ERR_USAGE, "wheel member '%s' given twice", m->archive_name);
                goto out;
            }
        struct strbuf data = STRBUF_INIT;
        int exec = 0;
        if (m->source_path) {
            if (cf_read_file(m->source_path, WHEEL_MAX_MEMBER, &data, err) < 0)
                goto out;
            struct stat st;
            exec = stat(m->source_path, &st) == 0 && (st.st_mode & 0111);
            if (cf_elf_facts_is_elf(data.buf, data.len)) {
                cf_strvec_push(&elf_paths, m->source_path);
                cf_strvec_push(&elf_names, m->archive_name);
            }
        } else {
            cf_sb_add(&data, m->data, m->len);
        }
        stage(&files, &n, &alloc, m->archive_name, &data, exec);
    }

    if (spec->platform_tag)
        tag = cf_strdup(spec->platform_tag);
    else if (cf_wheel_platform_tag((const char *const *)elf_paths.v, (const char *const *)elf_names.v, elf_paths.n,
                                   spec->declared_externals, spec->n_declared_externals, &tag, NULL, err) < 0)
        goto out;

    qsort(files, n, sizeof *files, cmp_staged);

    /* .dist-info, in a fixed order after everything else */
    struct strbuf meta = STRBUF_INIT, wheel = STRBUF_INIT, record = STRBUF_INIT;
    cf_sb_addf(&meta, "Metadata-Version: 2.1\nName: %s\nVersion: %s\n", spec->dist_name, spec->version);
    if (spec->summary)
        cf_sb_addf(&meta, "Summary: %s\n", spec->summary);
    for (size_t i = 0; i < spec->n_requires_dist; i++)
        cf_sb_addf(&meta, "Requires-Dist: %s\n", spec->requires_dist[i]);
    cf_sb_addf(&wheel, "Wheel-Version: 1.0\nGenerator: cclforge %s\nRoot-Is-Purelib: false\nTag: %s-%s-%s\n",
            CCLFORGE_VERSION, spec->python_tag, spec->python_tag, tag);
    char *name = cf_asprintf("%s/METADATA", dist_info);
    stage(&files, &n, &alloc, name, &meta, 0);
    free(name);
    name = cf_asprintf("%s/WHEEL", dist_info);
    stage(&files, &n, &alloc, name, &wheel, 0);
    free(name);
    if (spec->extra_dist_info_name) {
        struct strbuf extra = STRBUF_INIT;
        cf_sb_adds(&extra, spec->extra_dist_info_text ? spec->extra_dist_info_text : "");
        name = cf_asprintf("%s/%s", dist_info, spec->extra_dist_info_name);
        stage(&files, &n, &alloc, name, &extra, 0);
        free(name);
    }
    for (size_t i = 0; i < n; i++) {
        struct strbuf b64 = STRBUF_INIT;
        cf_wheel_sha256_b64(files[i].data.buf ? files[i].data.buf : "", files[i].data.len, &b64);
        cf_record_format_line(&record, files[i].name, cf_sb_str(&b64), (long long)files[i].data.len);
        cf_sb_release(&b64);
    }
    name = cf_asprintf("%s/RECORD", dist_info);
    cf_record_format_line(&record, name, NULL, 0);
    stage(&files, &n, &alloc, name, &record, 0);
    free(name);

    if (cf_mkdir_p(out_dir, 0755, err) < 0)
        goto out;
    path = cf_asprintf("%s/%s-%s-%s-%s-%s.whl", out_dir, dist, spec->version, spec->python_tag, spec->python_tag, tag);
    /* libzip writes the archive by name: to a fresh unpredictable temporary. */
    if (cf_atomic_begin(&tmp, AT_FDCWD, path, 0644, err) < 0)
        goto out;
    tmp_path = tmp.tmp_path;
    int zerr = 0;
    za = cf_zip_open(tmp_path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    if (!za) {
        cf_error_set(err, CF_ERR_IO, "cannot create %s (libzip error %d)", tmp_path, zerr);
        goto out;
    }
    time_t mtime = (time_t)cf_wheel_fixed_mtime();
    for (size_t i = 0; i < n; i++)
        if (cf_wheel_zip_add(za, files[i].name, &files[i].data, files[i].executable, mtime, err) < 0)
            goto out;
    if (cf_zip_close(za) < 0) {
        cf_error_set(err, CF_ERR_IO, "writing %s: %s", tmp_path, cf_zip_strerror(za));
        goto out;
    }
    za = NULL;
    if (cf_atomic_commit(&tmp, err) < 0)
        goto out;
    *wheel_path = path;
    path = NULL;
    if (platform_tag_used) {
        *platform_tag_used = tag;
        tag = NULL;
    }
    rc = 0;
out:
    if (za)
        cf_zip_discard(za);
    cf_atomic_abort(&tmp);
    for (size_t i = 0; i < n; i++) {
        free(files[i].name);
        cf_sb_release(&files[i].data);
    }
    free(files);
    free(dist);
    free(dist_info);
    free(tag);
    free(path);
    cf_strvec_clear(&elf_paths);
    cf_strvec_clear(&elf_names);
    return rc;
}
