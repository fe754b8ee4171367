/* One entry function per command (git's builtin/ layout). Each returns the exit code:
 * 0 fine, 1 problems found or the job failed, 2 usage error. */
#ifndef CCLFORGE_CLI_BUILTIN_H
#define CCLFORGE_CLI_BUILTIN_H

int cmd_inspect(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_nccl(int argc, char **argv);
int cmd_bridge(int argc, char **argv);
int cmd_wheel(int argc, char **argv);
int cmd_smoke(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_hang(int argc, char **argv);
int cmd_hang_env(int argc, char **argv);
struct cf_hang_result;
/* the hang page of r written to path (cmd names the command in a message); EXIT_* */
int cli_hang_page_write(const char *cmd, const struct cf_hang_result *r, const char *path);

#endif
