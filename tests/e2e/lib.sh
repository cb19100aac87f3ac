# Shared by the end-to-end tests (sourced).  In the spirit of git's t/:
# each test is a chain of shell commands; it passes when the chain exits 0.
#
#   test_expect_success [PREREQ[,PREREQ...]] 'description' 'commands'
#   test_done
#
# A body runs with set -e in a subshell whose working directory is $TRASH;
# a failing command fails the test.  Checks are still written
# "{ COND || fail MSG; }" so that the log says what went wrong.
#
# Prerequisites are named here, in prereq_missing, and nowhere else (a
# lower-case one is a command that must be installed).  A
# missing one skips the test with the reason, and the runner counts the
# skip; with PROFILE_TEST_NO_SKIP=1 (CI) a missing prerequisite fails the
# test instead.  None of them runs the profiler under test: if it cannot
# load, its tests must fail, not be skipped.
set -u
: "${PROFILE_TOP:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${PROFILE_BUILD:=$PROFILE_TOP/build}"
: "${PROFILE:=$PROFILE_BUILD/profile}"
: "${WORKLOADS:=$PROFILE_BUILD/workloads}"
: "${COLLECTOR_BIN:=/opt/profile-tests/otelcol-v0.161.0/otelcol}"
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

# Directories a test made outside $TRASH (outside_dir), and memory
# cgroups (mem_cgroup), removed at the end.
cleanup() {
	kill_bg
	wait 2>/dev/null
	if [ -s "$TRASH/outside.dirs" ]; then
		while read -r d; do rm -rf "$d"; done <"$TRASH/outside.dirs"
	fi
	if [ -s "$TRASH/memcgs" ]; then
		while read -r d; do rmdir "$d" 2>/dev/null; done <"$TRASH/memcgs"
	fi
	rm -rf "$TRASH"
}
trap cleanup EXIT

# A fresh directory under PARENT, for what $TRASH cannot hold (a container
# that mounts its own /tmp must still see the binary it runs).
outside_dir() {
	local d
	d=$(mktemp -d "$1/profile-test.XXXXXX") || return 1
	echo "$d" >>"$TRASH/outside.dirs"
	echo "$d"
}

# mem_cgroup NAME: a memory cgroup to start a process in, v2's where its
# controller is on, else v1's (this project's machines mount v1's).  Sets
# MEMCG (the directory) and MEM_LIMIT (its limit's file).
mem_cgroup() {
	local v1 v2
	v1=$(findmnt -n -o TARGET -t cgroup -O memory 2>/dev/null | head -1)
	v2=$(findmnt -n -o TARGET -t cgroup2 2>/dev/null | head -1)
	if [ -n "$v2" ] && grep -qw memory "$v2/cgroup.subtree_control" 2>/dev/null; then
		MEMCG=$v2/profile-$1-$$ MEM_LIMIT=memory.max
	elif [ -n "$v1" ]; then
		MEMCG=$v1/profile-$1-$$ MEM_LIMIT=memory.limit_in_bytes
	else
		fail "no memory cgroup (cgroup2 with +memory, or v1's memory mount)"
		return 1
	fi
	echo "$MEMCG" >>"$TRASH/memcgs" && mkdir "$MEMCG"
}

