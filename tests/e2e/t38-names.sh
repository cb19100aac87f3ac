#!/bin/bash
# Names as SREs read them: short C++ names (--names) by default in the SVG,
# full ones in folded output, either way on request; the hint that names a
# process whose samples sit in JIT code nothing names, and its fix; and -v
# lines for frames in anonymous memory.  Prerequisites: ROOT_BPF.
. "$(dirname "$0")/lib.sh"

reap() {
	kill_bg
	wait 2>/dev/null || :
	true
}

# cxxburn for 6 s, profiled for 2 with ARGS: cxx ARGS...
cxx() {
	bg "$WORKLOADS/cxxburn" 6 >/dev/null &&
	"$PROFILE" -F 499 -U -p $! "$@" 2 2>err &&
	reap
}

# Samples of the SVG frames titled exactly NAME (escaped as in the SVG).
svg_sum() {
	grep -o "<title>$2 ([0-9]* sample" "$1" | sed "s/.* (//; s/ sample//" |
		awk "{ n += \$1 } END { print n + 0 }"
}

test_expect_success ROOT_BPF 'SVG: short C++ names by default, equal ones in one box' '
	cxx -o cxx.svg --min-width 0 &&
	all=$(svg_sum cxx.svg all) &&
	m=$(svg_sum cxx.svg "engine::Matrix::multiply") &&
	h=$(svg_sum cxx.svg "engine::hash_strings") &&
	echo "all=$all multiply=$m hash_strings=$h" &&
	{ [ "$all" -ge 200 ] || fail "only $all samples"; } &&
	{ [ "$m" -ge $((all / 5)) ] && [ "$h" -ge $((all / 5)) ] || fail "short names missing"; } &&
	{ [ $(grep -c "<title>engine::hash_strings (" cxx.svg) -le 2 ] || fail "not merged"; } &&
	grep -q ">engine::Matrix::multiply</text>" cxx.svg &&
	{ ! grep -q "unsigned long\\|Matrix&lt;\\|basic_string" cxx.svg || fail "full names left"; }
'

test_expect_success ROOT_BPF '--names full: the SVG keeps the full names' '
	cxx -o full.svg --names full --min-width 0 &&
	all=$(svg_sum full.svg all) &&
	m=$(svg_sum full.svg "engine::Matrix&lt;double&gt;::multiply(unsigned long) const") &&
	echo "all=$all multiply=$m" &&
	{ [ "$all" -ge 200 ] || fail "only $all samples"; } &&
	{ [ "$m" -ge $((all / 5)) ] || fail "full name missing"; } &&
	{ ! grep -q "<title>engine::Matrix::multiply (" full.svg || fail "short name"; }
'

test_expect_success ROOT_BPF 'folded: full names by default, short ones with --names short' '
	cxx -f >full.folded &&
	all=$(fsum full.folded "") &&
	m=$(fsum full.folded ";engine::Matrix<double>::multiply\\(unsigned long\\) const [0-9]+$") &&
	h=$(fsum full.folded ";engine::hash_strings\\(std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, .*> const&\\) [0-9]+$") &&
	echo "all=$all multiply=$m hash_strings=$h" &&
	{ [ "$all" -ge 200 ] || fail "only $all samples"; } &&
	{ [ "$m" -ge $((all / 5)) ] && [ "$h" -ge $((all / 5)) ] || fail "full names missing"; } &&
	cxx -f --names short >short.folded &&
	all=$(fsum short.folded "") &&
	m=$(fsum short.folded ";engine::Matrix::multiply [0-9]+$") &&
	h=$(fsum short.folded ";engine::hash_strings [0-9]+$") &&
	echo "all=$all multiply=$m hash_strings=$h" &&
	{ [ "$m" -ge $((all / 5)) ] && [ "$h" -ge $((all / 5)) ] || fail "short names missing"; } &&
	{ ! grep -q "engine::[^;]*[(<]" short.folded || fail "a full name left"; } &&
	{ [ $(grep -c ";engine::hash_strings [0-9]*$" short.folded) -le 2 ] || fail "not merged"; }
'

# go tool pprof -raw prints a location's function as "NAME :LINE s=START",
# then "(SYSTEM_NAME)" when that differs from the name go shortened.
test_expect_success ROOT_BPF,GO 'pprof: full function names by default, short ones with --names short' '
	cxx -o full.pb.gz &&
	go tool pprof -raw full.pb.gz >full.raw 2>/dev/null &&
	grep -q " s=0(engine::Matrix<double>::multiply(unsigned long) const)$" full.raw &&
	cxx -o short.pb.gz --names short &&
	go tool pprof -raw short.pb.gz >short.raw 2>/dev/null &&
	# Go 1.26 prints LINE:COLUMN, older releases LINE alone; the file and
	# line come from DWARF (cxxburn is built with -g).
	grep -Eq " M=1 engine::Matrix::multiply [^ ]*cxxburn\.cpp:[0-9]+(:0)? s=0$" short.raw &&
	grep -Eq " M=1 engine::hash_strings [^ ]*cxxburn\.cpp:[0-9]+(:0)? s=0$" short.raw &&
	{ ! grep -q "engine::[^ ]*[(<]" short.raw || fail "a full name left"; }
