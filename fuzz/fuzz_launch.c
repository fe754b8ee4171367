/* libFuzzer target for the launcher variables of the environment, the first thing
 * the launch module reads from an untrusted source. Property: a detected rank lies
 * inside its world. The rendezvous wire format is fuzz_launch_handshake.c's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/launch.h"
#include "cclforge/strbuf.h"

static void check_launchers(const char *text)
{
    struct strvec env = STRVEC_INIT;
    cf_strvec_split(&env, text, "\n", 0);
    struct cf_launch_info le;
    cf_error err = CF_ERROR_INIT;
    int rc = cf_launch_detect(cf_strvec_argv(&env), &le, &err);
    if (rc == 1 && (le.world < 1 || le.rank < 0 || le.rank >= le.world || !le.launcher || le.master_port < 0 ||
                    le.master_port > 65535))
        abort();
    if (rc < 0 && !err.message)
        abort();
    struct cf_launch_secret s;
    if (rc == 1)
        cf_launch_secret_for(&le, cf_strvec_argv(&env), &s, &err);
    cf_error_clear(&err);
    cf_strvec_clear(&env);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = cf_strndup((const char *)data, size);
    check_launchers(text);
    free(text);
    return 0;
}
