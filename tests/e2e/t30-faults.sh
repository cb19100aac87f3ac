#!/bin/bash
# Faults the profiler must survive (issue 6): signals at any point, a closed
# pipe, a full disk, targets that exit or never existed, missing privileges,
# hidden kernel addresses, maps too small, a missing hardware event, stacks
# deeper than the kernel records, thousands of mappings, and a binary whose
# file system has been unmounted.
#
# Each test is a function run as a body (set -e is in effect in it); the
# steps use "rc=0; cmd || rc=$?" where a status is checked.  System settings
# changed here (kernel.kptr_restrict, kernel.perf_event_paranoid) are put
# back by a trap in the test and once more when the file ends.
. "$(dirname "$0")/lib.sh"

ORIG_KPTR=$(sysctl -n kernel.kptr_restrict 2>/dev/null)
ORIG_PARANOID=$(sysctl -n kernel.perf_event_paranoid 2>/dev/null)
restore_sysctls() {
	[ -z "$ORIG_KPTR" ] || [ "$(sysctl -n kernel.kptr_restrict)" = "$ORIG_KPTR" ] ||
		sysctl -q -w kernel.kptr_restrict="$ORIG_KPTR"
	[ -z "$ORIG_PARANOID" ] || [ "$(sysctl -n kernel.perf_event_paranoid)" = "$ORIG_PARANOID" ] ||
		sysctl -q -w kernel.perf_event_paranoid="$ORIG_PARANOID"
	return 0
}
trap 'restore_sysctls; cleanup' EXIT

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# A foreground run that hangs is killed after a minute (status 137).
run() { timeout -s KILL 60 "$@"; }

# wait_exit PID SECONDS: wait for a background profiler to end, its status
# in RC; one that is still there after SECONDS is killed, and the test fails.
wait_exit() {
	local st=
	for _ in $(seq $(($2 * 10))); do
		st=$(awk '{ print $3 }' /proc/$1/stat 2>/dev/null || :)
		[ -z "$st" ] || [ "$st" = Z ] && break
		sleep 0.1
	done
	if [ -n "$st" ] && [ "$st" != Z ]; then
		kill -9 $1
		wait $1 || :
		fail "profile $1 still running $2 s later"
	fi
	RC=0; wait $1 || RC=$?
}

# A -v counter: counter NAME FILE.
counter() { sed -n "s/^profile: samples:.*[ ,]$1 \\([0-9]*\\).*/\\1/p" "$2"; }
stack_counter() {	# stack_counter user|kernel NAME FILE
	sed -n "s/^profile: $1 stacks:.*[ ,]$2 \\([0-9]*\\).*/\\1/p" "$3"
}

# one_line FILE: the file is exactly one line (a one-line message).
one_line() {
	local n
	n=$(wc -l <"$1")
	[ "$n" -eq 1 ] || fail "expected one line on stderr, got $n"
}

show() { echo "--- $1:"; cat "$1"; }

# --- 1. Signals ------------------------------------------------------------

# SIGTERM before the duration ends, plain output on stdout.
t_term_plain() {
	local pid prof rc t0 t1
	bg "$WORKLOADS/burn" -n sigplain -d 20 >/dev/null
	pid=$!
	"$PROFILE" -F 199 -p $pid 30 >plain 2>err &
	prof=$!
	wait_attached $prof
	sleep 2
	kill -0 $prof 2>/dev/null || { show err; fail "profile ended before the signal"; }
	t0=$(now_ms)
	kill -TERM $prof
	wait_exit $prof 20; rc=$RC
	t1=$(now_ms)
	show err
	echo "SIGTERM -> exit $rc after $((t1 - t0)) ms"
	[ $rc -eq 0 ] || fail "exit status $rc after SIGTERM"
	[ $((t1 - t0)) -lt 5000 ] || fail "took $((t1 - t0)) ms to exit after SIGTERM"
	echo "Sampling at 199 Hertz of PID $pid by user + kernel stack for 30 secs." >expect
	head -1 plain >header
	diff expect header
	grep -q -x "    func_b" plain || fail "no func_b frame"
	grep -q -x "    -                sigplain ($pid)" plain || fail "no sigplain ($pid) record"
	n=$(grep -E -c "^        [0-9]+$" plain || :)
	[ "$n" -ge 2 ] || fail "only $n count lines"
	[ ! -s err ] || fail "unexpected stderr"
}

