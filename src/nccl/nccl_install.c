/* The install side of an NCCL build: a staging directory inside the root that
 * gets NCCL's layout and a manifest, then one rename puts it in place. */
#include "nccl_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cclforge/fs.h"
#include "cclforge/json.h"

static int copy_file(const char *from, const char *to, mode_t mode, cf_error *err)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", from, strerror(errno));
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode & 0777);
    if (out < 0) {
        close(in);
        return cf_error_set(err, CF_ERR_IO, "%s: %s", to, strerror(errno));
    }
    char buf[1 << 16];
    int rc = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n == 0)
            break;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = cf_error_set(err, CF_ERR_IO, "%s: %s", from, strerror(errno));
            break;
        }
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                rc = cf_error_set(err, CF_ERR_IO, "%s: %s", to, strerror(errno));
                break;
            }
            off += w;
        }
        if (rc)
            break;
    }
    if (rc == 0 && fsync(out) < 0)
        rc = cf_error_set(err, CF_ERR_IO, "%s: %s", to, strerror(errno));
    close(in);
    if (close(out) < 0 && rc == 0)
        rc = cf_error_set(err, CF_ERR_IO, "%s: %s", to, strerror(errno));
    return rc;
}

int cf_nccl_copy_tree(const char *from, const char *to, cf_error *err)
{
    struct stat st;
    if (lstat(from, &st) < 0)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", from, strerror(errno));
    if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlink(from, target, sizeof target - 1);
        if (n < 0)
            return cf_error_set(err, CF_ERR_IO, "%s: %s", from, strerror(errno));
        target[n] = 0;
        if (symlink(target, to) < 0)
            return cf_error_set(err, CF_ERR_IO, "%s: %s", to, strerror(errno));
        return 0;
    }
    if (S_ISREG(st.st_mode))
        return copy_file(from, to, st.st_mode, err);
    if (!S_ISDIR(st.st_mode))
        return 0; /* sockets, fifos: nothing a build installs */
    if (mkdir(to, 0755) < 0 && errno != EEXIST)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", to, strerror(errno));
    DIR *d = opendir(from);
    if (!d)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", from, strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *a = cf_path_join(from, e->d_name), *b = cf_path_join(to, e->d_name);
        rc = cf_nccl_copy_tree(a, b, err);
        free(a);
        free(b);
    }
    closedir(d);
    return rc;
}

cJSON *cf_nccl_plan_inputs(const struct cf_nccl_plan *plan)
{
    cJSON *in = cJSON_CreateObject();
    cJSON_AddStringToObject(in, "vendor", plan->vendor->word);
    cJSON_AddStringToObject(in, "tag", plan->tag_text);
    cJSON_AddItemToObject(in, "archs", cf_arch_list_json(&plan->archs));
    cJSON_AddBoolToObject(in, "ptx", plan->ptx);
    cf_json_put_str(in, "only_funcs", plan->only_funcs);
    cf_json_put_str(in, "cuda_version", plan->cuda_version);
    cJSON_AddStringToObject(in, "source", plan->source_id);
    return in;
}

static const char *source_kind_name(enum cf_nccl_source_kind k)
{
    static const char *const names[] = { "upstream", "dir", "tarball", "git" };
    return names[k];
}

char *cf_nccl_manifest_text(const struct cf_nccl_plan *plan, const struct nccl_built *built)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "schema", "cclforge.nccl-manifest/1");
    cJSON_AddStringToObject(m, "name", plan->target_name);
    cJSON_AddStringToObject(m, "library_kind", plan->vendor->comm->kind);
    cJSON_AddStringToObject(m, "vendor", plan->vendor->word);
    cJSON_AddStringToObject(m, "tag", plan->tag_text);
    struct strbuf v = STRBUF_INIT;
    cf_nccl_version_format(&plan->tag, &v);
    cJSON_AddStringToObject(m, "version", cf_sb_str(&v));
    cf_sb_release(&v);
    cJSON_AddNumberToObject(m, "version_code", cf_nccl_tag_version_code(&plan->tag));
    cJSON_AddItemToObject(m, "archs", cf_arch_list_json(&plan->archs));
    cJSON_AddBoolToObject(m, "ptx", plan->ptx);
    cf_json_put_str(m, "cuda_version", plan->cuda_version);
    cJSON_AddStringToObject(m, "toolkit_home", plan->toolkit_home);
    cJSON_AddStringToObject(m, "compiler", plan->compiler ? plan->compiler : "");
    cJSON *src = cJSON_AddObjectToObject(m, "source");
    cJSON_AddStringToObject(src, "kind", source_kind_name(plan->source_kind));
    cJSON_AddStringToObject(src, "location", plan->source);
    if (built->source_commit)
        cJSON_AddStringToObject(src, "commit", built->source_commit);
    if (built->source_sha256)
        cJSON_AddStringToObject(src, "sha256", built->source_sha256);
    cJSON *flags = cJSON_AddObjectToObject(m, "flags");
    cJSON_AddStringToObject(flags, plan->vendor->arch_family == CF_ARCH_AMD ? "GPU_TARGETS" : "NVCC_GENCODE", plan->gencode);
    if (plan->only_funcs)
        cJSON_AddStringToObject(flags, "ONLY_FUNCS", plan->only_funcs);
    cJSON_AddNumberToObject(flags, "jobs", plan->jobs);
    cJSON_AddBoolToObject(flags, "docker", plan->docker);
    if (plan->docker)
        cJSON_AddStringToObject(flags, "docker_image", plan->docker_image);
    cf_json_put_strvec(flags, "commands", &built->commands);
    cJSON_AddStringToObject(m, "library", built->library_rel);
    cJSON_AddStringToObject(m, "library_sha256", built->library_sha256);
    cJSON_AddStringToObject(m, "soname", built->verify->soname ? built->verify->soname : "");
    cJSON_AddStringToObject(m, "banner", built->verify->banner ? built->verify->banner : "");
    cf_json_put_strvec(m, "sass", &built->verify->sass);
    cf_json_put_strvec(m, "ptx_archs", &built->verify->ptx);
    cf_json_put_strvec(m, "extra_archs", &built->verify->extra);
    cJSON_AddNumberToObject(m, "build_seconds", built->build_seconds);
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON_AddStringToObject(m, "built_at", when);
    cJSON_AddStringToObject(m, "cclforge_version", CCLFORGE_VERSION);
    cJSON_AddItemToObject(m, "inputs", cf_nccl_plan_inputs(plan));
    char *text = cJSON_Print(m);
    cJSON_Delete(m);
    return text;
}

