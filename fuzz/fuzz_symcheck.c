/* libFuzzer target for the symbol check (`inspect --undefined`): the input is
 * opened as an ELF object and checked as a two-object closure (itself needing
 * a second copy of itself), so its hash tables (.gnu.hash bloom, buckets and
 * chains; .hash), relocation tables, symbol versions and version
 * requirements are all read from untrusted bytes, as references and as
 * definitions. */
#include <stdint.h>
#include <string.h>

#include "cclforge/elf.h"
#include "cclforge/ldso.h"
#include "cclforge/symcheck.h"
#include "fuzz_guard.h"

static void fuzz_one(const uint8_t *data, size_t size)
{
    struct cf_elf *elf = NULL;
    if (cf_elf_open_memory(data, size, "input.so", &elf, NULL) != 0)
        return;
    const struct cf_elf_dynamic *d = cf_elf_get_dynamic(elf);
    char needed0[] = "input.so", needed1[] = "libdep.so";
    char *soname = d && d->soname ? (char *)d->soname : NULL;
    struct cf_ldso_node nodes[2];
    memset(nodes, 0, sizeof nodes);
    nodes[0].needed = needed0;
    nodes[0].parent = -1;
    nodes[0].object = 0;
    /* The second object answers to the first verneed file name, if any, so
     * the version check has a provider to read. */
    const struct cf_elf_verneed *needs;
    size_t n_needs = 0;
    if (cf_elf_verneeds(elf, &needs, &n_needs, NULL) == 0 && n_needs > 0 && needs[0].file)
        nodes[1].needed = (char *)needs[0].file;
    else
        nodes[1].needed = needed1;
    nodes[1].parent = 0;
    nodes[1].depth = 1;
    nodes[1].object = 1;
    struct cf_ldso_object objects[2];
    memset(objects, 0, sizeof objects);
    objects[0].path = objects[0].file = needed0;
    objects[0].soname = soname;
    objects[0].node = 0;
    objects[0].loader = -1;
    objects[1].path = objects[1].file = needed1;
    objects[1].soname = soname;
    objects[1].node = 1;
    objects[1].loader = 0;
    struct cf_ldso_result res;
    memset(&res, 0, sizeof res);
    res.nodes = nodes;
    res.n_nodes = 2;
    res.objects = objects;
    res.n_objects = 2;
    struct cf_elf *elves[2] = { elf, elf };
    struct cf_symcheck_result out;
    if (cf_symcheck_run_opened(&res, elves, &out, NULL) == 0)
        cf_symcheck_result_release(&out);
    cf_elf_close(elf);
}

FUZZ_GUARDED_TARGET(fuzz_one)
