# Makefile - builds prof, libprof.a and libprof.so, the tests and the fuzzer.  Hand-written;
# ./configure writes config.mk and config.h (make runs it by itself when needed,
# again with the options it was last given).  `make SANITIZE=1 ...` builds
# everything with ASan+UBSan in build-san/; `make CI=true` or `make WERROR=1`
# turns warnings into errors.
#
# Installing packages: only the README's set-up commands, `make demo` and
# `make check`, do: they run .ci/deps first, which as root installs the Debian
# packages missing (apt-get) and, for check, the npm packages of tests/npm
# (npm ci, over the network).  NO_DEPS=1 (on make's command line or in the
# environment) turns that off, as a packager's `make check NO_DEPS=1` wants;
# a test whose tool is missing then skips, saying which (and fails under
# PROF_TEST_STRICT=1).  Plain `make`, `make install` and `make uninstall`
# never install anything or use the network.
#
# Directories are ./configure's (--prefix, --exec-prefix, --bindir, --libdir,
# --includedir, --datarootdir, --mandir), kept unexpanded, so make's command
# line overrides them as it does CFLAGS, CPPFLAGS and LDFLAGS:
# `make install prefix=/opt/x DESTDIR=...`.  The old PREFIX= and LIBDIR= are
# still taken from the command line.

SANITIZE ?=
FUZZ_SECONDS ?= 60
DESTDIR ?=
NO_DEPS ?=
# pkgconf's pkg.m4 (PKG_CHECK_MODULES), copied to aclocal.m4 for autoconf.
ACLOCAL_DIR ?= /usr/share/aclocal
# The header that holds PROF_VERSION (configure.ac names it too).
VERSION_H := lib/prof/base.h

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
VERSION := $(shell sed -n 's/^\#define PROF_VERSION "\(.*\)"$$/\1/p' $(VERSION_H))
SONAME := libprof.so.0
SHLIB := $(O)/libprof.so.$(VERSION)

# Goals that must work without configuring (and so without dependencies):
# demo and check install those first, then configure in a make of their own.
NOCONF_GOALS := clean distclean configure demo check
ifneq ($(filter-out $(NOCONF_GOALS),$(or $(MAKECMDGOALS),all)),)
include config.mk
endif

# The old spelling, PREFIX= and LIBDIR=, from the command line only (an
# environment's PREFIX, as conda and termux set, must not move an install).
ifeq ($(origin PREFIX),command line)
prefix = $(PREFIX)
endif
ifeq ($(origin LIBDIR),command line)
libdir = $(LIBDIR)
endif
pkgconfigdir = $(libdir)/pkgconfig
bashcompdir = $(datarootdir)/bash-completion/completions
zshcompdir = $(datarootdir)/zsh/vendor-completions
fishcompdir = $(datarootdir)/fish/vendor_completions.d
# systemd's units of the prefix: /usr/lib/systemd/system, /usr/local/lib/systemd/system
systemdunitdir = $(prefix)/lib/systemd/system
UNITS := prof-serve.service prof-push.service

ifeq ($(NO_DEPS),1)
DEPS := @true
else
DEPS := @.ci/deps
endif

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes
ifneq ($(filter true 1,$(CI) $(WERROR)),)
WARN += -Werror
endif
# The tree's own headers come before any -I of CPPFLAGS, which could hold an
# installed prof.h; CFLAGS come after WARN, so that -Wno-... in them wins.
# Linking gets CFLAGS too, as automake's does, for -flto and the like.
INCLUDES = -I. -Ilib -I$(O)
ALL_CFLAGS = -std=gnu11 $(INCLUDES) -D_GNU_SOURCE $(CPPFLAGS) $(PROF_CFLAGS) $(WARN) $(CFLAGS) \
	$(SAN_FLAGS) -MMD -MP
ALL_LDFLAGS = $(CFLAGS) $(LDFLAGS) $(SAN_FLAGS)
# Ground-truth targets: optimized, debug info, and no frame pointers, as the
# programs prof exists for are built.
TARGET_CFLAGS = -O2 -g -fomit-frame-pointer -fno-inline-functions-called-once

