/* libFuzzer target for what the launch module reads from untrusted sources: the
 * launcher variables of the environment, and the rendezvous wire format (message
 * headers and the client hello). Properties: a detected rank lies inside its world; a
 * header that parses names a known type within its bound; a hello re-encodes to the
 * same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/launch.h"
#include "cclforge/strbuf.h"
#include "launch/launch_internal.h"

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
    if (size >= LAUNCH_HEADER_LEN) {
        int type;
        uint32_t len;
        if (cf_launch_header_parse(data, 4096, &type, &len) == 0 &&
            !strchr("SCWRD", type))
            abort();
        if (cf_launch_header_parse(data, 4096, &type, &len) == 0 && type == 'D' && len > 4096)
            abort();
    }
    struct launch_client_hello h;
    if (cf_launch_client_hello_parse(data, size, &h) == 0) {
        unsigned char again[LAUNCH_CLIENT_HELLO_LEN];
        cf_launch_client_hello_put(again, &h);
        if (size != LAUNCH_CLIENT_HELLO_LEN || memcmp(again, data, size))
            abort();
    }
    return 0;
}
