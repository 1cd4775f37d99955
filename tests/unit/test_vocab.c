/* test_vocab.c — the vocabularies of frontend/util/vocab.h: each word maps
 * to its own id and back, whatever the order of its enum; the messages'
 * "x, y and z" lists (the hover text of every attribute key is checked by
 * tests/suites/vocab.sh). */
#include "ir/ir.h"
#include "tests/unit/unit.h"

#define ROUND_TRIP(Type, prefix)                                                                   \
    do {                                                                                           \
        bool ok_ = prefix##_count > 0;                                                             \
        for (int i_ = 0; i_ < prefix##_count; i_++) {                                              \
            Type t_;                                                                               \
            ok_ = ok_ && prefix##_of_name(prefix##_words[i_], &t_) && t_ == prefix##_ids[i_] &&    \
                  strcmp(prefix##_name(t_), prefix##_words[i_]) == 0;                              \
        }                                                                                          \
        CHECK(ok_, #prefix ": every word maps to its id and back");                                \
    } while (0)

int main(void) {
    ROUND_TRIP(Topology, topology);
    ROUND_TRIP(MemRole, mem_role);
    ROUND_TRIP(ReduceOp, reduce_op);
    ROUND_TRIP(Objective, objective);
    ROUND_TRIP(Overlap, overlap);

    /* ids by name, not by position */
    Topology t = TOPO_RING;
    CHECK(topology_of_name("switch", &t) && t == TOPO_SWITCH, "switch is TOPO_SWITCH");
    CHECK(topology_of_name("full", &t) && t == TOPO_FULL, "full is TOPO_FULL");
    CHECK(!topology_of_name("tree", &t) && t == TOPO_FULL,
          "an unknown word leaves the id as it was");
    MemRole r = ROLE_ANY;
    CHECK(mem_role_of_name("weight", &r) && r == ROLE_WEIGHT,
          "weight is ROLE_WEIGHT (after ROLE_ANY)");
    CHECK(strcmp(mem_role_name(ROLE_ANY), "any") == 0, "ROLE_ANY is not a word: any");
    CHECK(strcmp(reduce_op_name(RO_NONE), "none") == 0, "RO_NONE is not a word: none");
    ReduceOp ro = RO_NONE;
    CHECK(reduce_op_of_name("mean", &ro) && ro == RO_MEAN, "mean is RO_MEAN");

    bool elems = elem_type_count == 8;
    for (int i = 0; i < elem_type_count; i++) {
        ElemType e = elem_type_of_name(elem_type_names[i]);
        elems = elems && e != ET_NONE && strcmp(elem_type_name(e), elem_type_names[i]) == 0 &&
                elem_type_bits(e) > 0;
    }
    CHECK(elems, "element types: every word maps to its type and back, with its bits");
    CHECK(elem_type_of_name("fp64") == ET_NONE && elem_type_of_name(NULL) == ET_NONE,
          "element types: unknown words are ET_NONE");
    CHECK(elem_type_bits(elem_type_of_name("bf16")) == 16, "bf16 is 16 bits");

    char buf[128];
    CHECK(strcmp(vocab_join(buf, sizeof buf, topology_words, topology_count, " and "),
                 "ring, mesh, torus, switch, full, dragonfly and hybrid_cube_mesh") == 0,
          "the topologies as a message lists them");
    CHECK(strcmp(vocab_join(buf, sizeof buf, overlap_words, 2, " or "),
                 "full or none") == 0,
          "two words: no comma");
    CHECK(strcmp(vocab_join(buf, sizeof buf, topology_words, 1, " and "), "ring") == 0,
          "one word alone");
    char small[8];
    vocab_join(small, sizeof small, topology_words, topology_count, " and ");
    CHECK(strcmp(small, "ring, m") == 0, "a short buffer is cut, still terminated");

    return unit_failures ? 1 : 0;
}
