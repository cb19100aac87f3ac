#!/bin/bash
# debuginfod (issue 17): the debug file of a stripped binary fetched from
# the servers in DEBUGINFOD_URLS while sampling runs, through libdebuginfod
# and its cache; and every way a server can fail (down, silent, lying,
# cut short, too big) costs at most one warning, never the profile, never
# more than the timeout, and leaves nothing in the cache a later run would
# trust.
#
# The workload is burn-stripped (make workloads): burn with a build-id and
# no .symtab, no .gnu_debuglink, no MiniDebugInfo, so that func_a and
# func_b can be named only through its debug file burn-dbg.debug.
#
# The whole file runs in a network namespace of its own where only
# loopback exists (debuginfod-lib.sh).  The servers are Debian's debuginfod
# (0.188) and tests/e2e/helpers/fakedebuginfod.py.
. "$(dirname "$0")/debuginfod-lib.sh"

# ---- What profile prints: adjust here -------------------------------------
# A failed lookup: exactly one line per server and reason on stderr, which
# starts with WARN and contains the server's URL, OBJECT and the reason
# (matched without regard to case).
WARN='profile: debuginfod: '
OBJECT=burn-stripped
REASON_DOWN='connection refused'	# nothing listens on the port
REASON_HANG='timed out'			# connected, never answered
REASON_WRONGID='build-id'		# an ELF file with another build-id
REASON_TRUNCATED='truncated'		# the first half of the debug file
REASON_HUGE='file too large'			# Content-Length: 8 GiB, sent slowly
# -v: the line of debuginfod counters, and how it reads after one lookup
# that fetched one file (ERE).
VERBOSE_LINE='^(profile: )?debuginfod: '
VERBOSE_ONE_FETCHED='(1 lookups?|lookups:? 1)([^0-9].*)?(1 fetched|fetched:? 1)([^0-9]|$)'

# ---- Timing -----------------------------------------------------------------
# The faults run with DEBUGINFOD_TIMEOUT=$TIMEOUT and --debuginfod-wait=$WAIT,
# for FAULT_SECS.  libdebuginfod 0.188 tries a transfer that times out 3
# times (DEBUGINFOD_RETRY_LIMIT, default 2): a silent server costs 3 x 2 s
# plus 0.6 s (measured with debuginfod-find: 6.6 s), so FAULT_SECS is long
# enough for every lookup to have failed before the report, and the
# warning is there to be counted.  SLACK_MS: what a run costs beyond its
# duration (loading, report, exit: 50-80 ms measured on this 2-CPU VM,
# profile -F 999 -p on a burn) with room for a busy host.
TIMEOUT=2
WAIT=2
FAULT_SECS=8
SLACK_MS=500

# Nothing from the caller's environment: no servers, no cache in ~/.cache.
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT DEBUGINFOD_RETRY_LIMIT DEBUGINFOD_MAXSIZE \
	DEBUGINFOD_MAXTIME DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
export DEBUGINFOD_CACHE_PATH=$TRASH/cache.default
ID=$(readelf -n "$WORKLOADS/burn-stripped" 2>/dev/null | awk '/Build ID:/ { print $3 }')

# start_burn [BURN OPTIONS]: burn-stripped in the background, its pid in
# BURN_PID, once it has started.
start_burn() {
	bg "$WORKLOADS/burn-stripped" "$@" >/dev/null
	BURN_PID=$!
	sleep 0.2
}

# run NAME SECS [OPTIONS...]: profile BURN_PID for SECS at 999 Hz, user
# stacks, folded, into NAME.folded and NAME.err; its wall time in WALL_MS.
run() {
	local name=$1 secs=$2 t0 rc=0
	shift 2
	t0=$(date +%s%N)
	"$PROFILE" -F 999 -f -U -p "$BURN_PID" "$@" "$secs" >"$name.folded" 2>"$name.err" || rc=$?
	WALL_MS=$((($(date +%s%N) - t0) / 1000000))
	echo "$name: profile $* $secs (DEBUGINFOD_URLS=${DEBUGINFOD_URLS-unset}):" \
		"exit $rc in $WALL_MS ms; $(fsum "$name.folded" "^$OBJECT;") samples," \
		"func_a $(fsum "$name.folded" ";func_a( |;)"), func_b $(fsum "$name.folded" ";func_b( |;)")"
	sed "s/^/  $name.err: /" "$name.err"
	[ "$rc" -eq 0 ] || fail "profile exited with status $rc"
}

