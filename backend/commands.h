/* commands.h — the subcommands of cmtc; backend/driver.c dispatches to
 * them through the command table of backend/options.c.
 * Each takes the arguments after the subcommand name and returns the exit
 * code: 0 success, 1 diagnostics with errors, 2 usage or I/O failure,
 * 3 solver failure or time limit without a feasible mapping. */
#ifndef CMT_COMMANDS_H
#define CMT_COMMANDS_H

#include "frontend/check.h"

enum { EXIT_OK = 0, EXIT_DIAGNOSTICS = 1, EXIT_USAGE = 2, EXIT_SOLVER = 3 };

/* The whole command line, argv[0] the program: what `cmtc` runs. */
int cmtc_main(int argc, char **argv);   /* backend/driver.c */
int cmd_check(int argc, char **argv);   /* backend/driver.c */
int cmd_explain(int argc, char **argv); /* backend/driver.c */
int cmd_help(int argc, char **argv);    /* backend/driver.c */
int cmd_compile(int argc, char **argv); /* backend/compile.c */
int cmd_fmt(int argc, char **argv);     /* backend/fmt.c */
int cmd_sweep(int argc, char **argv);   /* backend/sweep_run.c */
int cmd_lsp(int argc, char **argv);     /* backend/lsp.c */
int cmd_plot(int argc, char **argv);    /* backend/plots.c */

/* Options shared by every command that reads .cmt files. */
typedef struct CommonOptions {
    const char *include_dirs[64];
    int include_count;
    bool json_diagnostics;   /* --diagnostics-format json */
    bool diagnostics_stdout; /* --diagnostics-output stdout */
    bool color;              /* their stream is a terminal and NO_COLOR unset */
    bool lenient_includes;   /* lsp: a -I that is no folder is a warning (an
                                editor's setting must not stop the server) */
} CommonOptions;

/* Consumes -I DIR, -IDIR, --diagnostics-format FMT, --diagnostics-output
 * WHERE at argv[*i] (parsed by backend/options.c); returns
 * true when it consumed something (advancing *i), false otherwise.  On a
 * malformed option prints a usage error and sets *bad. */
bool common_option(CommonOptions *o, int argc, char **argv, int *i, bool *bad);
/* Applies a common option options_next returned (OPT_INCLUDE,
 * OPT_DIAG_FORMAT, OPT_DIAG_OUTPUT); false after printing why not. */
bool common_apply(CommonOptions *o, int id, const char *value);
/* The defaults: colour when standard error is a terminal. */
void common_init(CommonOptions *o);
/* Where diagnostics go: stdout or stderr. */
FILE *common_diag_stream(const CommonOptions *o);
/* Fills CheckOptions from CommonOptions (stdlib dir, -I, CMT_PATH). */
void common_check_options(const CommonOptions *o, CheckOptions *out);
/* Renders every diagnostic as the options ask, where they ask. */
void common_print_diags(const CommonOptions *o, const SourceManager *sm, DiagSink *d);
/* The standard library folder (backend/stdlib_path.c): $CMT_STDLIB; for
 * a binary at <prefix>/bin, <prefix>/share/cmtc/stdlib; for one inside
 * the source tree, the tree's stdlib/; else the installed folder, else
 * the tree's. */
const char *stdlib_dir(void);
/* The choice behind stdlib_dir, given the binary's real path `exe`
 * (NULL or "" when unknown); a path it builds goes to buf. */
const char *stdlib_choose(const char *exe, const char *source_root, const char *installed,
                          const char *source_stdlib, char *buf, size_t cap);
/* Reads the file a command was given ("-" for standard input) under the
 * size cap; NULL after printing why (the caller exits 2). */
SourceFile *load_root(SourceManager *sm, const char *path);

#endif
