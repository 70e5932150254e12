#!/bin/bash
# run-all.sh SCRIPT...: runs the end-to-end scripts $E2E_JOBS at a time (default: the number
# of CPUs), the longest first as listed, each with its output in a log of its own, printed
# whole when it ends (with its time), so that parallel scripts never interleave. Every script
# runs, whatever another's result; the exit status is 1 if any failed, and the last line
# names them. The scripts take CGJIT, CGCHECK (CGCHECK_SELFTEST for cgcheck-selftest.sh) and
# JVMTI_AGENT from the environment.
set -u
jobs=${E2E_JOBS:-$(nproc 2>/dev/null || echo 2)}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
declare -A name_of start_of
failed=()
running=0

# Waits for one script to end and prints its log.
reap() {
	local pid rc
	wait -n -p pid
	rc=$?
	local n=${name_of[$pid]}
	echo "== $n ($(($(date +%s) - ${start_of[$pid]})) s, exit $rc)"
	cat "$logs/$n.log"
	[ "$rc" = 0 ] || failed+=("$n")
	running=$((running - 1))
}

for script in "$@"; do
	[ "$running" -lt "$jobs" ] || reap
	n=$(basename "$script")
	"$script" >"$logs/$n.log" 2>&1 </dev/null &
	name_of[$!]=$n
	start_of[$!]=$(date +%s)
	running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
	reap
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "e2e: failed: ${failed[*]}"
	exit 1
fi
echo "e2e: all $# scripts passed"
