/* libcrypto picks its SHA-NI / AVX2 digest code from a CPU probe,
 * OPENSSL_cpuid_setup, which a static libcrypto on x86-64 runs from the
 * .init section (crypto/x86_64cpuid.pl). The release's link (zig cc) gives
 * .init no DT_INIT entry, so nothing ever ran it there and every digest took
 * the generic code: twice the CPU of a wheel verify. The probe is idempotent
 * (libcrypto keeps its own guard), so running it again where .init already
 * did costs nothing. A shared libcrypto runs it when it is loaded. */
#include "cclforge/fs.h"

#ifdef CCLFORGE_STATIC_LIBCRYPTO
void OPENSSL_cpuid_setup(void);

void cf_crypto_cpu_probe(void)
{
    OPENSSL_cpuid_setup();
}
#else
void cf_crypto_cpu_probe(void)
{
}
#endif
