/* The "nccl_config" section of a survey: field tables for cclforge/ncclconf.h,
 * which give its JSON writer, reader and release. */
#include "cclforge/ncclconf.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/json_fields.h"
#include "survey/survey_internal.h"

static const struct cf_jf setting_fields[] = {
    CF_JF(struct cf_nccl_setting, name, CF_JF_STR),
    CF_JF(struct cf_nccl_setting, value, CF_JF_STR),
    CF_JF(struct cf_nccl_setting, hidden, CF_JF_BOOL),
    CF_JF(struct cf_nccl_setting, source, CF_JF_STR),
    CF_JF(struct cf_nccl_setting, overridden, CF_JF_STRVEC),
};
static const struct cf_jf_table setting_table = CF_JF_TABLE(struct cf_nccl_setting, setting_fields);

static const struct cf_jf file_fields[] = {
    CF_JF(struct cf_nccl_conf_file, path, CF_JF_STR),
    CF_JF(struct cf_nccl_conf_file, role, CF_JF_STR),
    CF_JF(struct cf_nccl_conf_file, present, CF_JF_BOOL),
    CF_JF(struct cf_nccl_conf_file, read, CF_JF_BOOL),
    CF_JF(struct cf_nccl_conf_file, settings, CF_JF_INT),
    CF_JF(struct cf_nccl_conf_file, problem, CF_JF_STR),
};
static const struct cf_jf_table file_table = CF_JF_TABLE(struct cf_nccl_conf_file, file_fields);

static const struct cf_jf note_fields[] = {
    CF_JF(struct cf_nccl_conf_note, kind, CF_JF_STR),
    CF_JF(struct cf_nccl_conf_note, where, CF_JF_STR),
    CF_JF(struct cf_nccl_conf_note, name, CF_JF_STR),
    CF_JF(struct cf_nccl_conf_note, text, CF_JF_STR),
};
static const struct cf_jf_table note_table = CF_JF_TABLE(struct cf_nccl_conf_note, note_fields);

static const struct cf_jf plugin_fields[] = {
    CF_JF(struct cf_nccl_plugin, kind, CF_JF_STR),
    CF_JF(struct cf_nccl_plugin, variable, CF_JF_STR),
    CF_JF(struct cf_nccl_plugin, requested, CF_JF_STR),
    CF_JF(struct cf_nccl_plugin, tried, CF_JF_STRVEC),
    CF_JF(struct cf_nccl_plugin, loader, CF_JF_STR),
    CF_JF(struct cf_nccl_plugin, path, CF_JF_STR),
    CF_JF(struct cf_nccl_plugin, found_by, CF_JF_STR),
    CF_JF(struct cf_nccl_plugin, symbols, CF_JF_STRVEC),
};
static const struct cf_jf_table plugin_table = CF_JF_TABLE(struct cf_nccl_plugin, plugin_fields);

enum { FILES, SETTINGS, NOTES, PLUGINS };
static const struct cf_jf_table *const config_subs[] = {
    [FILES] = &file_table, [SETTINGS] = &setting_table, [NOTES] = &note_table, [PLUGINS] = &plugin_table,
};
static const struct cf_jf config_fields[] = {
    CF_JF(struct cf_nccl_config, flavour, CF_JF_STR),
    CF_JF(struct cf_nccl_config, home, CF_JF_STR),
    CF_JF_ARR(struct cf_nccl_config, files, n_files, FILES),
    CF_JF_ARR(struct cf_nccl_config, settings, n_settings, SETTINGS),
    CF_JF_ARR(struct cf_nccl_config, notes, n_notes, NOTES),
    CF_JF_ARR(struct cf_nccl_config, plugins, n_plugins, PLUGINS),
    CF_JF(struct cf_nccl_config, topo_file_problem, CF_JF_STR),
};
static const struct cf_jf_table config_table = CF_JF_TABLE_SUBS(struct cf_nccl_config, config_fields, config_subs);

void *cf_nccl_config_to_json(const struct cf_nccl_config *c)
{
    return cf_jf_to_json(&config_table, c);
}

int cf_nccl_config_from_json(const void *json, struct cf_nccl_config *c, cf_error *err)
{
    memset(c, 0, sizeof *c);
    return cf_jf_from_json(&config_table, json, c, "nccl_config", err);
}

void cf_nccl_config_release(struct cf_nccl_config *c)
{
    if (c)
        cf_jf_release(&config_table, c);
}