# SIGINT before the duration ends, -o FILE: the file holds the samples.
t_int_file() {
	local pid prof rc n
	bg "$WORKLOADS/burn" -n sigfile -d 20 >/dev/null
	pid=$!
	"$PROFILE" -F 199 -p $pid -o out.folded 30 >stdout 2>err &
	prof=$!
	wait_attached $prof
	sleep 2
	kill -0 $prof 2>/dev/null || { show err; fail "profile ended before the signal"; }
	kill -INT $prof
	wait_exit $prof 20; rc=$RC
	show err
	n=$(fsum out.folded ";func_b [0-9]+$")
	echo "SIGINT -> exit $rc; func_b=$n in out.folded"
	[ $rc -eq 0 ] || fail "exit status $rc after SIGINT"
	[ "$n" -ge 30 ] || fail "the samples so far are not in the file (func_b=$n)"
	[ -z "$(not_folded out.folded)" ] || { not_folded out.folded; fail "malformed lines in the file"; }
	grep -q "^sigfile;" out.folded || fail "no sigfile stacks"
	[ ! -s stdout ] || fail "output on stdout with -o"
	[ "$(wc -l <err)" -eq 1 ] && grep -q "^profile: wrote out.folded: " err || fail "unexpected stderr"
}

# SIGINT with -i: the finished intervals and the partial last one are printed.
t_int_interval() {
	local pid prof rc m last
	bg "$WORKLOADS/burn" -n sigival -d 20 >/dev/null
	pid=$!
	"$PROFILE" -F 199 -f -i 1 -p $pid 30 >ival 2>err &
	prof=$!
	wait_attached $prof
	sleep 3.5
	kill -0 $prof 2>/dev/null || { show err; fail "profile ended before the signal"; }
	kill -INT $prof
	wait_exit $prof 20; rc=$RC
	show err
	m=$(grep -c "^# interval " ival || :)
	echo "SIGINT -> exit $rc; $m intervals, func_b=$(fsum ival ";func_b [0-9]+$")"
	[ $rc -eq 0 ] || fail "exit status $rc after SIGINT in -i mode"
	[ "$m" -ge 2 ] || fail "only $m interval markers"
	# Numbered 1, 2, ... with nothing missing.
	grep "^# interval " ival | awk '$3 != NR { exit 1 }' || fail "interval numbers are not 1..$m"
	# The last (partial) interval has samples too.
	last=$(awk '/^# interval / { n = 0; next } { n++ } END { print n }' ival)
	[ "$last" -ge 1 ] || fail "the interval cut short by SIGINT was not printed"
	grep -v "^# interval " ival >ival.folded
	[ -z "$(not_folded ival.folded)" ] || fail "malformed lines"
	[ "$(fsum ival.folded ";func_b [0-9]+$")" -ge 50 ] || fail "too few func_b samples"
}

# A second SIGINT while the output is being written ends the process at once.
# stdout is a FIFO nobody reads, so the output phase blocks in write().
t_int_twice() {
	local prof rc s t0 t1
	bg "$WORKLOADS/manystacks" -D 6 -t 2 -d 20 >/dev/null
	mkfifo fifo
	exec 3<>fifo
	"$PROFILE" -F 999 >&3 2>err &
	prof=$!
	wait_attached $prof
	sleep 3
	kill -INT $prof
	s=
	for _ in $(seq 300); do
		s=$(cut -d" " -f1 /proc/$prof/syscall 2>/dev/null || :)
		[ "$s" = 1 ] && break	# write(2): blocked on the full pipe
		kill -0 $prof 2>/dev/null || break
		sleep 0.1
	done
	echo "after the first SIGINT: syscall '$s'"
	[ "$s" = 1 ] || { show err; fail "profile never blocked writing its output"; }
	sleep 0.5
	kill -0 $prof 2>/dev/null || fail "profile ended while its output was blocked"
	t0=$(now_ms)
	kill -INT $prof
	wait_exit $prof 20; rc=$RC
	t1=$(now_ms)
	exec 3>&-
	show err
	echo "second SIGINT -> status $rc after $((t1 - t0)) ms"
	[ $rc -eq 130 ] || fail "status $rc after the second SIGINT, not 130 (killed by SIGINT)"
	[ $((t1 - t0)) -lt 3000 ] || fail "took $((t1 - t0)) ms to die"
}

