/* serving.c — a serving step's metrics (docs/cost-model.md 14): for a
 * mapping that says `serve prefill|decode of B`, the step's latency is the
 * time to first token (prefill: every prompt of the batch at once) or the
 * time per output token (decode: one new token of each of the B
 * sequences), and B over it the tokens (or prompts) per second of the
 * system and of each of its devices.  What the step holds per device is
 * pass_training's. */
#include "passes/passes.h"

void pass_serving(Schedule *s) {
    SchedServing *sv = &s->serving;
    *sv = (SchedServing){0};
    const IrServe *serve = &s->m->serve;
    if (serve->kind == SERVE_NONE) return;
    sv->present = true;
    sv->step_s = s->cost.latency_s;
    sv->sequences = (double)serve->sequences;
    /* a device is an instance of the outermost memory, in every stage */
    const IrArch *whole = s->m->pipeline.full_arch ? s->m->pipeline.full_arch : s->arch;
    sv->devices = whole->level_count > 0 ? (double)whole->levels[0].instances : 1;
    if (sv->devices < 1) sv->devices = 1;
    sv->per_s = sv->step_s > 0 ? sv->sequences / sv->step_s : 0;
    sv->per_s_device = sv->per_s / sv->devices;
}