# Root, BPF and perf events, read off the system: never by running the
# profiler under test.  Prints what is missing, or nothing; the answer is
# kept in $TRASH (callers run in subshells).
root_bpf_missing() {
	local f=$TRASH/root_bpf.missing
	if [ ! -f "$f" ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "root"
		elif [ ! -r /sys/kernel/btf/vmlinux ]; then
			echo "kernel BTF (/sys/kernel/btf/vmlinux)"
		elif [ ! -r /proc/sys/kernel/perf_event_paranoid ]; then
			echo "perf events (no /proc/sys/kernel/perf_event_paranoid)"
		elif ! command -v bpftool >/dev/null 2>&1; then
			echo "bpftool, to see whether BPF works here"
		elif ! bpftool feature probe kernel 2>/dev/null |
			grep -q "program_type perf_event is available"; then
			echo "BPF perf_event programs (bpftool feature probe kernel)"
		fi >"$f"
	fi
	cat "$f"
}

# A file's build id, the path of its debug file in /usr/lib/debug by that
# id, and whether that debug file is there.
build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID/ { print $3 }'; }
debug_path() { echo "/usr/lib/debug/.build-id/${1:0:2}/${1:2}.debug"; }
has_debug_file() {
	local id
	id=$(build_id "$1")
	[ -n "$id" ] && [ -r "$(debug_path "$id")" ]
}
LIBC=$(ldd /bin/true | awk '/libc.so/ { print $3 }')

# The reason PREREQ does not hold here, or nothing when it does.
prereq_missing() {
	case $1 in
	ROOT_BPF) root_bpf_missing ;;
	# No hardware PMU (a VM): "cycles" cannot be sampled.
	NO_PMU)
		if [ -e /sys/bus/event_source/devices/cpu ] ||
		   [ -e /sys/bus/event_source/devices/cpu_core ]; then
			echo "a machine without a hardware PMU (this one has one)"
		fi ;;
	# The kernel's lists of new processes (bpf/klist.bpf.c): an iterator
	# over a task's mappings, 6.7 and later.
	KLIST)
		bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
			grep -q "FUNC 'bpf_iter_task_vma_new'" ||
			echo "a kernel with bpf_iter_task_vma_new (6.7 or later)" ;;
	# A thread's exit tracepoint comes while its memory is still mapped
	# (6.18 here, not 6.1): the sampler keeps its stack there.  Known as
	# profile knows it, by the tracepoint's group_dead argument, which
	# came with the move.
	EXIT_MM)
		bpftool btf dump file /sys/kernel/btf/vmlinux format c 2>/dev/null |
			grep -q "(\*btf_trace_sched_process_exit)(void \*, struct task_struct \*, bool)" ||
			echo "a kernel whose sched_process_exit comes before the exit's unmapping (6.18, not 6.1)" ;;
	CAPS)
		command -v capsh >/dev/null && command -v setpriv >/dev/null &&
			id nobody >/dev/null 2>&1 ||
			echo "capsh, setpriv and the user nobody" ;;
	# A hostile user and a victim: nobody attacks, daemon is another user.
	USERS)
		command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 &&
			id daemon >/dev/null 2>&1 ||
			echo "setpriv and the users nobody and daemon" ;;
	# nobody may enter a user namespace of its own and chroot there.
	USERNS)
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			unshare -Ur chroot / true >/dev/null 2>&1 ||
			echo "unprivileged user namespaces (unshare -Ur as nobody: user.max_user_namespaces, kernel.unprivileged_userns_clone)" ;;
	GO) command -v go >/dev/null || echo "go (golang-go)" ;;
	# tests/workloads/rustburn.rs, built by make workloads when it finds rustc.
	RUSTC) [ -x "$WORKLOADS/rustburn" ] || echo "rustc (rustup: ~/.cargo/bin), then make workloads" ;;
	# perf that can sample with DWARF call graphs (no PMU needed: cpu-clock).
	PERF_DWARF)
		perf record -q -e cpu-clock --call-graph dwarf -o /dev/null -- true \
			>/dev/null 2>&1 || echo "perf record --call-graph dwarf (linux-perf)" ;;
	DPKG_BUILDPACKAGE)
		command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
			echo "dpkg-buildpackage and debhelper (scripts/install-deps --tests)" ;;
	LINTIAN) command -v lintian >/dev/null || echo "lintian (scripts/install-deps --tests)" ;;
	PLAYWRIGHT)
		if ! command -v node >/dev/null || ! command -v chromium >/dev/null; then
			echo "node and chromium (scripts/install-deps --tests)"
		elif [ ! -d "$PROFILE_TOP/tests/browser/node_modules/playwright-core" ]; then
			echo "playwright-core in tests/browser/node_modules (scripts/install-deps --tests)"
		fi ;;
	NOT_ASAN)
		! grep -a -q "__asan_init" "$PROFILE" 2>/dev/null ||
			echo "a build without AddressSanitizer (its slower drains change the timing the test measures)" ;;
	# memcheck cannot run a sanitizer build (make check-asan).
	VALGRIND)
		if ! command -v valgrind >/dev/null; then
			echo "valgrind"
		elif grep -a -q "__asan_init" "$PROFILE" 2>/dev/null; then
			echo "a build without AddressSanitizer (valgrind cannot run one)"
		fi ;;
	# Debian's CPython 3.11 (python3), its debug build and debug files
	# (python3.11-dbg), and its internal headers (libpython3.11-dev).
	PY311) [ -x /usr/bin/python3.11 ] || echo "/usr/bin/python3.11 (scripts/install-deps --tests)" ;;
	PYENV_LIBPY311)
		[ -n "$(pyenv_libpython311)" ] ||
			echo "a pyenv CPython 3.11 linked to libpython (pyenv install 3.11 with PYTHON_CONFIGURE_OPTS=--enable-shared)" ;;
	PY311D) [ -x /usr/bin/python3.11d ] || echo "/usr/bin/python3.11d (python3.11-dbg, scripts/install-deps --tests)" ;;
	# The debug files of Debian's python3.11 and libc, by build id: both
	# are stripped, and most of their functions are named by these.
	PY311_DEBUG_FILES)
		has_debug_file /usr/bin/python3.11 && has_debug_file "$LIBC" ||
			echo "the debug files of python3.11 and libc (python3.11-dbg, libc6-dbg: scripts/install-deps --tests)" ;;
	LIBC_DEBUG_FILE)
		has_debug_file "$LIBC" || echo "libc's debug file (libc6-dbg, scripts/install-deps --tests)" ;;
	PY311_HEADERS)
		[ -r /usr/include/python3.11/internal/pycore_frame.h ] ||
			echo "CPython 3.11's internal headers (libpython3.11-dev, scripts/install-deps --tests)" ;;
	# A network namespace of its own where only loopback exists, up: a
	# server started there (t90's debuginfod) is reachable from nowhere
	# else, and nothing but 127.0.0.1 is reachable from it.
	LOOPBACK_ONLY)
		if ! command -v ip >/dev/null; then
			echo "ip (iproute2, scripts/install-deps --tests)"
		elif [ "$(ip -o link show | awk -F': ' '{ print $2 }')" != lo ] ||
		     ! ip -o link show lo | grep -q '[<,]UP[,>]'; then
			echo "a network namespace with only loopback, up (unshare --net; ip link set lo up)"
		fi ;;
	# The OpenTelemetry Collector scripts/build-collector builds, which
	# the OTLP tests send profiles to (collector_start).
	COLLECTOR) [ -x "$COLLECTOR_BIN" ] || echo "the test collector $COLLECTOR_BIN (scripts/build-collector, run by scripts/install-deps --tests)" ;;
	# A command by its name: strace, groff, mandoc...
	[a-z]*) command -v "$1" >/dev/null || echo "the command $1 (scripts/install-deps --tests)" ;;
	*) echo "a prerequisite tests/e2e/lib.sh does not know" ;;
	esac
}