# No duration, and every -p target exits: each exit is said, the last one
# ends the run (as perf and py-spy do), and the profile is written.
t_targets_gone() {
	local p1 p2 prof rc t0 t1
	bg "$WORKLOADS/burn" -n gone1 -d 2 >/dev/null
	p1=$!
	bg "$WORKLOADS/burn" -n gone2 -d 3 >/dev/null
	p2=$!
	t0=$(now_ms)
	"$PROFILE" -F 199 -f -p $p1,$p2 >out 2>err &
	prof=$!
	wait_attached $prof
	wait_exit $prof 20; rc=$RC
	t1=$(now_ms)
	show err
	echo "ended by itself after $((t1 - t0)) ms, exit $rc; gone1 func_b=$(fsum out "^gone1;.*;func_b [0-9]+$"), gone2 func_b=$(fsum out "^gone2;.*;func_b [0-9]+$")"
	[ $rc -eq 0 ] || fail "exit status $rc (124: still running when its targets had exited)"
	[ $((t1 - t0)) -le 8000 ] || fail "took $((t1 - t0)) ms to end after a 3 s target"
	grep -q "^profile: PID $p1 has exited; profiling the other processes goes on$" err ||
		fail "the first exit is not said as such"
	grep -q "^profile: PID $p2 has exited, the last of the -p processes: the profile ends$" err ||
		fail "the last exit does not say the run ends"
	[ "$(grep -c "has exited" err)" -eq 2 ] || fail "each exit must be said once"
	[ "$(fsum out "^gone1;.*;func_b [0-9]+$")" -ge 20 ] || fail "gone1 samples missing"
	[ "$(fsum out "^gone2;.*;func_b [0-9]+$")" -ge 40 ] || fail "gone2 samples missing"
}

test_expect_success ROOT_BPF 'SIGTERM before the duration ends, plain output: header, records, exit 0' t_term_plain
test_expect_success ROOT_BPF 'SIGINT before the duration ends, -o FILE: samples so far in the file, exit 0' t_int_file
test_expect_success ROOT_BPF 'SIGINT with -i 1: finished and partial intervals printed, exit 0' t_int_interval
test_expect_success ROOT_BPF 'a second SIGINT while output blocks on a full pipe: dies at once (130)' t_int_twice
test_expect_success ROOT_BPF 'no duration, every -p target exits: said on stderr, the run ends by itself, exit 0' t_targets_gone

# --- 2. Closed pipe ---------------------------------------------------------

t_pipe_head() {
	local fmt st
	bg "$WORKLOADS/manystacks" -D 6 -t 2 -d 20 >/dev/null
	sleep 0.3
	for fmt in -f "" "--format svg"; do
		# shellcheck disable=SC2086
		run "$PROFILE" -F 999 $fmt 1 2>err | head -1 >first
		st="${PIPESTATUS[*]}"
		echo "profile $fmt 1 | head -1: statuses $st, $(wc -c <first) bytes read"
		[ "$st" = "0 0" ] || { show err; fail "profile $fmt | head -1: statuses $st"; }
		[ "$(wc -l <first)" -eq 1 ] || fail "head read no line"
		[ ! -s err ] || { show err; fail "noise on stderr with $fmt"; }
	done
}

# The reader is gone before anything is written.
t_pipe_true() {
	local st
	bg "$WORKLOADS/burn" -d 10 >/dev/null
	run "$PROFILE" -F 199 -f 2 2>err | true
	st="${PIPESTATUS[*]}"
	echo "profile -f 2 | true: statuses $st"
	[ "$st" = "0 0" ] || { show err; fail "statuses $st"; }
	[ ! -s err ] || { show err; fail "noise on stderr"; }
}

# With -i and no duration, a closed pipe ends the run at the next interval
# (status 0), instead of sampling forever for nobody.
t_pipe_interval() {
	local st t0 t1
	bg "$WORKLOADS/burn" -d 20 >/dev/null
	t0=$(now_ms)
	timeout 20 "$PROFILE" -F 99 -f -i 1 2>err | true
	st="${PIPESTATUS[*]}"
	t1=$(now_ms)
	echo "profile -f -i 1 | true: statuses $st after $((t1 - t0)) ms"
	[ "$st" = "0 0" ] || { show err; fail "statuses $st (124: still running after 20 s)"; }
	[ ! -s err ] || { show err; fail "noise on stderr"; }
}

test_expect_success ROOT_BPF 'closed pipe (| head -1): status 0 and a quiet stderr, folded, plain, svg' t_pipe_head
test_expect_success ROOT_BPF 'reader gone before any output (| true): status 0, quiet' t_pipe_true
test_expect_success ROOT_BPF '-i with no duration into a closed pipe: ends by itself with status 0' t_pipe_interval

# --- 3. Full disk ------------------------------------------------------------

# full_disk DESC CMD...: exit 1 and one line naming the error.
full_disk() {
	local desc=$1 rc
	shift
	rc=0; timeout 20 "$@" 2>err || rc=$?
	echo "$desc: exit $rc; stderr: $(cat err)"
	[ $rc -eq 1 ] || fail "$desc: exit $rc, not 1 (124: did not end)"
	one_line err
	grep -q "No space left on device" err || fail "$desc: the message does not say why"
}