# start_debuginfod DIR: the same, and it serves burn-dbg.debug for ID.
start_debuginfod() {
	start_debuginfod_dir "$1" &&
	curl -s -o served "http://127.0.0.1:$DI_PORT/buildid/$ID/debuginfo" &&
		cmp served "$WORKLOADS/burn-dbg.debug" ||
		fail "debuginfod does not serve burn-dbg.debug for $ID"
}

# The lines of FILE that are warnings of the debuginfod lookups.
warnings() { awk -v w="$WARN" 'index($0, w) == 1' "$1"; }

# has LINE TEXT WHAT: LINE contains TEXT (any case), or fail saying WHAT.
has() { printf '%s\n' "$1" | grep -q -i -F -- "$2" || fail "the warning does not give $3 ($2): $1"; }

# Nothing in the cache for ID that a later run would trust: after a fault,
# no entry at all (no answer, no temporary file, and not the empty
# "debuginfo" that libdebuginfod 0.188 writes when a lookup is cut short,
# which it would take for "not found" for cache_miss_s, 600 s).  With
# "404", the library's own empty entry for a real "not found" may stay.
# Prints what the cache holds.
cache_holds_nothing() {
	local f=$DEBUGINFOD_CACHE_PATH/$ID/debuginfo left
	echo "cache:" && (cd "$DEBUGINFOD_CACHE_PATH" && find . -type f -printf '  %p %s bytes\n')
	if [ "${1:-}" = 404 ]; then
		[ ! -s "$f" ] || fail "the cache kept $f ($(stat -c %s "$f") bytes): a later run would use it"
		return
	fi
	left=$(find "$DEBUGINFOD_CACHE_PATH" -path "*/$ID*" -print)
	[ -z "$left" ] || fail "the fault left in the cache: $left"
}

