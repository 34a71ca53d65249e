#!/bin/bash
# valgrind as the e2e tests run it: the log goes to a high descriptor (not a file valgrind
# would open at the lowest free one), so the program sees the same open descriptors as
# without it (blkparse -t replays which descriptor numbers the classic tool's files get).
# The options are tests/lib.sh's (VG_OPTS).
log="${VG_LOG_DIR:?}/vg.$$.log"
exec 900>>"$log"
# shellcheck disable=SC2086
exec valgrind ${VG_OPTS:?} --log-fd=900 "$@"
