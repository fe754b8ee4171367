/* libFuzzer target for the build store's manifest reader and the installed
 * tree check (a manifest is a file another run, a copy or a user may have
 * changed): the input is manifest.json of an installed build laid out in a
 * private root, then list (cheap and full checks), get, env with a host's
 * archs, and the tree check run over it. Properties: one build is listed; a
 * build found intact names its library and only paths inside itself; the real
 * tree recorded by cclforge checks intact. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/nccl_build.h"
#include "nccl/nccl_internal.h"

static char *root, *build, *manifest;
static struct cf_arch_list host = CF_ARCH_LIST_INIT;

static void put(const char *rel, const char *text)
{
    char *p = cf_path_join(build, rel), *dir = cf_dirname(p);
    if (cf_mkdir_p(dir, 0755, NULL) < 0 || cf_write_file_atomic(p, text, strlen(text), NULL) < 0)
        abort();
    free(p);
    free(dir);
}

static void cleanup(void)
{
    cf_rm_rf(root, NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    root = cf_mkdtemp(NULL, "cclforge-fuzz-store-", NULL);
    if (!root)
        abort();
    atexit(cleanup);
    build = cf_asprintf("%s/nccl/builds/v2.28.9-sm90", root);
    manifest = cf_path_join(build, "manifest.json");
    put("lib/libnccl.so.2.28.9", "not a library");
    put("include/nccl.h", "#define NCCL_VERSION_CODE 22809\n");
    put("lib/pkgconfig/nccl.pc", "Name: nccl\n");
    char *so = cf_path_join(build, "lib/libnccl.so.2"), *dev = cf_path_join(build, "lib/libnccl.so");
    if (symlink("libnccl.so.2.28.9", so) < 0 || symlink("libnccl.so.2", dev) < 0)
        abort();
    free(so);
    free(dev);
    /* the recorder and the checker agree on a real tree */
    int fd = open(build, O_RDONLY | O_DIRECTORY);
    cJSON *files = cf_nccl_tree_record(fd, NULL);
    struct nccl_manifest m = { .library_kind = "nccl", .library = "lib/libnccl.so.2.28.9", .files = files };
    struct strbuf why = STRBUF_INIT;
    if (!files || cf_nccl_tree_check(fd, &m, 1, &why) != 0)
        abort();
    cf_sb_release(&why);
    cJSON_Delete(files);
    close(fd);
    if (cf_arch_list_parse(&host, "sm_75;sm_90;sm_120", NULL) < 0)
        abort();
    return 0;
}

/* Every key of "files" is a relative path with no "." or ".." part. */
static int files_inside(const cJSON *m)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(m, "files"))
    {
        const char *k = f->string;
        if (!k || k[0] == '/' || strstr(k, "..") || strstr(k, "//") || !strncmp(k, "./", 2) || strstr(k, "/./"))
            return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(manifest, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    struct cf_nccl_install_list l;
    cf_error err = CF_ERROR_INIT;
    for (int full = 0; full < 2; full++) {
        if (cf_nccl_store_list(root, full, &l, &err) < 0 || l.n != 1)
            abort();
        if (!l.v[0].damage) {
            struct nccl_manifest m;
            if (cf_nccl_manifest_read(build, &m) < 0 || !l.v[0].library || strncmp(l.v[0].library, build, strlen(build)) ||
                !files_inside(m.doc))
                abort();
            cf_nccl_manifest_release(&m);
        }
        cf_nccl_install_list_release(&l);
    }
    struct cf_nccl_install inst;
    if (cf_nccl_store_get(root, "v2.28.9-sm90", &inst, &err) == 0)
        cf_nccl_install_release(&inst);
    cf_error_clear(&err);
    struct cf_nccl_env e;
    if (cf_nccl_env_make(root, "v2.28.9-sm90", &host, &e, &err) == 0) {
        if (!e.ld_preload || e.uncovered.n + e.jit_only.n > host.n)
            abort();
        cf_nccl_env_release(&e);
    }
    cf_error_clear(&err);
    return 0;
}