# The first pyenv CPython 3.11 linked to libpython3.11.so, or nothing.
pyenv_libpython311() {
	local py
	for py in /root/.pyenv/versions/3.11.*/bin/python3.11; do
		ldd "$py" 2>/dev/null | grep -q "libpython3\.11\.so" && { echo "$py"; return; }
	done
}

# The first missing one of PREREQS (comma-separated), or nothing.
prereqs_missing() {
	local p why
	for p in ${1//,/ }; do
		why=$(prereq_missing "$p")
		[ -z "$why" ] || { echo "$p: $why"; return; }
	done
}

test_expect_success() {
	local prereq= desc body why
	[ $# -eq 3 ] && { prereq=$1; shift; }
	desc=$1 body=$2
	test_n=$((test_n + 1))
	why=$([ -n "$prereq" ] && prereqs_missing "$prereq")
	if [ -n "$why" ]; then
		if [ "${PROFILE_TEST_NO_SKIP:-}" = 1 ]; then
			echo "not ok $test_n - $desc # missing $why (PROFILE_TEST_NO_SKIP=1)"
			test_failures=$((test_failures + 1))
		else
			echo "ok $test_n - $desc # SKIP missing $why"
		fi
		return
	fi
	# Not inside an if: there, bash would ignore set -e in the body.
	(cd "$TRASH" && set -e && eval "$body") >"$TRASH/log" 2>&1
	local rc=$?
	kill_bg
	if [ $rc -eq 0 ]; then
		echo "ok $test_n - $desc"
		# PROFILE_TEST_VERBOSE=1: what passing tests measured, too.
		[ "${PROFILE_TEST_VERBOSE:-}" != 1 ] || sed 's/^/#   /' "$TRASH/log" | tail -40
	else
		echo "not ok $test_n - $desc"
		sed 's/^/#   /' "$TRASH/log" | tail -40
		test_failures=$((test_failures + 1))
	fi
}

# The plan, last: the runner checks that every test reported.
test_done() {
	echo "1..$test_n"
	[ "$test_failures" -eq 0 ]
	exit $?
}

# Start a workload in the background; its pid goes in $!, and it is
# killed when the test file ends.
bg() {
	"$@" &
	echo $! >>"$TRASH/bg.pids"
}

# Run a command as the hostile user (nobody) or as its victim, another
# unprivileged user (daemon): $NOBODY CMD..., $VICTIM CMD...  Prereq USERS.
NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
VICTIM="setpriv --reuid=daemon --regid=daemon --clear-groups"

# Sum the counts of folded lines matching a regex: fsum FILE REGEX
fsum() {
	awk -v re="$2" '$0 ~ re { n += $NF } END { print n + 0 }' "$1"
}

# Ratio a/b with two decimals, and a check that it lies in [lo, hi].
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.3f\n", a / b }'; }
in_range() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x != "inf" && x >= lo && x <= hi) }'; }

