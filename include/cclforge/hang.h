/* `cclforge hang`: which rank stopped, at which collective, from every rank's
 * PyTorch Flight Recorder dump (pickle or JSON, read by src/hang/ through the
 * safe reader of cclforge/pickle.h), with the hosts and GPUs of the ranks when
 * a document or a hostlist says them.
 *
 * The model is filled in three steps: cf_hang_read (the dumps, one
 * cf_hang_dump each: refused ones keep their reason), cf_hang_map_hosts (where
 * each rank ran), cf_hang_analyse (groups, alignment by sequence number, the
 * first divergence of each group and every later one). Its JSON
 * (cclforge.hang/1), writer and reader live in src/hang/hang_doc.c. */
#ifndef CCLFORGE_HANG_H
#define CCLFORGE_HANG_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CF_HANG_SCHEMA "cclforge.hang/1"
/* ranks a job may have: past any launcher's world */
#define CF_HANG_RANKS_MAX (1 << 24)
/* the collectives of each group a rank's document and page keep: its last */
#define CF_HANG_DOC_LAST 8

/* one collective or p2p operation as a rank recorded it; its strings are the
 * result's pool's (cf_hang_intern), equal ones one pointer */
struct cf_hang_entry {
    int64_t record_id;
    int64_t seq;            /* collective_seq_id, or p2p_seq_id when p2p */
    int is_p2p;
    int64_t pg_id;          /* the process's own number of the group (-1 unknown) */
    const char *group;            /* process_group[0]: the group's name */
    const char *desc;             /* process_group[1] */
    const char *op;               /* "all_reduce" (profiling_name after its "lib:") */
    const char *profiling_name;
    const char *state;            /* scheduled, started, completed (NULL unknown) */
    int retired;            /* -1 unknown */
    const char *in_sizes, *out_sizes;   /* as "[[4, 2]]" */
    const char *in_dtypes, *out_dtypes; /* as "Float,Float" */
    int64_t in_numel, out_numel;  /* of the first tensor; -1 unknown */
    int64_t time_created_ns;      /* 0 unknown */
    double duration_ms;           /* < 0 unknown */
    const char *where;            /* the user's source line "file:line (func)", NULL unknown */
    const char *stack;            /* every frame, one a line */
};

/* a group's counters as the rank's pg_status said them (-1 unknown) */
struct cf_hang_pg_status {
    char *group;            /* the name the entries give its pg_id */
    int64_t last_enqueued, last_started, last_completed;
};

/* a group as the rank's pg_config described it */
struct cf_hang_pg_config {
    char *key;              /* the dict's key (gloo: "") */
    char *name, *desc;
    int *ranks; size_t n_ranks; /* n_ranks 0 with ranks NULL: unreadable */
};

/* one rank's dump */
struct cf_hang_dump {
    char *path;
    int rank;               /* -1 when neither name nor dump says it */
    char *format;           /* "pickle" or "json" */
    char *refused;          /* why the dump was not read; NULL read */
    char *version;          /* NULL absent */
    int version_known;      /* one of the versions the reader lists */
    char *host;             /* from the file name, a document or --hosts; NULL unknown */
    int gpu;                /* the local rank's GPU, -1 unknown */
    struct cf_hang_entry *entries; size_t n_entries;
    size_t n_recorded;      /* entries the dump held (a saved document keeps only the last ones) */
    struct cf_hang_pg_status *status; size_t n_status;
    struct cf_hang_pg_config *config; size_t n_config;
    int64_t first_record_id; /* > 0: the ring wrapped, records before it were lost */
};

enum cf_hang_kind {
    CF_HANG_NOT_ENTERED,    /* a rank never entered the collective */
    CF_HANG_OTHER_OP,       /* a rank issued another operation at this number */
    CF_HANG_SIZES,
    CF_HANG_DTYPES,
    CF_HANG_STATE,          /* some completed, others did not */
    CF_HANG_KIND_COUNT
};
const char *cf_hang_kind_name(enum cf_hang_kind k);

/* one sequence number where the group's ranks disagree */
struct cf_hang_divergence {
    int64_t seq;
    int is_p2p;
    enum cf_hang_kind kind;
    char *op;               /* what most ranks that entered it issued */
    char *why;              /* one sentence */
    int *ranks_in; size_t n_in;         /* ranks that entered it as the majority did */
    int *ranks_odd; size_t n_odd;       /* ranks that did otherwise or never entered it */
    char *where;            /* the user's source line of the collective */
    int64_t since_ns;       /* when the first rank entered it; 0 unknown */
};

