/* test_spell.c — edit distances worked out by hand, cutoffs, ties. */
#include "frontend/util/util.h"
#include "tests/unit/unit.h"

int main(void) {
    CHECK(edit_distance("", "") == 0, "empty to empty");
    CHECK(edit_distance("", "abc") == 3, "empty to abc: 3 inserts");
    CHECK(edit_distance("abc", "") == 3, "abc to empty: 3 deletes");
    CHECK(edit_distance("GLB", "GLB") == 0, "equal");
    CHECK(edit_distance("kitten", "sitting") == 3, "kitten/sitting: k->s, e->i, +g");
    CHECK(edit_distance("flaw", "lawn") == 2, "flaw/lawn: -f, +n");
    CHECK(edit_distance("DRAM", "dram") == 4, "case-sensitive: 4 substitutions");
    CHECK(edit_distance("tile", "tiel") == 1, "a swapped pair costs 1");
    CHECK(edit_distance("spatial", "spatail") == 1, "spatial/spatail: one swap");
    CHECK(edit_distance("GBL", "GLB") == 1, "GBL/GLB: one swap");
    CHECK(edit_distance("ab", "ba") == 1, "a swap of the whole word");
    CHECK(edit_distance("abc", "ca") == 3, "no edit after a swap (optimal string alignment)");
    CHECK(edit_distance("abcd", "badc") == 2, "two separate swaps");
    CHECK(edit_distance("GLB", "GB") == 1, "one delete");
    CHECK(edit_distance("a", "b") == 1, "one substitution");
    {
        char long_a[300], long_b[300];
        memset(long_a, 'x', 256);
        long_a[256] = '\0';
        memset(long_b, 'x', 255);
        long_b[255] = 'y';
        long_b[256] = '\0';
        CHECK(edit_distance(long_a, long_b) == 1, "256 characters still compared");
        long_a[256] = 'x';
        long_a[257] = '\0';
        CHECK(edit_distance(long_a, long_a) > 1000, "beyond 256 characters is far");
    }

    static const char *const levels[] = {"DRAM", "GLB", "PE", "RF", "NoC"};
    /* "GBL": GLB by one swap of L and B; cutoff for length 3 is 1 */
    CHECK_STR(spell_suggest("GBL", levels, 5), "GLB", "a swapped pair is within cutoff 1");
    /* "GXB": one substitution from GLB, two from DRAM... -> GLB */
    CHECK_STR(spell_suggest("GXB", levels, 5), "GLB", "len 3 cutoff is 1");
    /* "BGX": two edits from GLB -> none */
    CHECK(spell_suggest("BGX", levels, 5) == NULL, "len 3 cutoff is 1: two edits too far");
    /* "GL": cutoff min(1, 2-1) = 1; GLB is 1 insert away */
    CHECK_STR(spell_suggest("GL", levels, 5), "GLB", "short name, one edit");
    /* "DRM": 1 insert to DRAM */
    CHECK_STR(spell_suggest("DRM", levels, 5), "DRAM", "one insert");
    /* "P": length 1 -> cutoff 0 -> no suggestion even though PE is 1 away */
    CHECK(spell_suggest("P", levels, 5) == NULL, "cutoff never reaches the length");
    /* an exact match is ignored, not suggested */
    CHECK(spell_suggest("GLB", levels, 5) == NULL, "exact name ignored");

    static const char *const keys[] = {"bandwidth", "capacity", "read_energy", "write_energy"};
    /* "bandwdth": 1 insert -> bandwidth (len 8, cutoff 3) */
    CHECK_STR(spell_suggest("bandwdth", keys, 4), "bandwidth", "long name, one edit");
    /* "capaciti": 1 substitution */
    CHECK_STR(spell_suggest("capaciti", keys, 4), "capacity", "substitution");
    /* "read_enrgy" -> read_energy 1; write_energy is farther */
    CHECK_STR(spell_suggest("read_enrgy", keys, 4), "read_energy", "closest wins");
    /* "capcty": len 6 -> cutoff 2; capacity is 2 inserts away */
    CHECK_STR(spell_suggest("capcty", keys, 4), "capacity", "len 6 cutoff 2");
    /* "cpcty": len 5 -> cutoff 2; capacity needs 3 inserts -> none */
    CHECK(spell_suggest("cpcty", keys, 4) == NULL, "beyond cutoff 2");
    /* "bandwxxxx": len 9 -> cutoff 3; 4 substitutions -> none */
    CHECK(spell_suggest("bandwxxxx", keys, 4) == NULL, "beyond cutoff 3");
    /* "bandwxxth" vs "bandwidth": x/i and x/d substituted, 2 edits */
    CHECK_STR(spell_suggest("bandwxxth", keys, 4), "bandwidth", "two substitutions");

    /* ties go to the first candidate: "cat" is 1 from "bat", "car", "cut" */
    static const char *const tie[] = {"bat", "car", "cut"};
    CHECK_STR(spell_suggest("cat", tie, 3), "bat", "tie keeps first");
    static const char *const tie_reversed[] = {"car", "bat"};
    CHECK_STR(spell_suggest("cat", tie_reversed, 2), "car", "tie keeps first, reversed");
    /* a strictly closer later candidate wins over an earlier one */
    static const char *const later[] = {"matmul2x", "matmul"};
    CHECK_STR(spell_suggest("matmull", later, 2), "matmul", "closer later candidate");
    /* NULL entries are skipped; an empty list gives nothing */
    static const char *const with_null[] = {NULL, "GLB"};
    CHECK_STR(spell_suggest("GLX", with_null, 2), "GLB", "null candidate skipped");
    CHECK(spell_suggest("GLX", NULL, 0) == NULL, "no candidates");
    return unit_finish();
}
