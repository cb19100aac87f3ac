#!/bin/bash
# Tracepoints as events (issue 29): -e CATEGORY:NAME counts every hit (or
# every Nth with -c N), with whole user stacks from the unwinder's tables
# in a program built without frame pointers, and kernel stacks.
# Prerequisites: ROOT_BPF.
. "$(dirname "$0")/lib.sh"

W=$WORKLOADS/tpcall-nofp
# The whole user stack of a call from FUNC: from _start through main.
whole() { echo "^tpcall-nofp;_start;__libc_start_main;([^;]+;)*main;$1;call_getppid;syscall;"; }

# tpcall makes 3000 getppid() calls from func_a and 1000 from func_b, and
# one from main first (it makes the process known, for its tables).
t_exact() {
	local a b all
	"$PROFILE" -v -e syscalls:sys_enter_getppid -c 1 -f -o tp.folded -- "$W" getppid \
		>/dev/null 2>err || { cat err; fail "profile"; }
	a=$(fsum tp.folded "$(whole func_a)")
	b=$(fsum tp.folded "$(whole func_b)")
	all=$(fsum tp.folded ".")
	echo "func_a $a of 3000, func_b $b of 1000, all $all of 4001 (whole stacks to main)"
	grep -E "tracepoint|samples of" err
	[ "$a" = 3000 ] || fail "func_a: $a whole stacks, not 3000"
	[ "$b" = 1000 ] || fail "func_b: $b whole stacks, not 1000"
	[ "$all" = 4001 ] || fail "$all hits counted, not 4001"
	grep -q "4,001 samples of syscalls:sys_enter_getppid" err || fail "the summary does not name the tracepoint"
	grep -q "perf_syscall_enter 3000$" tp.folded || fail "no kernel stack at the tracepoint"
}
test_expect_success ROOT_BPF 'sys_enter_getppid -c 1: every call, whole stacks, exact counts' t_exact

# -c 10: every tenth hit on each CPU, from the first.
t_every10() {
	local a b
	"$PROFILE" -e syscalls:sys_enter_getppid -c 10 -f -o tp10.folded -- "$W" getppid \
		>/dev/null 2>err || { cat err; fail "profile"; }
	a=$(fsum tp10.folded "$(whole func_a)")
	b=$(fsum tp10.folded "$(whole func_b)")
	echo "-c 10: func_a $a of 300, func_b $b of 100"
	in_range "$a" 297 303 || fail "func_a: $a, not 300 +- 1%"
	in_range "$b" 99 101 || fail "func_b: $b, not 100 +- 1%"
}
test_expect_success ROOT_BPF 'sys_enter_getppid -c 10: a tenth' t_every10

# A process that sleeps 10 ms at a time: each switch out is in sleep_loop,
# under main, with the kernel's stack down to the scheduler.
t_sched_switch() {
	local pid all whole
	bg "$W" sleep 5
	pid=$!
	sleep 0.3
	"$PROFILE" -e sched:sched_switch -p $pid -f -o sw.folded 2 >/dev/null 2>err ||
		{ cat err; fail "profile"; }
	all=$(fsum sw.folded ".")
	whole=$(fsum sw.folded "^tpcall-nofp;_start;__libc_start_main;([^;]+;)*main;sleep_loop;nanosleep;([^;]+;)*__schedule(;| )")
	echo "sched_switch: $all switches in 2 s (at most 200), $whole through main;sleep_loop down to __schedule"
	in_range "$all" 50 210 || fail "$all switches: a 10 ms sleep makes about 100 a second"
	[ $((whole * 100)) -ge $((all * 99)) ] || fail "$whole of $all switches through sleep_loop"
}
test_expect_success ROOT_BPF 'sched:sched_switch -p: the stacks through the sleep' t_sched_switch

# -C: the one link covers every CPU; the program keeps the CPU asked for.
t_cpu() {
	local n0 n1
	[ "$(nproc)" -ge 2 ] || { echo "one CPU: skipped"; return 0; }
	"$PROFILE" -e syscalls:sys_enter_getppid -C 1 -f -o c0.folded -- taskset -c 0 "$W" getppid 300 \
		>/dev/null 2>err || { cat err; fail "profile"; }
	"$PROFILE" -e syscalls:sys_enter_getppid -C 1 -f -o c1.folded -- taskset -c 1 "$W" getppid 300 \
		>/dev/null 2>err || { cat err; fail "profile"; }
	n0=$(fsum c0.folded ".")
	n1=$(fsum c1.folded ".")
	echo "-C 1: $n0 hits of a process on CPU 0, $n1 of one on CPU 1"
	[ "$n0" = 0 ] && [ "$n1" = 4001 ] || fail "-C 1 counted $n0 on CPU 0 and $n1 of 4001 on CPU 1"
}
test_expect_success ROOT_BPF '-C with a tracepoint: that CPU only' t_cpu

t_errors() {
	local rc
	"$PROFILE" -e sched:no_such_tracepoint 1 >/dev/null 2>err && fail "an unknown tracepoint was accepted"
	cat err
	grep -q "no such tracepoint (no /sys/kernel/.*tracing/events/sched/no_such_tracepoint/id); see --list-events" err ||
		fail "the error does not name the path"
	"$PROFILE" -e sched:sched_switch -F 99 1 >/dev/null 2>err && fail "-F was accepted with a tracepoint"
	cat err
	grep -q "\-F cannot be used with a tracepoint" err || fail "-F: no error"
	"$PROFILE" --list-events >list || fail "--list-events"
	grep -E -q "^  sched:sched_switch +\[Tracepoint event\]" list || fail "--list-events lacks sched:sched_switch"
	grep -E -q "^  cpu-clock " list || fail "--list-events lacks cpu-clock"
}
test_expect_success ROOT_BPF 'an unknown tracepoint, -F, --list-events' t_errors

test_done
