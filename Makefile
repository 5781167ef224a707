# Makefile - builds prof, libprof.a and libprof.so, the tests and the fuzzer.  Hand-written;
# ./configure (run by make itself when needed) only writes config.mk and
# config.h.  `make SANITIZE=1 ...` builds everything with ASan+UBSan in
# build-san/; `make CI=true` or `make WERROR=1` turns warnings into errors.

SANITIZE ?=
FUZZ_SECONDS ?= 60
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
DESTDIR ?=

# O: the build directory.  The plain build also puts prof at the top.
ifeq ($(SANITIZE),1)
O ?= build-san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
O ?= build
SAN_FLAGS :=
endif
BIN := $(if $(filter build,$(O)),prof,$(O)/prof)
# The shared library: the soname changes only when the API breaks.
VERSION := $(shell sed -n 's/^\#define PROF_VERSION "\(.*\)"$$/\1/p' lib/prof/base.h)
SONAME := libprof.so.0
SHLIB := $(O)/libprof.so.$(VERSION)

# Goals that must work without configuring (and so without dependencies).
NOCONF_GOALS := clean distclean
ifneq ($(filter-out $(NOCONF_GOALS),$(or $(MAKECMDGOALS),all)),)
include config.mk
endif

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes
ifneq ($(filter true 1,$(CI) $(WERROR)),)
WARN += -Werror
endif
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(SAN_FLAGS) -D_GNU_SOURCE -I. -Ilib -I$(O) -MMD -MP
ALL_LDFLAGS = $(LDFLAGS) $(SAN_FLAGS)
# Ground-truth targets: optimized, debug info, and no frame pointers, as the
# programs prof exists for are built.
TARGET_CFLAGS = -O2 -g -fomit-frame-pointer -fno-inline-functions-called-once

