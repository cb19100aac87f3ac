#!/bin/bash
# Several -o outputs from one run, each in the format its name implies; a
# name and an explicit format that disagree are refused (exit 2) before
# anything is made; the summary line on stderr after writing files; and
# the bcc header printed only once sampling runs, after any load error.
#
# Prerequisites (tests/e2e/lib.sh): ROOT_BPF, GO (go tool pprof).
. "$(dirname "$0")/lib.sh"

# go keeps a cache under $HOME; CI may run without one.
export HOME=${HOME:-$TRASH}

# An apostrophe, for messages that quote a name (never one in a test body).
Q="'"

# A foreground run that hangs is killed after a minute (status 137).
run() { timeout -s KILL 60 "$@"; }

# Samples of the SVG frames named NAME: svg_samples FILE NAME (as in t10).
svg_samples() {
	grep -F "<title>$2 (" "$1" |
		sed -n 's/.*<title>[^<]* (\([0-9,]*\) samples\{0,1\}, .*/\1/p' |
		tr -d , | awk '{ s += $1 } END { print s + 0 }'
}

# The total of `go tool pprof -top`: "Showing nodes accounting for N, 100% of N total".
pprof_total() {
	sed -n 's/^Showing nodes accounting for .* of \([0-9]*\) total.*/\1/p' "$1"
}

# The summary line of stderr file ERR, split: summary ERR FILES sets
# S_SAMPLES, S_STACKS, S_LOST; fails unless ERR holds that one line for FILES.
summary() {
	local re="^profile: wrote $2: ([0-9,]+) samples, ([0-9,]+) distinct stacks(| in the largest of [0-9]+ reports), ([0-9,]+) lost( \(.*\))?\$"
	[ "$(wc -l <"$1")" -eq 1 ] || { cat "$1"; fail "stderr is not one line"; return 1; }
	grep -E -q "$re" "$1" || { cat "$1"; fail "not the summary line expected for $2"; return 1; }
	S_SAMPLES=$(sed -E "s#$re#\\1#" "$1" | tr -d ,)
	S_STACKS=$(sed -E "s#$re#\\2#" "$1" | tr -d ,)
	S_LOST=$(sed -E "s#$re#\\4#" "$1" | tr -d ,)
}

# --- 1. Three outputs, one run ------------------------------------------------

