/* libcrypto's CPU probe, run before the first digest instead of at every
 * start-up. Linked statically on x86-64, libcrypto calls
 * OPENSSL_cpuid_setup from .init (crypto/x86_64cpuid.pl), and its cpuid
 * instructions are a hypervisor exit each in a VM: ~50 us per process,
 * 12 % of `cclforge --version` on this project's development VM, for
 * commands that mostly hash nothing. The link wraps that call
 * (-Wl,--wrap=OPENSSL_cpuid_setup, CMakeLists.txt) into the no-op below,
 * and cf_crypto_ready() runs the real probe once, so the digests still take
 * their SHA-NI / AVX2 paths (until then OPENSSL_ia32cap_P is zero, which
 * would only select the slower generic code, never a wrong result). */
#include "cclforge/fs.h"

#ifdef CCLFORGE_LAZY_OPENSSL_CPUID
#include <pthread.h>

void __real_OPENSSL_cpuid_setup(void);
void __wrap_OPENSSL_cpuid_setup(void);

/* Run from .init at every start: placed beside main and _start (the section
 * gcc gives main), not wherever this file's code lands, so that calling it
 * costs no page fault of its own. */
__attribute__((section(".text.startup"))) void __wrap_OPENSSL_cpuid_setup(void)
{
}

static void setup(void)
{
    __real_OPENSSL_cpuid_setup();
}

void cf_crypto_ready(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, setup);
}
#else
void cf_crypto_ready(void)
{
}
#endif
