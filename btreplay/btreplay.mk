# btrecord and btreplay (included by the top Makefile).
# The sources live in the directory btreplay/, so the programs cannot be a file named btreplay
# at the top: both are built in btreplay/ (btreplay/btrecord, btreplay/btreplay), and
# "make btrecord btreplay" builds them.
# This file is read before the top Makefile's first rule: keep 'all' the default goal.
.DEFAULT_GOAL := all

TOOLS += btreplay/btrecord btreplay/btreplay
BTREPLAY_COMMON := btreplay/replay-file.o

.PHONY: btrecord btreplay
btrecord: btreplay/btrecord
btreplay: btreplay/btreplay

btreplay/btrecord: btreplay/btrecord.o $(BTREPLAY_COMMON) common.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Z)

btreplay/btreplay: btreplay/btreplay.o btreplay/stream.o btreplay/target.o $(BTREPLAY_COMMON) common.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Z) -laio -lpthread

.PHONY: clean-btreplay format-check-btreplay
clean: clean-btreplay
clean-btreplay:
	rm -f btreplay/*.o btreplay/*.d btreplay/btrecord btreplay/btreplay

format-check-btreplay:
	clang-format --dry-run --Werror btreplay/*.c btreplay/*.h

-include $(wildcard btreplay/*.d)