LIB_SRCS := $(wildcard lib/*.c lib/*/*.c)
CMD_SRCS := $(wildcard cmd/*.c)
UNIT_SRCS := $(wildcard tests/unit/*.c)
# tests/targets/lib*.c are shared libraries for the targets, not programs.
TARGET_SRCS := $(filter-out tests/targets/lib%.c,$(wildcard tests/targets/*.c))
TARGET_LIB_SRCS := $(wildcard tests/targets/lib*.c)
# Without a C++ compiler the C++ target is not built; the tests that profile
# it skip, saying so.
TARGET_CXX_SRCS := $(if $(shell command -v $(firstword $(CXX))),$(wildcard tests/targets/*.cpp))
LIB_OBJS := $(LIB_SRCS:%.c=$(O)/%.o)
CMD_OBJS := $(CMD_SRCS:%.c=$(O)/%.o)
UNIT_OBJS := $(UNIT_SRCS:%.c=$(O)/%.o)
TARGETS := $(TARGET_SRCS:tests/targets/%.c=$(O)/targets/%) \
	$(TARGET_CXX_SRCS:tests/targets/%.cpp=$(O)/targets/%)
TARGET_LIBS := $(TARGET_LIB_SRCS:tests/targets/%.c=$(O)/targets/%.so)
TOOLS := $(O)/spoolgen $(O)/spooledit $(O)/trickle $(O)/livegen $(O)/rectail $(O)/fuzz-replay $(O)/hottest \
	$(O)/unwind-replay

# The public headers as installed: prof/prof.h (the umbrella, lib/prof.h) and
# prof/*.h.  The example is built against a copy in $(O)/include, as a
# program outside the tree is against the installed ones.
PUBLIC_HDRS := $(wildcard lib/prof/*.h)
STAGED_HDRS := $(O)/include/prof/prof.h $(PUBLIC_HDRS:lib/prof/%=$(O)/include/prof/%)
MAN1 := $(wildcard man/*.1)
MAN5 := $(wildcard man/*.5)

.PHONY: all check demo install uninstall configure clean distclean fuzz tests abi-baseline FORCE
.DELETE_ON_ERROR:

all: $(BIN) $(SHLIB)

# ./configure from configure.ac; autoconf -f, since the version it takes
# from $(VERSION_H) is not a dependency autom4te's cache knows of.
define make_configure
	@test -f $(ACLOCAL_DIR)/pkg.m4 || { echo "make: $(ACLOCAL_DIR)/pkg.m4 not found:" \
		"apt-get install pkgconf, or make ACLOCAL_DIR=DIR" >&2; exit 1; }
	cp $(ACLOCAL_DIR)/pkg.m4 aclocal.m4
	autoconf -f && autoheader -f
endef

configure:
	$(make_configure)

# Configured again, with the options ./configure was last given, when
# configure.ac changed or $(VERSION_H) holds another version than configure
# (which must then hold that one, or make would configure for ever).
config.mk: configure.ac $(if $(filter-out $(VERSION),$(PROF_CONFIGURED_VERSION)),FORCE)
	$(make_configure)
	if [ -f config.status ]; then ./config.status --recheck && ./config.status; else ./configure; fi
	@v=$$(sed -n 's/^PROF_CONFIGURED_VERSION = //p' $@); [ "$$v" = "$(VERSION)" ] || \
		{ echo "make: configure says version $$v, $(VERSION_H) $(VERSION):" \
			"configure.ac must take it from $(VERSION_H)" >&2; exit 1; }

config.h: config.mk

$(O)/%.o: %.c config.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# lib/'s objects go into the shared library too: position-independent.
$(O)/lib/%.o: lib/%.c config.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -c $< -o $@

# The scripts and styles of lib/report, as C string literals: the flame
# graph's script for output_svg.c, which writes it inside a CDATA section
# ("]]>" would end that early); the viewer's script and style for
# output_html.c, inside the page's <script> and <style> ("</script",
# "</style" or "<!--" would end or confuse them).
EMBED_BAD := ]]>|</script|</style|<!--
define embed
	@mkdir -p $(@D)
	@if grep -qiE '$(EMBED_BAD)' $^; then echo "$^: must not hold ']]>', '</script', '</style' or '<!--'" >&2; exit 1; fi
	cat $^ | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' > $@
endef

$(O)/%_js.h: lib/report/%.js
	$(embed)

$(O)/%_css.h: lib/report/%.css
	$(embed)

# the viewer's model first: viewer.js uses it
$(O)/viewer_js.h: lib/report/viewer_model.js lib/report/viewer.js
	$(embed)

EMBEDDED := $(O)/flamegraph_js.h $(O)/viewer_js.h $(O)/viewer_css.h
$(O)/lib/report/output_svg.o: $(O)/flamegraph_js.h
$(O)/lib/report/output_html.o: $(O)/viewer_js.h $(O)/viewer_css.h

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

$(O)/spooledit: $(O)/tests/tools/spooledit.o $(O)/tests/fuzz/spool_image.o $(O)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PROF_LIBS)

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

$(O)/include/prof/prof.h: lib/prof.h
	@mkdir -p $(@D)
	cp $< $@

$(O)/include/prof/%.h: lib/prof/%.h
	@mkdir -p $(@D)
	cp $< $@

$(O)/examples/hottest.o: INCLUDES = -I$(O)/include
$(O)/examples/hottest.o: $(STAGED_HDRS)

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
# before anything is built, so that `make check` works on a fresh machine;
# NO_DEPS=1 leaves the machine as it is.
check:
	$(DEPS) check
	@$(MAKE) --no-print-directory tests
	@PROF=$(abspath $(BIN)) BUILD=$(abspath $(O)) SANITIZE=$(SANITIZE) tests/run

# Record the bundled ladder (main -> ladder_a -> ... -> ladder_d, -O2, no
# frame pointers) and report it.
demo:
	$(DEPS) build
	@$(MAKE) --no-print-directory $(BIN) $(O)/targets/ladder
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
# (tests/fuzz/mutate.c) redoes them, so what it finds replays anywhere.  It
# installs nothing: `.ci/deps fuzz` does, as root.
FUZZ_CC = $(or $(CLANG),clang)
fuzz: $(EMBEDDED)
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz: $(FUZZ_CC) not found:" \
		"apt-get install clang libclang-rt-14-dev (.ci/deps fuzz does, as root)" >&2; exit 1; }
	@mkdir -p $(O)/fuzz-corpus
	$(FUZZ_CC) -std=gnu11 -g -O1 -D_GNU_SOURCE -I. -Ilib -I$(O) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(LIB_SRCS) $(FUZZ_SRCS) -o $(O)/fuzz-spool $(PROF_LIBS)
	$(O)/fuzz-spool -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 \
		$(O)/fuzz-corpus tests/fuzz/corpus

# libprof.pc is written here, for the directories installed to.  The shared
# library is not executable (Debian policy 8.1); nothing is stripped
# (dh_strip keeps the debug info apart).
install: $(BIN) $(O)/libprof.a $(SHLIB)
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(libdir) $(DESTDIR)$(pkgconfigdir) \
		$(DESTDIR)$(includedir)/prof $(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man5 \
		$(DESTDIR)$(bashcompdir) $(DESTDIR)$(zshcompdir) $(DESTDIR)$(fishcompdir) \
		$(DESTDIR)$(systemdunitdir)
	install -m 755 $(BIN) $(DESTDIR)$(bindir)/prof
	install -m 644 $(O)/libprof.a $(SHLIB) $(DESTDIR)$(libdir)/
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(libdir)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(libdir)/libprof.so
	sed -e 's|@prefix@|$(prefix)|' -e 's|@exec_prefix@|$(exec_prefix)|' \
		-e 's|@libdir@|$(libdir)|' -e 's|@includedir@|$(includedir)|' \
		-e 's|@VERSION@|$(VERSION)|' -e 's|@PRIVATE_LIBS@|$(strip $(PROF_PC_LIBS_PRIVATE))|' \
		lib/libprof.pc.in >$(DESTDIR)$(pkgconfigdir)/libprof.pc
	install -m 644 lib/prof.h $(DESTDIR)$(includedir)/prof/prof.h
	$(if $(PUBLIC_HDRS),install -m 644 $(PUBLIC_HDRS) $(DESTDIR)$(includedir)/prof/)
	install -m 644 $(MAN1) $(DESTDIR)$(mandir)/man1/
	install -m 644 $(MAN5) $(DESTDIR)$(mandir)/man5/
	install -m 644 completions/prof.bash $(DESTDIR)$(bashcompdir)/prof
	install -m 644 completions/_prof $(DESTDIR)$(zshcompdir)/_prof
	install -m 644 completions/prof.fish $(DESTDIR)$(fishcompdir)/prof.fish
	for u in $(UNITS); do \
		sed 's|@bindir@|$(bindir)|g' examples/$$u.in >$(DESTDIR)$(systemdunitdir)/$$u || exit 1; \
		chmod 644 $(DESTDIR)$(systemdunitdir)/$$u; \
	done
	@if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi

# What install put there and nothing else: the directories stay, but for
# $(includedir)/prof, which is prof's alone (and stays if something else is
# in it).
uninstall:
	rm -f $(DESTDIR)$(bindir)/prof \
		$(addprefix $(DESTDIR)$(libdir)/,libprof.a $(notdir $(SHLIB)) $(SONAME) libprof.so) \
		$(DESTDIR)$(pkgconfigdir)/libprof.pc \
		$(addprefix $(DESTDIR)$(includedir)/prof/,prof.h $(notdir $(PUBLIC_HDRS))) \
		$(addprefix $(DESTDIR)$(mandir)/man1/,$(notdir $(MAN1))) \
		$(addprefix $(DESTDIR)$(mandir)/man5/,$(notdir $(MAN5))) \
		$(DESTDIR)$(bashcompdir)/prof $(DESTDIR)$(zshcompdir)/_prof \
		$(DESTDIR)$(fishcompdir)/prof.fish \
		$(addprefix $(DESTDIR)$(systemdunitdir)/,$(UNITS))
	@if [ -d $(DESTDIR)$(includedir)/prof ]; then rmdir $(DESTDIR)$(includedir)/prof 2>/dev/null || true; fi
	@if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi

clean:
	rm -rf build build-san prof $(filter-out build build-san,$(O))

distclean: clean
	rm -rf config.mk config.h config.h.in config.h.in~ config.log config.status configure \
		configure~ aclocal.m4 autom4te.cache

-include $(wildcard $(O)/*/*.d $(O)/*/*/*.d $(O)/*/*/*/*.d)
