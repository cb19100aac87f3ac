#!/bin/bash
# Names chosen by an unprivileged user cannot forge output or reach root's
# terminal.  The user nobody runs a program whose comm is an OSC title and
# a screen clear, spinning in a function whose symbol name holds a newline
# and semicolons (a whole forged folded line with its own count), or in JIT
# code named in its perf map with invalid UTF-8, a surrogate, U+FFFF and
# escapes.  Root profiles it in every format.
. "$(dirname "$0")/lib.sh"

EVIL=$(printf 'evil 999999\nfakeroot;injected_frame;z')
# As printed: the newline is '?'; in folded output ';' is ':' in a frame
# name, and '_' in the comm.
SAFE_COMM='?]0;owned??[2J'
FOLDED_COMM='?]0_owned??[2J'
SAFE_NAME='evil 999999?fakeroot;injected_frame;z'
FOLDED_NAME='evil 999999?fakeroot:injected_frame:z'
# jit\xff\xfe\xc3(\xef\xbf\xbf\xed\xa0\x80;x\e[2J\r\aend, byte for byte
SAFE_JIT='jit???(??????;x?[2J??end'
FOLDED_JIT='jit???(??????:x?[2J??end'
PREREQS=ROOT_BPF,CAPS,cc,objcopy,xmllint,python3

# Escape regex metacharacters of a fixed string for grep -E.
re() { printf '%s' "$1" | sed 's/[][\.*^$?+(){}|/]/\\&/g'; }

# Start hostile as nobody (ARGS...); its pid in $pid, once it has named
# itself.
start_hostile() {
	bg $NOBODY "$TRASH/hostile" "$@"
	pid=$!
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(cat /proc/$pid/comm 2>/dev/null)" = "$(printf '\033]0;owned\a\033[2J')" ] && break
		sleep 0.1
	done
	sleep 0.2
}

