/* commands.h — the subcommands of cmtc; backend/main.c dispatches to them.
 * Each takes the arguments after the subcommand name and returns the exit
 * code: 0 success, 1 diagnostics with errors, 2 usage or I/O failure,
 * 3 solver failure or time limit without a feasible mapping. */
#ifndef CMT_COMMANDS_H
#define CMT_COMMANDS_H

#include "../ir/ir.h"

enum { EXIT_OK = 0, EXIT_DIAGNOSTICS = 1, EXIT_USAGE = 2, EXIT_SOLVER = 3 };

int cmd_check(int argc, char **argv);   /* backend/main.c */
int cmd_explain(int argc, char **argv); /* backend/main.c */
int cmd_compile(int argc, char **argv); /* backend/compile.c */
int cmd_fmt(int argc, char **argv);     /* backend/fmt.c */
int cmd_lsp(int argc, char **argv);     /* backend/lsp.c */

/* Options shared by every command that reads .cmt files. */
typedef struct CommonOptions {
    const char *include_dirs[64];
    int include_count;
    bool json_diagnostics; /* --diagnostics-format json */
    bool color;            /* stderr is a terminal and NO_COLOR unset */
} CommonOptions;

/* Consumes -I DIR, -IDIR, --diagnostics-format FMT at argv[*i]; returns
 * true when it consumed something (advancing *i), false otherwise.  On a
 * malformed option prints a usage error and sets *bad. */
bool common_option(CommonOptions *o, int argc, char **argv, int *i, bool *bad);
/* Fills CheckOptions from CommonOptions (stdlib dir, -I, CMT_PATH). */
void common_check_options(const CommonOptions *o, CheckOptions *out);
/* Renders every diagnostic as the options ask, to stderr. */
void common_print_diags(const CommonOptions *o, const SourceManager *sm, DiagSink *d);
/* The installed (or in-tree) standard library folder. */
const char *stdlib_dir(void);
/* Reads the file a command was given ("-" for standard input) under the
 * size cap; NULL after printing why (the caller exits 2). */
SourceFile *load_root(SourceManager *sm, const char *path);

#endif
