/* `wheel verify --install`'s abi check of a bridge: the sizes of
 * ProcessGroupNCCL and its Options in the bridge's headers (the ABI facts
 * cclforge's ABI guard exports as cclforge_abi_info, read at import) against
 * the libtorch file the import really mapped, read from that file's machine
 * code (cclforge/libtorch_abi.h), and the NCCL of nccl.h, of the library
 * loaded and of libtorch's ProcessGroupNCCL. Any difference fails; a bridge
 * without the facts (not built by cclforge) is a warning saying what is not
 * known. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/json.h"
#include "cclforge/libtorch_abi.h"
#include "cclforge/strbuf.h"
#include "pkg/wheel_verify_internal.h"

/* a string of the facts, NULL when absent or empty */
static const char *str(const cJSON *o, const char *key)
{
    const char *v = cf_json_str(o, key);
    return v && *v ? v : NULL;
}

void cf_wheel_bridge_abi_check(struct cf_wheel_verify_result *res, const cJSON *abi)
{
    long oh = (long)cf_json_num(abi, "options_size_headers", -1),
         ph = (long)cf_json_num(abi, "process_group_size_headers", -1);
    const char *format = cf_json_str(abi, "format");
    if (abi && format) {
        cf_wheel_add_check(res, "abi", 0, "the bridge's cclforge_abi_info is in a format this cclforge does not "
                                          "read ('%.16s'): rebuild it with this cclforge",
                           format);
        return;
    }
    if (!abi || oh < 0 || ph < 0) {
        cf_wheel_add_check(res, "abi", -1, "warning: no ABI facts (the module has no cclforge_abi_info symbol: it "
                                           "was not built by `cclforge bridge build`, which links its ABI guard into "
                                           "every bridge). What it means: the sizes of ProcessGroupNCCL and its "
                                           "Options this bridge was compiled with are unknown, so nothing here "
                                           "checks them against the libtorch it loads, and a mismatch would "
                                           "corrupt memory at run time instead of failing here. Build it with "
                                           "`cclforge bridge build --source ...` (or cclforge.build, or the CMake "
                                           "function) to have them checked");
        return;
    }
    const char *file = str(abi, "libtorch_file");
    struct cf_libtorch_abi lib;
    memset(&lib, 0, sizeof lib);
    lib.options_size = lib.process_group_size = -1;
    cf_error err = CF_ERROR_INIT;
    if (file && cf_libtorch_abi_read(file, NULL, &lib, &err) < 0) {
        lib.options_from = cf_strdup(cf_error_message(&err));
        lib.options_size = lib.process_group_size = -1;
    }
    cf_error_clear(&err);
    const char *nh = str(abi, "nccl_header"), *nr = str(abi, "nccl_runtime");
    struct strbuf why = STRBUF_INIT;
    if (!file)
        cf_sb_addf(&why, "; the bridge could not name the libtorch it loaded");
    else if (lib.options_size < 0 || lib.process_group_size < 0)
        cf_sb_addf(&why, "; %s: sizes unknown (%s)", file, lib.options_from ? lib.options_from : "?");
    if (lib.options_size >= 0 && lib.options_size != oh)
        cf_sb_addf(&why, "; ProcessGroupNCCL::Options is %ld bytes in the bridge's headers but %ld in %s", oh,
                   lib.options_size, file);
    if (lib.process_group_size >= 0 && lib.process_group_size != ph)
        cf_sb_addf(&why, "; ProcessGroupNCCL is %ld bytes in the bridge's headers but %ld in %s", ph,
                   lib.process_group_size, file);
    if (nh && nr && strcmp(nh, nr) != 0)
        cf_sb_addf(&why, "; nccl.h was NCCL %s but the library loaded is %s", nh, nr);
    if (nh && lib.nccl_version && strcmp(nh, lib.nccl_version) != 0)
        cf_sb_addf(&why, "; nccl.h was NCCL %s but the loaded libtorch's ProcessGroupNCCL was compiled with %s", nh,
                   lib.nccl_version);
    int known = file && lib.options_size >= 0 && lib.process_group_size >= 0;
    if (why.len)
        cf_wheel_add_check(res, "abi", 0, "%s (nccl.h %s, library %s, libtorch %s): rebuild the bridge against this "
                                          "torch with `cclforge bridge build`, whose plan checks all three",
                           why.buf + 2, nh ? nh : "?", nr ? nr : "?", lib.nccl_version ? lib.nccl_version : "?");
    else
        cf_wheel_add_check(res, "abi", known ? 1 : -1,
                           "ProcessGroupNCCL::Options %ld and ProcessGroupNCCL %ld bytes in the bridge's headers and "
                           "in %s; NCCL %s in nccl.h, the library loaded%s",
                           oh, ph, file, nh ? nh : "?", lib.nccl_version ? " and libtorch's ProcessGroupNCCL" : "");
    cf_sb_release(&why);
    cf_libtorch_abi_release(&lib);
}
