# cmtc — build out of tree in build/.  Sources are globbed, so adding a
# file to one of the layers' folders (LAYER_DIRS) needs no change here.
CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
RE2C    ?= re2c
BISON   ?= bison

WARN    = -std=c11 -Wall -Wextra -Wpedantic -Werror
CFLAGS  ?= -O2 -g
CPPFLAGS += -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -I$(BUILD)/gen \
            -DCMT_STDLIB_DIR='"$(PREFIX)/share/cmtc/stdlib"' \
            -DCMT_SOURCE_STDLIB='"$(CURDIR)/stdlib"' -DCMT_SOURCE_ROOT='"$(CURDIR)"'
LDLIBS  = -ljansson -llpsolve55 -lcolamd -ldl -lm

# The layers, lowest first (README, Architecture; `make layering` checks it).
LAYER_DIRS = frontend/util ir frontend passes passes/optimize backend
SRC      = $(wildcard $(addsuffix /*.c,$(LAYER_DIRS)))
MAIN_SRC = backend/main.c
LIB_SRC  = $(filter-out $(MAIN_SRC),$(SRC))
GEN_C    = $(BUILD)/gen/cmt.lex.c $(BUILD)/gen/cmt.tab.c
ERROR_PAGES = $(sort $(wildcard docs/errors/[EW]*.md))
OBJ      = $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) \
           $(BUILD)/obj/gen/cmt.lex.o $(BUILD)/obj/gen/cmt.tab.o \
           $(BUILD)/obj/gen/errors.o
HDR      = $(wildcard $(addsuffix /*.h,$(LAYER_DIRS))) $(BUILD)/gen/cmt.tab.h
UNIT_SRC = $(wildcard tests/unit/*.c)
UNIT_BIN = $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRC))

.PHONY: all check test unit validate verify-long asan valgrind fuzz bench layering lint fmt install vsix vscode-deps clean FORCE
all: $(BUILD)/cmtc

$(BUILD)/gen/cmt.tab.c $(BUILD)/gen/cmt.tab.h: lang/cmt.y
	@mkdir -p $(BUILD)/gen
	$(BISON) -Wall -Werror -Wcounterexamples -d -o $(BUILD)/gen/cmt.tab.c $<

$(BUILD)/gen/cmt.lex.c: lang/cmt.re $(BUILD)/gen/cmt.tab.h
	@mkdir -p $(BUILD)/gen
	$(RE2C) -W -Werror --no-generation-date --no-version -o $@ $<

$(BUILD)/gen/errors.c: $(ERROR_PAGES) backend/embed_errors.sh
	@mkdir -p $(BUILD)/gen
	sh backend/embed_errors.sh $@ $(ERROR_PAGES)

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -Wno-unused-function $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: %.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c -o $@ $<

# The installed stdlib path is compiled in: rebuild stdlib_path.o when PREFIX
# changes.  (A binary inside this tree still reads this tree's stdlib/:
# backend/stdlib_path.c.)
$(BUILD)/prefix.stamp: FORCE
	@mkdir -p $(BUILD)
	@echo '$(PREFIX)' | cmp -s - $@ || echo '$(PREFIX)' > $@
$(BUILD)/obj/backend/stdlib_path.o: $(BUILD)/prefix.stamp
FORCE:

$(BUILD)/libcmt.a: $(OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/cmtc: $(BUILD)/obj/$(MAIN_SRC:.c=.o) $(BUILD)/libcmt.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/unit/%: tests/unit/%.c $(BUILD)/libcmt.a $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -o $@ $< $(BUILD)/libcmt.a $(LDLIBS)

unit: $(UNIT_BIN) $(BUILD)/validate

# The validation suite against measurements of real systems
# (tests/validation/rows.txt, docs/validation.md): one line per row, then
# the summary.  A report, not a pass/fail test: its own runner is tested by
# tests/suites/validate.sh.
$(BUILD)/validate: tests/validation/validate.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -o $@ $< -ljansson -lm

validate: all $(BUILD)/validate
	@$(BUILD)/validate $(BUILD)/cmtc tests/validation/rows.txt

# The reference interpreter's property test on 5000 random cases instead
# of the suite's 500 (CMT_VERIFY_SEED picks another seed).
verify-long: $(BUILD)/unit/test_verify_property
	CMT_VERIFY_CASES=$${CMT_VERIFY_CASES:-5000} $(BUILD)/unit/test_verify_property

# The one test runner: golden files, unit tests, docs examples, LSP
# transcripts.  Ends with `N passed, N failed` (`, N skipped` when a test
# needs a tool that is not installed).
check test: all unit
	@CMTC=$(BUILD)/cmtc VALIDATE=$(BUILD)/validate UNIT_DIR=$(BUILD)/unit sh tests/run.sh

asan:
	$(MAKE) BUILD=build-asan CC=clang \
	  CFLAGS='-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined' \
	  LDFLAGS='-fsanitize=address,undefined' check

valgrind: all unit
	@CMTC=$(BUILD)/cmtc UNIT_DIR=$(BUILD)/unit VALGRIND=1 sh tests/run.sh

fuzz:
	$(MAKE) BUILD=build-fuzz CC=clang \
	  CFLAGS='-O1 -g -fsanitize=fuzzer-no-link,address,undefined' build-fuzz/libcmt.a
	clang $(CPPFLAGS:$(BUILD)/gen=build-fuzz/gen) $(WARN) -O1 -g \
	  -fsanitize=fuzzer,address,undefined -o build-fuzz/fuzz_frontend \
	  tests/fuzz/fuzz_frontend.c build-fuzz/libcmt.a $(LDLIBS)
	clang $(CPPFLAGS:$(BUILD)/gen=build-fuzz/gen) $(WARN) -O1 -g \
	  -fsanitize=fuzzer,address,undefined -o build-fuzz/fuzz_optimizer \
	  tests/fuzz/fuzz_optimizer.c build-fuzz/libcmt.a $(LDLIBS)
	@mkdir -p build-fuzz/corpus
	cp examples/*.cmt stdlib/std/*/*.cmt build-fuzz/corpus/ 2>/dev/null || true
	build-fuzz/fuzz_frontend -max_total_time=$${FUZZ_SECONDS:-60} -max_len=65536 \
	  -timeout=10 -rss_limit_mb=4096 build-fuzz/corpus
	sh tests/fuzz/optimizer_seeds.sh build-fuzz/corpus_opt
	build-fuzz/fuzz_optimizer -max_total_time=$${FUZZ_OPT_SECONDS:-30} -max_len=16384 \
	  -timeout=20 -rss_limit_mb=4096 build-fuzz/corpus_opt

bench: all
	@CMTC=$(BUILD)/cmtc sh tests/bench/run.sh

# The layering: no file includes a header of a higher layer, the syntax
# tree stays with the front end and the text tools, and no files or
# folders include each other in a cycle (tests/layering.sh).
layering:
	@sh tests/layering.sh $(LAYER_DIRS)

lint: layering
	clang-format --dry-run --Werror $(wildcard $(addsuffix /*.[ch],$(LAYER_DIRS)))

fmt:
	clang-format -i $(wildcard $(addsuffix /*.[ch],$(LAYER_DIRS)))

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/cmtc/stdlib \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/cmtc $(DESTDIR)$(PREFIX)/bin/cmtc
	cp -R stdlib/std $(DESTDIR)$(PREFIX)/share/cmtc/stdlib/
	install -m 644 docs/cmtc.1 $(DESTDIR)$(PREFIX)/share/man/man1/cmtc.1

# The VS Code extension as a .vsix (install it with `code --install-extension`
# or *Extensions: Install from VSIX...*).  Its npm packages, vscode-languageclient
# and the packager @vscode/vsce, are installed at the versions
# package-lock.json pins (`npm ci`) whenever the lock changes; vsce leaves the
# packager out of the .vsix.
VSCODE_DIR = docs/editors/vscode
VSIX     = $(BUILD)/cmt-language-$(shell sed -n 's/^  "version": "\(.*\)",$$/\1/p' $(VSCODE_DIR)/package.json).vsix
VSCODE_SRC = $(addprefix $(VSCODE_DIR)/,package.json extension.js language-configuration.json \
             syntaxes/cmt.tmLanguage.json README.md LICENSE .vscodeignore)

vsix: $(VSIX)
vscode-deps: $(VSCODE_DIR)/node_modules/.package-lock.json

$(VSCODE_DIR)/node_modules/.package-lock.json: $(VSCODE_DIR)/package-lock.json $(VSCODE_DIR)/package.json
	cd $(VSCODE_DIR) && npm ci --no-audit --no-fund
	@touch $@

$(VSIX): $(VSCODE_SRC) $(VSCODE_DIR)/node_modules/.package-lock.json
	@mkdir -p $(dir $@)
	cd $(VSCODE_DIR) && node_modules/.bin/vsce package --out $(abspath $@) </dev/null

clean:
	rm -rf build build-asan build-fuzz
