#!/bin/bash
# SIGINT and SIGTERM end a profile early: the samples so far are printed and
# the exit status is 0, with or without a duration.
. "$(dirname "$0")/lib.sh"

reap() {
	for p in "${BG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || :; done
	wait 2>/dev/null || :
	true
}

# interrupt SIGNAL PROFILE-ARGS...: profile a burn for about 2 s, send SIGNAL,
# and check the status, the time it took to exit and the samples.
interrupt() {
	local sig=$1 pid prof rc t0 t1 n
	shift
	bg "$WORKLOADS/burn" -n sigburn -d 8 >/dev/null
	pid=$!
	"$PROFILE" -F 199 -p $pid "$@" >out 2>err &
	prof=$!
	wait_attached $prof || return 1
	sleep 2
	kill -0 $prof 2>/dev/null || { cat err; fail "profile $* ended before the signal"; return 1; }
	t0=$(date +%s%N)
	kill -$sig $prof
	wait $prof
	rc=$?
	t1=$(date +%s%N)
	cat err
	n=$(fsum out ";func_b( |;)")
	echo "profile $*: SIG$sig -> exit $rc after $(((t1 - t0) / 1000000)) ms; func_b=$n, total=$(fsum out "")"
	[ "$rc" -eq 0 ] || fail "exit status $rc after SIG$sig" || return 1
	[ $((t1 - t0)) -lt 2000000000 ] || fail "took more than 2 s to exit after SIG$sig" || return 1
	[ "$n" -ge 100 ] || fail "the samples so far were not printed (func_b=$n)" || return 1
	! grep -v -E "^sigburn(;[^;]+)* [0-9]+$" out || fail "unexpected output lines" || return 1
	kill -9 $pid
}

test_expect_success ROOT_BPF 'SIGINT, no duration: samples so far printed, exit 0' '
	trap reap EXIT && interrupt INT -f
'

test_expect_success ROOT_BPF 'SIGTERM, no duration: samples so far printed, exit 0' '
	trap reap EXIT && interrupt TERM -f
'

test_expect_success ROOT_BPF 'SIGINT before the duration ends: samples so far printed, exit 0' '
	trap reap EXIT && interrupt INT -f 30
'

test_expect_success ROOT_BPF 'SIGTERM before the duration ends: samples so far printed, exit 0' '
	trap reap EXIT && interrupt TERM -f 30
'

test_expect_success ROOT_BPF 'SIGINT, plain output: header, records, exit 0' '
	trap reap EXIT &&
	bg "$WORKLOADS/burn" -n sigburn -d 6 >/dev/null && pid=$! &&
	{ "$PROFILE" -p $pid >plain 2>err & prof=$!; } &&
	wait_attached $prof && sleep 1 &&
	kill -INT $prof && wait $prof &&
	cat err &&
	echo "Sampling at 49 Hertz of PID $pid by user + kernel stack... Hit Ctrl-C to end." >expect &&
	head -1 plain >header && diff expect header &&
	{ grep -q -x "    func_b" plain || fail "no func_b record"; } &&
	{ grep -q -x "    -                sigburn ($pid)" plain || fail "no sigburn ($pid) record"; }
'

test_done
