# blktrace-ng: one non-recursive Makefile.
.DEFAULT_GOAL := all
CC ?= cc
CFLAGS ?= -O2 -g
WARN := -std=gnu11 -Wall -Wextra -Wformat-security -Wstrict-prototypes -Wold-style-definition \
	-Wpointer-arith -Wvla -Wwrite-strings -Wno-format-truncation
ifeq ($(CI),true)
WARN += -Werror
endif
ifdef WERROR
WARN += -Werror
endif
override CPPFLAGS += -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Iinclude
override CFLAGS += $(WARN) -MMD -MP
LDLIBS_Z := -lz -lpthread
# libdeflate, where installed (tests/packages.txt): the export's gzip (lib/export/http.c) at
# twice zlib's speed; without it, zlib's. Linked only with libblkexport (LDLIBS_EXPORT).
LDLIBS_EXPORT :=
ifeq ($(shell pkg-config --exists libdeflate 2>/dev/null && echo y),y)
override CPPFLAGS += -DBLK_HAVE_LIBDEFLATE
LDLIBS_EXPORT := -ldeflate
endif
# libcurl (tests/packages.txt: libcurl4-openssl-dev): the export's HTTP and HTTPS
# (lib/export/http.c). Its headers at build time; the library itself is loaded when the
# export first connects (dlopen), so btt's runs without --export do not pay for it.
CURL_CFLAGS := $(shell pkg-config --cflags libcurl 2>/dev/null)
LDLIBS_EXPORT += -ldl
lib/export/http.o: CPPFLAGS += $(CURL_CFLAGS)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
# libtracefs and libtraceevent (tests/packages.txt): the tracefs backend reads the blk
# tracer's ring-buffer pages and the I/O wait instance's events with them (kernel/tracefs.c,
# kernel/tfsconv.c, kernel/ftrace.c)
TRACEFS_CFLAGS := $(shell pkg-config --cflags libtracefs libtraceevent 2>/dev/null || \
	echo -I/usr/include/tracefs -I/usr/include/traceevent)
LDLIBS_TRACEFS := $(shell pkg-config --libs libtracefs libtraceevent 2>/dev/null || \
	echo -ltracefs -ltraceevent)
kernel/tracefs.o kernel/tfsback.o kernel/tfsconv.o kernel/tfsring.o kernel/ftrace.o kernel/fsevents.o \
	tests/unit/test-tfsconv.o: CPPFLAGS += $(TRACEFS_CFLAGS)

# One library per layer; each uses the core library, none uses another one:
#   lib/libblk.a                     the core (include/blk/), linked by every tool
#   lib/perfetto/libblkperfetto.a    the Perfetto trace writer (include/blk-perfetto/)
#   lib/export/libblkexport.a        the fleet export to ClickHouse or TSV (include/blk-export/)
# Link a library before libblk.a: $(PERFETTO_LIB) $(LIB), $(EXPORT_LIB) $(LIB) $(LDLIBS_EXPORT).
LIB_SRC := lib/event.c lib/reader.c lib/merge.c lib/pipesort.c lib/strbuf.c lib/output.c \
	lib/format.c lib/acct.c lib/acct-print.c lib/log.c lib/hist.c \
	lib/frame.c lib/window.c lib/wallclock.c lib/iowait.c lib/printq.c lib/cgmap.c \
	lib/origin.c
LIB_OBJ := $(LIB_SRC:.c=.o)
LIB := lib/libblk.a
PERFETTO_SRC := lib/perfetto/protobuf.c lib/perfetto/perfetto.c lib/perfetto/perfetto-event.c
PERFETTO_LIB := lib/perfetto/libblkperfetto.a
EXPORT_SRC := lib/export/schema.c lib/export/http.c lib/export/export.c lib/export/clickhouse.c
EXPORT_LIB := lib/export/libblkexport.a
ALL_LIB_SRC := $(LIB_SRC) $(PERFETTO_SRC) $(EXPORT_SRC)

