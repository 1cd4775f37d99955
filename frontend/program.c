/* program.c — what the front end answers about a checked program beyond
 * its IR: the mappings its root file declares, and the declaration an IR
 * object was checked from (for the text tools: the language server). */
#include "sema.h"

const Decl *program_decl_at(const Program *p, Span span) {
    if (!p || span.file < 0) return NULL;
    for (int i = 0; i < p->module_count; i++) {
        const Module *mod = p->modules[i];
        if (!mod || !mod->file || mod->file->id != span.file) continue;
        for (int k = 0; k < mod->decl_count; k++) {
            const Decl *d = mod->decls[k];
            if (d && d->span.start == span.start && d->span.end == span.end) return d;
        }
    }
    return NULL;
}

const char **program_mapping_names(const Program *p, Arena *a, int *count) {
    const Module *root = p->module_count > 0 ? p->modules[0] : NULL;
    *count = 0;
    const char **names = ARENA_ARRAY(a, const char *, (root ? root->decl_count : 0) + 1);
    for (int i = 0; root && i < root->decl_count; i++)
        if (root->decls[i]->kind == DK_MAPPING && root->decls[i]->name.name)
            names[(*count)++] = root->decls[i]->name.name;
    return names;
}
