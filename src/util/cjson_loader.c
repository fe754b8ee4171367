/* cJSON, loaded the first time a command builds or reads JSON, in the build
 * from source (Debian ships cJSON shared only). Linked, libcjson.so.1 was
 * opened, mapped and relocated at every start-up, ~0.03 ms of every
 * `inspect` and `--version` (docs/bench.md, issue 30), though most runs
 * print text. The release links the static cJSON of scripts/dist-deps.sh and
 * compiles only the empty cf_json_ready.
 *
 * Each cJSON function cclforge calls is defined here as cf_cJSON_<name> with
 * cJSON's own prototype, and the link makes cJSON_<name> an alias of it
 * (CMakeLists.txt reads the names from the list below: -Wl,--defsym), so
 * the callers keep cJSON's names and the library exports only cf_ ones. Each
 * function's address is looked up once and kept (rule 4's listed exception:
 * process-wide by nature, as the loaded library is).
 *
 * Without libcjson.so.1 the run ends as the dynamic loader would have ended
 * it at start-up, with its message and status 127: the callers, written
 * against a linked cJSON, have no failure path for "no JSON library". */
#include "cclforge/json.h"

#ifdef CCLFORGE_CJSON_LOADED
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define CJSON_SONAME "libcjson.so.1"

/* X(return type, name without cJSON_, parameters, arguments), V(name,
 * parameters, arguments) for the void ones: one per line, `X(` or `V(`
 * first, for CMakeLists.txt's reader. A cJSON function called anywhere
 * else needs its line here: without it the build from source fails to link
 * ("undefined reference to cJSON_..."). */
#define CF_CJSON_FUNCTIONS(X, V) \
    X(cJSON *, AddArrayToObject, (cJSON *const object, const char *const name), (object, name)) \
    X(cJSON *, AddBoolToObject, (cJSON *const object, const char *const name, const cJSON_bool boolean), (object, name, boolean)) \
    X(cJSON_bool, AddItemReferenceToObject, (cJSON * object, const char *string, cJSON *item), (object, string, item)) \
    X(cJSON_bool, AddItemToArray, (cJSON * array, cJSON *item), (array, item)) \
    X(cJSON_bool, AddItemToObject, (cJSON * object, const char *string, cJSON *item), (object, string, item)) \
    X(cJSON *, AddNullToObject, (cJSON *const object, const char *const name), (object, name)) \
    X(cJSON *, AddNumberToObject, (cJSON *const object, const char *const name, const double number), (object, name, number)) \
    X(cJSON *, AddObjectToObject, (cJSON *const object, const char *const name), (object, name)) \
    X(cJSON *, AddStringToObject, (cJSON *const object, const char *const name, const char *const string), (object, name, string)) \
    X(cJSON_bool, Compare, (const cJSON *const a, const cJSON *const b, const cJSON_bool case_sensitive), (a, b, case_sensitive)) \
    X(cJSON *, CreateArray, (void), ()) \
    X(cJSON *, CreateBool, (cJSON_bool boolean), (boolean)) \
    X(cJSON *, CreateNull, (void), ()) \
    X(cJSON *, CreateNumber, (double num), (num)) \
    X(cJSON *, CreateObject, (void), ()) \
    X(cJSON *, CreateString, (const char *string), (string)) \
    V(Delete, (cJSON * item), (item)) \
    V(DeleteItemFromObject, (cJSON * object, const char *string), (object, string)) \
    V(DeleteItemFromObjectCaseSensitive, (cJSON * object, const char *string), (object, string)) \
    X(cJSON *, DetachItemViaPointer, (cJSON * parent, cJSON *const item), (parent, item)) \
    X(cJSON *, Duplicate, (const cJSON *item, cJSON_bool recurse), (item, recurse)) \
    V(free, (void *object), (object)) \
    X(int, GetArraySize, (const cJSON *array), (array)) \
    X(const char *, GetErrorPtr, (void), ()) \
    X(cJSON *, GetObjectItem, (const cJSON *const object, const char *const string), (object, string)) \
    X(cJSON *, GetObjectItemCaseSensitive, (const cJSON *const object, const char *const string), (object, string)) \
    X(char *, GetStringValue, (const cJSON *const item), (item)) \
    X(cJSON_bool, IsArray, (const cJSON *const item), (item)) \
    X(cJSON_bool, IsBool, (const cJSON *const item), (item)) \
    X(cJSON_bool, IsNull, (const cJSON *const item), (item)) \
    X(cJSON_bool, IsNumber, (const cJSON *const item), (item)) \
    X(cJSON_bool, IsObject, (const cJSON *const item), (item)) \
    X(cJSON_bool, IsString, (const cJSON *const item), (item)) \
    X(cJSON_bool, IsTrue, (const cJSON *const item), (item)) \
    X(cJSON *, Parse, (const char *value), (value)) \
    X(cJSON *, ParseWithLength, (const char *value, size_t buffer_length), (value, buffer_length)) \
    X(char *, Print, (const cJSON *item), (item)) \
    X(char *, PrintUnformatted, (const cJSON *item), (item))

#define AS_INDEX(ret, name, params, args) CJSON_##name,
#define AS_INDEX_VOID(name, params, args) CJSON_##name,
enum cjson_function { CF_CJSON_FUNCTIONS(AS_INDEX, AS_INDEX_VOID) CJSON_FUNCTION_COUNT };

#define AS_NAME(ret, name, params, args) "cJSON_" #name,
#define AS_NAME_VOID(name, params, args) "cJSON_" #name,
/* the names held in the table, not pointed to: nothing for ld.so to relocate */
static const char cjson_names[CJSON_FUNCTION_COUNT][48] = { CF_CJSON_FUNCTIONS(AS_NAME, AS_NAME_VOID) };

static _Atomic(void *) cjson_resolved[CJSON_FUNCTION_COUNT];

/* ld.so's words for a NEEDED library it cannot load, and its status. */
static _Noreturn void cjson_missing(const char *why)
{
    static const char head[] = "cclforge: error while loading shared libraries: ";
    const char *tail = why ? why : CJSON_SONAME ": cannot open shared object file";
    (void)!write(STDERR_FILENO, head, sizeof head - 1);
    (void)!write(STDERR_FILENO, tail, strlen(tail));
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(127);
}

static void *cjson_function(enum cjson_function f)
{
    void *sym = atomic_load_explicit(&cjson_resolved[f], memory_order_acquire);
    if (sym)
        return sym;
    /* dlopen of a library already loaded returns the same handle */
    void *lib = dlopen(CJSON_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        cjson_missing(dlerror());
    sym = dlsym(lib, cjson_names[f]);
    if (!sym)
        cjson_missing(dlerror());
    atomic_store_explicit(&cjson_resolved[f], sym, memory_order_release);
    return sym;
}

#define AS_FORWARDER(ret, name, params, args) \
    ret cf_cJSON_##name params \
    { \
        ret(*real) params; \
        void *sym = cjson_function(CJSON_##name); \
        memcpy(&real, &sym, sizeof real); \
        return real args; \
    }
#define AS_FORWARDER_VOID(name, params, args) \
    void cf_cJSON_##name params \
    { \
        void(*real) params; \
        void *sym = cjson_function(CJSON_##name); \
        memcpy(&real, &sym, sizeof real); \
        real args; \
    }
CF_CJSON_FUNCTIONS(AS_FORWARDER, AS_FORWARDER_VOID)

void cf_json_ready(void)
{
    for (int f = 0; f < CJSON_FUNCTION_COUNT; f++)
        cjson_function((enum cjson_function)f);
}
#else
void cf_json_ready(void)
{
}
#endif
