#!/bin/bash
# valgrind as the e2e tests run it: the log goes to a high descriptor (not a file valgrind
# would open at the lowest free one), so the program sees the same open descriptors as
# without it (blkparse -t replays which descriptor numbers the classic tool's files get).
# --read-inline-info=no: a report's stacks name no inlined frames, and each start costs
# 0.07 of its 0.4 CPU s less (the valgrind run starts some 600)
log="${VG_LOG_DIR:?}/vg.$$.log"
exec 900>>"$log"
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --read-inline-info=no \
	--log-fd=900 "$@"
