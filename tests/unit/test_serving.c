/* test_serving.c — a serving step (docs/cost-model.md 14), computed by
 * hand: what the decode step of a small attention holds per device (its
 * weights and its KV cache, over the layers), what its append stores, the
 * tokens per second it gives, and the capacity check that refuses a cache
 * too long for the memory. */
#include "program.h"

static Arena arena;

/* Two chips; B = 4 sequences, L tokens of context, E = 128, H = 4 heads
 * of D = 32; heads split over the chips. */
static const char *arch_and_op =
    "arch node {\n"
    "  clock 1 GHz;\n"
    "  cluster gpu[x = 2] ring { link_bandwidth 64 B/cycle; hop_latency 100 cycles; }\n"
    "  memory HBM { capacity 1 MiB; bandwidth 1024 B/cycle; }\n"
    "  memory SRAM { capacity 2 MiB; bandwidth 4096 B/cycle; }\n"
    "  compute tc matrix { throughput 1024 MAC/cycle; }\n"
    "  compute simd vector { throughput 128 op/cycle; }\n"
    "}\n"
    "op decode<B = 4, L = 256, E = 128, H = 4, D = 32> {\n"
    "  in x[B, E] : bf16;\n"
    "  param Wq[E, H, D] : bf16;\n"
    "  param Wk[E, H, D] : bf16;\n"
    "  param Wv[E, H, D] : bf16;\n"
    "  cache K[B, L, H, D] : bf16;\n"
    "  cache V[B, L, H, D] : bf16;\n"
    "  out o[B, H, D] : bf16;\n"
    "  q[b, h, d] = x[b, e] * Wq[e, h, d];\n"
    "  kn[b, h, d] = x[b, e] * Wk[e, h, d];\n"
    "  vn[b, h, d] = x[b, e] * Wv[e, h, d];\n"
    "  K[b, new, h, d] = kn[b, h, d];\n"
    "  V[b, new, h, d] = vn[b, h, d];\n"
    "  s[b, h, n] = q[b, h, d] * K[b, n, h, d];\n"
    "  mx[b, h] = max(n) s[b, h, n];\n"
    "  p[b, h, n] = exp(s[b, h, n] - mx[b, h]);\n"
    "  l[b, h] = sum(n) p[b, h, n];\n"
    "  a[b, h, d] = p[b, h, n] * V[b, n, h, d];\n"
    "  o[b, h, d] = a[b, h, d] / l[b, h];\n"
    "}\n";

static const char *mappings =
    "mapping step for decode on node { serve decode of B; spatial h -> x; repeat 2; }\n"
    "mapping prompt for decode on node { serve prefill of B; spatial h -> x; }\n"
    "mapping long for decode<L = 1024> on node { serve decode of B; spatial h -> x; repeat 2; }\n"
    "mapping plain for decode on node { spatial h -> x; }\n"
    "mapping cut for decode on node {\n"
    "  serve decode of B; microbatches 2 of B; spatial h -> x; repeat 2;\n"
    "}\n"
    "mapping twice for decode on node {\n"
    "  serve decode of B; microbatches 2; spatial h -> x; repeat 2;\n"
    "}\n"
    "op prefill<B = 2, S = 64, E = 32, D = 16> {\n"
    "  in x[B, S, E] : bf16;\n"
    "  param Wk[E, D] : bf16;\n"
    "  cache K[B, S, D] : bf16;\n"
    "  out o[B, S] : bf16;\n"
    "  K[b, m, d] = x[b, m, e] * Wk[e, d];\n"
    "  o[b, m] = sum(d) K[b, m, d];\n"
    "}\n"
    "mapping fill for prefill on node { serve prefill of B; }\n"
    "mapping tiny for decode<L = 16, E = 16, D = 8> on node {\n"
    "  serve decode of B; spatial h -> x; tile SRAM: n 8; fuse kn, K at SRAM;\n"
    "}\n";