# stats ARGS...: run the stackstats helper with ARGS, print its line, and
# set its values (samples, complete, depth, ratio, shares) as shell
# variables.
STACKSTATS=$PROFILE_TOP/tests/e2e/helpers/stackstats
stats() {
	local st
	st=$("$STACKSTATS" "$@") || { echo "$st"; fail "stackstats $*: no samples"; return 1; }
	echo "stackstats $*: $st"
	eval "$st"
}

# within X LO HI WHAT, at_least X MIN WHAT, at_most X MAX WHAT: check one
# measure.
within() { in_range "$1" "$2" "$3" || fail "$4 is $1, want $2 to $3"; }
at_least() { within "$1" "$2" 1e9 "$3"; }
at_most() { within "$1" -1e9 "$2" "$3"; }

# Wait until a line of FILE matches REGEX: wait_for FILE REGEX [SECONDS].
wait_for() {
	for _ in $(seq $((${3:-10} * 10))); do
		grep -E -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "no line matching '$2' in $1 within ${3:-10} s"
}

# Wait until profiler PID has its perf events open (it samples from then
# on); fails if it exits first or takes over 10 s.
wait_attached() {
	for _ in $(seq 500); do
		ls -l /proc/$1/fd 2>/dev/null | grep -q "perf_event" && return 0
		kill -0 $1 2>/dev/null || break
		sleep 0.02
	done
	fail "profile $1 never opened a perf event"
}