LIB_SRCS := $(wildcard lib/*.c lib/*/*.c)
CMD_SRCS := $(wildcard cmd/*.c)
UNIT_SRCS := $(wildcard tests/unit/*.c)
# tests/targets/lib*.c are shared libraries for the targets, not programs.
TARGET_SRCS := $(filter-out tests/targets/lib%.c,$(wildcard tests/targets/*.c))
TARGET_LIB_SRCS := $(wildcard tests/targets/lib*.c)
TARGET_CXX_SRCS := $(wildcard tests/targets/*.cpp)
LIB_OBJS := $(LIB_SRCS:%.c=$(O)/%.o)
CMD_OBJS := $(CMD_SRCS:%.c=$(O)/%.o)
UNIT_OBJS := $(UNIT_SRCS:%.c=$(O)/%.o)
TARGETS := $(TARGET_SRCS:tests/targets/%.c=$(O)/targets/%) \
	$(TARGET_CXX_SRCS:tests/targets/%.cpp=$(O)/targets/%)
TARGET_LIBS := $(TARGET_LIB_SRCS:tests/targets/%.c=$(O)/targets/%.so)
TOOLS := $(O)/spoolgen $(O)/spooledit $(O)/trickle $(O)/livegen $(O)/rectail $(O)/fuzz-replay $(O)/hottest \
	$(O)/unwind-replay

.PHONY: all check demo install clean distclean fuzz tests abi-baseline
.DELETE_ON_ERROR:

all: $(BIN) $(SHLIB)

config.mk: configure.ac
	@.ci/deps build
	autoconf && autoheader
	./configure

config.h: config.mk

$(O)/%.o: %.c config.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# lib/'s objects go into the shared library too: position-independent.
$(O)/lib/%.o: lib/%.c config.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -c $< -o $@

# The flame graph's script, as a C string literal for lib/report/output_svg.c,
# which writes it inside a CDATA section: "]]>" would end that early.
$(O)/flamegraph_js.h: lib/report/flamegraph.js
	@mkdir -p $(@D)
	@if grep -q ']]>' $<; then echo "$<: must not hold ']]>'" >&2; exit 1; fi
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@

$(O)/lib/report/output_svg.o: $(O)/flamegraph_js.h

$(O)/libprof.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# Exporting prof_* only (lib/libprof.map): what lib/ shares inside stays inside.
$(SHLIB): $(LIB_OBJS) lib/libprof.map
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=lib/libprof.map \
		-Wl,--no-undefined -o $@ $(LIB_OBJS) $(PROF_LIBS)

$(BIN): $(CMD_OBJS) $(O)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(CMD_OBJS) $(O)/libprof.a $(PROF_LIBS)

# tests/fuzz/spool_image.c takes spools apart and puts them back together:
# for the fuzzer's mutator, its replay, the unit tests and spooledit.
$(O)/unit-tests: $(UNIT_OBJS) $(O)/tests/fuzz/spool_image.o $(O)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PROF_LIBS)

$(O)/spoolgen: $(O)/tests/tools/spoolgen.o $(O)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PROF_LIBS)

$(O)/spooledit: $(O)/tests/tools/spooledit.o $(O)/tests/fuzz/spool_image.o
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lz

# trickle copies a file a few bytes at a time; livegen writes a long
# synthetic live spool (bench/tail-memory); rectail drives a recorder's tail.
$(O)/trickle: $(O)/tests/tools/trickle.o
	$(CC) $(ALL_LDFLAGS) -o $@ $^

$(O)/livegen: $(O)/tests/tools/livegen.o $(O)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PROF_LIBS)

$(O)/rectail: $(O)/tests/tools/rectail.o $(O)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PROF_LIBS)

# unwind-replay times the unwinding engines on captured samples (bench/unwind).
$(O)/unwind-replay: $(O)/tests/tools/unwind-replay.o $(O)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PROF_LIBS)

$(O)/hottest: $(O)/examples/hottest.o $(O)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PROF_LIBS)

FUZZ_SRCS := tests/fuzz/fuzz-spool.c tests/fuzz/mutate.c tests/fuzz/spool_image.c

$(O)/fuzz-replay: $(FUZZ_SRCS:%.c=$(O)/%.o) $(O)/tests/fuzz/replay.o $(O)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PROF_LIBS)

$(O)/targets/%: tests/targets/%.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $< -lpthread -ldl

$(O)/targets/%: tests/targets/%.cpp
	@mkdir -p $(@D)
	$(CXX) $(TARGET_CFLAGS) -o $@ $< -lpthread

$(O)/targets/lib%.so: tests/targets/lib%.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -shared -fPIC -o $@ $<

tests: $(BIN) $(SHLIB) $(O)/unit-tests $(TOOLS) $(TARGETS) $(TARGET_LIBS)

# What the tests need (g++ for the C++ target among them) is installed
# before anything is built, so that `make check` works on a fresh machine.
check:
	@.ci/deps check
	@$(MAKE) --no-print-directory tests
	@PROF=$(abspath $(BIN)) BUILD=$(abspath $(O)) SANITIZE=$(SANITIZE) tests/run

# Record the bundled ladder (main -> ladder_a -> ... -> ladder_d, -O2, no
# frame pointers) and report it.
demo: $(BIN) $(O)/targets/ladder
	./$(BIN) record -o $(O)/demo.spool -- $(O)/targets/ladder 2
	./$(BIN) report $(O)/demo.spool

# The ABI of the soname, as released: made once when a soname begins (and
# committed), then held to by tests/cli/96-abi.bats.  Never remade to make
# that test pass: a change it refuses needs a new soname.
abi-baseline: $(SHLIB)
	abidw --exported-interfaces-only --headers-dir lib/prof --header-file lib/prof.h \
		--drop-private-types --no-corpus-path --no-comp-dir-path \
		--out-file tests/abi/$(SONAME).abi $(SHLIB)

# libFuzzer over the spool reader, seeded with tests/fuzz/corpus.  The reader
# is the one prof ships, checksums and all: the structure-aware mutator
# (tests/fuzz/mutate.c) redoes them, so what it finds replays anywhere.
fuzz: $(O)/flamegraph_js.h
	@.ci/deps fuzz
	@mkdir -p $(O)/fuzz-corpus
	$(CLANG) -std=gnu11 -g -O1 -D_GNU_SOURCE -I. -Ilib -I$(O) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(LIB_SRCS) $(FUZZ_SRCS) -o $(O)/fuzz-spool $(PROF_LIBS)
	$(O)/fuzz-spool -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 \
		$(O)/fuzz-corpus tests/fuzz/corpus

# libprof.pc is written here, for the PREFIX and LIBDIR installed to.
install: $(BIN) $(O)/libprof.a $(SHLIB)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/vendor-completions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/prof
	install -m 644 $(O)/libprof.a $(DESTDIR)$(LIBDIR)/libprof.a
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libprof.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@PRIVATE_LIBS@|$(strip $(filter-out -ldw -lelf -lz,$(PROF_LIBS)))|' \
		lib/libprof.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/libprof.pc
	install -d $(DESTDIR)$(PREFIX)/include/prof
	install -m 644 lib/prof.h $(DESTDIR)$(PREFIX)/include/prof.h
	install -m 644 lib/prof/*.h $(DESTDIR)$(PREFIX)/include/prof/
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 644 completions/prof.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/prof
	install -m 644 completions/_prof $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_prof
	install -m 644 completions/prof.fish \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/prof.fish
	@if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi

clean:
	rm -rf build build-san prof $(filter-out build build-san,$(O))

distclean: clean
	rm -rf config.mk config.h config.h.in config.h.in~ config.log config.status configure \
		autom4te.cache

-include $(wildcard $(O)/*/*.d $(O)/*/*/*.d $(O)/*/*/*/*.d)
