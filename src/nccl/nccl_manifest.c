/* manifest.json, the record of one installed build (cclforge.nccl-manifest/1):
 * its typed model, its writer and its reader. The store, the cache check and
 * the tree check read the model; only this file knows the document's keys.
 * The reader takes a manifest of an older cclforge (no "files", no schema):
 * the tree check then falls back on the library's hash. */
#include "nccl_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/json.h"

#define MANIFEST_MAX (4u << 20)

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
    cJSON_AddStringToObject(m, "library_sha256", built->library_sha256 ? built->library_sha256 : "");
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
    if (built->files)
        cJSON_AddItemReferenceToObject(m, "files", built->files);
    char *text = cJSON_Print(m);
    cJSON_Delete(m);
    return text;
}

/* The document at dir_fd/manifest.json (never through a link), NULL when it
 * is absent, too large or not a JSON object. */
static cJSON *parse_at(int dir_fd)
{
    int fd = openat(dir_fd, "manifest.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    cJSON *doc = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size <= MANIFEST_MAX) {
        char *buf = cf_xmalloc((size_t)st.st_size + 1);
        ssize_t n = pread(fd, buf, (size_t)st.st_size, 0);
        if (n == st.st_size)
            doc = cJSON_ParseWithLength(buf, (size_t)n);
        free(buf);
    }
    close(fd);
    if (doc && !cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    return doc;
}

int cf_nccl_manifest_read_at(int dir_fd, struct nccl_manifest *m)
{
    memset(m, 0, sizeof *m);
    m->doc = parse_at(dir_fd);
    if (!m->doc)
        return -1;
    const char *tag = cf_json_str(m->doc, "tag"), *version = cf_json_str(m->doc, "version");
    m->tag = tag ? tag : "";
    m->version = version ? version : "";
    double code = cf_json_num(m->doc, "version_code", 0);
    m->version_code = code > 0 && code < 1e9 ? (int)code : 0;
    cf_json_get_strvec(m->doc, "archs", &m->archs);
    cf_json_get_bool(m->doc, "ptx", &m->ptx);
    m->cuda_version = cf_json_str(m->doc, "cuda_version");
    m->library_kind = cf_json_str(m->doc, "library_kind");
    m->library = cf_json_str(m->doc, "library");
    m->library_sha256 = cf_json_str(m->doc, "library_sha256");
    m->build_seconds = cf_json_num(m->doc, "build_seconds", 0);
    cf_json_get_strvec(m->doc, "sass", &m->sass);
    cf_json_get_strvec(m->doc, "ptx_archs", &m->ptx_archs);
    m->inputs = cJSON_GetObjectItemCaseSensitive(m->doc, "inputs");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(m->doc, "files");
    m->files = cJSON_IsObject(files) ? files : NULL;
    return 0;
}

int cf_nccl_manifest_read(const char *dir, struct nccl_manifest *m)
{
    memset(m, 0, sizeof *m);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = cf_nccl_manifest_read_at(fd, m);
    close(fd);
    return rc;
}

void cf_nccl_manifest_release(struct nccl_manifest *m)
{
    cJSON_Delete(m->doc);
    cf_strvec_clear(&m->archs);
    cf_strvec_clear(&m->sass);
    cf_strvec_clear(&m->ptx_archs);
    memset(m, 0, sizeof *m);
}
