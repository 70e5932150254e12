# cgjit - plain Makefile; dependencies through pkg-config (Debian: libzstd-dev zlib1g-dev libyaml-dev libjansson-dev libdw-dev
# libcmocka-dev). `make check` builds and runs every test; `make check-asan` does the same
# under ASan+UBSan in a separate build directory (the end-to-end scripts' checker, cgcheck,
# optimised but for its own self-test); `make check-clang` builds everything with
# clang in another (the word-at-a-time digit reading off) and runs the unit tests and
# fuzz replays. `make DEVELOPER=1 ...` (CI, .ci/run) turns
# warnings into errors; a user's build does not, so a newer compiler's new warning cannot
# break it. Header dependencies come from the compiler (-MMD -MP, the .d files beside the
# objects).
PKGS      := libzstd zlib yaml-0.1 jansson libdw
CC        ?= cc
CFLAGS    ?= -O2 -g
WARN      := -Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes \
             -Wmissing-prototypes -Wvla -Wformat=2
DEVFLAGS  := $(if $(filter 1,$(DEVELOPER)),-Werror)
SANFLAGS  := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer)
DEPFLAGS  := -MMD -MP
# CPPFLAGS and LDFLAGS are the user's (scripts/make-deb passes dpkg-buildflags' hardening).
# Unwind tables: the read-ahead thread is cancelled inside a read (core/readahead.c), and
# glibc unwinds its frames then; the default on amd64 and arm64, not on every target.
# GCC's SLP vectorizer (on at -O2 since GCC 12) joins two 8-byte fields next to each other
# into one 16-byte load; where they were just stored one by one (a record built by the
# reader and read by augment, one call apart) the load waits for both stores (a store
# forwarding stall: half the perf samples of rewrite.c's call_line() on the bench
# profile). Off where the compiler takes the option; a CFLAGS -ftree-slp-vectorize wins.
NOSLP     := $(shell $(CC) -fno-tree-slp-vectorize -Werror -E -x c /dev/null >/dev/null 2>&1 && echo -fno-tree-slp-vectorize)
ALL_CFLAGS = -std=c11 -D_DEFAULT_SOURCE -Isrc -fasynchronous-unwind-tables $(WARN) $(DEVFLAGS) $(NOSLP) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(shell pkg-config --cflags $(PKGS))
LDLIBS_LIB = $(shell pkg-config --libs $(PKGS)) -pthread   # the flusher and read-ahead threads
B         ?= build

