# iowatcher: the plotting front-end (SVG, PNG, HTML report, movies).
# The sources live in the directory iowatcher/, so the program cannot also be a file named
# iowatcher at the top: it is built as iowatcher/iowatcher, and "make iowatcher" builds it.
TOOLS += iowatcher/iowatcher
IOWATCHER_OBJ := $(patsubst %.c,%.o,$(wildcard iowatcher/*.c))

.PHONY: iowatcher
iowatcher: iowatcher/iowatcher

iowatcher/iowatcher: $(IOWATCHER_OBJ) common.o $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_Z) -lm

-include $(wildcard iowatcher/*.d)

.PHONY: clean-iowatcher
clean: clean-iowatcher
clean-iowatcher:
	rm -f iowatcher/*.o iowatcher/*.d iowatcher/iowatcher