# The test collector (prereq COLLECTOR), in a test body:
#
#   collector_start [--tls] [--auth TOKEN]
#                             start it on 127.0.0.1 at a free port, with a
#                             config in $TRASH/otelcol (--auth: requests must
#                             carry "Authorization: Bearer TOKEN"); returns
#                             once it listens
#   collector_stop            stop it (SIGTERM: what it received is written)
#   collector_restart         start it again, same port, same output file
#
# collector_start exports COLLECTOR_URL (http[s]://127.0.0.1:PORT, to which
# profile adds /v1development/profiles), COLLECTOR_OUT (the file exporter's
# JSON lines, one per request received, appended across restarts: read it
# with tests/collector/otlp_read.py), COLLECTOR_PID and, with --tls,
# COLLECTOR_CA (the CA that signed its certificate, made here by openssl;
# prereq openssl).  Its log is $TRASH/otelcol/log.  The collector is killed
# when the test ends, like bg's workloads.
OTLP_READ="python3 $PROFILE_TOP/tests/collector/otlp_read.py"

collector_start() {
	local d=$TRASH/otelcol tls= token= port scheme=http
	while [ $# -gt 0 ]; do
		case $1 in
		--tls) tls=1 ;;
		--auth) token=$2; shift ;;
		*) fail "collector_start: unknown option $1"; return 1 ;;
		esac
		shift
	done
	rm -rf "$d" && mkdir -p "$d" || return 1
	# A port nothing listens on now (another collector may take it before
	# this one does: the start then fails, and says so).
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
		return 1
	echo "$port" >"$d/port"
	if [ -n "$tls" ]; then
		scheme=https
		collector_certs "$d" || return 1
	fi
	# Only the profiles pipeline, HTTP only (no gRPC port), no telemetry
	# port of its own (several collectors run at once); the file is
	# flushed every 100 ms and appended to across restarts.
	{
		echo "receivers:"
		echo "  otlp:"
		echo "    protocols:"
		echo "      http:"
		echo "        endpoint: 127.0.0.1:$port"
		if [ -n "$tls" ]; then
			echo "        tls:"
			echo "          cert_file: $d/server.crt"
			echo "          key_file: $d/server.key"
		fi
		if [ -n "$token" ]; then
			echo "        auth:"
			echo "          authenticator: bearertokenauth"
			echo "extensions:"
			echo "  bearertokenauth:"
			echo "    token: \"$token\""
		fi
		echo "exporters:"
		echo "  file:"
		echo "    path: $d/out.jsonl"
		echo "    format: json"
		echo "    append: true"
		echo "    flush_interval: 100ms"
		echo "service:"
		[ -z "$token" ] || echo "  extensions: [bearertokenauth]"
		echo "  telemetry:"
		echo "    metrics:"
		echo "      level: none"
		echo "  pipelines:"
		echo "    profiles:"
		echo "      receivers: [otlp]"
		echo "      exporters: [file]"
	} >"$d/config.yaml"
	export COLLECTOR_URL=$scheme://127.0.0.1:$port
	export COLLECTOR_OUT=$d/out.jsonl
	[ -z "$tls" ] || export COLLECTOR_CA=$d/ca.crt
	collector_launch
}

# A CA and a certificate for 127.0.0.1 signed by it, in DIR.
collector_certs() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=profile test CA" \
		-keyout "$1/ca.key" -out "$1/ca.crt" >"$1/openssl.log" 2>&1 &&
	openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
		-keyout "$1/server.key" -out "$1/server.csr" >>"$1/openssl.log" 2>&1 &&
	printf "subjectAltName=IP:127.0.0.1,DNS:localhost\n" >"$1/san.ext" &&
	openssl x509 -req -in "$1/server.csr" -CA "$1/ca.crt" -CAkey "$1/ca.key" \
		-CAcreateserial -days 2 -extfile "$1/san.ext" \
		-out "$1/server.crt" >>"$1/openssl.log" 2>&1 ||
	fail "openssl could not make the collector's certificates: $(tail -3 "$1/openssl.log")"
}

