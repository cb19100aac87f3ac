#!/bin/bash
# Native source lines and inlined functions from DWARF (src/symbols/dwlines):
# a -g -O2 C program whose hot loop is inlined twice must show the inlined
# functions as frames (folded, pprof), their lines with --lines, and go
# tool pprof must read the pprof as written (names, lines, inline frames,
# Python's <module>).  Prerequisites (tests/e2e/lib.sh): ROOT_BPF, GO, PY311.
. "$(dirname "$0")/lib.sh"

export HOME=${HOME:-$TRASH}
cd "$TRASH" || exit 1

cat >inl.c <<'EOF'
#include <stdlib.h>
static volatile unsigned long sink;
static inline __attribute__((always_inline)) unsigned long inner(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 2654435761u + i;	/* HOT */
	return x;
}
static inline __attribute__((always_inline)) unsigned long middle(unsigned long x)
{
	return inner(x) ^ inner(x + 1);	/* CALL */
}
__attribute__((noinline)) unsigned long outer(unsigned long x)
{
	return middle(x) + 1;	/* OUTER */
}
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	for (unsigned long n = 0; n < (unsigned long)(secs * 2000000); n++)
		sink += outer(n);
	return 0;
}
EOF
gcc -O2 -g -fno-omit-frame-pointer -o inl inl.c || fail "cannot build inl.c"
HOT=$(grep -n "HOT" inl.c | cut -d: -f1)
CALL=$(grep -n "CALL" inl.c | cut -d: -f1)
OUTER=$(grep -n "OUTER" inl.c | cut -d: -f1)

test_expect_success ROOT_BPF '--inline: inlined functions are frames: outer;middle;inner' '
	"$PROFILE" -F 199 --inline -f -o a.folded -- ./inl 1 2>err &&
	all=$(fsum a.folded "^inl;") &&
	inl=$(fsum a.folded ";outer;middle;inner( |;)") &&
	echo "$inl of $all samples under outer;middle;inner" &&
	{ [ "$all" -gt 50 ] && [ $((inl * 100)) -ge $((all * 85)) ] ||
		fail "only $inl of $all samples show the inlined frames"; }
'

test_expect_success ROOT_BPF '--lines: FUNC (FILE:LINE) for native frames, at the call lines; --py-lines: Python frames only' '
	"$PROFILE" -F 199 --py-lines -f -o p.folded -- ./inl 1 2>err &&
	{ ! grep -q "inl\.c:" p.folded || fail "--py-lines named native lines"; } &&
	[ "$(fsum p.folded ";outer [0-9]+\$")" -gt 0 ] &&
	for opt in --lines; do
		"$PROFILE" -F 199 --inline $opt -f -o l.folded -- ./inl 1 2>err &&
		all=$(fsum l.folded "^inl;") &&
		# The leaf is in inner'"'"'s loop: its body (HOT) or its header, the line before.
		loop=$(fsum l.folded ";outer \\(inl.c:$OUTER\\);middle \\(inl.c:$CALL\\);inner \\(inl.c:($((HOT - 1))|$HOT)\\)") &&
		n=$(fsum l.folded ";outer \\(inl.c:$OUTER\\);middle \\(inl.c:$CALL\\);inner \\(inl.c:$HOT\\)") &&
		echo "$opt: $loop of $all samples in inner'"'"'s loop under middle:$CALL, outer:$OUTER; $n at its body, inner:$HOT" &&
		{ [ $((loop * 100)) -ge $((all * 90)) ] && [ $((n * 100)) -ge $((all * 50)) ] ||
			{ sort -k2 -n l.folded | tail -3; fail "$opt: lines missing"; }; } || return 1
	done
'

test_expect_success ROOT_BPF 'without --inline: outer is the leaf, as in bcc and perf script; no DWARF opened' '
	"$PROFILE" -v -F 199 -f -o n.folded -- ./inl 1 2>err &&
	all=$(fsum n.folded "^inl;") &&
	n=$(fsum n.folded ";outer [0-9]+\$") && m=$(fsum n.folded ";middle") &&
	echo "$n of $all samples with outer as the leaf, $m with middle" &&
	[ "$m" = 0 ] && [ $((n * 100)) -ge $((all * 85)) ] &&
	grep "DWARF lines:" err &&
	grep -q "DWARF lines: 0 opened" err
'

test_expect_success ROOT_BPF,GO 'pprof: go tool pprof -top -lines and -traces show names, lines and inlined frames as written' '
	"$PROFILE" -v -F 199 -o x.pb.gz -- ./inl 1 2>err &&
	grep "DWARF lines:" err && ! grep -q "DWARF lines: 0 opened" err &&
	go tool pprof -sample_index=samples -top -lines x.pb.gz >top 2>gerr && cat top &&
	grep -qE " inner .*inl\\.c:$HOT \\(inline\\)\$" top &&
	! grep -q "\\[inl\\]" top &&
	go tool pprof -sample_index=samples -traces x.pb.gz >traces 2>gerr &&
	grep -A2 -m1 " inner (inline)\$" traces >chain && cat chain &&
	grep -q "middle (inline)" chain && grep -q "outer\$" chain &&
	go tool pprof -raw x.pb.gz >raw 2>gerr &&
	grep -qE "^1: .*/inl .*\\[FN\\]\\[FL\\]\\[LN\\]\\[IN\\]" raw || { sed -n "/^Mappings/,\$p" raw; fail "mapping not marked symbolized"; }
'

cat >w.py <<'EOF'
import time
def gen(n):
    for i in range(n):
        yield i * 2
t = time.time() + 2
while time.time() < t:
    sum(gen(20000))
EOF

test_expect_success ROOT_BPF,PY311 'Debian python3.11: builtin_sum_impl, inlined into builtin_sum, is a frame' '
	"$PROFILE" -F 199 --inline --python off -f -o p.folded -- /usr/bin/python3.11 w.py 2>err &&
	# Debian builds with LTO: a static function may keep its .lto_priv suffix.
	n=$(fsum p.folded ";builtin_sum(\\.lto_priv\\.[0-9]+)?;builtin_sum_impl;") &&
	echo "$n samples under builtin_sum;builtin_sum_impl" && [ "$n" -gt 20 ]
'

test_expect_success ROOT_BPF,PY311,GO 'pprof of Python: <module> survives go tool pprof, libpython not named again' '
	"$PROFILE" -F 199 -o p.pb.gz -- /usr/bin/python3.11 w.py 2>err &&
	go tool pprof -sample_index=samples -top p.pb.gz >ptop 2>gerr && cat ptop &&
	m=$(awk "\$NF == \"<module>\" { sub(/%/, \"\", \$5); print int(\$5) }" ptop) &&
	echo "<module>: ${m:-0}% of the samples" &&
	{ [ "${m:-0}" -ge 50 ] || fail "<module> lost"; } &&
	# Named again by pprof, the frames of the mapping get its name: before,
	# [libpython3.11.so.1.0] had half the flat time.  A frame we could
	# not name (a return address in no symbol) may show so, rarely.
	again=$(awk "\$NF ~ /^\\[(libpython3\\.11\\.so\\.1\\.0|python3\\.11)\\]\$/ { sub(/%/, \"\", \$2); n += \$2 } END { print int(n) }" ptop) &&
	echo "flat % under the mapping name: $again" &&
	{ [ "$again" -le 2 ] || fail "named again by pprof"; }
'

test_done
