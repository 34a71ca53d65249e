#!/bin/bash
# valgrind as the e2e tests run it: the log goes to a high descriptor (not a file valgrind
# would open at the lowest free one), so the program sees the same open descriptors as
# without it (blkparse -t replays which descriptor numbers the classic tool's files get).
log="${VG_LOG_DIR:?}/vg.$$.log"
exec 900>>"$log"
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
	--log-fd=900 "$@"