# --min-width 0: every SVG frame drawn, so that its counts are the folded ones.
test_expect_success ROOT_BPF,GO 'svg, pb.gz and folded from one run: each valid, func_b 3x func_a, one total' '
	bg "$WORKLOADS/burn" -t 2 -d 8 >/dev/null && pid=$! &&
	mkdir three &&
	run "$PROFILE" -F 999 -p $pid --min-width 0 -o three/cpu.svg -o three/cpu.pb.gz -o three/cpu.folded 4 >out 2>err &&
	cat err && ls -l three &&
	{ [ ! -s out ] || fail "output on stdout"; } &&
	{ [ "$(ls three)" = "$(printf "cpu.folded\ncpu.pb.gz\ncpu.svg")" ] || fail "not the three files"; } &&
	for f in three/*; do
		[ "$(stat -c %U:%a "$f")" = root:600 ] || fail "$f is not root 0600" || exit 1
	done &&
	xmllint --noout three/cpu.svg &&
	sa=$(svg_samples three/cpu.svg func_a) && sb=$(svg_samples three/cpu.svg func_b) &&
	st=$(svg_samples three/cpu.svg all) &&
	echo "svg: func_a=$sa func_b=$sb all=$st ratio=$(ratio $sb $sa)" &&
	in_range "$(ratio $sb $sa)" 2.7 3.3 &&
	gzip -t three/cpu.pb.gz &&
	go tool pprof -sample_index=samples -top -cum -nodecount=100000 three/cpu.pb.gz >top 2>perr &&
	pa=$(pprof_cum top func_a) && pb=$(pprof_cum top func_b) && pt=$(pprof_total top) &&
	echo "pprof: func_a=$pa func_b=$pb total=$pt ratio=$(ratio $pb $pa)" &&
	in_range "$(ratio $pb $pa)" 2.7 3.3 &&
	{ [ -z "$(not_folded three/cpu.folded)" ] || fail "lines that are not folded"; } &&
	fa=$(fsum three/cpu.folded ";func_a( |;)") && fb=$(fsum three/cpu.folded ";func_b( |;)") &&
	ft=$(fsum three/cpu.folded "") &&
	echo "folded: func_a=$fa func_b=$fb total=$ft ratio=$(ratio $fb $fa)" &&
	in_range "$(ratio $fb $fa)" 2.7 3.3 &&
	{ [ "$ft" -ge 3000 ] || fail "only $ft samples"; } &&
	{ [ "$st" = "$ft" ] && [ "$pt" = "$ft" ] || fail "totals differ: svg $st, pprof $pt, folded $ft"; } &&
	{ [ "$sb" = "$fb" ] && [ "$pb" = "$fb" ] || fail "func_b differs: svg $sb, pprof $pb, folded $fb"; } &&
	summary err "three/cpu.svg, three/cpu.pb.gz, three/cpu.folded" &&
	echo "summary: samples=$S_SAMPLES stacks=$S_STACKS lost=$S_LOST" &&
	{ [ "$S_SAMPLES" = "$ft" ] || fail "the summary says $S_SAMPLES samples, the file holds $ft"; } &&
	{ [ "$S_STACKS" = "$(wc -l <three/cpu.folded)" ] || fail "the summary says $S_STACKS stacks, the file has $(wc -l <three/cpu.folded) lines"; } &&
	{ [ "$S_LOST" = 0 ] || fail "lost $S_LOST"; }
'

test_expect_success ROOT_BPF 'a name with no known extension takes the explicit format; plain files get the header' '
	bg "$WORKLOADS/burn" -d 6 >/dev/null && pid=$! &&
	run "$PROFILE" -F 499 -p $pid --report -o rep.txt 1 2>err &&
	run "$PROFILE" -F 499 -p $pid -f -o f.txt -o f.folded 1 2>>err &&
	run "$PROFILE" -F 499 -p $pid -o p.txt -o p.svg 1 2>>err &&
	cat err &&
	{ grep -q "func_b$" rep.txt || fail "rep.txt is not a report"; } &&
	{ ! grep -q "^Sampling" rep.txt || fail "a header in the report"; } &&
	{ [ -z "$(not_folded f.txt)" ] && [ "$(fsum f.txt ";func_b")" -gt 0 ] || fail "f.txt is not folded"; } &&
	{ [ -z "$(not_folded f.folded)" ] || fail "f.folded is not folded"; } &&
	{ [ "$(head -1 p.txt)" = "Sampling at 499 Hertz of PID $pid by user + kernel stack for 1 secs." ] ||
		fail "p.txt does not start with the header: $(head -1 p.txt)"; } &&
	{ grep -q -x "    func_b" p.txt || fail "p.txt has no func_b frame"; } &&
	xmllint --noout p.svg &&
	{ ! grep -q "Sampling" p.svg || fail "the header went into the SVG"; }
'

# --- 2. Refused before anything is made ---------------------------------------

# refused MESSAGE ARGS...: exit 2, MESSAGE as the one line on stderr,
# nothing on stdout, no file made in the current (empty) directory.
refused() {
	local msg=$1 rc=0
	shift
	run "$PROFILE" "$@" 1 >out.r 2>err.r || rc=$?
	echo "profile $*: exit $rc: $(cat err.r)"
	[ $rc -eq 2 ] || fail "exit $rc, not 2" || return 1
	[ "$(cat err.r)" = "profile: $msg" ] || fail "expected: profile: $msg" || return 1
	[ ! -s out.r ] || fail "output on stdout" || return 1
	[ "$(ls -A | grep -v -x -e out.r -e err.r)" = "" ] || { ls -A; fail "a file was made"; }
}

test_expect_success 'a file name and an explicit format that disagree: exit 2, both named, no file' '
	mkdir mismatch && cd mismatch &&
	refused "-o r.svg is an SVG file name but --report asks for a report; drop one or rename the file (see --help)" \
		--report -o r.svg &&
	refused "-o f.pb.gz is a pprof file name but -f asks for folded output; drop one or rename the file (see --help)" \
		-f -o f.pb.gz &&
	refused "-o f.pprof is a pprof file name but --format svg asks for an SVG flame graph; drop one or rename the file (see --help)" \
		--format svg -o f.pprof &&
	refused "-o x.folded is a folded file name but --format plain asks for plain text; drop one or rename the file (see --help)" \
		-o x.folded --format plain &&
	refused "-o t.svg is an SVG file name but --top asks for a report; drop one or rename the file (see --help)" \
		--top -o t.svg &&
	refused "-o b.svg is an SVG file name but --format pprof asks for a pprof profile; drop one or rename the file (see --help)" \
		--format pprof -o a.txt -o b.svg -o c.pb.gz &&
	refused "-o cpu-%H%M%S.svg is an SVG file name but -f asks for folded output; drop one or rename the file (see --help)" \
		-f -i 1 -o "cpu-%H%M%S.svg"
'

test_expect_success 'the same -o twice, or more than 16: exit 2, no file' '
	mkdir dup && cd dup &&
	refused "-o ${Q}a.svg${Q} given twice; name each output once (see --help)" -o a.svg -o b.folded -o a.svg &&
	args= && for i in $(seq 17); do args="$args -o f$i.folded"; done &&
	refused "more than 16 -o outputs; write fewer from one run (see --help)" $args
'

test_expect_success ROOT_BPF 'one -o that cannot be written (or two names for one file): exit 1 at once, no file made, old files kept' '
	bg "$WORKLOADS/burn" -d 8 >/dev/null &&
	mkdir bad && printf "old\n" >bad/cpu.svg && cp -p bad/cpu.svg old.svg &&
	for o in /nonexistent-dir/cpu.folded "/nonexistent-dir/cpu-%S.folded"; do
		rc=0; t0=$(date +%s%N)
		run "$PROFILE" -F 49 -i 1 -o bad/cpu.svg -o "$o" -o bad/cpu.pb.gz 5 >out 2>err || rc=$?
		t1=$(date +%s%N)
		echo "-o $o: exit $rc after $(((t1 - t0) / 1000000)) ms: $(cat err)"
		[ $rc -eq 1 ] || fail "-o $o: exit $rc" || exit 1
		grep -q "^profile: cannot open ${Q}/nonexistent-dir/cpu[-0-9%S]*\.folded${Q} for writing: No such file or directory; check the -o path$" err ||
			fail "-o $o: not the message expected" || exit 1
		[ $(((t1 - t0) / 1000000)) -lt 4000 ] || fail "-o $o: it sampled first" || exit 1
		[ ! -s out ] || fail "output on stdout" || exit 1
		[ "$(ls -A bad)" = cpu.svg ] || { ls -lA bad; fail "bad holds more than the old file"; exit 1; }
		cmp bad/cpu.svg old.svg || exit 1
	done &&
	rc=0 && run "$PROFILE" -F 49 -o bad/cpu.svg -o ./bad/cpu.svg 5 >out 2>err || rc=$? &&
	cat err &&
	{ [ $rc -eq 1 ] || fail "two names for one file: exit $rc"; } &&
	{ [ "$(cat err)" = "profile: -o ${Q}bad/cpu.svg${Q} and -o ${Q}./bad/cpu.svg${Q} are the same file; name each output once" ] ||
		fail "not the message expected"; } &&
	{ [ "$(ls -A bad)" = cpu.svg ] || fail "bad holds more than the old file"; } &&
	cmp bad/cpu.svg old.svg
'

# /dev/full takes the plain output and fails on the first write: the other
# outputs of the run must not replace their old files.
test_expect_success ROOT_BPF 'one output fails mid-run (/dev/full): exit 1, one line, every old file kept, no temporary file' '
	bg "$WORKLOADS/burn" -d 8 >/dev/null &&
	mkdir keep && printf "old svg\n" >keep/cpu.svg && printf "old pprof\n" >keep/cpu.pb.gz &&
	cp -p keep/cpu.svg old.svg && cp -p keep/cpu.pb.gz old.pb.gz &&
	rc=0 && run "$PROFILE" -F 99 -o keep/cpu.svg -o keep/cpu.pb.gz -o /dev/full 1 >out 2>err || rc=$? &&
	cat err && echo "exit $rc" &&
	{ [ $rc -eq 1 ] || fail "exit $rc, not 1"; } &&
	{ [ "$(cat err)" = "profile: cannot write ${Q}/dev/full${Q}: No space left on device" ] || fail "not the message expected"; } &&
	cmp keep/cpu.svg old.svg && cmp keep/cpu.pb.gz old.pb.gz &&
	{ [ "$(ls -A keep | tr "\n" " ")" = "cpu.pb.gz cpu.svg " ] || { ls -lA keep; fail "a temporary file was left"; }; }
'

# --- 3. With -i ---------------------------------------------------------------

test_expect_success ROOT_BPF '-i: per-interval files of two formats and an appended file; the summary counts the files' '
	bg "$WORKLOADS/burn" -d 8 >/dev/null && pid=$! &&
	mkdir iv &&
	run "$PROFILE" -F 99 -p $pid -i 1 -o "iv/cpu-%H%M%S.folded" -o iv/all.folded -o "iv/cpu-%H%M%S.svg" 3 >out 2>err &&
	cat err && ls -l iv &&
	nf=$(ls iv | grep -c "^cpu-[0-9]*\.folded$") && ns=$(ls iv | grep -c "^cpu-[0-9]*\.svg$") &&
	{ [ "$nf" -ge 3 ] && [ "$nf" -le 4 ] && [ "$ns" = "$nf" ] || fail "$nf folded and $ns svg interval files"; } &&
	for f in iv/cpu-*.svg; do xmllint --noout "$f" || exit 1; done &&
	markers=$(grep -c "^# interval " iv/all.folded) &&
	{ [ "$markers" = "$nf" ] || fail "$markers interval markers in all.folded, $nf interval files"; } &&
	grep -v "^# interval " iv/all.folded >all.lines &&
	{ [ -z "$(not_folded all.lines)" ] || fail "all.folded has lines that are not folded"; } &&
	a=$(fsum all.lines "") && p=$(cat iv/cpu-*.folded | awk "{ n += \$NF } END { print n }") &&
	echo "all.folded $a samples, the interval files $p" &&
	{ [ "$a" = "$p" ] && [ "$a" -gt 100 ] || fail "all.folded $a, interval files $p"; } &&
	summary err "$nf files iv/cpu-%H%M%S.folded, iv/all.folded, $nf files iv/cpu-%H%M%S.svg" &&
	{ [ "$S_SAMPLES" = "$a" ] || fail "the summary says $S_SAMPLES samples, the files hold $a"; } &&
	grep -q " in the largest of $nf reports, 0 lost$" err
'

# --- 4. The summary line ------------------------------------------------------

test_expect_success ROOT_BPF 'summary: absent with -q, and when the report goes to stdout' '
	bg "$WORKLOADS/burn" -d 8 >/dev/null && pid=$! &&
	run "$PROFILE" -F 99 -p $pid -q -o q.folded 1 >out 2>err &&
	{ [ ! -s err ] || { cat err; fail "stderr with -q"; }; } &&
	{ [ ! -s out ] || fail "output on stdout"; } &&
	{ [ "$(fsum q.folded ";func_b")" -gt 0 ] || fail "-q wrote no samples"; } &&
	run "$PROFILE" -F 99 -p $pid -f 1 >stdout.folded 2>err &&
	{ [ ! -s err ] || { cat err; fail "stderr when writing to stdout"; }; } &&
	{ [ "$(fsum stdout.folded ";func_b")" -gt 0 ] || fail "no samples on stdout"; } &&
	rc=0 && run "$PROFILE" -q -v 1 >out 2>err || rc=$? &&
	{ [ $rc -eq 2 ] || fail "-q -v: exit $rc"; } &&
	grep -q "^profile: conflicting options: -q and -v cannot be used together (see --help)$" err
'

# "4,521" for 4521, as the summary prints numbers.
grouped() { printf "%s" "$1" | sed ":a;s/\B[0-9]\{3\}\>/,&/;ta"; }

# lossy OPTION KIND WARNING: a run of manystacks with OPTION (a small map)
# loses samples or stacks; the summary counts them as KIND ("samples:
# count map full"), with the number bcc warning line WARNING prints.
lossy() {
	local n lost rec unit=${2%% *}
	run "$PROFILE" -F 999 $1 -o lossy.folded 2 >out 2>err || fail "$1: exit $?" || return 1
	cat err
	n=$(sed -n "s/^WARNING: \([0-9]*\) $3\..*/\1/p" err)
	[ "${n:-0}" -gt 0 ] || fail "$1: no warning: the test proves nothing" || return 1
	grep -v "^WARNING: " err >summary.line
	summary summary.line lossy.folded || return 1
	lost=$(grep -o "lost (.*)$" summary.line)
	rec=$(echo "$lost" | sed -n "s/.*, \([0-9,]*\) process records\{0,1\})$/\1/p" | tr -d ,)
	echo "$1: warning $n; summary $S_LOST: $lost; process records ${rec:-0}"
	[ $n -ne 1 ] || unit=${unit%s}
	case $lost in
	"lost ($(grouped $n) $unit ${2#* }"*")") ;;
	*) fail "$1: not the kind expected"; return 1 ;;
	esac
	[ "$S_LOST" = $((n + ${rec:-0})) ] || fail "$1: lost $S_LOST, not $n + ${rec:-0}" || return 1
	[ "$S_SAMPLES" = "$(fsum lossy.folded "")" ] || fail "$1: samples: summary $S_SAMPLES, file $(fsum lossy.folded "")"
}

