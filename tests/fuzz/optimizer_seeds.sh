#!/bin/sh
# Seeds for fuzz_optimizer: one self-contained file per mapping of
# tests/opt/spaces.cmt (its ops and `use` lines, the small archs inlined)
# and the examples of the optimizer's error pages.
#   sh tests/fuzz/optimizer_seeds.sh DIR
set -eu
out=$1
mkdir -p "$out"
spaces=tests/opt/spaces.cmt
# everything of spaces.cmt that is not a mapping: uses, ops; then the archs
awk '/^mapping /{skip=1} !skip && !/^use "archs.cmt";/{print} skip && /^}/{skip=0}' "$spaces" \
    >"$out/.head"
cat tests/opt/archs.cmt >>"$out/.head"
awk -v out="$out" '
  /^mapping /{name=$2; file=out "/" name ".body"; on=1}
  on{print > file}
  on && /^}/{on=0; close(file)}' "$spaces"
for body in "$out"/*.body; do
    cat "$out/.head" "$body" >"${body%.body}.cmt"
    rm -f "$body"
done
rm -f "$out/.head"
for page in docs/errors/E037*.md docs/errors/E038*.md; do
    [ -f "$page" ] || continue
    awk '/^```cmt/{on=1; next} on && /^```/{exit} on{print}' "$page" \
        >"$out/$(basename "$page" .md).cmt"
done
