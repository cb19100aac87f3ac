#!/bin/bash
# Frames no symbol names, in a stripped copy of burn: every output says
# which file they are in ([burn-stripped]) except bcc's default folded and
# plain ones, the SVG's tooltip and -v say where in the file, and pprof
# keeps what `go tool pprof` needs to name them later from the unstripped
# file.  Prerequisites (tests/e2e/lib.sh): ROOT_BPF, GO, strip, addr2line.
. "$(dirname "$0")/lib.sh"

reap() {
	kill_bg
	wait 2>/dev/null || :
	true
}

# $TRASH/burn-stripped, and the unstripped copy it came from as burn-full.
stripped() {
	[ -x "$TRASH/burn-stripped" ] && return 0
	cp "$WORKLOADS/burn" "$TRASH/burn-full" &&
	cp "$WORKLOADS/burn" "$TRASH/burn-stripped.tmp" &&
	strip "$TRASH/burn-stripped.tmp" &&
	mv "$TRASH/burn-stripped.tmp" "$TRASH/burn-stripped" &&
	{ ! nm "$TRASH/burn-stripped" 2>/dev/null | grep -q func_b || fail "not stripped"; }
}

# Profile the stripped burn's user stacks for 2 s: profile_stripped ARGS...
profile_stripped() {
	stripped &&
	bg "$TRASH/burn-stripped" -d 5 >/dev/null &&
	"$PROFILE" -F 999 -U -p $! "$@" 2 2>err &&
	reap
}

test_expect_success ROOT_BPF,strip '-f: bcc'"'"'s [unknown] for the stripped frames, by default' '
	profile_stripped -f >out &&
	all=$(fsum out "") && u=$(fsum out ";\\[unknown\\] [0-9]+$") &&
	echo "all=$all unknown leaves=$u" && head -3 out &&
	{ [ "$all" -ge 500 ] || fail "only $all samples"; } &&
	{ [ "$u" -ge $((all * 9 / 10)) ] || fail "leaves not [unknown]"; } &&
	{ ! grep -q "burn-stripped\\]\\|func_a\\|func_b" out || fail "named: not bcc style"; }
'

test_expect_success ROOT_BPF,strip '-f --unknown=module: [burn-stripped], no [unknown] left' '
	profile_stripped -f --unknown=module >out &&
	all=$(fsum out "") &&
	m=$(fsum out "^burn-stripped;\\[burn-stripped\\];__libc_start_main;__libc_start_call_main;\\[burn-stripped\\];\\[burn-stripped\\] [0-9]+$") &&
	echo "all=$all whole stacks=$m" && head -3 out &&
	{ [ "$m" -ge $((all * 9 / 10)) ] || fail "stacks not [burn-stripped]"; } &&
	{ ! grep -q "\\[unknown\\]\\|\\[\\[" out || fail "[unknown] or [[ left"; }
'

test_expect_success ROOT_BPF,strip,addr2line 'SVG: the label, and a tooltip with the file and the offset in it' '
	profile_stripped -o out.svg --min-width 0 &&
	f="$TRASH/burn-stripped" &&
	grep -q "data-n=\"\\[burn-stripped\\]\"><title>\\[burn-stripped\\] " out.svg &&
	{ ! grep -q "\\[unknown\\]" out.svg || fail "[unknown] in the SVG"; } &&
	grep -q "<title>\\[burn-stripped\\] $f, several addresses (" out.svg &&
	sed -n "s|.*<g data-x=\"[0-9]*\" data-w=\"[0-9]*\" data-d=\"2\" data-n=\"\\[burn-stripped\\]\"><title>\\[burn-stripped\\] $f+0x\\([0-9a-f]*\\) (.*|\\1|p" \
		out.svg >root &&
	cat root && [ $(wc -l <root) = 1 ] &&
	off=$(cat root) &&
	fn=$(addr2line -f -e burn-full $(printf "0x%x" $((0x$off - 1))) | head -1) &&
	echo "the root frame at +0x$off is $fn" &&
	{ [ "$fn" = _start ] || fail "the root frame is $fn, not _start"; }
'

test_expect_success ROOT_BPF,strip '--report: the Symbol is [burn-stripped]' '
	profile_stripped --report >out &&
	cat out &&
	line=$(grep -E "^ +[0-9.]+% +[0-9.]+% +[0-9]+  burn-stripped +burn-stripped +\\[burn-stripped\\]$" out) &&
	self=$(echo "$line" | awk "{ sub(/%/, \"\", \$1); print \$1 }") &&
	{ awk -v s="$self" "BEGIN { exit !(s >= 90) }" || fail "self $self%"; } &&
	{ ! grep -q "\\[unknown\\]" out || fail "[unknown] in the report"; }
'

test_expect_success ROOT_BPF,strip,addr2line '-v: the label and the offset in the file' '
	profile_stripped -v >out &&
	f="$TRASH/burn-stripped" &&
	grep -E "^    [0-9a-f]+ \\[burn-stripped\\]\\+0x[0-9a-f]+ \\[$f\\]$" out >lines &&
	head -3 lines &&
	n=$(wc -l <lines) && { [ "$n" -ge 3 ] || fail "$n such lines"; } &&
	{ ! grep -q "\\[unknown\\]" out || fail "[unknown] with -v"; } &&
	# The hottest stack is printed last; its leaf is the sampled pc.
	leaf=$(awk "/^    [0-9a-f]+ / && !in_block { leaf = \$0; in_block = 1 }
		    /^    -  / { in_block = 0 } END { print leaf }" out) &&
	off=$(echo "$leaf" | sed -n "s/.*\\[burn-stripped\\]+0x\\([0-9a-f]*\\) .*/\\1/p") &&
	fn=$(addr2line -f -e burn-full 0x$off | head -1) &&
	echo "hottest leaf: $leaf: $fn" &&
	{ [ "$fn" = func_b ] || fail "the hottest leaf +0x$off is $fn, not func_b"; }
'

# go tool pprof names a mapping's frames from the file it is given for the
# profile's main binary; with the stripped file in place it cannot.
test_expect_success ROOT_BPF,GO,strip 'pprof: go tool pprof -symbolize=local names func_a and func_b from the unstripped file' '
	profile_stripped -o x.pb.gz &&
	id=$(readelf -n burn-stripped | awk "/Build ID/ { print \$3 }") && echo "build id $id" &&
	go tool pprof -raw x.pb.gz >raw 2>err &&
	sed -n "/^Mappings/,\$p" raw &&
	grep -E "^1: 0x[0-9a-f]+/0x[0-9a-f]+/0x1000 $TRASH/burn-stripped $id \$" raw &&
	m=$(sed -n "/^Locations/,/^Mappings/p" raw | grep -c " M=1 \$") &&
	{ [ "$m" -ge 3 ] || fail "$m locations with an address and no line"; } &&
	go tool pprof -sample_index=samples -symbolize=local -top x.pb.gz >before 2>err &&
	cat before &&
	{ ! grep -q "func_a\\|func_b" before || fail "named without the file"; } &&
	grep -q "\\[burn-stripped\\]$" before &&
	go tool pprof -sample_index=samples -symbolize=local -top burn-full x.pb.gz >after 2>err &&
	cat after &&
	a=$(awk "\$NF == \"func_a\" { print \$1 }" after) &&
	b=$(awk "\$NF == \"func_b\" { print \$1 }" after) &&
	echo "func_a=$a func_b=$b" &&
	{ [ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ] && [ "$a" -gt 0 ] ||
		fail "func_a and func_b not named"; }
'

test_done
