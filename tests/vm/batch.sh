# tests/vm/batch.sh — several runs of tests/vm/run-trace.sh in one boot of the VM (sourced by
# the tests; bash). Under TCG a boot takes several times what a short run does, so a test
# stages its runs and boots once:
#
#   . tests/vm/batch.sh
#   vm_batch_new DIR                       # an empty staging directory
#   vm_batch_add DIR OUTDIR [options of a run] [-- extra tracer args]
#   vm_batch_boot DIR TRACER [--mem MB] [--smp N] [--keep]
#
# vm_batch_add takes what run-trace.sh takes after TRACER for a single run; the runs go in the
# order they were added, each into its OUTDIR as a single run would. vm_batch_boot's exit
# status is run-trace.sh's: 0 every run ran to the end, 77 no VM here, 1 the VM or a run did
# not finish, 2 usage.
# vm_ready LABEL (a test's, after tests/lib.sh): root, tests/vm/prepare.sh done (under a lock
# of its own: it fills a cache every run shares) and its variables (VM_KDIR...) set; else a
# SKIP or FAIL line for LABEL and status 1. The boot itself takes a VM slot (vm_lock).
vm_ready() { # LABEL
	local prep rc
	if ! is_root; then
		skip "$1 (needs root to install qemu and the kernel image)"
		return 1
	fi
	prep=$(flock /tmp/blktrace-ng.vm-prepare.lock "$TOP/tests/vm/prepare.sh" -q 2>&1)
	rc=$?
	if [ $rc = 77 ]; then
		skip "$1 ($(echo "$prep" | tail -n 1))"
		return 1
	elif [ $rc != 0 ]; then
		fail "$1: tests/vm/prepare.sh failed: $(echo "$prep" | tail -n 3 | tr '\n' ' ')"
		return 1
	fi
	eval "$("$TOP/tests/vm/prepare.sh" --env)"
}
vm_batch_new() { # DIR
	rm -rf "${1:?}"
	mkdir -p "$1"
}
vm_batch_add() { # DIR OUTDIR [options] [-- tracer args]
	local dir=${1:?} n
	shift
	n=$(($(find "$dir" -maxdepth 1 -name '*.args' | wc -l) + 1))
	printf '%s\0' "$@" >"$dir/$n.args"
}
vm_batch_boot() { # DIR TRACER [VM options]
	local dir=${1:?} tracer=${2:?} rc
	shift 2
	vm_lock
	"$(dirname "${BASH_SOURCE[0]}")/run-trace.sh" "$tracer" --batch "$dir" "$@"
	rc=$?
	vm_unlock
	return $rc
}
# vm_run_ended OUTDIR: the run ran to its end (its DONE marker, and not killed by the VM's
# watchdog); vm_run_why OUTDIR LOG: why not, in one line
vm_run_ended() { [ -f "${1:?}/DONE" ] && [ ! -f "$1/hung" ]; }
vm_run_why() { # OUTDIR LOG
	if [ -f "${1:?}/hung" ]; then
		echo "the VM's watchdog killed the run: $(head -n 1 "$1/hung") ($1/hung)"
	else
		echo "the run did not end (see ${2:?})"
	fi
}
