/* vocab.h — every word list of the language, each spelled once as an
 * X-macro list.  The enums (ir.h, util.h, ast.h), the name tables and
 * lookups, the "x, y and z" message texts, the language server's
 * completion lists and `cmtc __vocab` (which tests/suites/vocab.sh checks
 * the editor grammars against) all expand these lists.  To add a word:
 * add one line here; the enum, the checker, the messages and completion
 * follow; then add it to the editor grammars (the suite names what is
 * missing).  Entries are X(ENUM_ID, "word") where an enum exists, X("word")
 * otherwise.  Layer 1: includes nothing. */
#ifndef CMT_VOCAB_H
#define CMT_VOCAB_H

/* One entry a line, so that a word added is a line added. */
/* clang-format off */

/* ------------------------------------------------------------- op words */

#define CMT_ELEM_TYPES(X) \
    X(ET_INT4, "int4", 4) \
    X(ET_INT8, "int8", 8) \
    X(ET_INT16, "int16", 16) \
    X(ET_INT32, "int32", 32) \
    X(ET_FP8, "fp8", 8) \
    X(ET_BF16, "bf16", 16) \
    X(ET_FP16, "fp16", 16) \
    X(ET_FP32, "fp32", 32)

/* element-wise functions and their arity */
#define CMT_FUNCTIONS(X) \
    X("exp", 1) \
    X("log", 1) \
    X("sqrt", 1) \
    X("rsqrt", 1) \
    X("recip", 1) \
    X("abs", 1) \
    X("tanh", 1) \
    X("sigmoid", 1) \
    X("relu", 1) \
    X("gelu", 1) \
    X("silu", 1) \
    X("dgelu", 1) \
    X("step", 1) \
    X("sign", 1) \
    X("eq", 2) \
    X("max", 2) \
    X("min", 2)

#define CMT_REDUCTIONS(X) \
    X(RO_SUM, "sum") \
    X(RO_MAX, "max") \
    X(RO_MIN, "min") \
    X(RO_MEAN, "mean") \
    X(RO_TOP, "top")

/* ----------------------------------------------------------- arch words */

/* `dragonfly` and `hybrid_cube_mesh` wire a whole cluster, not one of its
 * dimensions (check_arch.c) */
#define CMT_TOPOLOGIES(X) \
    X(TOPO_RING, "ring") \
    X(TOPO_MESH, "mesh") \
    X(TOPO_TORUS, "torus") \
    X(TOPO_SWITCH, "switch") \
    X(TOPO_FULL, "full") \
    X(TOPO_DRAGONFLY, "dragonfly") \
    X(TOPO_HYBRID_CUBE_MESH, "hybrid_cube_mesh")

#define CMT_MEMORY_ROLES(X) \
    X(ROLE_INPUT, "input") \
    X(ROLE_WEIGHT, "weight") \
    X(ROLE_OUTPUT, "output") \
    X(ROLE_ACCUMULATOR, "accumulator")

/* `kind` of a memory: a buffer counts what enters and what leaves it; a
 * stream level passes what it exchanges with the level above at its
 * bandwidth once (docs/cost-model.md section 3) */
#define CMT_MEMORY_KINDS(X) \
    X(MK_BUFFER, "buffer") \
    X(MK_STREAM, "stream")

#define CMT_UNIT_KINDS(X) \
    X("matrix") \
    X("vector")

/* attribute keys, by what they belong to */
#define CMT_ARCH_KEYS(X) \
    X("clock") \
    X("launch_overhead") \
    X("price")
#define CMT_MEMORY_KEYS(X) \
    X("capacity") \
    X("bandwidth") \
    X("read_energy") \
    X("write_energy") \
    X("energy") \
    X("transfer_latency") \
    X("efficiency") \
    X("kind")
#define CMT_CLUSTER_KEYS(X) \
    X("link_bandwidth") \
    X("hop_latency") \
    X("link_energy") \
    X("call_latency") \
    X("channels") \
    X("channel_bytes") \
    X("channel_growth") \
    X("global_links") \
    X("global_bandwidth")
#define CMT_COMPUTE_KEYS(X) \
    X("throughput") \
    X("energy") \
    X("cost") \
    X("array") \
    X("count") \
    X("efficiency") \
    X("shape")

/* -------------------------------------------------------- mapping words */