t_full() {
	bg "$WORKLOADS/burn" -d 10 >/dev/null
	full_disk "-f >/dev/full" sh -c 'exec "$0" -F 99 -f 1 >/dev/full' "$PROFILE"
	full_disk "plain >/dev/full" sh -c 'exec "$0" -F 99 1 >/dev/full' "$PROFILE"
	full_disk "-o /dev/full" "$PROFILE" -F 99 -f -o /dev/full 1
	full_disk "--format svg -o /dev/full" "$PROFILE" -F 99 --format svg -o /dev/full 1
	full_disk "-i 1, no duration, >/dev/full" sh -c 'exec "$0" -F 99 -f -i 1 >/dev/full' "$PROFILE"
}

test_expect_success ROOT_BPF 'full disk (>/dev/full, -o /dev/full, -i): exit 1, one clear line' t_full

# --- 4, 5. Targets -----------------------------------------------------------

t_target_exits() {
	local pid rc t0 t1 b unk all
	bg "$WORKLOADS/burn" -n exits -d 2 >/dev/null
	pid=$!
	t0=$(now_ms)
	rc=0; run "$PROFILE" -F 199 -f -p $pid 4 >out 2>err || rc=$?
	t1=$(now_ms)
	show err
	b=$(fsum out "^exits;.*;func_b [0-9]+$")
	all=$(fsum out "^exits;")
	unk=$(fsum out "^exits;.*\\[unknown\\]")
	echo "exit $rc after $((t1 - t0)) ms; exits: $all samples, func_b=$b, with [unknown]: $unk"
	[ $rc -eq 0 ] || fail "exit status $rc"
	[ $((t1 - t0)) -le 3800 ] || fail "took $((t1 - t0)) ms: a 4 s profile of a 2 s target must end when it exits"
	[ "$(grep -c "^profile: PID $pid has exited" err)" -eq 1 ] || fail "no single 'PID $pid has exited' line"
	[ "$b" -ge 40 ] || fail "the samples of the exited PID were not printed symbolized (func_b=$b)"
	grep -q "^exits;.*;main;func_b [0-9]*$" out || fail "no exits;...;main;func_b stack"
	[ $((unk * 20)) -le "$all" ] || fail "$unk of $all samples have [unknown] frames"
	[ -z "$(not_folded out)" ] || fail "malformed lines"
}

# A free PID, counting down from pid_max.
free_pid() {
	local p
	p=$(($(cat /proc/sys/kernel/pid_max) - 1))
	while [ -e /proc/$p ]; do p=$((p - 1)); done
	echo $p
}

t_no_such_pid() {
	local p rc t0 t1
	p=$(free_pid)
	t0=$(now_ms)
	rc=0; run "$PROFILE" -f -p $p 5 >out 2>err || rc=$?
	t1=$(now_ms)
	echo "-p $p: exit $rc after $((t1 - t0)) ms: $(cat err)"
	[ $rc -eq 2 ] || fail "exit $rc, not 2"
	[ $((t1 - t0)) -lt 3000 ] || fail "not immediate"
	one_line err
	grep -q "$p" err || fail "the message does not name PID $p"
	[ ! -s out ] || fail "output on stdout"
}

test_expect_success ROOT_BPF 'the only target exits: the run ends then, says so, prints its samples symbolized' t_target_exits
test_expect_success ROOT_BPF 'a PID that does not exist at start: exit 2, one line naming it' t_no_such_pid

# --- 6. Privileges -----------------------------------------------------------

# no_priv DESC CMD...: exit 1, one line that names root or a capability.
no_priv() {
	local desc=$1 rc
	shift
	rc=0; timeout 20 "$@" >out 2>err || rc=$?
	echo "$desc: exit $rc; stderr: $(cat err)"
	[ $rc -eq 1 ] || fail "$desc: exit $rc, not 1"
	one_line err
	grep -E -q "CAP_BPF|CAP_PERFMON|root" err || fail "$desc: the message names no capability or root"
	[ ! -s out ] || fail "$desc: output on stdout"
}

t_caps() {
	no_priv "root without CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN" \
		capsh --drop=cap_bpf,cap_perfmon,cap_sys_admin -- -c 'exec "$0" -F 49 -f 1' "$PROFILE"
	no_priv "root without CAP_PERFMON, CAP_SYS_ADMIN" \
		capsh --drop=cap_perfmon,cap_sys_admin -- -c 'exec "$0" -F 49 -f 1' "$PROFILE"
	no_priv "nobody" $NOBODY --inh-caps=-all --bounding-set=-all "$PROFILE" -F 49 -f 1
	no_priv "nobody with CAP_BPF only" \
		$NOBODY --inh-caps=+bpf --ambient-caps=+bpf "$PROFILE" -F 49 -f 1
	grep -q CAP_PERFMON err || fail "CAP_PERFMON is what is missing, and is not named"
}