static int write_text(const char *path, const char *text, cf_error *err)
{
    return cf_write_file_atomic(path, text, strlen(text), err);
}

int cf_nccl_stage_layout(const struct cf_nccl_plan *plan, const char *staging, const char *library,
                      struct nccl_built *built, cf_error *err)
{
    int rc = 0;
    char *inc_from = cf_path_join(plan->build_dir, "include");
    char *inc_to = cf_path_join(staging, "include");
    char *lib_dir = cf_path_join(staging, "lib");
    char *pc_dir = cf_path_join(lib_dir, "pkgconfig");
    const struct cf_comm_profile *comm = plan->vendor->comm;
    const char *stem = comm->stem;
    struct strbuf real_name = STRBUF_INIT, soname = STRBUF_INIT;
    cf_sb_adds(&soname, comm->soname);
    /* NCCL names its file after the release (libnccl.so.2.28.9), RCCL librccl.so.1.0 */
    if (comm->lib == CF_COMMLIB_RCCL)
        cf_sb_addf(&real_name, "%s.0", comm->soname);
    else
        cf_sb_addf(&real_name, "%s.%d.%d.%d", stem, plan->tag.major, plan->tag.minor, plan->tag.patch);

    if (cf_is_dir(inc_from))
        rc = cf_nccl_copy_tree(inc_from, inc_to, err);
    else
        rc = cf_mkdir_p(inc_to, 0755, err);
    if (rc == 0)
        rc = cf_mkdir_p(pc_dir, 0755, err);
    char *lib_to = cf_path_join(lib_dir, cf_sb_str(&real_name));
    char *so_link = cf_path_join(lib_dir, cf_sb_str(&soname));
    char *dev_link = cf_path_join(lib_dir, stem);
    if (rc == 0) {
        char *resolved = cf_realpath(library);
        rc = resolved ? cf_nccl_copy_tree(resolved, lib_to, err)
                      : cf_error_set(err, CF_ERR_IO, "%s: cannot resolve the built library", library);
        free(resolved);
    }
    if (rc == 0 && (symlink(cf_sb_str(&real_name), so_link) < 0 || symlink(cf_sb_str(&soname), dev_link) < 0))
        rc = cf_error_set(err, CF_ERR_IO, "%s: cannot create the library symlinks: %s", lib_dir, strerror(errno));
    if (rc == 0) {
        char hex[65];
        rc = cf_sha256_file(lib_to, hex, err);
        if (rc == 0)
            built->library_sha256 = cf_strdup(hex);
        built->library_rel = cf_asprintf("lib/%s", cf_sb_str(&real_name));
    }
    if (rc == 0) {
        const char *name = comm->link_name;
        char *pc = cf_asprintf("prefix=%s\nexec_prefix=${prefix}\nlibdir=${exec_prefix}/lib\nincludedir=${prefix}/include\n\n"
                               "Name: %s\nDescription: %s built by cclforge for %s\nVersion: %d.%d.%d\n"
                               "Libs: -L${libdir} -l%s\nCflags: -I${includedir}\n",
                               plan->target_dir, name,
                               comm->display, plan->target_name, plan->tag.major,
                               plan->tag.minor, plan->tag.patch, name);
        char *pc_path = cf_asprintf("%s/%s.pc", pc_dir, name);
        rc = write_text(pc_path, pc, err);
        free(pc);
        free(pc_path);
    }
    if (rc == 0 && cf_is_file(plan->log_path)) {
        char *log_to = cf_path_join(staging, "build.log");
        rc = cf_nccl_copy_tree(plan->log_path, log_to, err);
        free(log_to);
    }
    if (rc == 0) {
        char *text = cf_nccl_manifest_text(plan, built);
        char *manifest = cf_path_join(staging, "manifest.json");
        rc = write_text(manifest, text, err);
        free(text);
        free(manifest);
    }
    free(inc_from);
    free(inc_to);
    free(lib_dir);
    free(pc_dir);
    free(lib_to);
    free(so_link);
    free(dev_link);
    cf_sb_release(&real_name);
    cf_sb_release(&soname);
    return rc;
}

/* Removes leftovers of killed builds of this target. Called under its lock. */
void cf_nccl_clean_stale(const struct cf_nccl_plan *plan)
{
    char *builds = cf_dirname(plan->target_dir);
    char *prefix = cf_asprintf(".staging-%s-", plan->target_name);
    DIR *d = opendir(builds);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (cf_starts_with(e->d_name, prefix)) {
                char *p = cf_path_join(builds, e->d_name);
                cf_rm_rf(p, NULL);
                free(p);
            }
        closedir(d);
    }
    free(prefix);
    free(builds);
}
