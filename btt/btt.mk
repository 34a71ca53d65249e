# btt: the timeline analyser. Its sources live in btt/, so the program is btt/btt (a file
# named btt cannot sit next to the directory); "make btt" builds it.
TOOLS += btt/btt
BTT_OBJ := $(patsubst %.c,%.o,$(wildcard btt/*.c))
.PHONY: btt btt-clean

# btt handles every event through calls across its files and the library's reader: it is
# built with -O3 and link-time optimisation, the library compiled again into btt/lib/ for
# it, so that those calls inline (10-15% faster). "make BTT_OPT=" builds it as the rest.
BTT_OPT ?= -O3 -flto=auto
BTT_LIB_OBJ := $(patsubst lib/%.c,btt/lib/%.o,$(LIB_SRC))

btt/%.o: CPPFLAGS += -Ibtt
btt/%.o: CFLAGS += $(BTT_OPT)

btt/lib/%.o: lib/%.c
	@mkdir -p btt/lib
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

btt: btt/btt

# Profile-guided: btt/pgo.sh builds btt with counters, runs it on the real traces bundled
# with the tests and builds it again with the counts (synthetic 20M events 7% faster,
# large-perf 18%; the outputs are the same). "make BTT_PGO=" builds it without; the ASan
# build does.
BTT_PGO ?= 1
BTT_TRAIN := $(filter-out %.blkiomon.bin.xz,$(wildcard tests/data/*/*.bin.xz))

ifeq ($(BTT_PGO),1)
btt/btt: btt/pgo.sh btt/btt.mk $(wildcard btt/*.c btt/*.h) $(LIB_SRC) common.c \
		$(wildcard include/*.h include/blk/*.h) $(BTT_TRAIN)
	@CC="$(CC)" CPPFLAGS="$(CPPFLAGS) -Ibtt" CFLAGS="$(CFLAGS) $(BTT_OPT)" LDFLAGS="$(LDFLAGS)" \
		LIBS="$(LDLIBS_Z) -lm" sh btt/pgo.sh "$(wildcard btt/*.c) $(LIB_SRC) common.c" $(BTT_TRAIN)
else
btt/btt: $(BTT_OBJ) $(BTT_LIB_OBJ) common.o
	$(CC) $(CFLAGS) $(BTT_OPT) $(LDFLAGS) -o $@ $(BTT_OBJ) $(BTT_LIB_OBJ) common.o \
		$(LDLIBS_Z) -lm
endif

clean: btt-clean
btt-clean:
	rm -rf btt/btt btt/*.o btt/*.d btt/lib btt/pgo

-include $(BTT_OBJ:.o=.d) $(BTT_LIB_OBJ:.o=.d)

# the seek statistics' unit test checks them against the pointer red-black tree model
tests/unit/test-seekstat.o: CPPFLAGS += -Ibtt
tests/unit/test-seekstat: tests/unit/test-seekstat.o btt/seekstat.o tests/unit/rbtree.o $(LIB)
	$(CC) $(CFLAGS) $(BTT_OPT) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

# the compact trees of queued I/Os against the same pointer red-black tree
tests/unit/test-qtree.o: CPPFLAGS += -Ibtt
tests/unit/test-qtree: tests/unit/test-qtree.o btt/qtree.o tests/unit/rbtree.o $(LIB)
	$(CC) $(CFLAGS) $(BTT_OPT) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)