# As nobody with kernel.perf_event_paranoid raised; then, as a check that the
# message tells the truth, nobody with exactly CAP_BPF and CAP_PERFMON.
t_paranoid() {
	local rc
	trap 'sysctl -q -w kernel.perf_event_paranoid="$ORIG_PARANOID"' EXIT
	sysctl -q -w kernel.perf_event_paranoid=3
	no_priv "nobody, perf_event_paranoid=3" \
		$NOBODY --inh-caps=-all --bounding-set=-all "$PROFILE" -F 49 -f 1
	bg "$WORKLOADS/burn" -n capburn -d 8 >/dev/null
	rc=0; run $NOBODY --inh-caps=+bpf,+perfmon --ambient-caps=+bpf,+perfmon \
		"$PROFILE" -F 99 -f 2 >out 2>err || rc=$?
	sysctl -q -w kernel.perf_event_paranoid="$ORIG_PARANOID"
	show err
	echo "nobody + CAP_BPF + CAP_PERFMON, paranoid=3: exit $rc, capburn samples $(fsum out "^capburn;")"
	[ $rc -eq 0 ] || fail "CAP_BPF and CAP_PERFMON, as the message says, are not enough"
	[ "$(fsum out "^capburn;")" -ge 20 ] || fail "no capburn samples"
	[ -z "$(not_folded out)" ] || fail "malformed lines"
}

test_expect_success ROOT_BPF,CAPS 'capabilities dropped (capsh, setpriv): exit 1, one line naming them' t_caps
test_expect_success ROOT_BPF,CAPS 'perf_event_paranoid=3 as nobody: exit 1, one line; CAP_BPF+CAP_PERFMON suffice' t_paranoid

# --- 7. Kernel addresses hidden ---------------------------------------------

# kstacks_hidden HOW CMD-PREFIX...: profile faulter's kernel stacks (-K) with
# /proc/kallsyms showing zeros to the profiler; check folded and -v output.
kstacks_hidden() {
	local how=$1 pid rc n unk named
	shift
	bg "$WORKLOADS/faulter" 10 >/dev/null
	pid=$!
	KPID=$pid
	sleep 0.2
	rc=0; run "$@" "$PROFILE" --kallsyms -F 199 -K -f -p $pid 1 >kf 2>kerr || rc=$?
	show kerr
	n=$(fsum kf "^faulter;")
	unk=$(fsum kf "^faulter(;\\[unknown\\])+ [0-9]+$")
	echo "$how, folded -K: exit $rc, faulter $n samples, all-[unknown] $unk"
	[ $rc -eq 0 ] || fail "exit status $rc"
	[ "$n" -ge 20 ] || fail "too few faulter samples"
	[ "$unk" -eq "$n" ] || { grep -E -v "^faulter(;\\[unknown\\])+ " kf | head -5; fail "kernel frames were named from zero addresses"; }
	one_line kerr
	grep -q "kptr_restrict" kerr || fail "the warning does not name kptr_restrict"
	rc=0; run "$@" "$PROFILE" --kallsyms -F 199 -K -v -p $pid 1 >kv 2>kverr || rc=$?
	[ $rc -eq 0 ] || fail "-v: exit status $rc"
	# -v labels an unnamed kernel frame [kernel] (frame__label()).
	n=$(grep -c "^    [0-9a-f]* \\[kernel\\] \\[kernel.kallsyms\\]$" kv || :)
	named=$(grep -E "^    [0-9a-f]+ " kv | grep -v -c "\\[kernel\\] \\[kernel.kallsyms\\]$" || :)
	echo "$how, plain -K -v: $n kernel frames as ADDRESS [kernel] [kernel.kallsyms], $named named"
	sed -n 2,8p kv
	[ "$n" -ge 20 ] || fail "-v does not print the kernel frames' addresses"
	[ "$named" -eq 0 ] || fail "kernel frames were named"
	! grep -E "^    [0-9a-f]+ \\[kernel\\]" kv | grep -v -q "^    ffff" ||
		fail "a kernel frame address is not a kernel address"
	grep -q "kptr_restrict" kverr || fail "-v: no warning"
}