# No C0 control but newline in FILE (tab allowed with a second argument:
# the SVG's script is indented with tabs), no DEL, no C1 control.
no_controls() {
	local c0='[\001-\011\013-\037\177]'
	[ $# -gt 1 ] && c0='[\001-\010\013-\037\177]'
	{ ! LC_ALL=C grep -q "$(printf "$c0")" "$1" ||
		fail "$1 holds a control character ($(LC_ALL=C grep -c "$(printf '\033')" "$1") lines with ESC)"; } &&
	{ ! LC_ALL=C grep -q "$(printf '\302[\200-\237]')" "$1" || fail "$1 holds a C1 control"; }
}

# Sum of the counts of folded lines with the frame NAME (a fixed string).
fsum_frame() {
	awk -v n=";$2" '{ c = $NF; l = $0; sub(/ [0-9]+$/, "", l); l = l ";" }
		index(l, n ";") { s += c } END { print s + 0 }' "$1"
}

test_expect_success $PREREQS 'build the hostile program: comm and symbol name' '
	chmod 755 "$TRASH" &&
	cc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-o hostile0 "$PROFILE_TOP/tests/e2e/helpers/forger.c" &&
	objcopy --redefine-sym "evil_fn=$EVIL" hostile0 hostile &&
	nm hostile | grep -q "^fakeroot;injected_frame;z$"
'

test_expect_success $PREREQS 'folded: one line per stack, counts add up, names cannot split it' '
	start_hostile 4 &&
	# Frame pointers only: the two runs must see the same stack shape,
	# which a walk from tables reaches only once the process is synced.
	"$PROFILE" -v -F 499 -f -U --unwind=fp -p $pid 1 >evil.folded 2>err &&
	"$PROFILE" -F 499 -U --unwind=fp -p $pid 1 >evil.plain 2>err2 &&
	cat -A evil.folded &&
	{ ! grep -vE "^[^;]+(;[^;]+)* [0-9]+$" evil.folded || fail "a line is not frames COUNT"; } &&
	{ ! grep -q "^fakeroot" evil.folded || fail "forged line"; } &&
	{ ! grep -q "999999$" evil.folded || fail "forged count"; } &&
	counted=$(sed -n "s/.*samples: taken [0-9]*, counted \([0-9]*\),.*/\1/p" err) &&
	all=$(fsum evil.folded "") && echo "counted=$counted all=$all" &&
	{ [ "$all" -gt 0 ] && [ "$all" = "$counted" ] || fail "counts add up to $all, not $counted"; } &&
	line=$(grep -E "^$(re "$FOLDED_COMM")(;[^;]+)*;main;$(re "$FOLDED_NAME") [0-9]+$" evil.folded) ||
		fail "no line comm;...;main;$FOLDED_NAME" &&
	# As many frames as the plain output shows for that stack.
	frames=$(awk -v n="    $SAFE_NAME" "\$0 == n { f = 1; c = 0 } f && /^    -  / { print c; exit } f { c++ }" evil.plain) &&
	fields=$(printf "%s\n" "${line% *}" | awk -F";" "{ print NF - 1 }") &&
	echo "frames=$frames fields=$fields" &&
	{ [ "$frames" -ge 2 ] && [ "$frames" = "$fields" ] || fail "$fields frames folded, $frames plain"; }
'

test_expect_success $PREREQS 'plain, report and --top: no escape reaches the terminal' '
	start_hostile 7 &&
	"$PROFILE" -F 499 -U -p $pid 1 >evil.plain 2>err &&
	"$PROFILE" -F 499 -U -p $pid --report 1 >evil.report 2>>err &&
	"$PROFILE" -F 499 -U -p $pid --top -i 1 2 >evil.top 2>>err &&
	"$PROFILE" -F 499 -U -p $pid -v 1 >evil.verbose 2>>err &&
	cat -A evil.report evil.top &&
	for f in evil.plain evil.report evil.top evil.verbose err; do no_controls $f || exit 1; done &&
	{ grep -qxF "    -                $SAFE_COMM ($pid)" evil.plain || fail "plain: comm"; } &&
	{ grep -qxF "    $SAFE_NAME" evil.plain || fail "plain: name"; } &&
	{ grep -qE "^ +[0-9.]+% +[0-9.]+% +[0-9]+  $(re "$SAFE_COMM") +hostile +$(re "$SAFE_NAME")$" evil.report ||
		fail "report: comm and name"; } &&
	{ grep -qF "$SAFE_NAME" evil.top || fail "--top: name"; } &&
	{ grep -qE " $(re "$SAFE_NAME")\+0x[0-9a-f]+ \[[^]]*/hostile\]$" evil.verbose ||
		fail "plain -v: name and module"; }
'

test_expect_success $PREREQS 'SVG and pprof: valid XML, valid UTF-8' '
	start_hostile 4 &&
	"$PROFILE" -F 499 -U -p $pid --format svg 1 >evil.svg 2>err &&
	"$PROFILE" -F 499 -U -p $pid --format pprof -o evil.pb.gz 1 2>>err &&
	xmllint --noout evil.svg &&
	no_controls evil.svg tab &&
	grep -qF "<title>$SAFE_NAME (" evil.svg &&
	python3 "$PROFILE_TOP/tests/e2e/helpers/pprof_strings.py" evil.pb.gz >strings &&
	cat strings &&
	{ gzip -dc evil.pb.gz | grep -qaF "$SAFE_NAME" || fail "no $SAFE_NAME in the pprof"; } &&
	{ gzip -dc evil.pb.gz | grep -qaF "$SAFE_COMM" || fail "no $SAFE_COMM in the pprof"; }
'

test_expect_success $PREREQS 'a perf map name with bad UTF-8, U+FFFF and escapes: every format' '
	start_hostile -j 5 &&
	{ [ -s /tmp/perf-$pid.map ] || fail "no perf map"; } &&
	"$PROFILE" -F 499 -f -U -p $pid 1 >jit.folded 2>err &&
	"$PROFILE" -F 499 -U -p $pid 1 >jit.plain 2>>err &&
	"$PROFILE" -F 499 -U -p $pid --format svg 1 >jit.svg 2>>err &&
	"$PROFILE" -F 499 -U -p $pid --format pprof -o jit.pb.gz 1 2>>err &&
	cat -A jit.folded &&
	j=$(fsum_frame jit.folded "$FOLDED_JIT") && all=$(fsum jit.folded "") &&
	echo "jit=$j all=$all" &&
	{ [ "$all" -gt 0 ] && [ "$j" -ge $((all * 8 / 10)) ] || fail "the JIT name is missing"; } &&
	{ ! grep -vE "^[^;]+(;[^;]+)* [0-9]+$" jit.folded || fail "a line is not frames COUNT"; } &&
	no_controls jit.folded && no_controls jit.plain && no_controls jit.svg tab &&
	grep -qxF "    $SAFE_JIT" jit.plain &&
	xmllint --noout jit.svg &&
	grep -qF "<title>$SAFE_JIT (" jit.svg &&
	python3 "$PROFILE_TOP/tests/e2e/helpers/pprof_strings.py" jit.pb.gz >strings &&
	cat strings &&
	{ gzip -dc jit.pb.gz | grep -qaF "$SAFE_JIT" || fail "no $SAFE_JIT in the pprof"; }
'

# Python functions, each in a "file" whose name runs on in " 1000000000":
# the label "hot_K (FILE)" is cut within it, and with K "p"s before it,
# one of the eleven ends in digits wherever the cut falls.
cat >"$TRASH/counts.py" <<'PY'
import sys, time
fns = []
for k in range(11):
    g = {}
    src = "def hot_%d(n):\n    x = 0\n    for i in range(n):\n        x += i\n    return x\n" % k
    exec(compile(src, "/forged/" + "p" * k + " 1000000000" * 300, "exec"), g)
    fns.append(g["hot_%d" % k])
end = time.time() + float(sys.argv[1])
print("counts: running", flush=True)
while time.time() < end:
    for f in fns:
        f(3000)
PY

# flamegraph.pl's own reading of a folded line (with its Unicode \s and
# \d): the lines it would take for differential ones, with two counts.
differential() {
	perl -CSD -ne 'chomp; next unless /^(.*)\s+?(\d+(?:\.\d*)?)$/;
		print "$_\n" if $1 =~ /\s+?(\d+(?:\.\d*)?)$/' "$1"
}

test_expect_success ROOT_BPF,USERS,PY311,perl 'folded: a frame cannot end in a count (Python labels cut in " 1000000000")' '
	chmod 755 "$TRASH" &&
	bg $NOBODY /usr/bin/python3.11 "$TRASH/counts.py" 30 >counts.out &&
	bg $VICTIM "$WORKLOADS/burn" -n t33victim -d 30 >/dev/null &&
	wait_for counts.out "^counts: running" &&
	"$PROFILE" -F 499 -f 3 >host.folded 2>err &&
	{ [ -z "$(not_folded host.folded)" ] || fail "lines that are not frames COUNT"; } &&
	differential host.folded >diff.lines &&
	{ [ ! -s diff.lines ] || { head -c 600 diff.lines; echo; fail "$(wc -l <diff.lines) lines read as differential"; }; } &&
	awk "\$(NF - 1) ~ /^[0-9]+([.][0-9]*)?\$/" host.folded >twice.lines && { tail -c 300 twice.lines; true; } &&
	{ [ ! -s twice.lines ] || fail "$(wc -l <twice.lines) lines with a count before the count"; } &&
	# The attack was there to be read: Python leaves cut in the digits.
	cut=$(fsum host.folded ";hot_[0-9]+ [(]p* 1000000000( 1000000000)*_(1[0-9]*)? [0-9]+\$") &&
	victim=$(fsum host.folded "^t33victim;") &&
	named=$(fsum host.folded "^t33victim;_start;.*;main;func_[ab]( |;)") &&
	echo "Python leaves cut in the digits: $cut samples; victim: $named of $victim named and whole" &&
	{ [ "$cut" -gt 0 ] || fail "no Python leaf with a cut label"; } &&
	{ [ "$victim" -gt 50 ] && in_range "$(ratio $named $victim)" 0.9 1 ||
		fail "the victim burn: $named of $victim samples named and whole"; }
'

# A Python program in a file named libc.so.6: its frames are "FUNC
# (libc.so.6)", and the report must not show them as libc's.
mkdir -p "$TRASH/pyobj" &&
cat >"$TRASH/pyobj/libc.so.6" <<'PY'
import sys, time
def spin_forged(n):
    x = 0
    for i in range(n):
        x += i
    return x
end = time.time() + float(sys.argv[1])
print("forged: running", flush=True)
while time.time() < end:
    spin_forged(3000)
PY

test_expect_success ROOT_BPF,USERS,PY311 '--report and --top: a Python file named libc.so.6 is not a shared object' '
	chmod 755 "$TRASH" "$TRASH/pyobj" &&
	bg $NOBODY /usr/bin/python3.11 "$TRASH/pyobj/libc.so.6" 30 >forged.out &&
	bg $VICTIM "$WORKLOADS/burn" -n t33victim -d 30 >/dev/null &&
	wait_for forged.out "^forged: running" &&
	"$PROFILE" -F 499 --report 2 >host.report 2>err &&
	"$PROFILE" -F 499 --top -i 1 2 >host.top 2>>err &&
	grep -E "spin_forged|t33victim .*(func_a|__libc_start_call_main)" host.report &&
	for f in host.report host.top; do
		{ grep -qE "^ +[0-9.]+% +[0-9.]+% +[0-9]+  python3\.11 +\[python\] +spin_forged \(libc\.so\.6\)$" $f ||
			fail "$f: no [python] row for spin_forged"; } &&
		{ ! grep -E "libc\.so\.6 +spin_forged" $f || fail "$f: spin_forged shown in libc.so.6"; } &&
		# The victim'"'"'s own libc is still libc.so.6, its functions burn'"'"'s.
		{ grep -qE "  t33victim +libc\.so\.6 +__libc_start_call_main$" $f || fail "$f: the victim'"'"'s libc"; } &&
		{ grep -qE "  t33victim +burn +func_a$" $f || fail "$f: the victim'"'"'s func_a"; } || exit 1
	done
'

test_done
