#!/bin/bash
# SVG flame graphs and gzip'd pprof: burn's known answer (func_b three times
# func_a) must come through both, and real consumers must read them:
# `go tool pprof` and, for the SVG's zoom and search, headless Chromium.
#
# The first two tests need no root: they read files that the unit tests
# write from hand-built profiles (PROFILE_TEST_OUTPUT).  Prerequisites
# (tests/e2e/lib.sh): GO, PLAYWRIGHT, ROOT_BPF.
. "$(dirname "$0")/lib.sh"

BROWSER=$PROFILE_TOP/tests/browser
SHOTS=$PROFILE_BUILD/test-output
UNIT_TESTS=$PROFILE_BUILD/tests
# go keeps a cache under $HOME; CI may run without one.
export HOME=${HOME:-$TRASH}
# The burn SVG is made afresh below for the browser: never test an old one.
rm -f "$SHOTS/burn.svg"

# bg records its pids in the body's subshell, where lib.sh's cleanup never
# sees them: each body kills its own workloads.
reap() {
	for p in "${BG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || :; done
	wait 2>/dev/null || :
	true
}

# Sum of the rect widths of the SVG frames named NAME: svg_width FILE NAME
svg_width() {
	grep -F "<title>$2 (" "$1" |
		sed -n 's/.*<rect [^>]* width="\([0-9.]*\)".*/\1/p' |
		awk '{ s += $1 } END { printf "%.2f\n", s }'
}

# Samples of the SVG frames named NAME: svg_samples FILE NAME
svg_samples() {
	grep -F "<title>$2 (" "$1" |
		sed -n 's/.*<title>[^<]* (\([0-9]*\) samples\{0,1\}, .*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}

# Samples of folded stacks with a frame NAME (the comm is not a frame).
folded_cum() {
	awk -v name="$2" '{
		n = $NF; st = $0; sub(/ [0-9]+$/, "", st)
		k = split(st, f, ";")
		for (i = 2; i <= k; i++) if (f[i] == name) { s += n; break }
	} END { print s + 0 }' "$1"
}

# `go tool pprof -traces` back to folded lines, comm first, sorted.  As
# in folded output (and stackcollapse-perf.pl), a space in the comm is '_'.
traces_to_folded() {
	awk '
	/^-----------\+/ {
		if (n) {
			line = comm
			for (i = n; i >= 1; i--) line = line ";" fr[i]
			sum[line] += cnt
		}
		n = 0; comm = ""; next
	}
	n == 0 && /^ *comm: / { sub(/^ *comm: +/, ""); gsub(/ /, "_"); comm = $0; next }
	n == 0 && /^ *[a-z_]+: / { next }
	n == 0 && /^ *[0-9]+ / { cnt = $1; sub(/^ *[0-9]+ +/, ""); fr[++n] = $0; next }
	n > 0 { sub(/^ +/, ""); fr[++n] = $0 }
	END { for (l in sum) print l, sum[l] }' "$1" | sort
}

xml_ok() {
	if command -v python3 >/dev/null; then
		python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$1"
	else
		echo "python3 missing: XML well-formedness not checked"
	fi
}

test_expect_success GO 'pprof of a unit-test profile: go tool pprof reads the folded stacks back' '
	PROFILE_TEST_OUTPUT=$PWD "$UNIT_TESTS/test_pprof" >unit.log &&
	go tool pprof -sample_index=samples -traces unit.pb.gz >traces 2>err &&
	traces_to_folded traces >got &&
	sort unit.folded >want &&
	diff want got &&
	go tool pprof -sample_index=samples -top -cum -nodecount=100000 unit.pb.gz >top 2>err &&
	for fn in fixture_leaf fixture_caller fixture_root func_a main kleaf kroot "[Missed User Stack]"; do
		want=$(folded_cum unit.folded "$fn") && got=$(pprof_cum top "$fn") &&
		{ [ "$want" -gt 0 ] && [ "$want" = "$got" ] || fail "$fn: folded $want, pprof -top $got"; } || exit 1
	done &&
	{ grep -q "^File: test_pprof$" top || fail "the main binary is not the first mapping"; } &&
	go tool pprof -raw unit.pb.gz >raw 2>err &&
	{ grep -q "^PeriodType: cpu nanoseconds$" raw || fail "period type"; } &&
	{ grep -q "^Period: 10101010$" raw || fail "period"; } &&
	{ grep -q "^samples/count cpu/nanoseconds$" raw || fail "sample types"; } &&
	{ grep -Eq "test_pprof [0-9a-f]{40} \[FN\]$" raw || fail "mapping with build id"; } &&
	{ grep -q "\[kernel.kallsyms\]" raw || fail "kernel mapping"; }
