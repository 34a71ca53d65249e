# btt: the timeline analyser. Its sources live in btt/, so the program is btt/btt (a file
# named btt cannot sit next to the directory); "make btt" builds it.
TOOLS += btt/btt
BTT_OBJ := $(patsubst %.c,%.o,$(wildcard btt/*.c))
.PHONY: btt btt-clean

btt/%.o: CPPFLAGS += -Ibtt

btt: btt/btt

btt/btt: $(BTT_OBJ) common.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(BTT_OBJ) common.o $(LIB) $(LDLIBS_Z) -lm

clean: btt-clean
btt-clean:
	rm -f btt/btt btt/*.o btt/*.d

-include $(BTT_OBJ:.o=.d)

# the seek statistics' unit test checks them against the pointer red-black tree model
tests/unit/test-seekstat.o: CPPFLAGS += -Ibtt
tests/unit/test-seekstat: tests/unit/test-seekstat.o btt/seekstat.o tests/unit/rbtree.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

# the compact trees of queued I/Os against the same pointer red-black tree
tests/unit/test-qtree.o: CPPFLAGS += -Ibtt
tests/unit/test-qtree: tests/unit/test-qtree.o btt/qtree.o tests/unit/rbtree.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)
