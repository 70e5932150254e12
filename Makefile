# cgjit - plain Makefile; dependencies through pkg-config (Debian: libzstd-dev libyaml-dev
# libcmocka-dev). `make check` builds and runs every test; `make check-asan` does the same
# under ASan+UBSan in a separate build directory.
PKGS      := libzstd yaml-0.1
CC        ?= cc
CFLAGS    ?= -O2 -g
WARN      := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes \
             -Wmissing-prototypes -Wvla -Wformat=2
SANFLAGS  := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer)
ALL_CFLAGS = -std=c11 -D_DEFAULT_SOURCE $(WARN) $(CFLAGS) $(SANFLAGS) $(shell pkg-config --cflags $(PKGS))
LDLIBS_LIB = $(shell pkg-config --libs $(PKGS))
B         ?= build

LIB_SRCS  := $(filter-out src/cgjit.c src/cmd_%.c,$(wildcard src/*.c))
CLI_SRCS  := src/cgjit.c $(wildcard src/cmd_*.c)
LIB_OBJS  := $(LIB_SRCS:src/%.c=$(B)/obj/%.o)
CLI_OBJS  := $(CLI_SRCS:src/%.c=$(B)/obj/%.o)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNITS     := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)

.DELETE_ON_ERROR:
.PHONY: all check unit e2e check-asan clean bench setup samples

all: $(B)/cgjit $(B)/cgcheck

$(B)/obj/%.o: src/%.c $(wildcard src/*.h)
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/libcgjit.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(B)/cgjit: $(CLI_OBJS) $(B)/libcgjit.a
	$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJS) $(B)/libcgjit.a $(LDLIBS_LIB)

# The test oracle shares no code with src/ on purpose.
$(B)/cgcheck: tests/tools/cgcheck.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_DEFAULT_SOURCE $(WARN) $(CFLAGS) $(SANFLAGS) -o $@ $<

$(B)/tests/test_%: tests/unit/test_%.c $(B)/libcgjit.a $(wildcard src/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc $(shell pkg-config --cflags cmocka) -o $@ $< $(B)/libcgjit.a \
		$(LDLIBS_LIB) $(shell pkg-config --libs cmocka)

unit: $(UNITS)
	@set -e; for t in $(UNITS); do echo "== $$t"; $$t; done

e2e: $(B)/cgjit $(B)/cgcheck
	@CGCHECK=$(B)/cgcheck tests/tools/cgcheck-selftest.sh
	@CGJIT=$(B)/cgjit CGCHECK=$(B)/cgcheck tests/e2e/run.sh

check: unit e2e

check-asan:
	$(MAKE) B=build-asan SANITIZE=address,undefined CFLAGS="-O1 -g" check

bench: $(B)/cgjit
	scripts/bench

setup:
	scripts/setup

samples:
	scripts/make-samples

clean:
	rm -rf build build-asan