#define CMT_MAPPING_ITEMS(X) \
    X(MI_SPATIAL, "spatial") \
    X(MI_TILE, "tile") \
    X(MI_ORDER, "order") \
    X(MI_FUSE, "fuse") \
    X(MI_OVERLAP, "overlap") \
    X(MI_OBJECTIVE, "objective") \
    X(MI_ONLINE, "online") \
    X(MI_REPEAT, "repeat") \
    X(MI_PHASE, "phase") \
    X(MI_RECOMPUTE, "recompute") \
    X(MI_PIPELINE, "pipeline") \
    X(MI_MICROBATCHES, "microbatches") \
    X(MI_SERVE, "serve")

#define CMT_OVERLAPS(X) \
    X(OVERLAP_FULL, "full") \
    X(OVERLAP_NONE, "none") \
    X(OVERLAP_TILES, "tiles") \
    X(OVERLAP_LOCAL, "local")
#define CMT_PHASES(X) \
    X(PHASE_FORWARD, "forward") \
    X(PHASE_BACKWARD, "backward") \
    X(PHASE_TRAIN, "train")
/* `serve KIND of B;`: which serving phase a forward mapping is */
#define CMT_SERVE_KINDS(X) \
    X(SERVE_NONE, "none") \
    X(SERVE_PREFILL, "prefill") \
    X(SERVE_DECODE, "decode") \
    X(SERVE_VERIFY, "verify")
/* the order in which a pipeline's stages run their micro-batches */
#define CMT_PIPE_SCHEDULES(X) \
    X(PIPE_1F1B, "1f1b") \
    X(PIPE_GPIPE, "gpipe") \
    X(PIPE_INTERLEAVED, "interleaved")
#define CMT_OBJECTIVES(X) \
    X(OBJ_LATENCY, "latency") \
    X(OBJ_ENERGY, "energy") \
    X(OBJ_EDP, "edp")

/* ------------------------------------------------ keywords of the scanner */

#define CMT_DECL_KEYWORDS(X) \
    X("use") \
    X("const") \
    X("op") \
    X("arch") \
    X("mapping") \
    X("sweep") \
    X("model")
#define CMT_OP_KEYWORDS(X) \
    X("in") \
    X("out") \
    X("var") \
    X("param") \
    X("where") \
    X("by")
#define CMT_ARCH_KEYWORDS(X) \
    X("memory") \
    X("cluster") \
    X("compute") \
    X("role") \
    X("cost") \
    X("array")
/* the mapping's header (`mapping m for op on arch`) and `fuse ... at L` */
#define CMT_MAPPING_KEYWORDS(X) \
    X("for") \
    X("on") \
    X("at")

/* clang-format on */

/* ---------------------------------------------------------- expanders */

#define VOCAB_WORD(word) word,
#define VOCAB_COUNT(word) +1
#define VOCAB_ENUM(id, word) id,
#define VOCAB_INDEXED(id, word) [id] = word,
#define VOCAB_NAME(id, word) word,
#define VOCAB_CASE(id, word)                                                                       \
    case id:                                                                                       \
        return word;
#define VOCAB_COUNT2(id, word) +1
#define VOCAB_FUNCTION_NAME(word, arity) word,
#define VOCAB_ELEM_ENUM(id, word, bits) id,
#define VOCAB_ELEM_NAME(id, word, bits) word,

/* The word lists completion offers per context, as initialiser bodies:
 * the language server and `cmtc __vocab` build theirs from these so the
 * two cannot drift apart. */
#define CMT_WORDS_OP_KEYWORDS CMT_OP_KEYWORDS(VOCAB_WORD) CMT_ELEM_TYPES(VOCAB_ELEM_NAME)
#define CMT_WORDS_FUNCTIONS CMT_FUNCTIONS(VOCAB_FUNCTION_NAME) CMT_REDUCTIONS(VOCAB_NAME)
#define CMT_WORDS_ARCH_KEYWORDS                                                                    \
    CMT_ARCH_KEYWORDS(VOCAB_WORD)                                                                  \
    CMT_UNIT_KINDS(VOCAB_WORD) CMT_MEMORY_ROLES(VOCAB_NAME) CMT_TOPOLOGIES(VOCAB_NAME)
#define CMT_WORDS_ATTRIBUTES                                                                       \
    CMT_ARCH_KEYS(VOCAB_WORD)                                                                      \
    CMT_MEMORY_KEYS(VOCAB_WORD) CMT_CLUSTER_KEYS(VOCAB_WORD) CMT_COMPUTE_KEYS(VOCAB_WORD)

/* Writes words[0..count) as "a, b and c" (last_sep " and ") or "a, b or
 * c" into buf; returns buf. */
#include <stddef.h>
const char *vocab_join(char *buf, size_t size, const char *const *words, int count,
                       const char *last_sep);
/* Index of `word` in words[0..count), -1 when absent. */
int vocab_find(const char *const *words, int count, const char *word);

#endif
