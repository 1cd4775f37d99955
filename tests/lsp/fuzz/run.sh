#!/bin/sh
# Builds and runs the formatter and protocol fuzz targets with libFuzzer
# (clang), against the fuzzing build of the library (`make fuzz` makes
# build-fuzz/libcmt.a; this script makes it too).  Seeds: the examples,
# the standard library and the formatter and server test files.
#   FUZZ_SECONDS  per target (default 60)
set -eu
cd "$(dirname "$0")/../../.."
secs=${FUZZ_SECONDS:-60}
make -s BUILD=build-fuzz CC=clang \
  CFLAGS='-O1 -g -fsanitize=fuzzer-no-link,address,undefined' build-fuzz/libcmt.a
flags="-I. -Ibuild-fuzz/gen -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -std=c11 -O1 -g
       -fsanitize=fuzzer,address,undefined"
libs="build-fuzz/libcmt.a -ljansson -llpsolve55 -lcolamd -ldl -lm"
# shellcheck disable=SC2086
clang $flags -o build-fuzz/fuzz_fmt tests/lsp/fuzz/fuzz_fmt.c $libs
# shellcheck disable=SC2086
clang $flags -o build-fuzz/fuzz_reader tests/lsp/fuzz/fuzz_reader.c \
  build-fuzz/obj/backend/lsp_proto.o $libs
mkdir -p build-fuzz/corpus_fmt build-fuzz/corpus_reader
cp examples/*.cmt stdlib/std/*/*.cmt tests/fmt/*.cmt tests/lsp/files/*.cmt build-fuzz/corpus_fmt/
printf 'Content-Length: 2\r\n\r\n{}' > build-fuzz/corpus_reader/frame
cp tests/lsp/files/utf16.cmt build-fuzz/corpus_reader/
build-fuzz/fuzz_fmt -max_total_time="$secs" -max_len=8192 -timeout=10 build-fuzz/corpus_fmt
build-fuzz/fuzz_reader -max_total_time="$secs" -max_len=4096 -timeout=10 build-fuzz/corpus_reader
