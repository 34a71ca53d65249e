# btt: the timeline analyser. Its sources live in btt/, so the program is btt/btt (a file
# named btt cannot sit next to the directory); "make btt" builds it.
# btt/ holds the run and the table of outputs; its rooms hold the rest (doc/HACKING.md):
#   model/     the I/O model and its data structures, the trace's wall clock
#   report/    the classic report and its per-IO, range and histogram files
#   perfetto/  --perfetto        export/  --export        iowait/  I/O wait by process
#   origin/    I/O by origin and by file (the origin notes)
# Sources include headers by their path under btt/ ("model/iomodel.h").
TOOLS += btt/btt
BTT_ROOMS := model report perfetto export iowait origin
BTT_SRC := $(wildcard btt/*.c $(patsubst %,btt/%/*.c,$(BTT_ROOMS)))
BTT_OBJ := $(patsubst %.c,%.o,$(BTT_SRC))
# btt without its main(): btt_init(), btt_run() over any stream of events, btt_report()
# (btt.h), for a fuzz target or a test to link with common.o and the library
BTT_CORE_OBJ := $(filter-out btt/main.o,$(BTT_OBJ))
.PHONY: btt clean-btt

btt/%.o: CPPFLAGS += -Ibtt

btt: btt/btt

# btt is built as every other tool: its objects and the library, with the common flags.
# Two opt-in builds make the per-event calls across its files and the library's reader
# inline (measured on large-perf: bench/bench-btt.sh, figures in README.md):
#   make LTO=1   -O3 and link-time optimisation, the library compiled again into btt/lib/
#   make pgo     the same, profile-guided: btt/pgo.sh builds btt with counters, runs it on
#                the real traces bundled with the tests and builds it again with the counts
# Both replace btt/btt; 'make clean-btt' (or 'make clean') goes back to the default.
BTT_LTO_FLAGS := -O3 -flto=auto
BTT_LIB_OBJ := $(patsubst lib/%.c,btt/lib/%.o,$(ALL_LIB_SRC))
BTT_LTO_OBJ := $(patsubst %.c,btt/lto/%.o,$(BTT_SRC)) btt/lto/common.o
BTT_TRAIN = $(filter-out %.blkiomon.bin.xz,$(wildcard tests/data/*/*.bin.xz))

btt/lib/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(BTT_LTO_FLAGS) -c -o $@ $<

btt/lto/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ibtt $(CFLAGS) $(BTT_LTO_FLAGS) -c -o $@ $<

ifeq ($(LTO),1)
btt/btt: $(BTT_LTO_OBJ) $(BTT_LIB_OBJ)
	$(CC) $(CFLAGS) $(BTT_LTO_FLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_EXPORT) $(LDLIBS_Z) -lm
else
btt/btt: $(BTT_OBJ) common.o $(EXPORT_LIB) $(PERFETTO_LIB) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_EXPORT) $(LDLIBS_Z) -lm
endif

.PHONY: pgo
pgo:
	@CC="$(CC)" CPPFLAGS="$(CPPFLAGS) -Ibtt" CFLAGS="$(CFLAGS) $(BTT_LTO_FLAGS)" LDFLAGS="$(LDFLAGS)" \
		LIBS="$(LDLIBS_EXPORT) $(LDLIBS_Z) -lm" \
		sh btt/pgo.sh "$(BTT_SRC) $(ALL_LIB_SRC) common.c" $(BTT_TRAIN)

clean: clean-btt
clean-btt:
	rm -rf btt/btt btt/lib btt/lto btt/pgo btt/*.o btt/*.d \
		$(foreach r,$(BTT_ROOMS),btt/$(r)/*.o btt/$(r)/*.d)

-include $(BTT_OBJ:.o=.d) $(wildcard btt/lib/*.d btt/lib/*/*.d btt/lto/*.d btt/lto/btt/*.d btt/lto/btt/*/*.d)

# the seek statistics' unit test checks them against the pointer red-black tree model
tests/unit/test-seekstat.o: CPPFLAGS += -Ibtt
tests/unit/test-seekstat: tests/unit/test-seekstat.o btt/report/seekstat.o btt/report/seekspill.o tests/unit/rbtree.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

# the seek streams read ahead, against streams worked out by the test
tests/unit/test-seekahead.o: CPPFLAGS += -Ibtt
tests/unit/test-seekahead: tests/unit/test-seekahead.o btt/report/seekahead.o btt/report/seek.o \
		btt/report/outfile.o btt/model/alloc.o btt/report/seekstat.o btt/report/seekspill.o \
		common.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

# the compact trees of queued I/Os against the same pointer red-black tree
tests/unit/test-qtree.o: CPPFLAGS += -Ibtt
tests/unit/test-qtree: tests/unit/test-qtree.o btt/model/qtree.o btt/model/u64map.o tests/unit/rbtree.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

# the I/O model through its subscriber interface
BTT_MODEL_OBJ := $(patsubst %,btt/model/%.o,iomodel qio qtree u64map devs alloc bios replay) common.o
tests/unit/test-iomodel.o: CPPFLAGS += -Ibtt
tests/unit/test-iomodel: tests/unit/test-iomodel.o $(BTT_MODEL_OBJ) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

# btt --export's subscriber, through the model into tsv:DIR (with the outputs it asks for the
# notes of each bio: the cgroups and origins, through btt's output table)
tests/unit/test-export-out.o: CPPFLAGS += -Ibtt
tests/unit/test-export-out: tests/unit/test-export-out.o $(BTT_CORE_OBJ) common.o $(EXPORT_LIB) \
		$(PERFETTO_LIB) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_EXPORT) $(LDLIBS_Z) -lm

# "I/O wait by process" through the model
tests/unit/test-waits.o: CPPFLAGS += -Ibtt
tests/unit/test-waits: tests/unit/test-waits.o btt/iowait/waits.o btt/iowait/waits-report.o $(BTT_MODEL_OBJ) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

# btt --perfetto's queue of the records waiting to be drawn in time order
tests/unit/test-pforder.o: CPPFLAGS += -Ibtt
tests/unit/test-pforder: tests/unit/test-pforder.o btt/perfetto/pforder.o btt/model/alloc.o common.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

# the model of every bio, by sector coverage
tests/unit/test-bios.o: CPPFLAGS += -Ibtt
tests/unit/test-bios: tests/unit/test-bios.o btt/model/bios.o btt/model/u64map.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)
