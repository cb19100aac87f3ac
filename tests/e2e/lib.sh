# Shared by the end-to-end tests (sourced).  In the spirit of git's t/:
# each test is a chain of shell commands; it passes when the chain exits 0.
#
#   test_expect_success [PREREQ] 'description' 'commands'
#   test_done
#
# Prerequisites: ROOT_BPF (root, BTF, and BPF perf_event programs load here).
# A missing prerequisite skips the test, and the runner counts the skip.
set -u
: "${PROFILE_TOP:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${PROFILE_BUILD:=$PROFILE_TOP/build}"
: "${PROFILE:=$PROFILE_BUILD/profile}"
: "${WORKLOADS:=$PROFILE_BUILD/workloads}"
export LC_ALL=C

TRASH=$(mktemp -d /tmp/profile-test.XXXXXX)
test_n=0
test_failures=0

# Workloads started with bg, in a body's subshell too, are listed here and
# killed when their test ends.
kill_bg() {
	[ -s "$TRASH/bg.pids" ] || return 0
	while read -r p; do kill -9 "$p" 2>/dev/null; done <"$TRASH/bg.pids"
	: >"$TRASH/bg.pids"
}

cleanup() {
	kill_bg
	wait 2>/dev/null
	rm -rf "$TRASH"
}
trap cleanup EXIT

have_root_bpf() {
	if [ -z "${ROOT_BPF_CHECKED:-}" ]; then
		ROOT_BPF_CHECKED=1 ROOT_BPF=
		if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ] &&
		   "$PROFILE" -F 10 -f 1 >/dev/null 2>"$TRASH/bpfcheck"; then
			ROOT_BPF=1
		fi
	fi
	[ -n "$ROOT_BPF" ]
}

# One prerequisite, or several joined by commas: all must hold.
have_prereq() {
	local p
	for p in ${1//,/ }; do
		case $p in
		ROOT_BPF) have_root_bpf || return 1 ;;
		*) command -v "$p" >/dev/null 2>&1 || return 1 ;;
		esac
	done
}

test_expect_success() {
	local prereq= desc body
	[ $# -eq 3 ] && { prereq=$1; shift; }
	desc=$1 body=$2
	test_n=$((test_n + 1))
	if [ -n "$prereq" ] && ! have_prereq "$prereq"; then
		echo "ok $test_n - $desc # SKIP missing $prereq"
		return
	fi
	# Not inside an if: there, bash would ignore set -e in the body.
	(cd "$TRASH" && set -e && eval "$body") >"$TRASH/log" 2>&1
	local rc=$?
	kill_bg
	if [ $rc -eq 0 ]; then
		echo "ok $test_n - $desc"
	else
		echo "not ok $test_n - $desc"
		sed 's/^/#   /' "$TRASH/log" | tail -40
		test_failures=$((test_failures + 1))
	fi
}

test_done() {
	[ "$test_failures" -eq 0 ]
	exit $?
}

# Start a workload in the background; its pid goes in $!, and it is
# killed when the test file ends.
bg() {
	"$@" &
	echo $! >>"$TRASH/bg.pids"
}

# Sum the counts of folded lines matching a regex: fsum FILE REGEX
fsum() {
	awk -v re="$2" '$0 ~ re { n += $NF } END { print n + 0 }' "$1"
}

# Ratio a/b with two decimals, and a check that it lies in [lo, hi].
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.3f\n", a / b }'; }
in_range() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x != "inf" && x >= lo && x <= hi) }'; }

# Fail with a message (inside a test body).
fail() { echo "FAIL: $*"; return 1; }