'

test_expect_success GO 'pprof of unit-test --wall and --off-cpu profiles: go tool pprof reads their times' '
	PROFILE_TEST_OUTPUT=$PWD "$UNIT_TESTS/test_pprof" >unit.log &&
	go tool pprof -raw unit-wall.pb.gz >raw 2>err &&
	{ grep -q "^PeriodType: wall nanoseconds$" raw || fail "wall period type"; } &&
	{ grep -q "^wall/nanoseconds\[dflt\] cpu/nanoseconds off_cpu/nanoseconds$" raw ||
		fail "wall sample types"; } &&
	go tool pprof -top unit-wall.pb.gz >top 2>err &&
	{ grep -q "^Type: wall$" top || fail "wall is not the default"; } &&
	{ grep -q "Total samples = 36.30ms" top || fail "wall total"; } &&
	{ grep -Eq "^ +6ms +16.53% .* \[off-cpu\]$" top || fail "[off-cpu] flat"; } &&
	go tool pprof -top -sample_index=cpu unit-wall.pb.gz >top 2>err &&
	{ grep -q "Total samples = 30.30ms" top || fail "cpu total"; } &&
	go tool pprof -top -sample_index=off_cpu unit-wall.pb.gz >top 2>err &&
	{ grep -q "Total samples = 6ms" top || fail "off_cpu total"; } &&
	go tool pprof -top unit-offcpu.pb.gz >top 2>err &&
	{ grep -q "^Type: off_cpu$" top || fail "off-CPU type"; } &&
	{ grep -Eq "^ +4.50ms +75.00% .* kleaf$" top || fail "off-CPU kleaf"; } &&
	{ grep -Eq "^ +1.50ms +25.00% .* func_a$" top || fail "off-CPU func_a"; }
'

test_expect_success PLAYWRIGHT 'browser: a unit-test SVG hovers, zooms, resets and searches' '
	PROFILE_TEST_OUTPUT=$PWD "$UNIT_TESTS/test_svg" >unit.log &&
	xml_ok unit.svg &&
	node "$BROWSER/flamegraph.test.js" "$PWD/unit.svg" "$SHOTS" 2.99 3.01
'

test_expect_success node 'the embedded stylesheet and script are src/output/flamegraph.css and .js, and the script parses' '
	PROFILE_TEST_OUTPUT=$PWD "$UNIT_TESTS/test_svg" >unit.log &&
	sed -n "/^<script type=\"text\/ecmascript\"><!\[CDATA\[\$/,/^\]\]><\/script>\$/p" unit.svg |
		sed "1,2d;\$d" >script.js &&
	cmp script.js "$PROFILE_TOP/src/output/flamegraph.js" &&
	grep -c "" script.js &&
	node --check script.js &&
	sed -n "/^<style>\$/,/^<\/style>\$/p" unit.svg | sed "1,3d;\$d" >style.css &&
	cmp style.css "$PROFILE_TOP/src/output/flamegraph.css"
'