struct cf_hang_group {
    char *name, *desc;
    int *ranks; size_t n_ranks;         /* members, ascending */
    char *membership;                   /* "pg_config", "entries" or "world" */
    int *absent; size_t n_absent;       /* members without a readable dump */
    int64_t known_from;                 /* the first number every dump still holds (1: all) */
    int64_t last_seq;                   /* the highest number any member recorded */
    struct cf_hang_divergence *div; size_t n_div; /* in order: div[0] is the first */
};

struct cf_hang_options {
    const char *prefix;          /* file names: what precedes the rank (and host) */
    const char *hosts;           /* a Slurm hostlist, with ranks_per_node */
    int ranks_per_node;
};

struct cf_hang_pool;

struct cf_hang_result {
    struct cf_hang_pool *pool;                   /* the entries' strings */
    struct cf_hang_dump *dumps; size_t n_dumps;  /* every file considered, rank order */
    struct strvec notes;                         /* what the reader and the analysis want said */
    struct cf_hang_group *groups; size_t n_groups;
    int world;                                   /* ranks known to exist */
    int n_refused;
};

/* Reads every dump of paths (files, or directories whose files are read when
 * their content is a pickle or JSON). -1 only on a usage error or when no
 * dump at all was found; a corrupt or refused dump is kept with its reason. */
int cf_hang_read(const char *const *paths, size_t n, const struct cf_hang_options *opt, struct cf_hang_result *r,
                 cf_error *err);
/* Reads one dump's bytes (format detected) into d (path and rank already set),
 * its strings into r's pool. */
void cf_hang_read_dump(const void *data, size_t len, struct cf_hang_result *r, struct cf_hang_dump *d);
/* The pool's copy of s[0..len) (NULL stays NULL). */
const char *cf_hang_intern(struct cf_hang_result *r, const char *s, size_t len);
void cf_hang_pool_free(struct cf_hang_pool *p);
/* The hosts and GPUs of the ranks from a Slurm hostlist, ranks_per_node ranks a host. */
int cf_hang_hosts_from_list(struct cf_hang_result *r, const char *hostlist, int ranks_per_node, cf_error *err);
/* The hosts and GPUs of the ranks from a saved smoke or doctor --gather document. */
int cf_hang_hosts_from_doc(struct cf_hang_result *r, const char *json_text, size_t len, cf_error *err);
/* The groups and their divergences. */
void cf_hang_analyse(struct cf_hang_result *r);
/* 0 consistent, 1 a divergence or a rank without a dump, 2 nothing readable */
int cf_hang_exit_code(const struct cf_hang_result *r);
/* The first divergence of all (the group whose first divergence began first), NULL none. */
const struct cf_hang_divergence *cf_hang_first(const struct cf_hang_result *r, const struct cf_hang_group **group);
/* the dump of rank, NULL none */
const struct cf_hang_dump *cf_hang_dump_of(const struct cf_hang_result *r, int rank);
/* The hosts of the odd ranks of the first divergence, as a Slurm hostlist; NULL unknown. */
char *cf_hang_exclude(const struct cf_hang_result *r);
void cf_hang_release(struct cf_hang_result *r);

/* The torch Python finds (python NULL: python3): its version and how it was
 * found, NULL none. */
char *cf_hang_torch_version(const char *python, char **found_by);
/* The variables a job exports to leave dumps on a timeout, for that torch
 * (NULL: the current names), as shell lines. */
void cf_hang_env_text(const char *torch_version, struct strbuf *out);

/* cclforge.hang/1 (cJSON *, typed void *) */
void *cf_hang_to_json(const struct cf_hang_result *r);
/* The strict reader of a saved document into r (for `cclforge report`). */
int cf_hang_from_json(const void *json, struct cf_hang_result *r, cf_error *err);
/* The verdict alone: its lines (the text's and the page's first). */
void cf_hang_verdict(const struct cf_hang_result *r, struct strbuf *out);
/* The text report, verdict first. */
void cf_hang_text(const struct cf_hang_result *r, struct strbuf *out);

#ifdef __cplusplus
}
#endif
#endif
