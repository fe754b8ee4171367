/* Reads of a file mapping that cannot kill the process: when the file is
 * truncated while it is mapped (a package upgrade rewriting a library under a
 * running `inspect`), touching a page past its new end raises SIGBUS. The
 * handler maps a zero page over the faulting one and marks the mapping, so the
 * read goes on (over zeros, which every parser treats as any malformed input)
 * and the caller reports the file as changed (cf_mmap_faulted). Faults outside
 * our mappings go to the handler that was there before, or kill as usual.
 *
 * A signal handler sees only globals: the table of live mappings below is
 * process-wide state (the only such state in the library), written with
 * atomics so the handler reads it safely from any thread. */
#include "cclforge/fs.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { GUARD_SLOTS = 1024 };
#define CLAIMING ((uintptr_t)1)

struct guard_slot {
    _Atomic uintptr_t start; /* 0: free, 1: being claimed, else the mapping's start */
    _Atomic size_t len;
    _Atomic int faulted;
};

static struct guard_slot slots[GUARD_SLOTS];
static struct sigaction previous;
static size_t page_size;

static void chain(int sig, siginfo_t *info, void *uc)
{
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
        previous.sa_sigaction(sig, info, uc);
        return;
    }
    if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
        return;
    }
    /* Default action: restore it; returning re-runs the faulting access. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &dfl, NULL);
}

static void on_sigbus(int sig, siginfo_t *info, void *uc)
{
    uintptr_t addr = (uintptr_t)info->si_addr;
    for (size_t i = 0; i < GUARD_SLOTS; i++) {
        uintptr_t start = atomic_load(&slots[i].start);
        if (start <= CLAIMING || addr < start || addr - start >= atomic_load(&slots[i].len))
            continue;
        uintptr_t page = addr & ~(uintptr_t)(page_size - 1);
        /* The raw system call: async-signal-safe on Linux whatever libc says. */
        long r = syscall(SYS_mmap, (void *)page, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                         0L);
        if (r == -1)
            break;
        atomic_store(&slots[i].faulted, 1);
        return;
    }
    chain(sig, info, uc);
}

static int is_ours(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_sigbus;
}

/* Puts our handler in front, chaining to what was there (once per process;
 * cf_mmap_guard_reinstall again after someone else set theirs). */
static void install(void)
{
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    struct sigaction current;
    if (sigaction(SIGBUS, NULL, &current) == 0 && is_ours(&current))
        return;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &old) == 0 && !is_ours(&old))
        previous = old; /* never ourselves: a racing install must not make us chain to us */
}

static pthread_once_t installed = PTHREAD_ONCE_INIT;

void cf_mmap_guard_reinstall(void)
{
    install();
}

int cf_mmap_guard_add(const void *start, size_t len)
{
    if (!start || !len)
        return -1;
    pthread_once(&installed, install);
    for (int i = 0; i < GUARD_SLOTS; i++) {
        uintptr_t expect = 0;
        if (!atomic_compare_exchange_strong(&slots[i].start, &expect, CLAIMING))
            continue;
        /* Claimed: the length and flag first, then publish the start the handler keys on. */
        atomic_store(&slots[i].len, len);
        atomic_store(&slots[i].faulted, 0);
        atomic_store(&slots[i].start, (uintptr_t)start);
        return i;
    }
    return -1; /* table full: this mapping is unguarded (as before) */
}

int cf_mmap_guard_faulted(int slot)
{
    return slot >= 0 && slot < GUARD_SLOTS && atomic_load(&slots[slot].faulted);
}

void cf_mmap_guard_remove(int slot)
{
    if (slot >= 0 && slot < GUARD_SLOTS)
        atomic_store(&slots[slot].start, 0);
}