# 5 s of two burn threads at 999 Hz is ~10000 samples on an idle machine;
# 3000 leaves room for a busy one and still pins the ratio to +-10%.
test_expect_success ROOT_BPF 'svg: func_b rects are 3x as wide as func_a over 3000+ samples' '
	bg "$WORKLOADS/burn" -t 2 -d 8 &&
	pid=$! &&
	"$PROFILE" -F 999 -p $pid --format svg -o burn.svg 5 >out 2>err &&
	reap &&
	mkdir -p "$SHOTS" && cp burn.svg "$SHOTS/burn.svg" &&
	xml_ok burn.svg &&
	all=$(svg_samples burn.svg all) && echo "all=$all" &&
	{ [ "$all" -ge 3000 ] || fail "only $all samples"; } &&
	a=$(svg_width burn.svg func_a) && b=$(svg_width burn.svg func_b) &&
	echo "width func_a=$a func_b=$b" &&
	r=$(ratio $b $a) && echo "ratio=$r" &&
	in_range $r 2.7 3.3 &&
	{ grep -q "<title>burn (" burn.svg || fail "no comm frame"; } &&
	{ ! grep -q "href" burn.svg || fail "the SVG refers to something outside it"; } &&
	{ grep -q ">CPU Flame Graph</text>" burn.svg || fail "default title"; }
'

test_expect_success ROOT_BPF 'svg: --inverted, --title (escaped) and --min-width' '
	bg "$WORKLOADS/burn" -d 4 &&
	pid=$! &&
	"$PROFILE" -F 999 -p $pid --format svg --inverted --title "a<b & c" --min-width 2 -o ice.svg 2 >out 2>err &&
	reap &&
	xml_ok ice.svg &&
	{ grep -q ">a&lt;b &amp; c</text>" ice.svg || fail "title"; } &&
	y_all=$(grep -F "<title>all (" ice.svg | sed -n "s/.*<rect [^>]* y=\"\([0-9.]*\)\".*/\1/p") &&
	y_b=$(grep -F "<title>func_b (" ice.svg | head -1 | sed -n "s/.*<rect [^>]* y=\"\([0-9.]*\)\".*/\1/p") &&
	echo "y all=$y_all func_b=$y_b" &&
	{ awk -v a="$y_all" -v b="$y_b" "BEGIN { exit !(a < b) }" || fail "root not at the top"; } &&
	small=$(sed -n "s/.*<title>.* (.*, \([0-9.]*\)%)<\/title>.*/\1/p" ice.svg | awk "\$1 < 2" | wc -l) &&
	{ [ "$small" -eq 0 ] || fail "$small frames under --min-width 2"; }
'

test_expect_success ROOT_BPF,GO 'pprof: go tool pprof -top shows func_b 3x func_a' '
	bg "$WORKLOADS/burn" -t 2 -d 8 &&
	pid=$! &&
	"$PROFILE" -F 999 -p $pid --format pprof -o burn.pb.gz 5 >out 2>err &&
	reap &&
	gzip -t burn.pb.gz &&
	go tool pprof -sample_index=samples -top -cum -nodecount=100000 burn.pb.gz >top 2>err &&
	head -8 top &&
	a=$(pprof_cum top func_a) && b=$(pprof_cum top func_b) &&
	echo "func_a=$a func_b=$b" &&
	{ [ $((a + b)) -ge 3000 ] || fail "only $((a + b)) samples"; } &&
	r=$(ratio $b $a) && echo "ratio=$r" &&
	in_range $r 2.7 3.3 &&
	{ grep -q "^File: burn$" top || fail "burn is not the main binary"; } &&
	go tool pprof -raw burn.pb.gz >raw 2>err &&
	{ grep -q "^PeriodType: cpu nanoseconds$" raw || fail "period type"; } &&
	{ grep -q "^Period: 1001001$" raw || fail "period of -F 999"; } &&
	{ grep -q "comm:\[burn\]" raw || fail "comm label"; } &&
	{ grep -q "pid:\[$pid\]" raw || fail "pid label"; }
'

test_expect_success ROOT_BPF,PLAYWRIGHT 'browser: the burn SVG hovers, zooms, resets and searches' '
	[ -f "$SHOTS/burn.svg" ] &&
	node "$BROWSER/flamegraph.test.js" "$SHOTS/burn.svg" "$SHOTS"
'

test_done
