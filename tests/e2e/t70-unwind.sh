#!/bin/bash
# Whole user stacks without frame pointers (issue 15): each workload built
# without them (tests/workloads, make workloads) has a known answer, read
# from the folded output with helpers/stackstats.  A stack is complete when
# one of its three outermost user frames is a root (_start,
# __libc_start_call_main, start_thread, clone3...).
#
#   --unwind=dwarf and --unwind=auto  the known answers
#   --unwind=fp                       today's short stacks: the measure
#                                     tells the two apart
#   perf record --call-graph dwarf    on the same process at the same time:
#                                     completeness within 1 point, mean depth
#                                     within 10% (burn-nofp, and Debian's
#                                     python3, perl and gzip)
. "$(dirname "$0")/lib.sh"

HZ=499

# profiled OUT MODE SECONDS [PIDS]: profile PIDS (default: the whole host)
# at $HZ Hz for SECONDS with --unwind=MODE, folded with kernel frames marked
# _[k], into OUT.
profiled() {
	local out=$1 mode=$2 secs=$3 rc=0
	"$PROFILE" -F $HZ -f -a --unwind="$mode" ${4:+-p "$4"} "$secs" >"$out" 2>"$out.err" || rc=$?
	[ $rc -eq 0 ] || { cat "$out.err"; fail "profile --unwind=$mode exited with status $rc"; }
}

# The sample floors are well under what the runs take on an idle machine
# (burn -t 2 for 8 s: 8000), for a busy one, and still enough for
# func_b/func_a to be known within about 4%.

# unwound OUT MODE SECONDS CMD...: start CMD and profile it alone.
unwound() {
	local out=$1 mode=$2 secs=$3
	shift 3
	bg "$@" >/dev/null
	profiled "$out" "$mode" "$secs" $!
}

# burn_answer FILE COMM MIN_SAMPLES MIN_COMPLETE: burn's known answer in
# COMM's samples, func_b/func_a = 3.0 within 10%, with whole stacks.
burn_answer() {
	stats -c "$2" --ratio func_b,func_a "$1" &&
	at_least $samples "$3" samples &&
	at_least $complete "$4" "complete (%)" &&
	within $ratio 2.7 3.3 func_b/func_a
}

test_expect_success ROOT_BPF 'burn-nofp, --unwind=dwarf: >= 99% complete, func_b/func_a 3.0 within 10%' '
	unwound burn.folded dwarf 8 "$WORKLOADS/burn-nofp" -t 2 -d 11 &&
	burn_answer burn.folded burn-nofp 3000 99
'

test_expect_success ROOT_BPF 'burn-lld (segments packed by lld, no gap): >= 99% complete, 3.0 ratio' '
	readelf -lW "$WORKLOADS/burn-lld" | awk "/LOAD/ && / R E / { print \$2 }" | grep -q -v "000\$" ||
		fail "burn-lld: its executable segment starts on a page boundary in the file" &&
	unwound lld.folded dwarf 6 "$WORKLOADS/burn-lld" -t 2 -d 9 &&
	burn_answer lld.folded burn-lld 2500 99
'

test_expect_success ROOT_BPF 'burn-nofp, --unwind=auto (the default): >= 99% complete, func_b/func_a 3.0 within 10%' '
	unwound burn.folded auto 6 "$WORKLOADS/burn-nofp" -t 2 -d 9 &&
	burn_answer burn.folded burn-nofp 2500 99
'

test_expect_success ROOT_BPF 'burn-nofp, --unwind=fp: short stacks as before (< 20% complete)' '
	unwound burn.folded fp 3 "$WORKLOADS/burn-nofp" -d 6 &&
	stats -c burn-nofp burn.folded &&
	at_least $samples 500 samples &&
	at_most $complete 20 "complete (%)"
'

