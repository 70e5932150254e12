# harness.sh - sourced by the e2e scripts: the binaries under test, a scratch directory
# removed at exit, and the "ok"/"not ok"/"skip" lines with the closing
# "N passed, N failed, N skipped" (a check this machine cannot run is counted apart, so a
# machine without a JDK, dpkg or root does not look all green).
# The sourcing script may replace expect() or the EXIT trap (it then removes $tmp itself).
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CGJIT=$(realpath "${CGJIT:-$top/build/cgjit}")
CGCHECK=$(realpath "${CGCHECK:-$top/build/cgcheck}")
bad=$top/tests/bad
pass=0
fail=0
skipped=0
# without a scratch directory (a full disk) $tmp would be empty, and `cd "$tmp"` would stay
# in the checkout and write there
tmp=$(mktemp -d) && [ -d "$tmp" ] || { echo "harness: no scratch directory (mktemp -d failed)" >&2; exit 1; }
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); echo "ok - $*"; }
notok() { fail=$((fail + 1)); echo "not ok - $*"; }
skip() { skipped=$((skipped + 1)); echo "skip - $*"; }
expect() { if eval "$1"; then ok "$2"; else notok "$2"; fi; }
# The closing line and the exit status.
finish() {
	echo "$pass passed, $fail failed, $skipped skipped"
	[ "$fail" = 0 ]
}