t_kptr2() {
	local n
	trap 'sysctl -q -w kernel.kptr_restrict="$ORIG_KPTR"' EXIT
	sysctl -q -w kernel.kptr_restrict=2
	head -1 /proc/kallsyms | grep -q "^0000000000000000 " || fail "kptr_restrict=2 shows addresses"
	kstacks_hidden "kptr_restrict=2"
	# Named by the kernel (the default), the frames do not depend on it.
	rc=0; run "$PROFILE" -F 199 -K -f -p $KPID 1 >kf 2>kerr || rc=$?
	n=$(grep -c -E "^faulter;.*(asm_exc_page_fault|entry_SYSCALL_64|do_syscall_64)" kf || :)
	echo "kptr_restrict=2 without --kallsyms: exit $rc, $n stacks with named kernel frames"
	[ $rc -eq 0 ] || fail "exit $rc"
	[ "$n" -ge 1 ] || fail "kernel frames not named by the kernel under kptr_restrict=2"
	! grep -q kptr_restrict kerr || fail "kptr_restrict warning without --kallsyms"
	sysctl -q -w kernel.kptr_restrict="$ORIG_KPTR"
	# And the control: readable addresses give named frames and no warning.
	rc=0; run "$PROFILE" --kallsyms -F 199 -K -f -p $KPID 1 >kf 2>kerr || rc=$?
	n=$(grep -c -E "^faulter;.*(asm_exc_page_fault|entry_SYSCALL_64|do_syscall_64)" kf || :)
	echo "kptr_restrict=$ORIG_KPTR: exit $rc, $n stacks with named kernel frames"
	[ $rc -eq 0 ] || fail "exit $rc"
	[ "$n" -ge 1 ] || fail "kernel frames not named with kallsyms readable"
	! grep -q kptr_restrict kerr || fail "warning with addresses visible"
}

# Root without CAP_SYSLOG: zeros with kptr_restrict 1, or with 0 when
# perf_event_paranoid > 1.  The sysctl stays 0 when it is enough as it is.
t_no_syslog() {
	local drop="capsh --drop=cap_syslog --"
	trap 'sysctl -q -w kernel.kptr_restrict="$ORIG_KPTR"' EXIT
	if ! capsh --drop=cap_syslog -- -c 'head -1 /proc/kallsyms' | grep -q "^0000000000000000 "; then
		sysctl -q -w kernel.kptr_restrict=1
	fi
	echo "kptr_restrict=$(sysctl -n kernel.kptr_restrict), perf_event_paranoid=$(sysctl -n kernel.perf_event_paranoid)"
	capsh --drop=cap_syslog -- -c 'head -1 /proc/kallsyms' | grep -q "^0000000000000000 " ||
		fail "dropping CAP_SYSLOG does not hide the addresses"
	kstacks_hidden "no CAP_SYSLOG" capsh --drop=cap_syslog -- -c 'exec "$@"' nosyslog
}

test_expect_success ROOT_BPF 'kptr_restrict=2: --kallsyms gives [unknown] frames, addresses with -v, one warning; the default names them' t_kptr2
test_expect_success ROOT_BPF,CAPS 'root without CAP_SYSLOG, --kallsyms: zeros detected, kernel frames [unknown], one warning' t_no_syslog

# --- 8. Maps too small --------------------------------------------------------

# small_maps OPTION...: a busy whole-host profile; exit 0, counters add up,
# the folded lines are well formed and sum to "counted".
small_maps() {
	local rc c all
	rc=0; run "$PROFILE" -F 999 -f -v "$@" 2 >small 2>err || rc=$?
	show err
	[ $rc -eq 0 ] || fail "$*: exit status $rc"
	grep -q -x "profile: counted + filtered + dropped == taken" err || fail "the identity does not hold"
	c=$(counter counted err)
	all=$(fsum small "")
	echo "$*: $(wc -l <small) lines summing to $all; counted $c"
	[ "$all" -eq "$c" ] || fail "the output sums to $all, counted says $c"
	[ -z "$(not_folded small)" ] || { not_folded small | head; fail "malformed lines"; }
}

t_small_stack() {
	local w
	bg "$WORKLOADS/manystacks" -D 6 -t 2 -d 20 >/dev/null
	sleep 0.3
	small_maps --stack-storage-size 4
	w=$(sed -n 's/^WARNING: \([0-9]*\) stack traces could not be displayed\. Consider increasing --stack-storage-size\.$/\1/p' err)
	[ -n "$w" ] && [ "$w" -ge 1 ] || fail "no WARNING with a count for --stack-storage-size"
	[ "$(fsum small "\\[Missed (User|Kernel) Stack\\]")" -ge 1 ] || fail "the WARNING says $w, but no [Missed ...] stacks"
	[ "$(grep -c "^WARNING" err)" -eq 1 ] || fail "other warnings"
}