test_expect_success ROOT_BPF 'manystacks-nofp -D 6: whole stacks, clone3 down to leaf through six f frames' '
	unwound ms.folded dwarf 5 "$WORKLOADS/manystacks-nofp" -D 6 -t 2 -d 8 &&
	stats -c manystacks-nofp --share whole="start_thread;run;(f[0-7];){6}leaf\$" ms.folded &&
	at_least $complete 99 "complete (%)" &&
	at_least $whole 95 "stacks start_thread;run;f x 6;leaf (%)"
'

test_expect_success ROOT_BPF 'cxxburn-nofp: whole stacks, both hot functions under main' '
	unwound cxx.folded dwarf 5 "$WORKLOADS/cxxburn-nofp" 8 &&
	stats -c cxxburn-nofp --ratio "engine::Matrix<double>::multiply,engine::hash_strings" \
		--share under_main="(^|;)main;engine::" cxx.folded &&
	at_least $complete 99 "complete (%)" &&
	at_least $under_main 95 "main;engine::... (%)" &&
	within $ratio 0.25 4 "multiply/hash_strings (both must be there)"
'

test_expect_success ROOT_BPF 'deeprec (300 deep): cut at the depth limit, deep_leaf at the leaf, never complete' '
	unwound deep.folded dwarf 4 "$WORKLOADS/deeprec" 7 &&
	stats -c deeprec --share cut="^(deep_rec;){99,}deep_leaf\$" deep.folded &&
	at_least $cut 95 "stacks of 100+ frames, deep_rec only then deep_leaf (%)" &&
	at_least $depth 100 "mean depth" &&
	at_most $depth 127 "mean depth" &&
	at_most $complete 1 "complete (%): a cut stack must not look whole"
'

test_expect_success ROOT_BPF 'sigburn: handler frames, through the signal frame, down to main_loop and main' '
	unwound sig.folded dwarf 5 "$WORKLOADS/sigburn" 8 &&
	stats -c sigburn --share handler="(^|;)on_sigprof;handler_burn(;|\$)" \
		--share through="(^|;)main;main_loop;([^;]+;){1,4}on_sigprof;handler_burn(;|\$)" sig.folded &&
	at_least $complete 99 "complete (%)" &&
	at_least $handler 20 "samples in the handler (%)" &&
	at_least $through $(awk -v h=$handler "BEGIN { print h - 1 }") \
		"samples in the handler unwound through the signal frame to main_loop (%)"
'

# perf names a sample in lib_nop@plt "_init"; "stub" is any frame under
# plt_caller other than the two library functions.
test_expect_success ROOT_BPF 'pltburn: lib_spin, lib_nop and their PLT entries, all under plt_caller and main' '
	unwound plt.folded dwarf 5 "$WORKLOADS/pltburn" 8 &&
	stats -c pltburn --share caller="(^|;)main;plt_caller(;|\$)" \
		--share lib="(^|;)main;plt_caller;lib_(spin|nop)\$" \
		--share stub="(^|;)main;plt_caller;(?!lib_spin\$|lib_nop\$)[^;]+\$" plt.folded &&
	at_least $complete 99 "complete (%)" &&
	at_least $caller 99 "samples under main;plt_caller (%)" &&
	at_least $lib 15 "samples in main;plt_caller;lib_spin or lib_nop (%)" &&
	at_least $stub 3 "samples in a PLT entry under main;plt_caller (%)"
'

test_expect_success ROOT_BPF 'allocaburn (rbp-based CFA): >= 99% complete, func_b/func_a 3.0 within 10%' '
	bg "$WORKLOADS/allocaburn" 11 >/dev/null && p1=$! &&
	bg "$WORKLOADS/allocaburn" 11 >/dev/null &&
	profiled alloca.folded dwarf 8 $p1,$! &&
	burn_answer alloca.folded allocaburn 3000 99
'

