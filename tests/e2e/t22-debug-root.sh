#!/bin/bash
# Debug files under a process's own root (issue 27): nobody, in a user
# namespace of its own, chroots into a directory holding forged debug
# files (their .symtab names FORGED_BY_NOBODY_* at the real addresses) for
# python3.11, libc and a victim's binary, and maps those host files.  A
# whole-host root profile must name the victim's (daemon's) processes as
# it does without the attacker, whichever it sees first: root's own
# /usr/lib/debug comes first, and a debug file found in a process's root
# names the file for the processes of that view only.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3.11
# A directory nobody and daemon can reach (TRASH is private).
H=$(outside_dir /var/tmp)
chmod 755 "$H"
J=$H/jail

# forge DEBUG_FILE ID: a debug file for build-id ID in the jail, its
# function names prefixed.
forge() {
	local out=$J$(debug_path "$2")
	mkdir -p "$(dirname "$out")"
	objcopy --strip-debug --prefix-symbols=FORGED_BY_NOBODY_ "$1" "$out"
}

# The victim's own binary: root's, stripped, named by a debug file beside
# it (.gnu_debuglink), not by /usr/lib/debug.  The attacker's jail holds
# forged debug files for it, python3.11 and libc, by build-id.
setup() {
	[ -d "$J" ] && return 0
	libc=$(ldd "$PY" | awk '/libc.so/ { print $3 }')
	pyid=$(build_id "$PY") && cid=$(build_id "$libc") &&
	[ -r "$(debug_path "$pyid")" ] && [ -r "$(debug_path "$cid")" ] ||
		fail "no debug files for $PY and $libc (python3.11-dbg, libc6-dbg)"
	mkdir -p "$H/v"
	cp "$WORKLOADS/burn-dbg.debug" "$H/v/burnv.debug"
	objcopy --strip-all --add-gnu-debuglink="$H/v/burnv.debug" \
		"$WORKLOADS/burn-dbg.full" "$H/v/burnv"
	chmod 755 "$H/v" "$H/v/burnv"
	chmod 644 "$H/v/burnv.debug"
	cp "$PROFILE_TOP/tests/workloads/py/hot.py" "$H/hot.py"
	chmod 644 "$H/hot.py"
	forge "$(debug_path "$pyid")" "$pyid"
	forge "$(debug_path "$cid")" "$cid"
	forge "$WORKLOADS/burn-dbg.debug" "$(build_id "$H/v/burnv")"
	chown -R nobody "$J"
}

# The file offset of function NAME in burn-dbg.full (burnv's code).
func_offset() {
	local vaddr
	vaddr=$(nm "$WORKLOADS/burn-dbg.full" | awk -v f="$1" '$3 == f { print $1 }')
	readelf -lW "$WORKLOADS/burn-dbg.full" | "$PY" -c '
import sys
a = int(sys.argv[1], 16)
for l in sys.stdin:
    f = l.split()
    if f[:1] == ["LOAD"] and int(f[2], 16) <= a < int(f[2], 16) + int(f[4], 16):
        print(a - int(f[2], 16) + int(f[1], 16))
' "$vaddr"
}

# The attacker, SECONDS long: python3.11 as nobody, in its own user
# namespace, chrooted into the jail, with the victim's binary mapped; it
# runs burnv's func_b there (a leaf loop), so that its own samples show
# how its view names the file.
attack() {
	bg $NOBODY unshare -Ur "$PY" -c '
import ctypes, mmap, os, sys, time
jail, victim, off, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
with open("/proc/self/comm", "w") as f:
    f.write("attacker")
maps = open("/proc/self/maps")
fd = os.open(victim, os.O_RDONLY)
ino = os.fstat(fd).st_ino
os.chroot(jail)
os.chdir("/")
m = mmap.mmap(fd, 0, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC)
base = min(int(l.split("-")[0], 16) for l in maps if int(l.split()[4]) == ino)
func_b = ctypes.CFUNCTYPE(None, ctypes.c_ulong)(base + off)
print("attacker: in", flush=True)
end = time.time() + secs
while time.time() < end:
    func_b(100000)
' "$J" "$H/v/burnv" "$(func_offset func_b)" "$1" >att.out 2>&1
	wait_for att.out "^attacker: in" 5
}

# The victims, as daemon: python3.11 (hot.py) and the stripped binary.
victims() {
	bg $VICTIM "$PY" "$H/hot.py" "$1" victimpy >victims.out
	bg $VICTIM "$H/v/burnv" -n victimburn -d "$1" >/dev/null
	wait_for victims.out "^hot: running" 5
}

# profile_bg OUT SECONDS: a whole-host profile, once it samples.
profile_bg() {
	"$PROFILE" -v -F 499 -f "$2" >"$1" 2>"$1.err" &
	prof=$!
	wait_attached $prof
}

