/* options.h — the command line of every cmtc command, as tables: one
 * table per command lists its options with their help, and the one parser
 * (options_next) and the help printer (options_help) read the same table,
 * so `cmtc help COMMAND`, `cmtc COMMAND --help` and what the command
 * accepts cannot drift apart.  docs/cmtc.1 documents each option listed
 * here (tests/suites/cli.sh checks that it does). */
#ifndef CMT_OPTIONS_H
#define CMT_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

/* What options_next returns besides a command's own option ids (> 0). */
enum {
    OPT_DONE = 0,         /* no arguments left */
    OPT_POSITIONAL = -1,  /* a file name (or other operand) in .value */
    OPT_BAD = -2,         /* printed why; the command exits 2 */
    OPT_HELP = -3,        /* -h or --help */
    OPT_INCLUDE = -4,     /* -I DIR */
    OPT_DIAG_FORMAT = -5, /* --diagnostics-format text|json */
    OPT_DIAG_OUTPUT = -6, /* --diagnostics-output stderr|stdout */
    OPT_UNKNOWN = -7      /* not an option of the table (with unknown_ok) */
};

/* The options of compile, fmt, lsp (--stdio) and plot (check, explain and
 * help have only the common ones). */
enum {
    CO_MAPPING = 1,
    CO_OUTPUT,
    CO_FORMAT,
    CO_BASELINE,
    CO_OBJECTIVE,
    CO_TIME_LIMIT,
    CO_EMIT_LP,
    CO_EXHAUSTIVE,
    CO_VERIFY,
    CO_DUMP_IR,
    CO_TIME_EVAL,
    FO_CHECK = 1,
    LO_STDIO = 1,
    SW_SWEEP = 1,
    SW_OUTPUT,
    SW_FORMAT,
    SW_JOBS,
    SW_SHARD,
    SW_SET,
    SW_EMIT_SLURM,
    SW_PLOTS,
    SW_MERGE,
    SW_OBJECTIVE,
    SW_TIME_LIMIT,
    PO_PLOTS = 1
};

typedef struct OptionSpec {
    int id;            /* > 0 for the command's own; 0 ends a table */
    const char *name;  /* "--format" */
    const char *alias; /* "-m", or NULL */
    const char *arg;   /* "text|json|trace|dot", "FILE"; NULL for a flag */
    const char *help;  /* one paragraph, wrapped when printed */
} OptionSpec;

typedef struct CommandSpec {
    const char *name;                  /* "compile" */
    const char *operands;              /* "FILE", "FILE...", "CODE" or "" */
    const char *summary;               /* one line, for the general usage */
    const char *about;                 /* a paragraph printed by its help */
    const OptionSpec *options;         /* its own, ended by id 0; NULL for none */
    bool reads_files;                  /* takes -I and the diagnostics options */
    int (*run)(int argc, char **argv); /* the arguments after its name */
} CommandSpec;

/* Every command, in the order the general usage lists them. */
extern const CommandSpec cmt_commands[];
extern const int cmt_command_count;
/* The command named `name`, or NULL. */
const CommandSpec *command_find(const char *name);

/* Walks argv: after each call that returns an option, p->value holds its
 * value (NULL for a flag) and p->arg the argument as written.  `--` ends
 * the options; `-` is an operand (standard input). */
typedef struct OptionParser {
    const CommandSpec *cmd;
    int argc;
    char **argv;
    int i;
    bool operands_only;
    bool unknown_ok; /* an unknown option is OPT_UNKNOWN, not an error */
    const char *value;
    const char *arg;
    /* options already given, by id (own ids 1..63, common ones by -id) */
    unsigned long long seen_own, seen_common;
} OptionParser;

void options_init(OptionParser *p, const CommandSpec *cmd, int argc, char **argv);
int options_next(OptionParser *p);
/* Whether argv asks for help (-h or --help before any `--`, not as the
 * value of an option). */
bool options_want_help(const CommandSpec *cmd, int argc, char **argv);

/* `usage: cmtc NAME ...` and every option with its help. */
void options_help(FILE *out, const CommandSpec *cmd);
/* The one-line synopsis, `usage: cmtc compile FILE [OPTIONS]`, with a
 * pointer to the full help: printed after a usage error. */
void options_usage_hint(FILE *out, const CommandSpec *cmd);
/* The general usage: every command and its summary. */
void options_general_usage(FILE *out);

#endif