test_expect_success ROOT_BPF 'vdsoburn: vDSO frames, then libc clock_gettime, vdso_caller and main' '
	unwound vdso.folded dwarf 5 "$WORKLOADS/vdsoburn" 8 &&
	stats -c vdsoburn --share caller="(^|;)main;vdso_caller(;|\$)" \
		--share vdso="(^|;)main;vdso_caller;[^;]*clock_gettime[^;]*;[^;]*clock_gettime[^;]*\$" vdso.folded &&
	at_least $complete 99 "complete (%)" &&
	at_least $caller 99 "samples under main;vdso_caller (%)" &&
	at_least $vdso 80 "samples in the vDSO under libc clock_gettime (%)"
'

test_expect_success ROOT_BPF 'dlburn: code dlopen()ed after the profiler attached, under dl_caller and main' '
	unwound dl.folded dwarf 5 "$WORKLOADS/dlburn" 8 1 &&
	stats -c dlburn --share lib="(^|;)main;dl_caller;dl_spin\$" dl.folded &&
	at_least $samples 500 samples &&
	at_least $complete 99 "complete (%)" &&
	at_least $lib 95 "samples in main;dl_caller;dl_spin (%)"
'

# What limits it is said in the issue's closing note; a floor of 90% here.
test_expect_success ROOT_BPF 'short-lived burn-nofp processes: >= 90% complete, func_b/func_a 3.0 within 10%' '
	bg "$PROFILE_TOP/tests/workloads/shortlived.sh" "$WORKLOADS/burn-nofp" 9 0.05 &&
	sleep 1 &&
	profiled short.folded dwarf 5 &&
	burn_answer short.folded shortburn 1000 90
'

# versus_perf NAME CMD...: start CMD, then profile --unwind=dwarf and perf
# record --call-graph dwarf on it together for 5 s at $HZ Hz; our
# completeness within 1 point of perf's, our mean depth within 10% of it.
versus_perf() {
	local name=$1 pid prof rc=0
	shift
	bg "$@" >/dev/null
	pid=$!
	sleep 0.3
	profiled $name.folded dwarf 5 $pid &
	prof=$!
	timeout -s INT 5 perf record -q -e cpu-clock --call-graph dwarf -F $HZ -p $pid \
		-o $name.data 2>$name.perf.err || rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 124 ] || { cat $name.perf.err; fail "perf record: status $rc"; return 1; }
	wait $prof &&
	perf script -F comm,tid,ip,sym,dso -i $name.data >$name.perf 2>>$name.perf.err &&
	stats --perf $name.perf && pc=$complete pd=$depth &&
	stats $name.folded &&
	within $complete $(awk -v c=$pc "BEGIN { print c - 1, c + 1 }") "complete (%, perf: $pc)" &&
	within $depth $(awk -v d=$pd "BEGIN { print d * 0.9, d * 1.1 }") "mean depth (perf: $pd)"
}

test_expect_success ROOT_BPF,PERF_DWARF 'burn-nofp: like perf --call-graph dwarf (complete within 1 point, depth within 10%)' '
	versus_perf burn "$WORKLOADS/burn-nofp" -d 8
'

test_expect_success ROOT_BPF,PERF_DWARF 'Debian python3, a CPU loop: like perf --call-graph dwarf' '
	versus_perf python3 /usr/bin/python3 -c "
import time
def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
end = time.time() + 8
while time.time() < end:
    work(10000)
"
'

test_expect_success ROOT_BPF,PERF_DWARF 'Debian perl, a CPU loop: like perf --call-graph dwarf' '
	versus_perf perl /usr/bin/perl -e "
sub work { my \$s = 0; \$s += \$_ * \$_ for 1 .. 10000; \$s }
my \$end = time + 8; work() while time < \$end;
"
'

test_expect_success ROOT_BPF,PERF_DWARF 'Debian gzip -9 on a generated file: like perf --call-graph dwarf' '
	seq 1 3000000 | awk "{ print \$1 * 7919 % 100003, \"lorem\", \$1 % 97, \"ipsum dolor\" }" >text &&
	versus_perf gzip /bin/gzip -9 -c text text
'

test_done