static Program *load(SourceManager *sm, DiagSink *diags, const char *name,
                     const char *extra) {
    const char *text = arena_printf(&arena, "%s%s", arch_and_op, extra);
    return unit_load_named(&arena, sm, diags, name, text);
}

int main(void) {
    SourceManager sm;
    DiagSink diags;
    Program *p = load(&sm, &diags, "serving.cmt", mappings);
    if (diags.error_count) diags_render_text(stdout, &sm, &diags, (DiagRenderOptions){false});
    CHECK(p && diags.error_count == 0, "the serving mappings check");
    if (!p || diags.error_count) return unit_finish();

    /* The append: statement K writes the slot K.new[b, h, d], an output
       with K's extents but the new one: [4, 4, 32]. */
    const Schedule *s = unit_lowered(&arena, p, "step");
    CHECK(s != NULL, "step lowers");
    if (!s) return unit_finish();
    int slot = ir_find_tensor(s->op, intern("K.new", 5));
    CHECK(slot >= 0, "the append makes the slot K.new");
    if (slot >= 0) {
        const IrTensor *K = &s->op->tensors[slot];
        CHECK(K->kind == TK_OUTPUT && K->rank == 3 && K->extent[0] == 4 && K->extent[1] == 4 &&
                  K->extent[2] == 32,
              "K.new is an output [4, 4, 32]");
        CHECK(K->appends_to >= 0 && s->op->tensors[K->appends_to].use == TU_CACHE &&
                  K->append_dim == 1,
              "K.new is the new position (dimension 2) of cache K");
        /* its store: a device's half of the heads, 4 * 2 * 32 * 2 B */
        const SchedNode *st = node_of(s, SN_STORE, "K.new");
        CHECK(st && st->bytes == 512, "the append stores 512 B a device");
    }

    /* What a device holds (section 14): weights 3 * 128 * 2 * 32 * 2 B =
       49152 B a layer (its two heads), caches 2 * 4 * 256 * 2 * 32 * 2 B
       = 262144 B a layer; two layers. */
    const SchedTraining *held = &s->training;
    CHECK(held->present && held->serving, "a serving step holds its weights and caches");
    CHECK_NEAR(held->weights, 2 * 49152.0, 1e-12, "weights 98304 B");
    CHECK_NEAR(held->caches, 2 * 262144.0, 1e-12, "caches 524288 B");
    CHECK_NEAR(held->activations, 0, 1e-12, "no activations kept between steps");
    CHECK_NEAR(held->total, 98304.0 + 524288.0, 1e-12, "the total, 608 KiB");
    CHECK_NEAR(held->capacity, 1048576.0, 1e-12, "against HBM's 1 MiB");

    /* The metrics: TPOT is the step's latency; 4 tokens a step; 2 devices. */
    const SchedServing *sv = &s->serving;
    CHECK(sv->present, "the step has serving metrics");
    CHECK_NEAR(sv->step_s, s->cost.latency_s, 1e-12, "TPOT is the step's latency");
    CHECK_NEAR(sv->sequences, 4, 1e-12, "B = 4 sequences");
    CHECK_NEAR(sv->devices, 2, 1e-12, "2 devices");
    CHECK_NEAR(sv->per_s, 4 / s->cost.latency_s, 1e-9, "tokens/s = B / TPOT");
    CHECK_NEAR(sv->per_s_device, 2 / s->cost.latency_s, 1e-9, "per device, half");

    /* Prefill: the same op, one layer: TTFT its latency, prompts/s B / TTFT. */
    const Schedule *pf = unit_lowered(&arena, p, "prompt");
    CHECK(pf && pf->serving.present, "prefill has serving metrics");
    if (pf) CHECK_NEAR(pf->serving.per_s, 4 / pf->cost.latency_s, 1e-9, "prompts/s = B / TTFT");

    /* The reference interpreter runs a small step (the append fused with
       the projection that makes it, the cache read in tiles of 8) and
       agrees with the model on every load, store and execution. */
    const Schedule *tiny = unit_lowered(&arena, p, "tiny");
    CHECK(tiny != NULL, "tiny lowers");
    if (tiny) check_verified(tiny, "the decode step against the reference interpreter");

    /* A prefill fills its cache whole: the slot K.all has all of K's
       dimensions [2, 64, 16], its store is 2 * 64 * 16 * 2 B = 4096 B (no
       split: each chip computes all of it), and the step holds the cache,
       4096 B, beside Wk's 32 * 16 * 2 = 1024 B. */
    const Schedule *fill = unit_lowered(&arena, p, "fill");
    CHECK(fill != NULL, "fill lowers");
    if (fill) {
        int all = ir_find_tensor(fill->op, intern("K.all", 5));
        CHECK(all >= 0 && fill->op->tensors[all].rank == 3 &&
                  fill->op->tensors[all].extent[1] == 64 &&
                  fill->op->tensors[all].append_dim == -1 &&
                  fill->op->tensors[all].appends_to >= 0,
              "a whole-cache write makes the slot K.all [2, 64, 16]");
        const SchedNode *st = node_of(fill, SN_STORE, "K.all");
        CHECK(st && st->bytes == 4096, "the fill stores 4096 B");
        CHECK_NEAR(fill->training.caches, 4096, 1e-12, "the prefill holds the cache it made");
        CHECK_NEAR(fill->training.weights, 1024, 1e-12, "and its weights");
    }

    /* Without `serve`, nothing of this. */
    const Schedule *plain = unit_lowered(&arena, p, "plain");
    CHECK(plain && !plain->serving.present && !plain->training.present,
          "a mapping without `serve` holds no serving state");

    /* Micro-batches (section 14): `microbatches 2 of B` runs two of 2
       sequences; both keep their caches between steps, 2 * 131072 B a
       layer (each half of 262144 B), so the step holds what `step` does,
       and serves the same 4 sequences.  `microbatches 2` runs two of the
       op's 4: 8 sequences, caches 2 * 2 * 262144 = 1 MiB, 1 MiB + 96 KiB
       of weights, past HBM's 1 MiB. */
    const Schedule *cut = unit_lowered(&arena, p, "cut");
    CHECK(cut != NULL, "cut lowers");
    if (cut) {
        CHECK_NEAR(cut->training.caches, 524288.0, 1e-12, "two micro-batches of 2: 512 KiB");
        CHECK_NEAR(cut->serving.sequences, 4, 1e-12, "4 sequences a step");
    }
    const Schedule *twice = unit_lowered(&arena, p, "twice");
    CHECK(twice != NULL, "twice lowers");
    if (twice) {
        CHECK_NEAR(twice->training.caches, 1048576.0, 1e-12, "two micro-batches of 4: 1 MiB");
        CHECK_NEAR(twice->serving.sequences, 8, 1e-12, "8 sequences a step");
        CHECK(twice->training.total > twice->training.capacity, "which does not fit");
    }

    /* L = 1024: caches 2 * 4 * 1024 * 2 * 32 * 2 B = 1 MiB a layer, 2 MiB
       for two, past HBM's 1 MiB: E0363 at the `serve` line. */
    const Schedule *lg = unit_lowered(&arena, p, "long");
    CHECK(lg && lg->training.total > lg->training.capacity, "the long context does not fit");
    if (lg) CHECK_NEAR(lg->training.caches, 2 * 1048576.0, 1e-12, "caches 2 MiB");
    DiagSink capacity;
    diags_init(&capacity, &arena);
    if (lg) report_capacity(lg, &capacity);
    bool e0363 = false;
    for (int i = 0; i < capacity.count; i++)
        if (strcmp(capacity.items[i]->code, "E0363") == 0) e0363 = true;
    CHECK(e0363, "E0363 for a KV cache that does not fit");
    return unit_finish();
}
