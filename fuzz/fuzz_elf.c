/* libFuzzer target for the ELF reader: open_memory, then every accessor, the
 * dynamic symbols with their versions, verdefs and verneeds, the symbols the
 * dynamic relocations name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/elf.h"
#include "fuzz_guard.h"

/* Touches every byte of a string so ASan checks it lies in bounds. */
static size_t touch(const char *s)
{
    return s ? strlen(s) : 0;
}

static size_t walk(struct cf_elf *elf)
{
    size_t sum = 0;
    const struct cf_elf_header *h = cf_elf_get_header(elf);
    sum += touch(cf_elf_machine_name(h->machine)) + touch(cf_elf_kind_name(h));
    const struct cf_elf_dynamic *d = cf_elf_get_dynamic(elf);
    for (size_t i = 0; i < d->n_needed; i++)
        sum += touch(d->needed[i]);
    sum += touch(d->soname) + touch(d->rpath) + touch(d->runpath) + touch(d->interp);

    cf_error err = CF_ERROR_INIT;
    for (size_t i = 0; i < cf_elf_section_count(elf); i++) {
        const struct cf_elf_section *s = cf_elf_section_at(elf, i);
        sum += touch(s->name);
        const uint8_t *bytes;
        size_t len;
        if (cf_elf_section_bytes(elf, s, &bytes, &len, &err) == 0 && len)
            sum += bytes[0] + bytes[len - 1];
        cf_error_clear(&err);
    }
    for (size_t i = 0; i < cf_elf_segment_count(elf); i++)
        sum += cf_elf_segment_at(elf, i)->type;
    if (cf_elf_section_by_name(elf, ".dynstr"))
        sum++;

    const struct cf_elf_symbol *syms;
    size_t n;
    if (cf_elf_dynsyms(elf, &syms, &n, &err) == 0)
        for (size_t i = 0; i < n; i++)
            sum += touch(syms[i].name) + touch(syms[i].version) + touch(syms[i].version_file);
    cf_error_clear(&err);
    const char *const *defs;
    if (cf_elf_verdefs(elf, &defs, &n, &err) == 0)
        for (size_t i = 0; i < n; i++)
            sum += touch(defs[i]);
    cf_error_clear(&err);
    const struct cf_elf_verneed *needs;
    if (cf_elf_verneeds(elf, &needs, &n, &err) == 0)
        for (size_t i = 0; i < n; i++) {
            sum += touch(needs[i].file);
            for (size_t j = 0; j < needs[i].n_versions; j++)
                sum += touch(needs[i].versions[j]) + (size_t)needs[i].weak[j];
        }
    cf_error_clear(&err);
    const uint8_t *marks;
    if (cf_elf_relocated_symbols(elf, &marks, &n, &err) == 0)
        for (size_t i = 0; i < n; i++)
            sum += marks[i];
    cf_error_clear(&err);
    return sum;
}

static void fuzz_one(const uint8_t *data, size_t size)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open_memory(data, size, "fuzz-input", &elf, &err) == 0) {
        volatile size_t sink = walk(elf);
        (void)sink;
        cf_elf_close(elf);
    } else if (!strstr(cf_error_message(&err), "fuzz-input")) {
        abort(); /* every fault must name the file */
    }
    cf_error_clear(&err);
}

FUZZ_GUARDED_TARGET(fuzz_one)