# src/ by layer (src/README.md): every folder but cmd/ is the library, cmd/ the program.
LIB_SRCS  := $(filter-out src/cmd/%,$(wildcard src/*/*.c))
CLI_SRCS  := $(wildcard src/cmd/*.c)
LIB_OBJS  := $(LIB_SRCS:src/%.c=$(B)/obj/%.o)
CLI_OBJS  := $(CLI_SRCS:src/%.c=$(B)/obj/%.o)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNITS     := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)

# The JVMTI agent (agent/, docs/jvmti.md): built when a JDK's jvmti.h is found. JAVA_HOME
# is taken from javac's real path, else Debian's default JDK. Its pure parts
# (AGENT_PURE) need no JDK and are linked into their unit test.
JAVA_HOME ?= $(or $(patsubst %/bin/javac,%,$(realpath $(shell command -v javac 2>/dev/null))),/usr/lib/jvm/default-java)
JVMTI_H   := $(wildcard $(JAVA_HOME)/include/jvmti.h)
AGENT_PURE := agent/java_names.c agent/jitdump_writer.c
AGENT_PURE_OBJS := $(AGENT_PURE:agent/%.c=$(B)/obj/agent/%.o)
AGENT_SO  := $(if $(JVMTI_H),$(B)/libcgjit-jvmti.so)
ifeq ($(JVMTI_H)$(MAKELEVEL),0)
$(info make: no JDK (jvmti.h not in JAVA_HOME=$(JAVA_HOME)): libcgjit-jvmti.so is not built)
endif

.DELETE_ON_ERROR:
.PHONY: all check unit e2e check-asan check-clang clean bench setup samples install uninstall

all: $(B)/cgjit $(B)/cgcheck $(AGENT_SO) $(B)/cgjit_luajit.lua

# The LuaJIT agent (docs/luajit.md) is Lua: copied beside cgjit, where `cgjit record` finds it.
$(B)/cgjit_luajit.lua: agent/cgjit_luajit.lua
	@mkdir -p $(dir $@)
	cp $< $@

$(B)/obj/%.o: src/%.c $(B)/obj/%.d
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(B)/libcgjit.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(B)/cgjit: $(CLI_OBJS) $(B)/libcgjit.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJS) $(B)/libcgjit.a $(LDLIBS_LIB)

# No sanitizers: the JVM would have to load their runtime first. No libzstd/yaml/jansson.
$(B)/libcgjit-jvmti.so: agent/jvmti_agent.c $(AGENT_PURE) $(wildcard agent/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_DEFAULT_SOURCE $(WARN) $(DEVFLAGS) $(CPPFLAGS) $(CFLAGS) -fPIC -shared -fvisibility=hidden \
		-isystem $(JAVA_HOME)/include -isystem $(JAVA_HOME)/include/linux \
		$(LDFLAGS) -o $@ agent/jvmti_agent.c $(AGENT_PURE) -pthread

$(B)/obj/agent/%.o: agent/%.c $(B)/obj/agent/%.d
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<

# The agent's unit test links its pure objects as well.
$(B)/tests/test_jvmti: $(AGENT_PURE_OBJS)
$(B)/tests/test_jvmti: UNIT_EXTRA = $(AGENT_PURE_OBJS) -Iagent

# The reader alone, for scripts/bench's "reading alone" row (scripts/bench_read.c); check
# builds it too (tests/e2e/inputs.sh runs it), so that it keeps compiling with the library.
$(B)/bench-read: scripts/bench_read.c $(B)/libcgjit.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libcgjit.a $(LDLIBS_LIB)

# The test oracle shares no code with src/ on purpose.
$(B)/cgcheck: tests/tools/cgcheck.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_DEFAULT_SOURCE $(WARN) $(DEVFLAGS) $(CFLAGS) $(SANFLAGS) -o $@ $<

$(B)/tests/test_%: tests/unit/test_%.c $(B)/tests/test_%.d $(B)/libcgjit.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Isrc $(shell pkg-config --cflags cmocka) -o $@ $< $(UNIT_EXTRA) $(B)/libcgjit.a \
		$(LDLIBS_LIB) $(shell pkg-config --libs cmocka)

unit: $(UNITS)
	@set -e; for t in $(UNITS); do echo "== $$t"; $$t; done

# The scripts run two (E2E_JOBS, default: the CPUs) at a time, the longest first, each
# script's output printed whole when it ends (tests/e2e/run-all.sh). Longest as measured
# on the 2-core machine (2026-11-27: reports 250 s with callgrind_annotate's answers kept
# from check, 350 to 410 s without, as in a fresh clone's check; flame and run about 200 s
# each; record 100 to 120; ids 70 to 85, which as the last started had ended check-asan
# alone).
E2E_SCRIPTS := tests/e2e/reports.sh tests/e2e/run.sh tests/e2e/flame.sh tests/e2e/record.sh \
	tests/e2e/ids.sh tests/e2e/wasm.sh tests/e2e/names.sh tests/e2e/ci-example.sh tests/e2e/jvmti.sh \
	tests/e2e/files.sh tests/e2e/install.sh tests/e2e/timeline.sh tests/e2e/inputs.sh tests/e2e/cli.sh \
	tests/e2e/luajit.sh tests/e2e/raptorjit.sh tests/e2e/foreign.sh tests/tools/cgcheck-selftest.sh \
	tests/tools/check-layers.pl

# callgrind_annotate's answers, kept by the content of what it read (tests/e2e/Annotate.pm):
# check-asan asks the same of the same files as check, and most of reports.sh's time was
# callgrind_annotate's. The same directory whatever B is.
ANNOTATE_CACHE ?= $(CURDIR)/build/annotate-cache

# The checker the scripts run on every output (tests/tools/cgcheck.c): this build's, but
# check-asan gives them the optimised one and keeps its own for cgcheck's self-test, the
# checker's code under ASan and UBSan: the sanitized checker took 96 of run.sh's 259 s
# under check-asan on the 2-core machine (163 s with the optimised one, run side by side).
E2E_CGCHECK ?= $(B)/cgcheck

e2e: $(B)/cgjit $(B)/cgcheck $(E2E_CGCHECK) $(AGENT_SO) $(B)/cgjit_luajit.lua $(B)/bench-read
	@CGJIT=$(B)/cgjit CGCHECK=$(E2E_CGCHECK) CGCHECK_SELFTEST=$(B)/cgcheck JVMTI_AGENT=$(AGENT_SO) \
		CGJIT_ANNOTATE_CACHE=$(ANNOTATE_CACHE) \
		tests/e2e/run-all.sh $(E2E_SCRIPTS)

# What check runs is built first, a job per CPU (a fresh clone's build, unit tests and fuzz
# replays took 53 s one job at a time and 27 s two at a time on the 2-core machine); the
# tests then run in order.
NPROC ?= $(shell nproc 2>/dev/null || echo 2)
check:
	$(MAKE) -j$(NPROC) $(B)/cgjit $(B)/cgcheck $(AGENT_SO) $(B)/cgjit_luajit.lua $(UNITS) \
		$(FUZZ_REPLAYS) $(B)/bench-read
	$(MAKE) unit fuzz-replay e2e

# Install (GNU conventions): `make install PREFIX=/usr/local DESTDIR=`, `make uninstall`
# with the same variables. Install copies what `make` built in $(B) and builds only what is
# missing or out of date (so `sudo make install` after `make` compiles nothing); the man
# pages are every man/*.1, installed as they are (scripts/make-deb compresses them).
# The JVMTI agent, when it was built, and the LuaJIT agent go to $(LIBDIR)/cgjit, where
# `cgjit record` looks for them (BINDIR/../lib/cgjit: keep BINDIR and LIBDIR siblings, or
# set CGJIT_JVMTI_AGENT / CGJIT_LUAJIT_AGENT).
# Uninstall removes those files and nothing else, not even the directories.
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
MANDIR       ?= $(PREFIX)/share/man
INSTALL      ?= install
INSTALL_PROGRAM ?= $(INSTALL)
INSTALL_DATA ?= $(INSTALL) -m 644
MAN1         := $(wildcard man/*.1)

install: $(B)/cgjit $(AGENT_SO) $(B)/cgjit_luajit.lua
	$(INSTALL) -d -m 755 "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(LIBDIR)/cgjit"
	$(INSTALL_PROGRAM) $(B)/cgjit "$(DESTDIR)$(BINDIR)/cgjit"
	$(INSTALL_DATA) $(MAN1) "$(DESTDIR)$(MANDIR)/man1/"
	$(if $(AGENT_SO),$(INSTALL_DATA) $(AGENT_SO) "$(DESTDIR)$(LIBDIR)/cgjit/libcgjit-jvmti.so")
	$(INSTALL_DATA) $(B)/cgjit_luajit.lua "$(DESTDIR)$(LIBDIR)/cgjit/cgjit_luajit.lua"

uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/cgjit" "$(DESTDIR)$(LIBDIR)/cgjit/libcgjit-jvmti.so" \
		"$(DESTDIR)$(LIBDIR)/cgjit/cgjit_luajit.lua" \
		$(MAN1:man/%="$(DESTDIR)$(MANDIR)/man1/%")

# float-cast-overflow is not part of gcc's -fsanitize=undefined (it is of clang's): a
# double converted to an integer out of range printed a budget's soft limit as 0.
check-asan:
	$(MAKE) build/cgcheck
	$(MAKE) B=build-asan SANITIZE=address,undefined,float-cast-overflow CFLAGS="-O1 -g" \
		E2E_CGCHECK=$(CURDIR)/build/cgcheck check

# The second compiler: clang warns where gcc does not (with DEVELOPER=1 both are errors),
# and decides otherwise where C leaves the choice open, such as the order in which a
# call's arguments are evaluated (gcc happened to hide a use of a moved buffer in
# prof_diff.c). Everything is built in build-clang/; the unit tests and the fuzz replays
# run there (the end-to-end tests need no second run: they test the same code paths).
# It is built with -DCGJIT_NO_SWAR: the code that reads digits a word at a time
# (pseudo_name.c, callgrind_costs.c) falls back to its byte loops, as on big-endian hosts,
# so that those loops are tested here too.
CLANG ?= clang
check-clang:
	$(MAKE) B=build-clang CC=$(CLANG) CFLAGS="-O2 -g -DCGJIT_NO_SWAR" all unit fuzz-replay

bench: $(B)/cgjit
	scripts/bench

setup:
	scripts/setup

samples:
	scripts/make-samples

clean:
	rm -rf build build-asan build-clang build-fuzz build-deb

# --- fuzzing --- (tests/fuzz/, scripts/fuzz; kept self-contained)
# `make fuzz [FUZZ_SECONDS=60]` builds one libFuzzer binary per parser with clang (src/*/*.c
# compiled in, ASan+UBSan) in build-fuzz/ and runs each for FUZZ_SECONDS over its stored
# corpus (with tests/fuzz/<target>.dict); new inputs go to build-fuzz/corpus/<target>,
# findings to build-fuzz/artifacts/, each run's log to build-fuzz/<target>.log (read by
# scripts/fuzz). `make fuzz-merge` minimizes stored + new inputs back into
# tests/fuzz/corpus/<target>. `make fuzz-replay` replays every corpus and
# tests/fuzz/crashes/<target>-* with $(CC) and the library in $(B) (part of `check`).
FUZZ_TARGETS := callgrind perfmap jitdump augment profile budget reports auditlog
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_B       := build-fuzz
FUZZ_FLAGS   := -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256
FUZZ_CFLAGS   = -std=c11 -D_DEFAULT_SOURCE $(WARN) -g -O1 \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
                -fno-omit-frame-pointer -Isrc $(shell pkg-config --cflags $(PKGS))
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_B)/fuzz_%)
FUZZ_REPLAYS := $(FUZZ_TARGETS:%=$(B)/fuzz/replay_%)
FUZZ_OBJS    := $(B)/fuzz/replay.o $(FUZZ_TARGETS:%=$(B)/fuzz/fuzz_%.o)

