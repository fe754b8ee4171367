/* libFuzzer target for the libtorch ABI reader: machine code and relocations of
 * an untrusted ELF (vtable slots, PLT stubs, %rip-relative constants). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/elf.h"
#include "cclforge/libtorch_abi.h"
#include "fuzz_guard.h"

static void fuzz_one(const uint8_t *data, size_t size)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open_memory(data, size, "fuzz-input", &elf, &err) == 0) {
        struct cf_libtorch_abi abi;
        cf_libtorch_abi_of_elf(elf, &abi);
        /* every fact is known or says why not */
        if (!abi.options_from || !abi.process_group_from || !abi.nccl_from)
            abort();
        if ((abi.nccl_code != 0) != (abi.nccl_version != NULL))
            abort();
        cf_libtorch_abi_release(&abi);
        cf_elf_close(elf);
    }
    cf_error_clear(&err);
}

FUZZ_GUARDED_TARGET(fuzz_one)
