#!/bin/bash
# Whole profiles under valgrind's memcheck: no leaks, no memory errors, and
# still the right answer.  tests/e2e/valgrind.supp holds the few false
# positives of valgrind's bpf(2) wrapper, each explained there.
#
# Under valgrind 3.19 openat2(2) is an unknown syscall (ENOSYS), so debug
# files are not found and libc's local symbols (__libc_start_call_main) show
# [unknown]; the checks look at the workload's own functions.
. "$(dirname "$0")/lib.sh"

SUPP=$PROFILE_TOP/tests/e2e/valgrind.supp

fail_show() {
	grep -v "^--[0-9]*-- " "$1" | tail -60
	fail "$2"
}

# vg NAME PROFILE-ARGS...: run the profiler under memcheck, its stdout in
# NAME.out, its stderr in NAME.err, valgrind's report in NAME.vg; check the
# exit status, the error summary and the leak summary.
vg() {
	local name=$1 rc errs
	shift
	rc=0
	valgrind --log-file="$name.vg" --suppressions="$SUPP" \
		--leak-check=full --show-leak-kinds=definite,indirect \
		--errors-for-leak-kinds=definite,indirect --error-exitcode=1 \
		"$PROFILE" "$@" >"$name.out" 2>"$name.err" || rc=$?
	errs=$(sed -n 's/^==[0-9]*== ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$name.vg")
	echo "valgrind profile $*: exit $rc; $(grep -h "ERROR SUMMARY" "$name.vg" | sed 's/^==[0-9]*== //')"
	grep -h -E "definitely lost|indirectly lost|no leaks are possible" "$name.vg" | sed 's/^==[0-9]*== */  /'
	[ -n "$errs" ] || fail_show "$name.vg" "no ERROR SUMMARY: valgrind did not finish"
	[ "$errs" -eq 0 ] || fail_show "$name.vg" "memcheck found $errs errors"
	grep -q -E "All heap blocks were freed -- no leaks are possible|definitely lost: 0 bytes in 0 blocks" "$name.vg" ||
		fail_show "$name.vg" "memory definitely lost"
	! grep -q -E "indirectly lost: [1-9]" "$name.vg" || fail_show "$name.vg" "memory indirectly lost"
	[ $rc -eq 0 ] || { cat "$name.err"; fail "exit status $rc"; }
}

t_pid() {
	local pid b
	bg "$WORKLOADS/burn" -n vgburn -d 60 >/dev/null
	pid=$!
	vg pid -F 199 -f -p $pid 3
	b=$(fsum pid.out ";main;func_b [0-9]+$")
	echo "vgburn func_b=$b, func_a=$(fsum pid.out ";main;func_a [0-9]+$")"
	[ "$b" -ge 30 ] || fail "too few func_b samples"
	! grep -v -E "^vgburn(;[^;]+)+ [0-9]+$" pid.out || fail "unexpected output lines"
}

t_host() {
	bg "$WORKLOADS/burn" -n vghost -d 60 >/dev/null
	bg "$WORKLOADS/manystacks" -D 5 -d 60 >/dev/null
	vg host -F 99 -f -v 2
	cat host.err
	echo "$(wc -l <host.out) stacks; vghost func_b=$(fsum host.out "^vghost;.*;func_b [0-9]+$")"
	[ "$(fsum host.out "^vghost;.*;func_b [0-9]+$")" -ge 10 ] || fail "too few vghost func_b samples"
	grep -q "^manystacks;.*;leaf [0-9]*$" host.out || fail "no manystacks stacks"
	grep -q -x "profile: counted + filtered + dropped == taken" host.err || fail "the identity does not hold"
	! grep -v -E "^[^;]+(;[^;]+)* [0-9]+$" host.out || fail "malformed lines"
}

# -i: two map sets flipped and cleared every second; plain output.
t_interval() {
	local pid n
	bg "$WORKLOADS/burn" -n vgival -d 60 >/dev/null
	pid=$!
	vg ival -F 199 -i 1 -p $pid 3
	n=$(grep -c "^# interval " ival.out || :)
	echo "$n intervals, $(grep -c -x "    func_b" ival.out || :) func_b records"
	[ "$n" -ge 2 ] || fail "only $n intervals"
	grep -q -x "    func_b" ival.out || fail "no func_b frame"
}

# SVG and gzip'd pprof writers.
t_files() {
	local pid
	bg "$WORKLOADS/burn" -n vgfile -d 60 >/dev/null
	pid=$!
	vg svg -F 199 -p $pid -o out.svg 2
	grep -q "func_b" out.svg || fail "no func_b in the SVG"
	tail -c 7 out.svg | grep -q "</svg>" || fail "the SVG is not complete"
	vg pprof -F 199 -p $pid -o out.pb.gz 2
	gzip -t out.pb.gz || fail "the pprof file is not valid gzip"
	zcat out.pb.gz | grep -a -q "func_b" || fail "no func_b in the pprof profile"
}

test_expect_success ROOT_BPF,VALGRIND 'valgrind: -F 199 -f -p PID 3 on burn: no leaks, no errors, func_b' t_pid
test_expect_success ROOT_BPF,VALGRIND 'valgrind: whole host -F 99 -f -v 2: no leaks, no errors, == taken' t_host
test_expect_success ROOT_BPF,VALGRIND 'valgrind: -i 1 (map sets flipped and cleared): no leaks, no errors' t_interval
test_expect_success ROOT_BPF,VALGRIND 'valgrind: -o FILE.svg and -o FILE.pb.gz: no leaks, no errors' t_files

test_done