# Run the collector of $TRASH/otelcol/config.yaml; wait until it listens.
collector_launch() {
	local d=$TRASH/otelcol port
	port=$(cat "$d/port") || return 1
	"$COLLECTOR_BIN" --config "$d/config.yaml" \
		--feature-gates=service.profilesSupport >>"$d/log" 2>&1 &
	export COLLECTOR_PID=$!
	echo "$COLLECTOR_PID" >>"$TRASH/bg.pids"
	for _ in $(seq 300); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			return 0
		fi
		kill -0 "$COLLECTOR_PID" 2>/dev/null || break
		sleep 0.05
	done
	tail -20 "$d/log"
	fail "the collector did not listen on 127.0.0.1:$port (log above)"
}

collector_stop() {
	[ -n "${COLLECTOR_PID:-}" ] || return 0
	kill -TERM "$COLLECTOR_PID" 2>/dev/null || :
	# 30 s: under the suite's ASan pass its shutdown once took over 10.
	for _ in $(seq 600); do
		kill -0 "$COLLECTOR_PID" 2>/dev/null || break
		# A child that exited and is not reaped yet.
		[ "$(awk '{ print $3 }' "/proc/$COLLECTOR_PID/stat" 2>/dev/null)" != Z ] || break
		sleep 0.05
	done
	if kill -0 "$COLLECTOR_PID" 2>/dev/null &&
	   [ "$(awk '{ print $3 }' "/proc/$COLLECTOR_PID/stat" 2>/dev/null)" != Z ]; then
		# Once in CI (ASan pass, the profiler long gone): its goroutines,
		# for the log, then on.  What it received is flushed every 100 ms
		# and the test checks it: a sample lost to the hang still fails.
		kill -QUIT "$COLLECTOR_PID" 2>/dev/null
		sleep 2
		kill -9 "$COLLECTOR_PID" 2>/dev/null
		wait "$COLLECTOR_PID" 2>/dev/null || :
		COLLECTOR_PID=
		echo "# the collector hung at shutdown; its goroutines:"
		grep -A3 "^goroutine " "$TRASH/otelcol/log" | head -60
	fi
	wait "$COLLECTOR_PID" 2>/dev/null || :
	COLLECTOR_PID=
	return 0
}

collector_restart() {
	collector_stop && collector_launch
}

# collector_save DIR: stop the collector and keep what it received as
# DIR/out.jsonl; DIR/done marks the run whole, for the tests that reuse it.
collector_save() {
	collector_stop &&
	cp "$COLLECTOR_OUT" "$1/out.jsonl" &&
	echo done >"$1/done"
}

# collector_why DIR: after a run of profile into the collector failed, its
# stderr (DIR/err) and the collector's log; returns 1.
collector_why() {
	echo "--- profile's stderr:"; cat "$1/err"
	echo "--- collector's log:"; tail -20 "$TRASH/otelcol/log"
	false
}

# otlp_total TOTALS KEY: KEY's number (requests, samples) in TOTALS, as
# $OTLP_READ --totals wrote it.
otlp_total() {
	awk -v key="$2" '$1 == key { print $2 }' "$1"
}

# The lines of FILE that are not folded "comm;frame;... COUNT" lines.
not_folded() { grep -v -E '^[^;]+(;[^;]+)* [0-9]+$' "$1" || :; }

# Fail with a message (inside a test body).
# The cum column of `go tool pprof -top` output FILE for function NAME:
# pprof_cum FILE NAME (0 when it is not there).
pprof_cum() {
	awk -v name="$2" '$1 ~ /^[0-9.]+$/ {
		line = $0
		for (i = 0; i < 5; i++) sub(/^ *[^ ]+/, "", line)
		sub(/^ +/, "", line)
		if (line == name) { print $4; found = 1 }
	} END { if (!found) print 0 }' "$1"
}

fail() { echo "FAIL: $*"; return 1; }