t_small_hash() {
	local w d
	bg "$WORKLOADS/manystacks" -D 6 -t 2 -d 20 >/dev/null
	sleep 0.3
	small_maps --hash-storage-size 8
	w=$(sed -n 's/^WARNING: \([0-9]*\) samples were dropped because the count map was full\. Consider increasing --hash-storage-size\.$/\1/p' err)
	d=$(counter dropped err)
	echo "WARNING says $w dropped; the dropped counter says $d"
	[ -n "$w" ] && [ "$w" -ge 1 ] || fail "no WARNING with a count for --hash-storage-size"
	[ "$w" -eq "$d" ] || fail "the WARNING ($w) and the counter ($d) disagree"
	[ "$(wc -l <small)" -le 8 ] || fail "more lines than the 8 keys the map holds"
}

t_small_both() {
	bg "$WORKLOADS/manystacks" -D 6 -t 2 -d 20 >/dev/null
	sleep 0.3
	small_maps --stack-storage-size 4 --hash-storage-size 8
	grep -E -q "^WARNING: [1-9][0-9]* samples were dropped because the count map was full" err ||
		fail "no count-map WARNING"
	! grep "^WARNING" err | grep -E -v -q "^WARNING: [1-9][0-9]* " || fail "a WARNING without a count"
}

test_expect_success ROOT_BPF '--stack-storage-size 4 on manystacks: WARNING with a count, exit 0, ==, well formed' t_small_stack
test_expect_success ROOT_BPF '--hash-storage-size 8 on manystacks: WARNING = dropped, exit 0, ==, well formed' t_small_hash
test_expect_success ROOT_BPF 'both maps tiny at once: warnings with counts, exit 0, ==, well formed' t_small_both

# --- 9. Missing event -----------------------------------------------------------

t_no_cycles() {
	local rc
	rc=0; run "$PROFILE" -e cycles -f 1 >out 2>err || rc=$?
	echo "-e cycles: exit $rc: $(cat err)"
	[ $rc -eq 1 ] || fail "exit $rc, not 1"
	one_line err
	grep -q "cycles" err || fail "the message does not name cycles"
	grep -q "cpu-clock" err || fail "the message does not suggest cpu-clock"
	[ ! -s out ] || fail "output on stdout"
}

test_expect_success ROOT_BPF,NO_PMU '-e cycles without a PMU: exit 1, one line naming cycles, suggesting cpu-clock' t_no_cycles

# --- 10. Deep stacks ------------------------------------------------------------

t_deep() {
	local pid rc max lines full leaf missed errs
	max=$(sysctl -n kernel.perf_event_max_stack)
	[ "$max" -le 127 ] || max=127	# the default --perf-max-stack-depth
	bg "$WORKLOADS/manystacks" -D 200 -d 20 >/dev/null
	pid=$!
	sleep 0.3
	rc=0; run "$PROFILE" -F 199 -U -f -v -p $pid 3 >deep 2>err || rc=$?
	show err
	[ $rc -eq 0 ] || fail "exit status $rc"
	grep -q -x "profile: counted + filtered + dropped == taken" err || fail "the identity does not hold"
	[ -z "$(not_folded deep)" ] || fail "malformed lines"
	# Frames per stack (the comm is not a frame), weighted by count.
	awk -F';' -v max="$max" '{ n = split($NF, a, " "); c = a[n]; f = NF - 1;
		all += c; if (f > max) over += c; if (f == max) full += c;
		if (f == max && $NF ~ /^leaf /) leaf += c; if (f > top) top = f }
		END { printf "%d %d %d %d %d\n", all, over, full, leaf, top }' deep >stats
	read -r lines over full leaf top <stats
	missed=$(fsum deep "\\[Missed User Stack\\]")
	errs=$(( $(stack_counter user enomem err) + $(stack_counter user efault err) + $(stack_counter user other err) ))
	echo "manystacks -D 200: $lines samples; $full with $max frames ($leaf ending in leaf), $over deeper, deepest $top; [Missed User Stack] $missed, user stack errors $errs"
	[ "$lines" -ge 60 ] || fail "too few samples"
	[ "$over" -eq 0 ] || fail "$over samples have more than $max frames"
	[ $((full * 10)) -ge $((lines * 8)) ] || fail "fewer than 80% of the stacks are cut at $max frames"
	[ $((leaf * 2)) -ge "$full" ] || fail "truncation did not keep the leaf end"
	[ "$missed" -le "$errs" ] || fail "$missed [Missed User Stack] samples, but only $errs stack errors counted"
}

test_expect_success ROOT_BPF 'stacks of 200 frames: cut cleanly at perf_event_max_stack, leaf kept, exit 0' t_deep

# --- 11. Thousands of mappings ------------------------------------------------

build_manymaps() {
	cc -O2 -g -fno-omit-frame-pointer -o manymaps "$PROFILE_TOP/tests/e2e/helpers/manymaps.c"
}

