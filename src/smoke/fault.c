/* The fault switch's process-ending actions (CCLFORGE_SMOKE_FAULT, for tests): fired
 * in a collective (one_test.c), before the backend starts or where MPI_Finalize runs. */
#include <signal.h>
#include <unistd.h>

#include "smoke/smoke_internal.h"

void cf_smoke_fault_fire(enum cf_smoke_fault_action action)
{
    switch (action) {
    case CF_FAULT_ABORT:
        raise(SIGABRT);
        _exit(134);
    case CF_FAULT_EXIT:
        _exit(3);
    case CF_FAULT_HANG:
        for (;;)
            pause();
    default:
        break;
    }
}