# fault NAME REASON FAKE-ARGS...: a FAULT_SECS profile of burn-stripped
# against a fakedebuginfod.py started with FAKE-ARGS (none: nothing listens
# on URL); then every check of a failed lookup.
fault() {
	local name=$1 reason=$2 all w limit
	shift 2
	if [ $# -gt 0 ]; then
		fake "$@" || return 1
	else
		URL=http://127.0.0.1:1
		! (exec 3<>/dev/tcp/127.0.0.1/1) 2>/dev/null || { fail "something listens on $URL"; return 1; }
	fi
	new_cache &&
	start_burn -d $((FAULT_SECS + 6)) &&
	DEBUGINFOD_URLS=$URL DEBUGINFOD_TIMEOUT=$TIMEOUT run "$name" $FAULT_SECS --debuginfod-wait=$WAIT &&
	echo "requests to $URL: $(requests)" &&
	all=$(fsum "$name.folded" "^$OBJECT;") &&
	{ [ "$all" -ge $((FAULT_SECS * 999 / 2)) ] || fail "the profile lacks burn's samples ($all)"; } &&
	{ [ $# -eq 0 ] || [ "$(requests)" -ge 1 ] || fail "the server was never asked"; } &&
	w=$(warnings "$name.err") &&
	{ [ "$(printf '%s' "$w" | grep -c .)" -eq 1 ] || fail "want one warning line, got: [$w]"; } &&
	has "$w" "$URL" "the server" && has "$w" "$reason" "the reason" && has "$w" "$OBJECT" "the object" &&
	limit=$(((FAULT_SECS + TIMEOUT + 1) * 1000 + SLACK_MS)) &&
	{ [ "$WALL_MS" -le "$limit" ] || fail "the run took $WALL_MS ms, over $limit"; } &&
	{ ! grep -E -q ";func_a( |;)" "$name.folded" || fail "func_a named through a rejected file"; } &&
	cache_holds_nothing
}

# a copy of burn-dbg.debug whose build-id differs in its first byte: only
# the build-id check can refuse it.
wrong_id_debug() {
	python3 -c '
import sys
data, bid = open(sys.argv[1], "rb").read(), bytes.fromhex(sys.argv[2])
assert data.count(bid) == 1
other = bytes([bid[0] ^ 0xff]) + bid[1:]
open(sys.argv[3], "wb").write(data.replace(bid, other))' "$WORKLOADS/burn-dbg.debug" "$ID" "$1"
}

# real_named: Debian's debuginfod serves burn-dbg.debug, and a 5 s profile
# of burn-stripped -t 2 asks it (-v): real.folded, real.err; the cache it
# filled is $TRASH/cache.real.  Made once, by the first test that asks.
real_named() {
	[ -s "$TRASH/real.folded" ] && return 0
	rm -rf "$TRASH/srv" "$TRASH/cache.real" &&
	mkdir "$TRASH/srv" && cp "$WORKLOADS/burn-dbg.debug" "$TRASH/srv/" &&
	start_debuginfod "$TRASH/srv" &&
	start_burn -t 2 -d 9 &&
	DEBUGINFOD_CACHE_PATH=$TRASH/cache.real DEBUGINFOD_URLS=http://127.0.0.1:$DI_PORT \
		run real.tmp 5 -v || return 1
	kill "$DI_PID" "$BURN_PID"
	wait "$DI_PID" 2>/dev/null
	mv "$TRASH/real.tmp.err" "$TRASH/real.err" &&
	mv "$TRASH/real.tmp.folded" "$TRASH/real.folded"
}

# check_named FILE: func_a and func_b name 90% of burn's samples, 4000 or
# more (5 s of 2 threads: 10,000 on an idle host), and func_b/func_a is 3.0
# within 10% (as t01).
check_named() {
	local a b all r
	a=$(fsum "$1" ";func_a( |;)") && b=$(fsum "$1" ";func_b( |;)") &&
	all=$(fsum "$1" "^$OBJECT;") && r=$(ratio "$b" "$a") &&
	echo "$1: func_a=$a func_b=$b of $all, func_b/func_a=$r" &&
	{ [ "$all" -ge 4000 ] || fail "too few samples"; } &&
	{ [ $(((a + b) * 10)) -ge $((all * 9)) ] || fail "func_a and func_b not named"; } &&
	{ in_range "$r" 2.7 3.3 || fail "func_b/func_a=$r, not 3.0 +-10%"; }
}

test_expect_success LOOPBACK_ONLY 'this file runs where only loopback exists' '
	ip -o link show &&
	{ [ -n "$ID" ] || fail "burn-stripped has no build-id"; } &&
	{ ! readelf -S "$WORKLOADS/burn-stripped" | grep -E -q "\.symtab|\.gnu_debuglink|\.gnu_debugdata" ||
		fail "burn-stripped has a local source of names"; } &&
	{ ! ip -o route show | grep -q . || fail "a route: $(ip -o route show)"; }
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY,debuginfod,curl 'Debian'"'"'s debuginfod names burn-stripped: func_b/func_a = 3.0 +-10%, -v counts the lookup' '
	real_named &&
	check_named real.folded &&
	{ [ -z "$(warnings real.err | grep -v -E "$VERBOSE_LINE.*lookups")" ] || fail "a warning"; } &&
	grep -E "$VERBOSE_LINE" real.err &&
	{ grep -E "$VERBOSE_LINE" real.err | grep -E -q "$VERBOSE_ONE_FETCHED" ||
		fail "-v does not count 1 lookup, 1 fetched"; } &&
	cmp "$TRASH/cache.real/$ID/debuginfo" "$WORKLOADS/burn-dbg.debug"
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY 'the same without DEBUGINFOD_URLS: func_a and func_b unnamed' '
	new_cache &&
	start_burn -t 2 -d 5 &&
	run nourl 2 &&
	all=$(fsum nourl.folded "^$OBJECT;") &&
	{ [ "$all" -ge 2000 ] || fail "too few samples"; } &&
	{ ! grep -E -q ";func_[ab]( |;)" nourl.folded || fail "named with no server: the test above proves nothing"; }
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY,debuginfod,curl 'the server stopped, a second run is served from the cache' '
	real_named &&
	{ ! curl -s "http://127.0.0.1:$DI_PORT/metrics" >/dev/null || fail "debuginfod still runs"; } &&
	start_burn -t 2 -d 9 &&
	DEBUGINFOD_CACHE_PATH=$TRASH/cache.real DEBUGINFOD_URLS=http://127.0.0.1:$DI_PORT run cached 5 &&
	check_named cached.folded &&
	{ [ -z "$(warnings cached.err)" ] || fail "a warning: the server was asked"; }
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY 'server down: one warning, the profile, unnamed, no wait, nothing cached' '
	fault down "$REASON_DOWN"
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY 'server silent: one warning, the profile, unnamed, no wait, nothing cached' '
	fault hang "$REASON_HANG" hang
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY 'another build-id: one warning, the profile, unnamed, no wait, nothing cached' '
	wrong_id_debug wrong.debug &&
	readelf -n wrong.debug 2>/dev/null | grep "Build ID" &&
	fault wrongid "$REASON_WRONGID" wrongid "$TRASH/wrong.debug"
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY 'a truncated file: one warning, the profile, unnamed, no wait, nothing cached' '
	fault truncated "$REASON_TRUNCATED" truncated "$WORKLOADS/burn-dbg.debug"
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY 'an 8 GiB answer: one warning, the profile, unnamed, no wait, nothing cached' '
	fault huge "$REASON_HUGE" huge
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY 'not found (404): no warning, the profile, unnamed, nothing cached' '
	mkdir -p emptydir &&
	fake ok "$TRASH/emptydir" &&
	new_cache &&
	start_burn -d 6 &&
	DEBUGINFOD_URLS=$URL DEBUGINFOD_TIMEOUT=$TIMEOUT run notfound 2 --debuginfod-wait=$WAIT &&
	cat requests &&
	{ grep -q "^GET /buildid/$ID/debuginfo$" requests || fail "the server was never asked"; } &&
	{ [ "$(fsum notfound.folded "^$OBJECT;")" -ge 1000 ] || fail "too few samples"; } &&
	{ [ -z "$(warnings notfound.err)" ] || fail "a 404 is not worth a warning"; } &&
	{ [ "$WALL_MS" -le $((2000 + SLACK_MS)) ] || fail "the run took $WALL_MS ms"; } &&
	{ ! grep -E -q ";func_a( |;)" notfound.folded || fail "func_a named"; } &&
	cache_holds_nothing 404
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY,strace 'no DEBUGINFOD_URLS, unset or empty: no inet socket connected' '
	new_cache &&
	strace -f -e trace=connect -o control.log python3 -c "
import socket
try: socket.create_connection((\"127.0.0.1\", 1))
except OSError: pass" &&
	{ grep -q "sa_family=AF_INET" control.log || fail "strace does not show a connect(): $(cat control.log)"; } &&
	start_burn -d 8 &&
	# LeakSanitizer cannot run under ptrace (make check-asan).
	export ASAN_OPTIONS=detect_leaks=0 &&
	strace -f --seccomp-bpf -e trace=connect -o unset.log "$PROFILE" -F 999 -f -U -p $BURN_PID 2 >unset.folded 2>unset.err &&
	DEBUGINFOD_URLS= strace -f --seccomp-bpf -e trace=connect -o empty.log \
		"$PROFILE" -F 999 -f -U -p $BURN_PID 2 >empty.folded 2>empty.err &&
	for r in unset empty; do
		echo "$r: $(fsum $r.folded "^$OBJECT;") samples; connect() calls:" &&
		{ grep connect $r.log || :; } &&
		{ [ "$(fsum $r.folded "^$OBJECT;")" -ge 1000 ] || fail "$r: too few samples"; } &&
		{ ! grep -E "sa_family=AF_INET6?[,}]" $r.log || fail "$r: an inet connect()"; } || exit 1
	done
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY '--debuginfod=off: the server gets no request (and =auto asks it)' '
	mkdir -p okdir && cp "$WORKLOADS/burn-dbg.debug" "okdir/$ID.debug" &&
	fake ok "$TRASH/okdir" &&
	new_cache &&
	start_burn -d 8 &&
	DEBUGINFOD_URLS=$URL run off 2 --debuginfod=off &&
	n=$(requests) && echo "requests with off: $n" &&
	{ [ "$n" -eq 0 ] || fail "--debuginfod=off asked the server: $(cat requests)"; } &&
	{ ! grep -E -q ";func_a( |;)" off.folded || fail "named with off"; } &&
	new_cache &&
	DEBUGINFOD_URLS=$URL run auto 2 --debuginfod=auto &&
	echo "requests with auto: $(requests)" &&
	{ [ "$(requests)" -ge 1 ] || fail "--debuginfod=auto did not ask"; } &&
	{ grep -E -q ";func_a( |;)" auto.folded || fail "auto: func_a unnamed"; }
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY 'Ctrl-C while a lookup hangs: profile ends within 1.5 s and prints' '
	fake hang &&
	new_cache &&
	start_burn -d 30 &&
	{ DEBUGINFOD_URLS=$URL DEBUGINFOD_TIMEOUT=30 "$PROFILE" -F 999 -f -U -p $BURN_PID \
		--debuginfod-wait=30 >int.folded 2>int.err & prof=$!; } &&
	wait_attached $prof &&
	wait_for requests "^GET /buildid/$ID/debuginfo" 10 &&
	sleep 1 &&
	{ kill -0 $prof 2>/dev/null || fail "profile ended before the signal: $(cat int.err)"; } &&
	t0=$(date +%s%N) && kill -INT $prof &&
	{ wait $prof && rc=0 || rc=$?; } &&
	ms=$((($(date +%s%N) - t0) / 1000000)) &&
	all=$(fsum int.folded "^$OBJECT;") &&
	cat int.err &&
	echo "SIGINT -> exit $rc after $ms ms; $all samples" &&
	{ [ "$rc" -eq 0 ] || fail "exit status $rc"; } &&
	{ [ "$ms" -le 1500 ] || fail "$ms ms to end after SIGINT"; } &&
	{ [ "$all" -ge 500 ] || fail "the samples so far were not printed"; }
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY 'a run shorter than the wait waits for a silent server until the wait, no longer' '
	fake hang &&
	new_cache &&
	start_burn -d 10 &&
	DEBUGINFOD_URLS=$URL DEBUGINFOD_TIMEOUT=30 run short 1 --debuginfod-wait=3 &&
	w=$(warnings short.err) &&
	{ [ "$(printf "%s" "$w" | grep -c .)" -eq 1 ] || fail "want one warning line, got: [$w]"; } &&
	has "$w" "no answer within 3 s" "the reason" &&
	echo "1 s run, wait 3 s: $WALL_MS ms" &&
	{ [ "$WALL_MS" -ge 2500 ] || fail "did not wait for the lookup"; } &&
	{ [ "$WALL_MS" -le $((3000 + 1000 + SLACK_MS)) ] || fail "waited past the wait + 1 s"; } &&
	cache_holds_nothing
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY,script 'on a terminal, the wait shows files, MiB and seconds; not without one' '
	fake hang &&
	new_cache &&
	start_burn -d 10 &&
	DEBUGINFOD_URLS=$URL DEBUGINFOD_TIMEOUT=30 script -q -e -c \
		"$PROFILE -F 99 -f -U -p $BURN_PID --debuginfod-wait=2 1 >tty.folded" tty.log >/dev/null &&
	tr "\r" "\n" <tty.log | grep "debuginfod: " | tail -3 &&
	{ tr "\r" "\n" <tty.log | grep -E -q "^profile: debuginfod: 0 of 1 debug files, 0\.0 MiB, [0-9.]+ s" ||
		fail "no progress line on the terminal"; } &&
	new_cache &&
	DEBUGINFOD_URLS=$URL DEBUGINFOD_TIMEOUT=30 run notty 1 --debuginfod-wait=2 &&
	{ ! grep -q "debug files, " notty.err || fail "progress without a terminal"; }
'

# A stripped binary whose .dynsym names its frames (linked -rdynamic) with
# thousands of distinct stacks: the run's prefetch names them from .dynsym
# while sampling, before the debug file is merged at the report, which
# replaces the file's names.  Every frame must still read as the
# unstripped build names it.
test_expect_success ROOT_BPF,LOOPBACK_ONLY 'frames named from .dynsym before the debug file came keep their names' '
	msid=$(readelf -n "$WORKLOADS/manystacks-dyn-stripped" | awk "/Build ID:/ { print \$3 }") &&
	mkdir -p msdir && cp "$WORKLOADS/manystacks-dyn.debug" "msdir/$msid.debug" &&
	fake ok "$TRASH/msdir" &&
	new_cache &&
	bg "$WORKLOADS/manystacks-dyn-stripped" -D 6 -t 2 -d 10 >/dev/null &&
	BURN_PID=$! && sleep 0.2 &&
	DEBUGINFOD_URLS=$URL run dyn 4 -v &&
	stacks=$(grep -c . dyn.folded) &&
	grep "^profile: debuginfod:" dyn.err &&
	{ [ "$stacks" -ge 3000 ] || fail "$stacks stacks: too few for a prefetch"; } &&
	nm "$WORKLOADS/manystacks-dyn.full" | awk "\$2 ~ /[tTwW]/ { print \$3 }" | sort -u >names.full &&
	awk "/^manystacks-dyn/ { sub(/ [0-9]+\$/, \"\"); n = split(\$0, f, \";\"); for (i = 2; i <= n; i++) print f[i] }" dyn.folded |
		sort | uniq -c | sort -rn >names.seen &&
	head -12 names.seen &&
	# The frames of libc (libc6-dbg names them) are not the workload ones.
	awk "{ print \$2 }" names.seen | grep -v -x -F -f names.full -e "[unknown]" \
		-e start_thread -e clone3 -e __libc_start_call_main -e __libc_start_main >names.bad || : &&
	{ [ ! -s names.bad ] || fail "names no build has: $(head -5 names.bad | tr "\n" " ")"; } &&
	{ ! grep -q ";;" dyn.folded || fail "empty names"; } &&
	{ grep -q "^manystacks-dyn.*;f7;" dyn.folded || fail "f7 never named"; }
'

# named_share FILE: the share of the user frames of FILE (folded, -U)
# that have a name, weighted by samples, in percent.
named_share() {
	awk '{ n = $NF; $NF = ""; k = split($0, f, ";")
	       for (i = 2; i <= k; i++) { all += n; if (f[i] != "[unknown] " && f[i] != "[unknown]") named += n } }
	     END { printf "%.1f\n", all ? 100 * named / all : 0 }' "$1"
}

# Debian's own binaries: python3.11 and the libraries it maps (libc,
# libcrypto, its extension modules) have their debug files in Debian's
# python3.11-dbg and libc6-dbg (scripts/install-deps), under
# /usr/lib/debug.  Hidden by a mount in a private mount namespace, they are
# served by Debian's debuginfod instead: the frames named must be as many.
test_expect_success ROOT_BPF,LOOPBACK_ONLY,PY311D,debuginfod,curl 'Debian'"'"'s python3.11: as many frames named through debuginfod as with /usr/lib/debug' '
	export PROFILE PROFILE_TOP &&
	cp -rL /usr/lib/debug/.build-id debugsrv &&
	cat >deb.sh <<-\EOF &&
	set -eu
	mode=$1 out=$2
	/usr/bin/python3.11 "$PROFILE_TOP/tests/workloads/py/mixed.py" 6 >/dev/null &
	py=$!
	sleep 0.5
	[ "$mode" = local ] || mount -t tmpfs none /usr/lib/debug
	"$PROFILE" -F 499 -f -U --python=off -p $py 3 >"$out" 2>"$out.err"
	kill $py 2>/dev/null || :
	wait $py 2>/dev/null || :
	EOF
	bash deb.sh local deb-local.folded &&
	unshare -m -- bash deb.sh none deb-none.folded &&
	start_debuginfod_dir debugsrv &&
	new_cache &&
	DEBUGINFOD_URLS=http://127.0.0.1:$DI_PORT unshare -m -- bash deb.sh fetched deb-fetched.folded &&
	kill "$DI_PID" && wait "$DI_PID" 2>/dev/null;
	l=$(named_share deb-local.folded) && n=$(named_share deb-none.folded) &&
	f=$(named_share deb-fetched.folded) &&
	echo "python3.11 user frames named: local debug files $l%, none $n%, through debuginfod $f%" &&
	cat deb-fetched.folded.err &&
	{ [ -z "$(warnings deb-fetched.folded.err)" ] || fail "a warning"; } &&
	{ in_range "$n" 0 "$(awk -v l="$l" "BEGIN { print l - 20 }")" || fail "hiding /usr/lib/debug named as many: the test proves nothing"; } &&
	{ in_range "$f" "$(awk -v l="$l" "BEGIN { print l - 2 }")" 100 || fail "$f% named through debuginfod, against $l% with the local files"; }
'

test_expect_success ROOT_BPF,LOOPBACK_ONLY 'a lookup that hangs costs no samples: within the noise of two runs without' '
	fake hang &&
	new_cache &&
	start_burn -d 20 &&
	run base1 3 &&
	DEBUGINFOD_URLS=$URL DEBUGINFOD_TIMEOUT=30 run hung 3 --debuginfod-wait=1 &&
	run base2 3 &&
	echo "requests: $(requests)" &&
	{ [ "$(requests)" -ge 1 ] || fail "the lookup never reached the server"; } &&
	b1=$(fsum base1.folded "^$OBJECT;") && b2=$(fsum base2.folded "^$OBJECT;") &&
	h=$(fsum hung.folded "^$OBJECT;") &&
	noise=$((b1 > b2 ? b1 - b2 : b2 - b1)) &&
	floor=$(((b1 + b2) / 200)) &&
	allowed=$((noise > floor ? noise : floor)) &&
	low=$((b1 < b2 ? b1 : b2)) &&
	echo "samples: without a server $b1 and $b2 (noise $noise), with a lookup hanging $h; allowed below $low: $allowed" &&
	{ [ "$h" -ge $((low - allowed)) ] || fail "$h samples with the lookup hanging, under $((low - allowed))"; }
'

test_done