t_manymaps() {
	local pid rc t0 t1 maps s
	build_manymaps
	bg ./manymaps -n 5000 -d 20 >mm.out
	pid=$!
	wait_for mm.out "^manymaps: [0-9]+ mappings" 20
	maps=$(wc -l </proc/$pid/maps)
	echo "manymaps has $maps mappings"
	[ "$maps" -ge 10000 ] || fail "the helper has only $maps mappings"
	t0=$(now_ms)
	rc=0; run "$PROFILE" -F 199 -f -p $pid 2 >out 2>err || rc=$?
	t1=$(now_ms)
	show err
	s=$(fsum out "^manymaps;.*;spin_in_manymaps [0-9]+$")
	echo "-p: exit $rc after $((t1 - t0)) ms; spin_in_manymaps=$s of $(fsum out "")"
	[ $rc -eq 0 ] || fail "exit status $rc"
	[ $((t1 - t0)) -lt 15000 ] || fail "took $((t1 - t0)) ms for a 2 s profile"
	[ "$s" -ge 40 ] || fail "spin_in_manymaps not symbolized"
}

# The mappings are made during the run: thousands of mmap records.
t_manymaps_live() {
	local prof rc s
	build_manymaps
	"$PROFILE" -F 99 -f -v 5 >out 2>err &
	prof=$!
	wait_attached $prof
	./manymaps -n 5000 -d 2 >mm.out
	wait_exit $prof 20; rc=$RC
	show err
	s=$(fsum out "^manymaps;.*;spin_in_manymaps [0-9]+$")
	echo "$(cat mm.out); profile exit $rc; spin_in_manymaps=$s"
	[ $rc -eq 0 ] || fail "exit status $rc"
	[ "$s" -ge 20 ] || fail "spin_in_manymaps not symbolized"
	grep -q -x "profile: counted + filtered + dropped == taken" err || fail "the identity does not hold"
}

test_expect_success ROOT_BPF 'a process with 10000 mappings: symbolized, exit 0, in reasonable time' t_manymaps
test_expect_success ROOT_BPF '10000 mappings made during the run (exited before the end): symbolized, exit 0' t_manymaps_live

# --- 12. Binary on an unmounted tmpfs -----------------------------------------

t_unmounted() {
	local dir pid rc b a
	dir=$TRASH/tmpfs
	mkdir -p "$dir"
	# In a private mount namespace: mount, copy, start, lazily unmount.
	unshare -m --propagation private sh -c '
		mount -t tmpfs tmpfs "$1" && cp "$2" "$1/tburn" || exit 1
		"$1/tburn" -n tburn -d 12 >/dev/null &
		echo $! >"$3.tmp" && mv "$3.tmp" "$3"
		sleep 0.3
		umount -l "$1" && ! mountpoint -q "$1" && echo unmounted >"$3.umount"
		wait' sh "$dir" "$WORKLOADS/burn" "$TRASH/tburn.pid" &
	echo $! >>"$TRASH/bg.pids"
	wait_for "$TRASH/tburn.pid" "^[0-9]+$" 10
	pid=$(cat "$TRASH/tburn.pid")
	echo "$pid" >>"$TRASH/bg.pids"
	wait_for "$TRASH/tburn.pid.umount" "unmounted" 10
	echo "tburn $pid maps its binary as:"
	grep "tburn" /proc/$pid/maps | head -2
	[ ! -e "$dir/tburn" ] || fail "the binary is reachable by path here"
	[ ! -e "/tburn" ] || fail "a /tburn exists on the host; this test needs it not to"
	rc=0; run "$PROFILE" -F 199 -f -p $pid 2 >out 2>err || rc=$?
	show err
	b=$(fsum out "^tburn;.*;main;func_b [0-9]+$")
	a=$(fsum out "^tburn;.*;main;func_a [0-9]+$")
	echo "exit $rc; func_a=$a func_b=$b of $(fsum out "")"
	[ $rc -eq 0 ] || fail "exit status $rc"
	[ "$b" -ge 30 ] && [ "$a" -ge 10 ] || fail "func_a/func_b not named from the unmounted binary"
	rc=0; run "$PROFILE" -F 199 -v -p $pid 1 >plain 2>err || rc=$?
	[ $rc -eq 0 ] || fail "-v: exit status $rc"
	grep -E -q "^    [0-9a-f]+ func_b\\+0x[0-9a-f]+ \\[[^]]*tburn\\]$" plain || fail "-v: no func_b+OFF [/tburn] frame"
}

test_expect_success ROOT_BPF 'binary on a tmpfs unmounted (umount -l) while it runs: func_a/func_b named' t_unmounted

test_done
