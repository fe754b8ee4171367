/* Private interface between the bridge's files: the plan's inputs
 * (bridge_plan.c), its headers, defines and their proof (bridge_headers.c), its
 * installed layout (bridge_layout.c), the output's check in that layout
 * (bridge_inspect.c), the build (bridge_build.c), its object cache
 * (bridge_objcache.c) and the wheel. */
#ifndef CCLFORGE_BRIDGE_INTERNAL_H
#define CCLFORGE_BRIDGE_INTERNAL_H

#include "cclforge/bridge.h"

/* torch_gpu_link is {c10_<gpu>, torch_<gpu>}; the comm library is comm->link_name. */
enum { CF_BRIDGE_LINK_C10_GPU, CF_BRIDGE_LINK_TORCH_GPU, CF_BRIDGE_LINK_COMM };

/* The nccl.h that goes with the NCCL library that will be linked: one source gives both. */
struct cf_bridge_comm_source {
    char *include;
    char *lib_dir;
    char *from;
    char *site_rel; /* its lib dir relative to site-packages ("nvidia/nccl/lib") when it is pip's, else NULL */
};

void cf_bridge_item_set(struct cf_bridge_item *it, const char *value, const char *from);
void cf_bridge_item_push(struct cf_bridge_item **v, size_t *n, const char *value, const char *from);
void cf_bridge_problem(struct cf_bridge_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cf_bridge_note(struct cf_bridge_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The plan's library with this role (CF_BRIDGE_LINK_*), or NULL. */
const struct cf_bridge_lib *cf_bridge_lib_role(const struct cf_bridge_plan *p, int role);

/* bridge_headers.c: flavour of torch's headers, include order, define set. */
void cf_bridge_plan_headers(const struct cf_bridge_opts *o, struct cf_bridge_plan *p,
                            const struct cf_bridge_comm_source *cs);
/* Runs the preprocessor over the source with the final flags; fills headers[],
 * proof, proof_files; checks nccl.h against the library and libtorch. */
void cf_bridge_prove_headers(struct cf_bridge_plan *p);
/* Reads the preprocessor's answers into headers[] and proof_files: `tree` is
 * -H's output (". /path" per header read, dots for depth), `macros` -dM's
 * (NULL when the run failed: no versions). Untrusted text: any bytes. */
void cf_bridge_read_proof(struct cf_bridge_plan *p, const char *tree, const char *macros);
/* The -D and -isystem flags of a compile (shared by the proof and the build). */
void cf_bridge_preprocessor_flags(const struct cf_bridge_plan *p, struct strvec *argv);
/* The ABI guard's extra -D flags: the toolkit libraries and version it records. */
void cf_bridge_guard_flags(const struct cf_bridge_plan *p, struct strvec *argv);

/* bridge_layout.c: package path, RPATH entries and what they reach, the
 * sonames both the vendor directory and the importing torch provide. */
/* The user's --rpath entries, checked (called before the libraries are
 * resolved: with --into they locate the vendor directory). */
void cf_bridge_plan_user_rpath(const struct cf_bridge_opts *o, struct cf_bridge_plan *p);
void cf_bridge_plan_layout(const struct cf_bridge_opts *o, struct cf_bridge_plan *p,
                           const struct cf_bridge_comm_source *cs);
/* Lays out the installed site-packages under stage: <pkg dir>/<output> (a link
 * to `output`), torch (the importing torch), the package's RPATH directories.
 * Returns the staged extension's path (caller frees) or NULL with err. */
char *cf_bridge_stage_layout(const struct cf_bridge_plan *p, const char *output, const char *stage, cf_error *err);

void cf_bridge_duplicates_free(struct cf_bridge_duplicate *v, size_t n);

/* bridge_toolkit.c: the libraries the host's toolkit provides (--toolkit-lib
 * and the defaults), the toolkit's version; called once the libraries are resolved. */
struct cf_survey;
void cf_bridge_plan_toolkit_libs(const struct cf_bridge_opts *o, struct cf_bridge_plan *p, const struct cf_survey *sv);
int cf_bridge_is_toolkit_lib(const struct cf_bridge_plan *p, const char *soname);
/* The toolkit's directories holding them, ':'-joined (the layout check's
 * LD_LIBRARY_PATH, as a host with the toolkit has it); NULL when none. */
char *cf_bridge_toolkit_search_path(const struct cf_bridge_plan *p);

/* bridge_objcache.c: the object cache. The files a single-source compile
 * (argv: "... -c SOURCE -o OBJECT") reads, source first, from the compiler's
 * own dependency rule (argv less -c and -o, with -M; the rule's file a fresh
 * temporary in tmp_dir); -1 with err when the compiler cannot say. */
int cf_bridge_files_read(const struct strvec *argv, const char *source, const char *tmp_dir, struct strvec *files,
                         cf_error *err);
/* The prerequisites of that rule, added to files once each; how many names
 * the rule has, -1 when the text is no such rule. Untrusted text: any bytes. */
int cf_bridge_read_depfile(const char *text, size_t len, struct strvec *files);
/* The key of that compile: the compiler (its path and version), argv (the
 * source named "<source>", the output "-"), the sha256 of every file in files
 * (files->v[0], the source, by its content alone). NULL when one cannot be read. */
char *cf_bridge_object_key(const char *compiler, const struct strvec *argv, const char *source,
                           const struct strvec *files);
/* The entry's object written to object: 1; 0 when there is no entry or it is
 * damaged (its bytes do not match the sha256 stored with them): a miss; -1
 * with err when object cannot be written. */
int cf_bridge_objcache_get(const char *entry, const char *object, cf_error *err);
/* Stores object as entry (made atomically, with its sha256). */
int cf_bridge_objcache_put(const char *entry, const char *object, cf_error *err);

/* bridge_plan.c: a directory's shared objects by soname ("libc10.so" -> path). */
void cf_bridge_sonames_in(const char *dir, struct strvec *sonames, struct strvec *paths);

#endif
