/* main.c — the cmtc executable: everything else, the driver included, is
 * in libcmt.a (backend/driver.c). */
#include "backend/commands.h"

int main(int argc, char **argv) {
    return cmtc_main(argc, argv);
}