KERNEL_SRC := kernel/fs.c kernel/relay.c kernel/tracefs.c kernel/tfsconv.c kernel/util.c \
	kernel/ftrace.c kernel/holder.c kernel/tfsstate.c kernel/tfsring.c kernel/tfsback.c \
	kernel/waitjoin.c kernel/wakefilter.c kernel/iowait.c kernel/iowait-src.c kernel/cgpath.c \
	kernel/fsevents.c kernel/tfsorigin.c kernel/fsside.c
KERNEL_OBJ := $(KERNEL_SRC:.c=.o)
TOOLS := blkparse blktrace blkiomon
GEN := $(patsubst %.c,%,$(wildcard tests/gen/*.c))
UNIT_SRC := $(wildcard tests/unit/test-*.c)
UNIT := $(UNIT_SRC:.c=)

# Each tool directory may add its own rules and targets in a NAME.mk (appending to TOOLS).
-include $(wildcard */*.mk)

all: $(TOOLS) $(GEN)

# No object is an intermediate file: make would delete the generators' and the unit tests'
# objects after a build, and the next make (make check's valgrind run, started beside the
# ASan tree's copy of the source) would build and link them again, writing into tests/gen
# and tests/unit while the copy read them ("tar: ./tests/gen: file changed as we read it",
# make check failed) and while the plain run ran those programs.
.SECONDARY:

# Each archive is made anew from its objects, and again when the Makefile changes: a file
# moved out of a library must not stay in the archive an older tree built.
$(LIB): $(LIB_OBJ) Makefile
	@rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

$(PERFETTO_LIB): $(PERFETTO_SRC:.c=.o) Makefile
	@rm -f $@
	$(AR) rcs $@ $(PERFETTO_SRC:.c=.o)

$(EXPORT_LIB): $(EXPORT_SRC:.c=.o) Makefile
	@rm -f $@
	$(AR) rcs $@ $(EXPORT_SRC:.c=.o)

common.o: common.c

blkparse: blkparse.o parse-run.o parse-print.o parse-iowait.o parse-origin.o common.o $(COMPAT) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Z)

blkiomon: blkiomon.o mon-run.o common.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Z)

blktrace: blktrace.o trace-run.o trace-stdout.o net.o common.o $(KERNEL_OBJ) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_TRACEFS) $(LDLIBS_Z) -lpthread

# a static tracer for the test VM's initramfs
blktrace.static: blktrace.o trace-run.o trace-stdout.o net.o common.o $(KERNEL_OBJ) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -static -o $@ $^ $(LDLIBS_TRACEFS) $(LDLIBS_Z) -lpthread

tests/gen/%: tests/gen/%.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Z)

