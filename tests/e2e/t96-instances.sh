#!/bin/bash
# Several profilers at once: a -p run beside two whole-host runs (one the
# agent, --otlp -i 1 to the test collector), perf record and bpftrace, all at 999 Hz; each of ours counts burn's
# samples as it does alone: F times burn's CPU time in its window (read
# from /proc, independent of every profiler).  And a CPU whose timer gives
# fewer samples than -F (kernel.perf_event_max_sample_rate lowered under it
# midway, as the kernel itself does when sampling interrupts take too
# long) is reported, never silent.
. "$(dirname "$0")/lib.sh"

F=999

# burn's user+system CPU time, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' /proc/$1/stat; }

# prof NAME BURN ARGS...: run profile ARGS... -o NAME.folded, and write
# F x burn's CPU seconds while it sampled to NAME.due.
prof() {
	local name=$1 burn=$2 p t0 t1 hz
	shift 2
	"$PROFILE" -F $F -v -o "$name.folded" "$@" 2>"$name.err" &
	p=$!
	wait_attached $p
	t0=$(cpu_ticks $burn)
	wait $p || { cat "$name.err"; return 1; }
	t1=$(cpu_ticks $burn)
	hz=$(getconf CLK_TCK)
	awk -v d=$((t1 - t0)) -v hz=$hz -v f=$F 'BEGIN { printf "%d\n", d / hz * f }' >"$name.due"
}

# check NAME: burn's samples within [lo, hi] of what its CPU time promises,
# and func_b/func_a near 3.
check() {
	local got due r a b
	got=$(fsum "$1.folded" "^burn;") due=$(cat "$1.due")
	r=$(ratio $got $due)
	a=$(fsum "$1.folded" ";func_a( |;)") b=$(fsum "$1.folded" ";func_b( |;)")
	echo "$1: burn $got samples, $due due: $r; func_b/func_a $(ratio $b $a)"
	in_range $r 0.85 1.10 || fail "$1: burn's samples are $r of F x its CPU time"
	in_range $(ratio $b $a) 2.55 3.45 || fail "$1: func_b/func_a is not 3"
}

test_expect_success ROOT_BPF 'alone: a -p run counts F x burn CPU time' '
	bg "$WORKLOADS/burn" -d 20 && burn=$! &&
	prof alone $burn -p $burn 3 &&
	check alone
'

test_expect_success ROOT_BPF,COLLECTOR,perf,bpftrace 'together: the agent, -p, a whole-host run, perf and bpftrace, each as alone' '
	collector_start &&
	bg "$WORKLOADS/burn" -d 30 && burn=$! &&
	bg perf record -q -F $F -a -g -o perf.data -- sleep 6 &&
	bg bpftrace -e "profile:hz:$F { @[ustack] = count(); }" -c "sleep 6" >bt.out 2>&1 &&
	sleep 1 &&
	{ prof host1 $burn 4 & p1=$!; } &&
	{ prof agent $burn --otlp=$COLLECTOR_URL -i 1 4 & p2=$!; } &&
	prof target $burn -p $burn 3 &&
	wait $p1 && wait $p2 &&
	for n in target host1 agent; do
		check $n || exit 1
		! grep "timers did not give" $n.err || fail "$n: a timer missed samples"
	done &&
	# The agent sent the collector what it wrote: every sample, none dropped.
	sent=$(sed -n "s/.*otlp: sent [0-9]* profiles* (\([0-9]*\) samples) to .*; dropped 0 (0 samples).*/\1/p" agent.err) &&
	want=$(fsum agent.folded "") &&
	for _ in $(seq 50); do
		got=$($OTLP_READ --totals "$COLLECTOR_OUT" 2>/dev/null | awk "\$1 == \"samples\" { print \$2 }")
		[ "$got" = "$want" ] && break
		sleep 0.1	# the file exporter flushes every 100 ms
	done &&
	echo "agent: wrote $want, sent ${sent:-?}, collector has $got" &&
	[ "$sent" = "$want" ] && [ "$got" = "$want" ]
'

restore_rate() { [ -z "${OLD_RATE:-}" ] || sysctl -qw kernel.perf_event_max_sample_rate=$OLD_RATE; }

test_expect_success ROOT_BPF 'a CPU whose timer is throttled under -F is reported, with the samples missed' '
	OLD_RATE=$(sysctl -n kernel.perf_event_max_sample_rate) &&
	trap restore_rate EXIT &&
	bg taskset -c 0 "$WORKLOADS/burn" -d 20 && burn=$! &&
	{ "$PROFILE" -F $F -v -p $burn -o thr.folded 4 2>thr.err & p=$!; } &&
	wait_attached $p && sleep 1.2 &&
	sysctl -qw kernel.perf_event_max_sample_rate=250 && sleep 2 && restore_rate &&
	wait $p && cat thr.err &&
	grep -E "^profile: CPU 0.s timer gave [0-9]+ samples in .* about [0-9]+ fewer than 999 Hz: kernel.perf_event_max_sample_rate \(250\) is under -F 999" thr.err &&
	missed=$(sed -n "s/.*[ (]\([0-9,]*\) samples the CPUs. timers did not give.*/\1/p" thr.err | tr -d ,) &&
	echo "missed=$missed" &&
	[ "${missed:-0}" -ge 700 ] &&
	grep -E "^profile: timer: CPU 0: [0-9]+ samples, .* [1-9][0-9]* short windows" thr.err &&
	# The same loss seen from burn: its CPU time against its samples.
	line=$(grep "^profile: targets: the -p processes used" thr.err) &&
	due=$(echo "$line" | sed -n "s/.*: \([0-9]*\) samples due at 999 Hz, \([0-9]*\) counted\$/\1/p") &&
	got=$(echo "$line" | sed -n "s/.*: \([0-9]*\) samples due at 999 Hz, \([0-9]*\) counted\$/\2/p") &&
	echo "burn: due $due, counted $got" &&
	[ "$due" -ge 1000 ] && [ $((got * 10)) -lt $((due * 8)) ] &&
	grep -E "^profile: the -p processes used [0-9.]+ s of CPU, $due samples at 999 Hz, but only $got reached profile" thr.err
'

test_expect_success ROOT_BPF 'a -p run alone: its samples match the CPU time the kernel charged the process' '
	bg "$WORKLOADS/burn" -d 20 && burn=$! &&
	"$PROFILE" -F $F -v -p $burn -o alone.folded 3 2>alone.err &&
	line=$(grep "^profile: targets: the -p processes used" alone.err) &&
	due=$(echo "$line" | sed -n "s/.*: \([0-9]*\) samples due at 999 Hz, \([0-9]*\) counted\$/\1/p") &&
	got=$(echo "$line" | sed -n "s/.*: \([0-9]*\) samples due at 999 Hz, \([0-9]*\) counted\$/\2/p") &&
	echo "burn: due $due, counted $got" &&
	[ "$due" -ge 1000 ] && in_range "$got" $((due * 9 / 10)) $((due * 11 / 10)) &&
	! grep "reached profile" alone.err
'

test_done
