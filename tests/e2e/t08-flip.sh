#!/bin/bash
# -i hands sampling over between two map sets, waiting for programs still on
# the old one (the per-CPU in-flight flag).  A CPU that stays in the program
# (a descheduled virtual CPU) must delay the hand-over, never end the run.
#
# The program runs in interrupt context, so no load on a CPU, not even a
# SCHED_FIFO spinner, keeps it there for long enough to see; a vCPU
# descheduled mid-program cannot be provoked from inside the guest.  So the
# test writes the flag itself, with bpftool: the profiler samples CPU 0 only
# (-C 0), and CPU 1's flag, which no program then rewrites, is set to "busy,
# set unknown" for a while.
. "$(dirname "$0")/lib.sh"

INFLIGHT_UNKNOWN=3	# bpf/profile.h

# inflight_id PID: the id of the in-flight map that process PID holds.
inflight_id() {
	local id
	for id in $(grep -h "^map_id:" /proc/$1/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u); do
		bpftool map show id "$id" 2>/dev/null | grep -q "^$id: percpu_array  name inflight " &&
			echo "$id"
	done
	true
}

# set_flag ID VALUE: every CPU's flag (CPU 0's is rewritten at its next sample).
set_flag() { bpftool map update id "$1" key 0 0 0 0 value "$2" 0 0 0 0 0 0 0; }

# Start the profiler in the background and find its flag: sets $ppid, $fid.
start_held() {
	bg "$PROFILE" -C 0 -F 99 -f "$@" && ppid=$! &&
	for _ in $(seq 50); do
		fid=$(inflight_id $ppid)
		[ -n "$fid" ] && break
		sleep 0.1
	done &&
	{ [ -n "$fid" ] || fail "no inflight map found for pid $ppid"; }
}

flip_prereq() {
	[ "$(nproc)" -ge 2 ] || { echo "a second CPU"; return; }
	bpftool map help 2>&1 | grep -q "map update" || echo "bpftool map update"
}

test_expect_success ROOT_BPF 'a CPU busy for 2.5 s at an -i boundary: a warning, the run goes on, every interval printed' '
	why=$(flip_prereq) && { [ -z "$why" ] || fail "needs $why"; } &&
	start_held -v -i 1 5 >ival 2>err &&
	sleep 1.3 && set_flag $fid $INFLIGHT_UNKNOWN &&
	sleep 2.5 && set_flag $fid 0 &&
	rc=0 && wait $ppid || rc=$? &&
	grep -v "^profile: \\(processes\\|files\\|kernel symbols\\|first\\)" err &&
	grep "^# interval" ival &&
	{ [ $rc -eq 0 ] || fail "exit status $rc"; } &&
	{ ! grep -q "cannot switch map sets" err || fail "the run failed at the boundary"; } &&
	{ grep -q "^profile: CPU 1 has not left the sampler on the old map set for [0-9]* s; still waiting to switch\$" err ||
		fail "no warning naming CPU 1"; } &&
	n=$(grep -c "^# interval" ival) &&
	{ [ "$n" -eq 5 ] || fail "$n intervals printed, not 5"; } &&
	grep -q -x "profile: counted + filtered + dropped == taken" err
'

test_expect_success ROOT_BPF 'SIGINT while a flip waits: the wait ends when the CPU does, every sample printed, exit 0' '
	why=$(flip_prereq) && { [ -z "$why" ] || fail "needs $why"; } &&
	start_held -v -i 1 30 >ival 2>err &&
	sleep 1.3 && set_flag $fid $INFLIGHT_UNKNOWN &&
	sleep 1 && kill -INT $ppid &&
	sleep 1 && set_flag $fid 0 &&
	rc=0 && wait $ppid || rc=$? &&
	grep -v "^profile: \\(processes\\|files\\|kernel symbols\\|first\\)" err &&
	grep "^# interval" ival &&
	{ [ $rc -eq 0 ] || fail "exit status $rc"; } &&
	n=$(grep -c "^# interval" ival) &&
	{ [ "$n" -ge 3 ] || fail "$n intervals printed: the interrupted one or the last is missing"; } &&
	grep -q -x "profile: counted + filtered + dropped == taken" err
'

test_done