.PHONY: fuzz fuzz-build fuzz-merge fuzz-replay fuzz-clean

# One clang command compiles all of src/ into each binary: -MMD would keep only one
# source's headers, so they are listed here.
$(FUZZ_B)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(LIB_SRCS) $(wildcard src/*/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(LIB_SRCS) $(LDLIBS_LIB)

fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	@fail=0; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_B)/corpus/$$t $(FUZZ_B)/artifacts; \
		echo "== fuzz_$$t for $(FUZZ_SECONDS)s (log: $(FUZZ_B)/$$t.log)"; \
		if ! $(FUZZ_B)/fuzz_$$t $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_B)/artifacts/$$t- \
			$$(test -f tests/fuzz/$$t.dict && echo -dict=tests/fuzz/$$t.dict) \
			$(FUZZ_B)/corpus/$$t tests/fuzz/corpus/$$t >$(FUZZ_B)/$$t.log 2>&1; then \
			tail -n 40 $(FUZZ_B)/$$t.log; echo "fuzz_$$t: FAILED (reproducer in $(FUZZ_B)/artifacts/)"; fail=1; \
		else grep -h '^Done ' $(FUZZ_B)/$$t.log; fi; \
	done; exit $$fail

# Edges only (no hit-count buckets, no comparison features): the stored corpora stay small.
fuzz-merge: $(FUZZ_BINS)
	@set -e; for t in $(FUZZ_TARGETS); do \
		rm -rf $(FUZZ_B)/merged/$$t; mkdir -p $(FUZZ_B)/merged/$$t $(FUZZ_B)/corpus/$$t; \
		$(FUZZ_B)/fuzz_$$t $(FUZZ_FLAGS) -merge=1 -use_counters=0 -use_cmp=0 $(FUZZ_B)/merged/$$t \
			tests/fuzz/corpus/$$t $(FUZZ_B)/corpus/$$t >$(FUZZ_B)/$$t.merge.log 2>&1; \
		rm -rf tests/fuzz/corpus/$$t; mv $(FUZZ_B)/merged/$$t tests/fuzz/corpus/$$t; \
		echo "fuzz_$$t: $$(ls tests/fuzz/corpus/$$t | wc -l) inputs, $$(cat tests/fuzz/corpus/$$t/* | wc -c) bytes"; \
	done

# Compiled one source per object, so that each .d file lists that source's headers.
$(FUZZ_OBJS): $(B)/fuzz/%.o: tests/fuzz/%.c $(B)/fuzz/%.d
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Isrc -c -o $@ $<

$(FUZZ_REPLAYS): $(B)/fuzz/replay_%: $(B)/fuzz/replay.o $(B)/fuzz/fuzz_%.o $(B)/libcgjit.a
	$(CC) $(ALL_CFLAGS) -o $@ $(B)/fuzz/replay.o $(B)/fuzz/fuzz_$*.o $(B)/libcgjit.a $(LDLIBS_LIB)

fuzz-replay: $(FUZZ_REPLAYS)
	@set -e; for t in $(FUZZ_TARGETS); do \
		printf 'fuzz-replay %s: ' $$t; \
		$(B)/fuzz/replay_$$t tests/fuzz/corpus/$$t $$(ls -d tests/fuzz/crashes/$$t-* 2>/dev/null); \
	done

fuzz-clean:
	rm -rf $(FUZZ_B)
# --- end fuzzing ---

# Header dependencies: each compile writes its .d (-MMD -MP) beside its output. A target
# whose .d is missing (never built with -MMD, or deleted) depends on that missing file and
# is rebuilt, so no object is left without its header list.
# Listed by name, not by pattern: a missing intermediate file would not force a rebuild.
DEPS := $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(AGENT_PURE_OBJS:.o=.d) $(UNITS:=.d) $(FUZZ_OBJS:.o=.d)
$(DEPS): ;
include $(wildcard $(DEPS))
