#!/bin/bash
# Off-CPU time (issue 29): --off-cpu counts the time a task spends off the
# CPU by the stacks it blocked in, taken at its switch back in.  The answer
# is known: offcpu-min (no frame pointers) sleeps 30 ms in func_a and 10 ms
# in func_b in a loop, so func_a blocks three times as long as func_b, and
# its one thread is blocked nearly all of its wall time.  Folded counts are
# microseconds, as bcc's offcputime -f prints them.
. "$(dirname "$0")/lib.sh"

SECS=3

# offcpu OUT ARGS...: an off-CPU profile of a fresh offcpu-min for $SECS s,
# folded into OUT, -v into OUT.err; the program's own measure into
# OUT.truth.  The program outlives the profile by 3 s: a -p run ends when
# its target exits, and with a second of slack a start 0.8 s slower than
# usual (CI once; here now and then, the old build too) let the target
# exit first, the profile's last 150-370 ms lost.
offcpu() {
	local out=$1 rc=0
	shift
	bg "$WORKLOADS/offcpu-min" -d $((SECS + 3)) >"$out.truth"
	sleep 0.2
	"$PROFILE" --off-cpu -f -v "$@" -p $! $SECS >"$out" 2>"$out.err" || rc=$?
	[ $rc -eq 0 ] || { cat "$out.err"; fail "profile --off-cpu exited with status $rc"; }
}

# The -v line's counter: offline OUT.err WHAT ("shorter than").
offline() {
	grep -oE "[0-9]+ $2" "$1" | head -1 | cut -d" " -f1
}

# The ratio of the program's own means: 3 on an idle machine, less on a
# busy one, where each wake-up waits for a CPU too.
truth() {
	wait_for "$1" "^offcpu-min: " 5 &&
	awk '{ gsub(/,/, ""); printf "%.3f\n", $3 / $6 }' "$1"
}

test_expect_success ROOT_BPF 'func_a blocks 3x as long as func_b, the thread all its time, stacks reach main' '
	offcpu out &&
	a=$(fsum out ";func_a;") && b=$(fsum out ";func_b;") &&
	all=$(fsum out "^offcpu-min;") && main=$(fsum out ";main;") &&
	r=$(ratio $a $b) && share=$(ratio $main $all) && want=$(truth out.truth) &&
	echo "func_a $a us, func_b $b us, func_a/func_b $r (the program measured $want); $all us in all, $share through main" &&
	{ in_range $want 2.5 3.1 || fail "the program measured func_a/func_b $want: a machine too busy"; } &&
	{ in_range $r $(awk "BEGIN { print $want * 0.9 }") $(awk "BEGIN { print $want * 1.1 }") ||
		fail "func_a/func_b is $r, want $want within 10%"; } &&
	{ in_range $all $((SECS * 900000)) $((SECS * 1100000)) ||
		fail "the thread blocked $all us in $SECS s, want $SECS s within 10%"; } &&
	{ in_range $share 0.99 1 || fail "$share of the time has main in its stack, want 0.99"; } &&
	{ grep -q "do_nanosleep" out || fail "no kernel frames: do_nanosleep"; } &&
	grep "off-CPU:" out.err
'

test_expect_success ROOT_BPF '-m 20000 leaves out the 10 ms blocks, and counts them' '
	offcpu out -m 20000 &&
	a=$(fsum out ";func_a;") && b=$(fsum out ";func_b;") &&
	short=$(offline out.err "shorter than") &&
	echo "func_a $a us, func_b $b us, $short shorter" &&
	# A 10 ms sleep that waits 10 ms more for a busy CPU is a 20 ms block.
	{ [ $((b * 20)) -lt "$a" ] || fail "func_b blocks 10 ms at a time, yet counts $b under -m 20000"; } &&
	{ in_range $a $((SECS * 650000)) $((SECS * 820000)) || fail "func_a is $a us"; } &&
	{ in_range $short $((SECS * 18)) $((SECS * 27)) ||
		fail "$short blocks shorter than -m, want one per loop, 25 a second"; }
'

test_expect_success ROOT_BPF '-M 20000 leaves out the 30 ms blocks' '
	offcpu out -M 20000 &&
	a=$(fsum out ";func_a;") && b=$(fsum out ";func_b;") &&
	long=$(offline out.err "longer than") &&
	echo "func_a $a us, func_b $b us, $long longer" &&
	{ [ "$a" -eq 0 ] || fail "func_a counts $a under -M 20000"; } &&
	{ [ "$b" -gt 0 ] || fail "func_b counts nothing"; } &&
	{ in_range $long $((SECS * 20)) $((SECS * 27)) || fail "$long blocks longer than -M"; }
'

test_expect_success ROOT_BPF '--state D: a sleep (S) does not count; --state S: it does' '
	offcpu out --state D &&
	all=$(fsum out "^offcpu-min;") && states=$(offline out.err "not in --state") &&
	echo "--state D: $all us, $states switch-outs not in --state" &&
	{ [ "$all" -eq 0 ] || fail "nanosleep is an interruptible sleep, yet counts $all under --state D"; } &&
	{ [ "$states" -ge $((SECS * 40)) ] || fail "$states switch-outs not in --state"; } &&
	offcpu out --state 1 &&
	a=$(fsum out ";func_a;") && b=$(fsum out ";func_b;") && r=$(ratio $a $b) &&
	{ in_range $r 2.7 3.3 || fail "--state 1: func_a/func_b is $r"; }
'

test_expect_success ROOT_BPF 'an off-CPU profile loads no sampling program' '
	offcpu out &&
	grep "verified instructions: uw_exec" out.err &&
	{ ! grep -E "do_sample" out.err || fail "--off-cpu loaded do_sample"; } &&
	test $(fsum out ";func_a;") -gt 0
'

test_expect_success ROOT_BPF 'the whole host with -I: no idle task timed, nor the profiler, no start refused' '
	"$PROFILE" --off-cpu -I -f -v 2 >host 2>host.err &&
	test -s host &&
	{ ! grep -E "^swapper" host || fail "an idle task was timed"; } &&
	{ ! grep -E "^profile;" host || fail "the profiler'\''s own blocks were timed"; } &&
	{ test "$(offline host.err "start table full")" = 0 || fail "starts refused"; }
'

test_expect_success ROOT_BPF 'a CPU profile loads no off-CPU program' '
	bg "$WORKLOADS/burn" -d 30 && pid=$! &&
	"$PROFILE" -f -v -p $pid 1 >out 2>err &&
	grep "verified instructions" err &&
	{ ! grep -E "off_switch|off-CPU" err || fail "a CPU profile loaded the off-CPU programs"; }
'

test_done
