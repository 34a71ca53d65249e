# compat/: quirks of the classic tools that need a model of their own, kept out of the core
# library. Today: blkparse -t's stale times, a model of glibc 2.36's allocator (heapemu.c)
# replaying blkparse 1.2.0's allocations (classicmem.c), wired to blkparse's run through the
# library's observation hooks (parse-model.c). compat/libcompat.a is linked only into
# blkparse, the unit tests of the model and the fuzz target; lib/libblk.a knows nothing of it.
COMPAT_SRC := compat/heapemu.c compat/classicmem.c compat/parse-model.c
COMPAT_OBJ := $(COMPAT_SRC:.c=.o)
COMPAT := compat/libcompat.a

$(COMPAT): $(COMPAT_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

# compat/parse-model.h includes the run's header (parse-run.h, at the top)
compat/%.o: CPPFLAGS += -I.
parse-run.o parse-print.o tests/unit/test-heapemu.o tests/unit/test-classicmem.o: CPPFLAGS += -I.

tests/unit/test-heapemu tests/unit/test-classicmem: tests/unit/test-%: tests/unit/test-%.o $(COMPAT) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(LDLIBS_Z)

.PHONY: clean-compat
clean: clean-compat
clean-compat:
	rm -f $(COMPAT) compat/*.o compat/*.d

-include $(wildcard compat/*.d)