# What a run shows of the victims: "py whole named burn burnnamed forged":
# victimpy's samples, those from _start (its own or a forged one), those
# of them named through python3.11's and libc's debug files (run_mod and
# __libc_start_call_main are in no .dynsym), victimburn's samples and
# those in func_a or func_b, and the victims' samples with forged names.
measure() {
	echo "$(fsum "$1" "^victimpy;") $(fsum "$1" "^victimpy;(FORGED_BY_NOBODY_)?_start;")" \
	     "$(fsum "$1" "^victimpy;_start;__libc_start_main;__libc_start_call_main;.*;run_mod[.;]")" \
	     "$(fsum "$1" "^victimburn;") $(fsum "$1" "^victimburn;.*;func_[ab]( |;|$)")" \
	     "$(fsum "$1" "^victim[a-z]*;.*FORGED")"
}

# at_least A B C D WHAT: A/B >= 90% of C/D, the run without the attacker's.
at_least() {
	echo "$5: $1 of $2 ($3 of $4 alone)"
	[ $(($1 * 100 * $4)) -ge $(($3 * 90 * $2)) ] || fail "$5: fewer than alone"
}

# check OUT: the victims as whole and named as in the run without the
# attacker, and never by its names.
check() {
	read -r py whole named burn burnnamed forged <<<"$(measure "$1")"
	read -r bpy bwhole bnamed bburn bburnnamed _ <base.m
	echo "$1: $forged victim samples forged;" \
	     "$(fsum "$1" "^attacker;.*FORGED") of $(fsum "$1" "^attacker;") attacker samples forged"
	{ [ "$forged" = 0 ] || fail "the victims show the attacker's names:
$(grep "^victim" "$1" | grep FORGED | sort -t" " -k2 -n | tail -3)"; }
	{ ! grep FORGED "$1" | grep -v "^attacker;" | grep -q . || fail "forged names outside the attacker"; }
	{ [ "$py" -ge 40 ] && [ "$burn" -ge 40 ] || fail "too few victim samples"; }
	# Its own view is named by the debug files in its root, as a
	# container's are: the forged file was found, and used for it alone.
	{ [ "$(fsum "$1" "^attacker;.*;FORGED_BY_NOBODY_func_b( |;|$)")" -ge 20 ] ||
		fail "the attacker did not run burnv named by its own debug file: the test proves nothing:
$(grep "^attacker;" "$1" | sort -t" " -k2 -n | tail -3)"; }
	at_least "$named" "$whole" "$bnamed" "$bwhole" "victimpy: whole stacks named"
	at_least "$whole" "$py" "$bwhole" "$bpy" "victimpy: whole stacks" || {
		grep "^profile: unwind ends" "$1.err"
		grep "^victimpy;" "$1" | grep -v "^victimpy;_start;" | sort -t" " -k2 -n | tail -5
		false
	}
	at_least "$burnnamed" "$burn" "$bburnnamed" "$bburn" "victimburn: in func_a or func_b"
}

test_expect_success ROOT_BPF,USERS,USERNS,PY311,PY311_DEBUG_FILES,objcopy 'without the attacker: the victims named through the debug files' '
	setup &&
	victims 5 &&
	"$PROFILE" -F 499 -f 4 >base.folded 2>base.err &&
	measure base.folded >base.m &&
	read -r py whole named burn burnnamed forged <base.m &&
	echo "victimpy: $whole of $py from _start, $named of them named; victimburn: $burnnamed of $burn in func_a|b" &&
	{ [ "$py" -ge 40 ] && [ "$burn" -ge 40 ] || fail "too few victim samples"; } &&
	{ [ $((named * 10)) -ge $((whole * 9)) ] || fail "python3.11 and libc not named by their debug files"; } &&
	{ [ $((burnnamed * 10)) -ge $((burn * 9)) ] || fail "burnv not named by its debug link"; } &&
	cp base.m "$H/base.m"
'

test_expect_success ROOT_BPF,USERS,USERNS,PY311,PY311_DEBUG_FILES,objcopy 'attacker seen first: its forged debug files name no victim' '
	cp "$H/base.m" base.m &&
	attack 9 &&
	profile_bg first.folded 6 &&
	sleep 1 &&
	victims 5 &&
	wait $prof &&
	check first.folded
'

test_expect_success ROOT_BPF,USERS,USERNS,PY311,PY311_DEBUG_FILES,objcopy 'victims seen first: named as alone; the attacker'"'"'s own view by its own debug files' '
	cp "$H/base.m" base.m &&
	victims 7 &&
	profile_bg second.folded 5 &&
	sleep 1 &&
	attack 5 &&
	wait $prof &&
	check second.folded
'

test_done
