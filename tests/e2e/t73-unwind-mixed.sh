#!/bin/bash
# Unwinding by address, not by object (issue 28).  --unwind=auto walks an
# object by frame pointer only when all of its code keeps one; an object
# that mixes both (a Rust release build: the standard library has frame
# pointers, the program's own code not) is walked from its table, each
# function by its own rule.  And every mapping is found, the highest too
# (ld.so, under the vsyscall page).  Known answers, read from the folded
# output with helpers/stackstats (see t70), and perf --call-graph dwarf
# on the same process at the same time.  The ratio is read at 999 Hz: at
# 3,000 samples (a busy machine's 8 s) its noise is about 4%.
. "$(dirname "$0")/lib.sh"

HZ=499

# profiled OUT SECONDS PID [HZ]: profile PID with the default unwinding.
profiled() {
	local out=$1 secs=$2 rc=0
	"$PROFILE" -F ${4:-$HZ} -f -a -p "$3" "$secs" >"$out" 2>"$out.err" || rc=$?
	[ $rc -eq 0 ] || { cat "$out.err"; fail "profile exited with status $rc"; }
}

RUST_PATH='rustburn::main;rustburn::run;rustburn::outer;rustburn::middle;rustburn::func_[ab]$'

test_expect_success ROOT_BPF,RUSTC 'rustburn (Rust release build), default unwinding: >= 99% whole, func_b/func_a 3.0 within 10%' '
	bg "$WORKLOADS/rustburn" -d 11 >/dev/null &&
	profiled rust.folded 8 $! 999 &&
	stats -c rustburn --ratio rustburn::func_b,rustburn::func_a \
		--share path="(^|;)$RUST_PATH" rust.folded &&
	at_least $samples 2500 samples &&
	at_least $complete 99 "complete (%)" &&
	at_least $path 98 "main;...;run;outer;middle;func_a or func_b (%)" &&
	within $ratio 2.7 3.3 func_b/func_a
'

test_expect_success ROOT_BPF,RUSTC,PERF_DWARF 'rustburn: like perf --call-graph dwarf (complete within 1 point, depth within 10%)' '
	bg "$WORKLOADS/rustburn" -d 8 >/dev/null &&
	pid=$! && sleep 0.3 &&
	{ profiled rust.folded 5 $pid & } &&
	prof=$! && rc=0 &&
	{ timeout -s INT 5 perf record -q -e cpu-clock --call-graph dwarf -F $HZ -p $pid \
		-o rust.data 2>rust.perf.err || rc=$?; } &&
	{ [ $rc -eq 0 ] || [ $rc -eq 124 ] || { cat rust.perf.err; fail "perf record: status $rc"; }; } &&
	wait $prof &&
	perf script -F comm,tid,ip,sym,dso -i rust.data >rust.perf 2>>rust.perf.err &&
	stats --perf --ratio rustburn::func_b,rustburn::func_a rust.perf &&
	pc=$complete pd=$depth &&
	stats -c rustburn --ratio rustburn::func_b,rustburn::func_a rust.folded &&
	within $complete $(awk -v c=$pc "BEGIN { print c - 1, c + 1 }") "complete (%, perf: $pc)" &&
	within $depth $(awk -v d=$pd "BEGIN { print d * 0.9, d * 1.1 }") "mean depth (perf: $pd)"
'

test_expect_success ROOT_BPF 'tlsburn: __tls_get_addr in ld.so, the highest mapping, under tls_bump, tls_caller and main' '
	bg "$WORKLOADS/tlsburn" 8 >/dev/null &&
	profiled tls.folded 5 $! &&
	stats -c tlsburn --share ld="(^|;)main;tls_caller;tls_bump;__tls_get_addr\$" tls.folded &&
	at_least $samples 400 samples &&
	at_least $complete 99 "complete (%)" &&
	# About a tenth of its time is in __tls_get_addr (9.86% in one CI run): any share
	# shows the frames from ld.so unwound; a wrong unwind leaves none under main.
	at_least $ld 5 "samples in main;tls_caller;tls_bump;__tls_get_addr (%)"
'

test_done