test_expect_success ROOT_BPF 'summary: what was lost, by kind, the same numbers as the warnings' '
	bg "$WORKLOADS/manystacks" -D 6 -t 2 -d 8 >/dev/null &&
	sleep 0.3 &&
	lossy "--hash-storage-size 8" "samples: count map full" "samples were dropped because the count map was full" &&
	lossy "--stack-storage-size 4" "stacks not displayed" "stack traces could not be displayed"
'

# --- 5. Errors before the header ----------------------------------------------

test_expect_success ROOT_BPF 'an event this machine lacks: the error on stderr, no header on stdout or in the file' '
	{ "$PROFILE" --list-events | grep -E "^ *cycles .*not supported" ||
		{ echo "this machine has cycles: nothing to test"; exit 0; }; } &&
	rc=0 && run "$PROFILE" -e cycles 1 >out 2>err || rc=$? &&
	cat err out && echo "exit $rc" &&
	{ [ $rc -eq 1 ] || fail "exit $rc"; } &&
	{ grep -q "^profile: cannot open event .cycles." err || fail "not the event error"; } &&
	{ [ ! -s out ] || fail "stdout: $(cat out)"; } &&
	rc=0 && run "$PROFILE" -e cycles -o cyc.txt 1 >out 2>err || rc=$? &&
	{ [ $rc -eq 1 ] && grep -q "^profile: cannot open event .cycles." err || fail "-o: exit $rc"; } &&
	{ [ ! -e cyc.txt ] && [ -z "$(ls -A | grep profile-)" ] || fail "-o: a file was left"; } &&
	run "$PROFILE" -F 49 1 >out 2>err &&
	{ [ "$(head -1 out)" = "Sampling at 49 Hertz of all threads by user + kernel stack for 1 secs." ] ||
		fail "no header when loading succeeds: $(head -1 out)"; }
'

test_done
