#!/bin/bash
# Malformed command lines.  Each must be a usage error: exit status 2,
# exactly one line on stderr, nothing on stdout, and not a single bpf() or
# perf_event_open() call (checked under strace), i.e. rejected before
# anything is loaded.
#
# Each table line is one command line, written as shell words.
. "$(dirname "$0")/lib.sh"

# Run every command line read from stdin; report each, fail if any is wrong.
check_lines() {
	local line rc lines calls bad=0 n=0
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		n=$((n + 1))
		eval "set -- $line"
		rc=0
		# LeakSanitizer cannot run under ptrace: off for this run only.
		ASAN_OPTIONS=detect_leaks=0 strace -f -qq -o trace -e trace=bpf,perf_event_open \
			"$PROFILE" "$@" >out 2>err </dev/null || rc=$?
		lines=$(wc -l <err)
		calls=$(grep -c -E "(^|[^a-z_])(bpf|perf_event_open)\(" trace || :)
		if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || [ "$calls" -ne 0 ] ||
		   [ -s out ] || [ "$(wc -c <err)" -ne "$(head -1 err | wc -c)" ]; then
			echo "FAIL: profile $line: exit $rc (want 2), $lines stderr lines (want 1)," \
				"$calls bpf/perf_event_open calls (want 0), $(wc -c <out) bytes on stdout (want 0)"
			sed "s/^/      stderr: /" err
			grep -E "(bpf|perf_event_open)\(" trace | head -3 | sed "s/^/      strace: /" || :
			bad=1
		else
			echo "ok:   profile $line  ->  $(cat err)"
		fi
	done
	echo "$n command lines"
	[ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
}

MAX_RATE=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
MAX_STACK=$(cat /proc/sys/kernel/perf_event_max_stack)
PID_MAX=$(cat /proc/sys/kernel/pid_max)	# pids are below it: never a live pid
V1=$(findmnt -n -o TARGET -t cgroup 2>/dev/null | head -1)

t_empty() {
	cat <<'EOF'
-p ""
-L ""
-F ""
-c ""
-C ""
""
--stack-storage-size ""
--hash-storage-size ""
--perf-max-stack-depth ""
--cgroup ""
--cgroupmap ""
--mntnsmap ""
--pid=
EOF
}
test_expect_success strace 'empty values' 't_empty | check_lines'

t_signs() {
	cat <<'EOF'
-F +99
-F -99
-F " 99"
-F "99 "
-F "9 9"
-p -1
-p +1
-p " 1"
-p "1, 2"
-C -1
-C +0
+5
" 5"
"5 "
--stack-storage-size -1
EOF
}
test_expect_success strace 'signs and whitespace in numbers' 't_signs | check_lines'

t_garbage() {
	cat <<'EOF'
-F 99999999999
-F99999999999
-F 4294967296
-c 99999999999999999999
-p 99999999999
-L 2147483648
-C 2147483648
99999999999
-p 12x
-F 99x
-F 1e3
-F 0x10
-F 99.5
--frequency=abc
5s
1.5
EOF
}
test_expect_success strace 'overflow and trailing garbage' 't_garbage | check_lines'

t_lists() {
	cat <<'EOF'
-p 1,,2
-p 1,
-p ,1
-p ,
-p 1,1
-L 1,1
-p 0
-L 0
-p 1 -p 1
-L 1 -L 1
EOF
}
test_expect_success strace 'malformed id lists' 't_lists | check_lines'

t_ranges() {
	cat <<EOF
0
-F 0
-c 0
--stack-storage-size 0
--hash-storage-size 0
--stack-storage-size 16777217
--hash-storage-size 16777217
--perf-max-stack-depth 0
-C 99
-C 2147483647
-F $((MAX_RATE + 1))
--perf-max-stack-depth $((MAX_STACK + 1))
EOF
}
test_expect_success strace 'out of range: zero, too big, above the sysctls, offline CPU' 't_ranges | check_lines'

t_conflicts() {
	cat <<'EOF'
5 5
1 2 3
-p 1 -L 1
-U -K
-F 99 -c 1000000
-f -d -U -K 5
EOF
}
test_expect_success strace 'conflicting options and extra arguments' 't_conflicts | check_lines'

t_missing() {
	cat <<EOF
-p $PID_MAX
-L $PID_MAX
-p 1,$PID_MAX
--cgroup /etc/passwd
--cgroup /nonexistent-$$
--cgroup /tmp
${V1:+--cgroup $V1}
--cgroupmap /tmp
--cgroupmap /etc/passwd
--cgroupmap /nonexistent-$$
--mntnsmap /tmp
--mntnsmap /nonexistent-$$
EOF
}
test_expect_success strace 'nonexistent PIDs, paths that are not cgroup v2 dirs or pinned maps' \
	't_missing | check_lines'

t_getopt() {
	cat <<'EOF'
-z
--bogus
-1
-F
--cgroup
-p
EOF
}
test_expect_success strace 'unknown options and missing values: one line, not two' 't_getopt | check_lines'

test_done
