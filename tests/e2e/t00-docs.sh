#!/bin/bash
# The manual page and --help agree: same long and short options, same
# defaults, same version; the page renders without warnings.  No root needed.
. "$(dirname "$0")/lib.sh"

MAN=$PROFILE_TOP/man/profile.8

# roff source to plain text good enough for grepping option names: drop
# comments, turn "\-" into "-", remove font changes (\fB, \fI, \fR, \fP,
# \f(XX, \f[...]).
man_text() {
	sed -e '/^\.\\"/d' -e 's/\\-/-/g' \
	    -e 's/\\f[BIRP]//g' -e 's/\\f([A-Z][A-Z]//g' -e 's/\\f\[[^]]*\]//g' "$MAN"
}

# --long-option tokens, one per line, sorted and unique.
long_opts() {
	grep -oE -- '--[a-z][a-z0-9-]*' | sed 's/-*$//' | LC_ALL=C sort -u
}

# Single-letter options standing alone: "-p" in "-p PID" or "[-p", but not
# "-vv", "-EEXIST", "Ctrl-C" or "cpu-clock".
short_opts() {
	perl -nle 'print $1 while /(?<![A-Za-z0-9_\\-])(-[A-Za-z])(?![A-Za-z0-9_-])/g' |
		LC_ALL=C sort -u
}

# --help into ./help, the page's text into ./man.txt (in each test's body:
# a test must not depend on an earlier one having passed).
inputs() {
	{ test -f "$MAN" || fail "no $MAN"; } &&
	{ "$PROFILE" --help >help || fail "profile --help failed"; } &&
	man_text >man.txt &&
	test -s help && test -s man.txt
}

test_expect_success 'every long option in --help is in the man page, and back' '
	inputs &&
	long_opts <help >help.long &&
	long_opts <man.txt >man.long &&
	test $(wc -l <help.long) -ge 15 &&
	comm -23 help.long man.long >only-help &&
	comm -13 help.long man.long >only-man &&
	{ test ! -s only-help || { echo "in --help, not in the man page:"; cat only-help; }; } &&
	{ test ! -s only-man || { echo "in the man page, not in --help:"; cat only-man; }; } &&
	test ! -s only-help && test ! -s only-man
'

test_expect_success 'every short option in --help is in the man page, and back' '
	inputs &&
	short_opts <help >help.short &&
	short_opts <man.txt >man.short &&
	test $(wc -l <help.short) -ge 10 &&
	comm -23 help.short man.short >only-help &&
	comm -13 help.short man.short >only-man &&
	{ test ! -s only-help || { echo "in --help, not in the man page:"; cat only-help; }; } &&
	{ test ! -s only-man || { echo "in the man page, not in --help:"; cat only-man; }; } &&
	test ! -s only-help && test ! -s only-man
'

test_expect_success 'every option of --help has a .TP entry in OPTIONS' '
	inputs &&
	sed -n "/^\.SH OPTIONS/,/^\.SH /p" "$MAN" | sed -n "/^\.TP/{n;p}" |
		sed -e "s/\\\\-/-/g" -e "s/\\\\f[BIRP]//g" -e "s/^\.[A-Z]* //" >tags &&
	grep -oE "^ +(-[A-Za-z], )?--[a-z-]+" help | sed "s/^ *//" >help.tags &&
	test $(wc -l <help.tags) -ge 15 &&
	bad=0 &&
	while read -r t; do
		grep -qF -- "$t" tags || { echo "no .TP entry for \"$t\""; bad=1; }
	done <help.tags &&
	{ grep -qx "duration" tags || { echo "no .TP entry for the duration"; bad=1; }; } &&
	test $bad = 0
'

test_expect_success 'defaults in --help are the ones in the man page' '
	inputs &&
	grep -oE "default [0-9]+(\.[0-9]+)?" help | LC_ALL=C sort -u >help.defaults &&
	test -s help.defaults &&
	bad=0 &&
	while read -r d; do
		grep -q -- "(${d}[,)]" man.txt || { echo "man page lacks \"($d\""; bad=1; }
	done <help.defaults &&
	test $bad = 0
'

test_expect_success groff 'groff renders the man page without warnings' '
	groff -man -Tutf8 -ww -z "$MAN" 2>warn &&
	{ test ! -s warn || cat warn; } && test ! -s warn
'

test_expect_success man 'man -l renders the man page without warnings' '
	MANWIDTH=80 man -l --warnings=w "$MAN" >rendered 2>warn &&
	{ test ! -s warn || cat warn; } && test ! -s warn &&
	grep -q "^NAME" rendered && grep -q "^EXIT STATUS" rendered &&
	grep -q "Sampling at 99 Hertz of all threads by user + kernel stack for 30 secs\." rendered
'

test_expect_success mandoc 'mandoc -T lint finds nothing' '
	mandoc -T lint -W warning "$MAN" >lint 2>&1 || { cat lint; false; }
'

test_expect_success 'the man page has the sections a reader looks for' '
	bad=0 &&
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS OUTPUT "EXIT STATUS" FILES EXAMPLES "SEE ALSO"; do
		grep -qE "^\.SH \"?$s\"?$" "$MAN" || { echo "no section $s"; bad=1; }
	done &&
	test $bad = 0
'

test_expect_success '--version prints "profile VERSION" and exits 0' '
	"$PROFILE" --version >out 2>err &&
	test ! -s err &&
	test $(wc -l <out) -eq 1 &&
	grep -qxE "profile [0-9]+\.[0-9]+\.[0-9]+([-.+~][0-9A-Za-z.]+)?" out &&
	"$PROFILE" -V >out.short &&
	cmp out out.short
'

test_expect_success 'the version is the Makefile'"'"'s, and the man page'"'"'s footer' '
	v=$(sed -n "s/^VERSION *:*= *//p" "$PROFILE_TOP/Makefile") &&
	test -n "$v" &&
	echo "profile $v" >expect &&
	"$PROFILE" --version >out &&
	diff expect out &&
	{ grep -q "^\.TH PROFILE 8 \"[^\"]*\" \"profile $v\"" "$MAN" ||
		fail ".TH does not say profile $v"; }
'

test_expect_success '--help exits 0 and prints the usage on stdout only' '
	"$PROFILE" --help >out 2>err &&
	test ! -s err &&
	head -1 out | grep -q "^Usage: profile " &&
	"$PROFILE" -h >out.short 2>err &&
	test ! -s err &&
	cmp out out.short
'

test_expect_success 'usage errors exit 2 with a message on stderr only' '
	bad=0 &&
	for args in "--no-such-option" "-F 0" "-p 1 -L 1" "-U -K" "-F 99 -c 1000" "1 2"; do
		rc=0
		"$PROFILE" $args >out 2>err || rc=$?
		test $rc -eq 2 || { echo "profile $args: exit $rc, want 2"; bad=1; }
		test ! -s out || { echo "profile $args wrote to stdout"; bad=1; }
		test -s err || { echo "profile $args said nothing on stderr"; bad=1; }
	done &&
	test $bad = 0
'

test_done
