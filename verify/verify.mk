# verify_blkparse (checks blkparse text output) and blkrawverify (checks per-CPU trace files).
# This fragment is read before the top-level 'all' rule: keep 'all' the default goal.
.DEFAULT_GOAL := all

TOOLS += verify_blkparse blkrawverify

verify_blkparse: verify/verify_blkparse.o common.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Z)

blkrawverify: verify/blkrawverify.o verify/resync.o common.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Z)

.PHONY: clean-verify
clean: clean-verify
clean-verify:
	rm -f verify/*.o verify/*.d

-include $(wildcard verify/*.d)