# gentrace: the program (options, main) and its modules in tests/gen/gentrace-src/
GENTRACE_OBJ := $(patsubst %.c,%.o,$(wildcard tests/gen/gentrace-src/*.c))
tests/gen/gentrace: tests/gen/gentrace.o $(GENTRACE_OBJ) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Z)

tests/gen/perfetto-synth: tests/gen/perfetto-synth.o $(PERFETTO_LIB) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Z)

tests/gen/exportgen: tests/gen/exportgen.o $(EXPORT_LIB) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_EXPORT) $(LDLIBS_Z)

tests/unit/test-%: tests/unit/test-%.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

# unit tests of the Perfetto writer and of the export: their library, then the core
tests/unit/test-protobuf tests/unit/test-perfetto: tests/unit/test-%: tests/unit/test-%.o \
		$(PERFETTO_LIB) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

# test-http and test-schema read the export library's own headers (lib/export/http.h,
# export-int.h: not public)
tests/unit/test-http.o: CPPFLAGS += -Ilib
tests/unit/test-schema.o: CPPFLAGS += -Ilib
tests/unit/test-schema tests/unit/test-http tests/unit/test-export: tests/unit/test-%: \
		tests/unit/test-%.o $(EXPORT_LIB) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_EXPORT) $(LDLIBS_Z)

# unit tests of kernel/ code: the pure parts of the module they test
tests/unit/test-ftrace: tests/unit/test-ftrace.o kernel/ftrace.o kernel/holder.o kernel/util.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_TRACEFS) $(LDLIBS_Z)

tests/unit/test-tfsconv: tests/unit/test-tfsconv.o kernel/tfsconv.o kernel/fsevents.o kernel/ftrace.o kernel/holder.o kernel/util.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_TRACEFS) $(LDLIBS_Z)

tests/unit/test-tfsorigin: tests/unit/test-tfsorigin.o kernel/tfsconv.o kernel/fsevents.o kernel/ftrace.o kernel/holder.o kernel/util.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_TRACEFS) $(LDLIBS_Z)

tests/unit/test-relaycg: tests/unit/test-relaycg.o kernel/tfsconv.o kernel/fsevents.o kernel/ftrace.o kernel/holder.o kernel/util.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_TRACEFS) $(LDLIBS_Z)

tests/unit/test-tfsring: tests/unit/test-tfsring.o kernel/tfsring.o kernel/tfsconv.o kernel/fsevents.o kernel/ftrace.o kernel/holder.o kernel/util.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_TRACEFS) $(LDLIBS_Z)

tests/unit/test-waitjoin: tests/unit/test-waitjoin.o kernel/waitjoin.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

tests/unit/test-wakefilter: tests/unit/test-wakefilter.o kernel/wakefilter.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

# ---- install ----
# make install [PREFIX=/usr/local] [DESTDIR=...]: the programs in $(PREFIX)/bin (btrace is the
# wrapper script), the man pages in $(PREFIX)/share/man/man1, man4 and man8. 'make uninstall'
# removes exactly those files.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
INSTALL ?= install
INSTALL_PROGS = blktrace blkparse blkiomon btt/btt iowatcher/iowatcher btreplay/btrecord \
	btreplay/btreplay verify_blkparse blkrawverify
INSTALL_SCRIPTS = btrace
MAN1 = $(wildcard doc/*.1)
MAN8 = $(wildcard doc/*.8)
MAN4 = $(wildcard doc/*.4)

.PHONY: install uninstall progs
# progs: only the installed programs (debian/rules builds these, not the tests' generators)
progs: $(INSTALL_PROGS)

install: $(INSTALL_PROGS)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man4 \
		$(DESTDIR)$(MANDIR)/man8
	$(INSTALL) -m 0755 $(INSTALL_PROGS) $(INSTALL_SCRIPTS) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 0644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 $(MAN4) $(DESTDIR)$(MANDIR)/man4/
	$(INSTALL) -m 0644 $(MAN8) $(DESTDIR)$(MANDIR)/man8/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(INSTALL_PROGS) $(INSTALL_SCRIPTS))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man4/,$(notdir $(MAN4))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(MAN8)))

# ---- tests ----
.PHONY: all check check-plain unit e2e asan valgrind fuzz bench demo deps clean hdr-check format format-check version
# the suite's version, from its one definition (each tool's -V prints it after its classic line)
SUITE_VERSION := $(shell sed -n 's/^\#define BLKTRACE_NG_VERSION "\(.*\)"$$/\1/p' include/version.h)
version:
	@echo $(SUITE_VERSION)

deps:
	@./tests/deps.sh

unit: $(UNIT)
	@./tests/run-unit.sh $(UNIT)

e2e: all
	@./tests/run-e2e.sh

# make check: the suite as built, then under ASan+UBSan, then under valgrind (set
# CHECK_QUICK=1 to run only the first). The last line sums all runs.
# The build runs a job per core unless make was given -j (its own jobserver then).
CHECK_JOBS = $(if $(findstring j,$(firstword -$(MAKEFLAGS)))$(findstring jobserver,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))
check: deps
	@$(MAKE) --no-print-directory $(CHECK_JOBS) all $(UNIT)
	@./tests/check.sh $(UNIT)

check-plain: all $(UNIT)
	@./tests/run-all.sh $(UNIT)

# Sanitizer and valgrind runs of the whole suite. asan builds a copy of the tree under
# tests/out/asan (asan-build) so that the normal build stays as it is; the valgrind run keeps
# its scratch files in tests/out/valgrind, so both can run beside the plain one.
# -g1: line tables and functions (inlined ones too), all a report's frames name; no types or
# locals, which compile a quarter slower (12 of the largest files: 8.5 -> 6.3 CPU s)
SAN_FLAGS := -O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
.PHONY: asan-build
asan-build:
	@rm -rf tests/out/asan && mkdir -p tests/out/asan
	@tar --exclude=./tests/out --exclude=./.git --exclude='*.o' --exclude='*.d' -cf - . | tar -C tests/out/asan -xf -
	@$(MAKE) --no-print-directory -C tests/out/asan clean >/dev/null
	@$(MAKE) --no-print-directory $(CHECK_JOBS) -C tests/out/asan CFLAGS="$(SAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" all $(UNIT) >/dev/null

asan: asan-build
	@$(MAKE) --no-print-directory asan-run

.PHONY: asan-run
asan-run:
	@mkdir -p tests/out/asan/tests/out/memcheck
	cd tests/out/asan && SHARED_DIR=$(abspath ../shared) ASAN_OPTIONS=detect_leaks=1:log_path=$(CURDIR)/tests/out/asan/tests/out/memcheck/asan \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$(CURDIR)/tests/out/asan/tests/out/memcheck/asan \
		./tests/run-all.sh $(UNIT)

valgrind: all $(UNIT)
	VALGRIND=1 TEST_OUT=$(CURDIR)/tests/out/valgrind ./tests/vg-ns.sh ./tests/run-all.sh $(UNIT)

fuzz:
	@./tests/fuzz/run-fuzz.sh

# make bench: the benchmarks against the classic tools; results in bench/out/results-DATE.txt
bench: all
	@./bench/run.sh

demo: deps all
	@./tests/demo.sh

hdr-check:
	@for h in include/blk/*.h include/blk-perfetto/*.h include/blk-export/*.h include/common.h \
		include/version.h $(wildcard *.h) compat/*.h; do \
		echo '#include "'$${h#include/}'"' | $(CC) $(CPPFLAGS) -I. -std=gnu11 -Wall -Werror -x c -c -o /dev/null - || exit 1; \
	done; echo "headers compile on their own"

FORMAT_SRC = $(ALL_LIB_SRC) lib/*/*.h $(KERNEL_SRC) kernel/*.h include/blk/*.h \
	include/blk-perfetto/*.h include/blk-export/*.h include/common.h include/version.h \
	*.c $(wildcard *.h) $(wildcard compat/*.[ch] btt/*.[ch] btt/*/*.[ch] iowatcher/*.[ch] btreplay/*.[ch] verify/*.[ch])

format:
	clang-format -i $(FORMAT_SRC)

format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRC) && echo "clang-format: clean"

clean:
	rm -f $(LIB) $(PERFETTO_LIB) $(EXPORT_LIB) lib/*.o lib/*.d lib/*/*.o lib/*/*.d \
		kernel/*.o kernel/*.d *.o *.d $(TOOLS) blktrace.static $(GEN) tests/gen/*.o tests/gen/*.d \
		tests/gen/*/*.o tests/gen/*/*.d \
		tests/unit/*.o tests/unit/*.d $(UNIT) tests/unit/heap-oracle

-include $(wildcard lib/*.d lib/*/*.d kernel/*.d *.d tests/gen/*.d tests/gen/*/*.d tests/unit/*.d)

# The real allocator as an oracle for test-heapemu: built plain (sanitizers replace malloc).
tests/unit/heap-oracle: tests/unit/heap-oracle.c
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -o $@ $<

tests/unit/test-heapemu: | tests/unit/heap-oracle