'

test_expect_success ROOT_BPF '--no-demangle: raw names, even in the SVG' '
	cxx -o raw.svg --min-width 0 --no-demangle &&
	all=$(svg_sum raw.svg all) &&
	m=$(svg_sum raw.svg "_ZNK6engine6MatrixIdE8multiplyEm") &&
	echo "all=$all multiply=$m" &&
	{ [ "$all" -ge 200 ] || fail "only $all samples"; } &&
	{ [ "$m" -ge $((all / 5)) ] || fail "raw name missing"; } &&
	{ ! grep -q "engine::" raw.svg || fail "demangled"; }
'

test_expect_success '--names takes short or full' '
	rc=0 && "$PROFILE" --names long 1 >out 2>err || rc=$? &&
	cat err &&
	{ [ $rc = 2 ] || fail "exit $rc"; } &&
	msg=$(tr "\\047" Q <err) &&
	{ [ "$msg" = "profile: --names QlongQ is not one of short, full (see --help)" ] || fail "message"; } &&
	{ [ ! -s out ] || fail "output"; }
'

# jitburn without its perf map: it is written at start, removed here
# before the profile reads it.  Sets pid.
jit_unmapped() {
	bg "$WORKLOADS/jitburn" 6 && pid=$! &&
	wait_for /tmp/perf-$pid.map "jit_spin_loop" 5 &&
	rm -f /tmp/perf-$pid.map &&
	"$PROFILE" -F 499 -U -p $pid "$@" 2 >out 2>err &&
	reap
}

test_expect_success ROOT_BPF 'JIT hint: names the process, its PID, the share and the fix' '
	jit_unmapped -f &&
	cat err &&
	all=$(fsum out "") &&
	{ [ "$all" -ge 200 ] || fail "only $all samples"; } &&
	grep "JIT code" err >hint &&
	{ [ $(wc -l <hint) = 1 ] || fail "not one line"; } &&
	pct=$(sed -n "s/^profile: jitburn (PID $pid): \\([0-9]*\\)% of its user-space samples.*/\\1/p" hint) &&
	echo "pct=$pct" &&
	{ [ -n "$pct" ] && [ "$pct" -ge 90 ] || fail "share"; } &&
	want="profile: jitburn (PID $pid): $pct% of its user-space samples are in unnamed JIT code (anonymous memory); have its runtime write /tmp/perf-$pid.map (the perf JIT map format; often a runtime flag) and profile again" &&
	{ [ "$(cat hint)" = "$want" ] || fail "line"; } &&
	{ [ "$(tail -1 err)" = "$want" ] || fail "not the last line"; }
'

test_expect_success ROOT_BPF '-v: a frame in anonymous memory reads [anon]+0xOFF [anon]' '
	jit_unmapped -v &&
	grep -E "^    [0-9a-f]+ \\[anon\\]" out >anon &&
	cat anon &&
	{ [ $(wc -l <anon) -ge 1 ] || fail "no [anon] frame"; } &&
	{ ! grep -v -E "^    [0-9a-f]+ \\[anon\\]\\+0x[0-9a-f]+ \\[anon\\]$" anon || fail "another shape"; } &&
	{ ! grep -q "\\[\\[" out || fail "doubled brackets"; } &&
	grep -q "^profile: jitburn (PID $pid): " err
'

test_expect_success ROOT_BPF 'no JIT hint when the perf map names the code, nor for burn' '
	bg "$WORKLOADS/jitburn" 6 && pid=$! &&
	wait_for /tmp/perf-$pid.map "jit_spin_loop" 5 &&
	"$PROFILE" -F 499 -f -U -p $pid 2 >mapped.folded 2>err &&
	reap && rm -f /tmp/perf-$pid.map &&
	j=$(fsum mapped.folded ";jit_spin_loop [0-9]+$") && all=$(fsum mapped.folded "") &&
	echo "jit_spin_loop=$j all=$all" &&
	{ [ "$all" -ge 200 ] && [ "$j" -ge $((all * 8 / 10)) ] || fail "map not read"; } &&
	{ ! grep -q "JIT code" err || fail "hint with a map"; } &&
	bg "$WORKLOADS/burn" -d 8 >/dev/null &&
	"$PROFILE" -F 499 -f -p $! 2 >burn.folded 2>err &&
	reap &&
	{ [ $(fsum burn.folded "") -ge 200 ] || fail "few burn samples"; } &&
	{ ! grep -q "JIT code" err || fail "hint for burn"; }
'

test_done
