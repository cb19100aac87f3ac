#!/bin/bash
# -o on a shared host: profile runs as root, and the user nobody must not be
# able to make it overwrite a file through a planted symbolic link, or read
# the whole-host profile from a file it pre-created.  The output is a new
# root-owned 0600 file renamed over the target at the end; a failed run
# (BPF load failure, full disk, SIGKILL) keeps the old file byte for byte.
# And SIGHUP and SIGQUIT end a run as SIGTERM does: samples printed, exit 0.
#
# The kernel's fs.protected_symlinks and fs.protected_regular would block
# some of these attacks in a sticky directory (like /tmp) by themselves, so
# each attack is also made in a directory nobody owns, where they do not
# apply; the values are printed in the log.
. "$(dirname "$0")/lib.sh"

MNT=$TRASH/mnt			# the small tmpfs, unmounted at the end
BPFFS=$TRASH/bpffs		# a private bpffs for the wrong-type map
unmount() {
	mountpoint -q "$MNT" 2>/dev/null && umount "$MNT"
	mountpoint -q "$BPFFS" 2>/dev/null && umount "$BPFFS"
	cleanup
}
trap unmount EXIT

sysctl fs.protected_symlinks fs.protected_regular 2>/dev/null | sed 's/^/# /'

# A foreground run that hangs is killed after a minute (status 137).
run() { timeout -s KILL 60 "$@"; }

# attack_dir sticky|owned: a fresh directory outside $TRASH (which nobody
# cannot enter): mode 1777 owned by root like /tmp, or 0755 owned by nobody.
attack_dir() {
	local d
	d=$(outside_dir /tmp)
	if [ "$1" = sticky ]; then
		chmod 1777 "$d"
	else
		chown nobody:nogroup "$d" && chmod 0755 "$d"
	fi
	echo "$d"
}

# is_profile FILE: a regular file (not a link), root's, mode 0600, made of
# folded lines only, and holding some.  (Helpers return on the first
# failure: set -e does not hold in a function called inside an && chain.)
is_profile() {
	[ -f "$1" ] && [ ! -L "$1" ] || fail "$1 is not a regular file" || return 1
	stat -c "$1: %F %U:%G %a inode %i, %s bytes" "$1"
	[ "$(stat -c %U:%a "$1")" = root:600 ] || fail "$1 is not root's with mode 0600" || return 1
	[ "$(wc -l <"$1")" -gt 0 ] || fail "$1 holds no lines" || return 1
	[ -z "$(not_folded "$1")" ] ||
		{ not_folded "$1" | head -3; fail "$1 has lines that are not folded"; return 1; }
	[ -z "$(tail -c 1 "$1")" ] || fail "$1 does not end with a newline: cut short"
}

# no_temp DIR: no temporary file left in DIR.
no_temp() {
	! ls -A "$1" | grep -F ".profile-" || fail "a temporary file was left in $1"
}

# A profile of the host while burn runs, into $1: profile -F 49 -f 1 -o $1.
# On stderr, the summary line alone.
profile_to() {
	bg "$WORKLOADS/burn" -n outburn -d 5 >/dev/null
	run "$PROFILE" -F 49 -f -o "$1" 1 2>err || fail "exit $? writing $1" || return 1
	cat err
	[ "$(wc -l <err)" -eq 1 ] && grep -q "^profile: wrote $1: [0-9,]* samples, [0-9,]* distinct stacks, 0 lost$" err ||
		fail "unexpected stderr"
}

# --- 1. A symbolic link planted by nobody -------------------------------------

# symlink_attack sticky|owned: nobody points DIR/cpu.folded at a root file.
symlink_attack() {
	local d
	d=$(attack_dir "$1")
	printf 'root data, not to be overwritten\n' >victim
	cp victim victim.orig
	$NOBODY ln -s "$TRASH/victim" "$d/cpu.folded"
	ls -l "$d/cpu.folded"
	profile_to "$d/cpu.folded"
	cmp victim victim.orig || fail "the link's target was written"
	is_profile "$d/cpu.folded"
	no_temp "$d"
}

test_expect_success ROOT_BPF,CAPS 'a link nobody planted in a sticky dir is replaced, its target untouched' '
	symlink_attack sticky
'

test_expect_success ROOT_BPF,CAPS 'a link nobody planted in its own dir is replaced, its target untouched' '
	symlink_attack owned
'

# --- 2. A file pre-created 0666 by nobody -------------------------------------

precreate_attack() {
	local d ino
	d=$(attack_dir "$1")
	$NOBODY sh -c "umask 0 && echo planted >\"$d/cpu.folded\" && chmod 0666 \"$d/cpu.folded\""
	ino=$(stat -c %i "$d/cpu.folded")
	stat -c "before: %U:%G %a inode %i" "$d/cpu.folded"
	profile_to "$d/cpu.folded"
	is_profile "$d/cpu.folded"
	[ "$(stat -c %i "$d/cpu.folded")" != "$ino" ] || fail "the planted file was written into"
	! $NOBODY cat "$d/cpu.folded" >/dev/null || fail "nobody can read the profile"
	no_temp "$d"
}

test_expect_success ROOT_BPF,CAPS 'a 0666 file nobody made in a sticky dir: replaced by root 0600, nobody cannot read it' '
	precreate_attack sticky
'

test_expect_success ROOT_BPF,CAPS 'a 0666 file nobody made in its own dir: replaced by root 0600, nobody cannot read it' '
	precreate_attack owned
'

# --- 3. A new file ------------------------------------------------------------

test_expect_success ROOT_BPF 'a new -o file is 0600, even with umask 0' '
	(umask 0 && profile_to new.folded) &&
	is_profile new.folded && no_temp .
'

# --- 4. A failed run keeps the old file ---------------------------------------

# old_file PATH: a previous output at PATH, and a copy to compare with.
old_file() {
	printf 'old;func_a 7\nold;func_b 35\n' >"$1"
	chmod 0644 "$1"
	cp -p "$1" "$TRASH/old.orig"
}

# kept PATH: the old file, byte for byte, mode and all.
kept() {
	cmp "$1" "$TRASH/old.orig" || fail "the old file changed" || return 1
	[ "$(stat -c %a "$1")" = 644 ] || fail "the old file's mode changed"
}

test_expect_success ROOT_BPF 'BPF load failure (--cgroupmap of the wrong type): old file kept, no temporary file' '
	mkdir -p "$BPFFS" && mount -t bpf bpf "$BPFFS" &&
	bpftool map create "$BPFFS/arr" type array key 4 value 8 entries 4 name arr &&
	mkdir out && old_file out/cpu.folded &&
	rc=0 && run "$PROFILE" -F 49 -f --cgroupmap "$BPFFS/arr" -o out/cpu.folded 1 2>err || rc=$? &&
	cat err && echo "exit $rc" &&
	{ [ $rc -eq 1 ] || fail "exit $rc, not 1"; } &&
	{ grep -q "must be a hash map" err || fail "not the load failure expected"; } &&
	kept out/cpu.folded &&
	{ [ "$(ls -A out)" = cpu.folded ] || { ls -lA out; fail "out holds more than the old file"; }; }
'

test_expect_success ROOT_BPF 'full disk (a 64k tmpfs, filled): exit 1, one line, old file kept, no temporary file' '
	mkdir -p "$MNT" && mount -t tmpfs -o size=64k tmpfs "$MNT" &&
	old_file "$MNT/cpu.folded" &&
	{ dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null || :; } &&
	df -k "$MNT" | tail -1 &&
	bg "$WORKLOADS/burn" -n fullburn -d 5 >/dev/null &&
	rc=0 && run "$PROFILE" -F 999 -f -o "$MNT/cpu.folded" 1 2>err || rc=$? &&
	cat err && echo "exit $rc" &&
	{ [ $rc -eq 1 ] || fail "exit $rc, not 1"; } &&
	{ [ "$(wc -l <err)" -eq 1 ] || fail "not one line on stderr"; } &&
	{ grep -q "No space left on device" err || fail "the message does not say why"; } &&
	kept "$MNT/cpu.folded" &&
	rm "$MNT/fill" &&
	{ [ "$(ls -A "$MNT")" = cpu.folded ] || { ls -lA "$MNT"; fail "the tmpfs holds more than the old file"; }; } &&
	umount "$MNT"
'

test_expect_success ROOT_BPF 'SIGKILL mid-run: old file kept; only a recognisable 0600 temporary file is left' '
	bg "$WORKLOADS/burn" -n killburn -d 8 >/dev/null && pid=$! &&
	mkdir kill && old_file kill/cpu.folded &&
	bg "$PROFILE" -F 99 -f -p $pid -o kill/cpu.folded 2>err && prof=$! &&
	wait_attached $prof && sleep 1 &&
	kill -9 $prof && { wait $prof || :; } &&
	kept kill/cpu.folded &&
	ls -lA kill &&
	left=$(ls -A kill | grep -v -x cpu.folded || :) &&
	echo "left behind: ${left:-nothing}" &&
	for f in $left; do
		case $f in .cpu.folded.profile-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]) ;;
		*) fail "unexpected file $f" ;; esac
		[ "$(stat -c %U:%a "kill/$f")" = root:600 ] || fail "$f is not root 0600"
	done
'

# --- 5. SIGHUP, SIGQUIT (and SIGTERM, with -o) end a run like SIGTERM ---------

# wait_exit PID SECONDS: wait for a background profiler to end, its status
# in RC; one still there after SECONDS (it ignored the signal, as a
# background job in a script ignores SIGQUIT unless it sets a handler) is
# killed, and the test fails.
wait_exit() {
	for _ in $(seq $(($2 * 10))); do
		kill -0 $1 2>/dev/null || break
		[ "$(awk '{ print $3 }' /proc/$1/stat 2>/dev/null)" != Z ] || break
		sleep 0.1
	done
	if kill -0 $1 2>/dev/null && [ "$(awk '{ print $3 }' /proc/$1/stat 2>/dev/null)" != Z ]; then
		kill -9 $1
		wait $1 || :
		fail "profile $1 still running $2 s after the signal"
		return 1
	fi
	RC=0; wait $1 || RC=$?
}

# interrupt SIGNAL: profile a burn with no duration, signal it after 1 s:
# exit 0, burn's samples printed; with -o, the file replaced and no temp.
interrupt() {
	local pid prof prof_o rc a b d=sig-$1 out=out-$1
	bg "$WORKLOADS/burn" -n sigburn -d 8 >/dev/null
	pid=$!
	mkdir "$d"
	old_file "$d/cpu.folded"
	bg "$PROFILE" -F 99 -f -p $pid >"$out" 2>err
	prof=$!
	bg "$PROFILE" -F 99 -f -p $pid -o "$d/cpu.folded" 2>err.o
	prof_o=$!
	wait_attached $prof
	wait_attached $prof_o
	sleep 1
	kill -"$1" $prof $prof_o
	wait_exit $prof 20
	rc=$RC
	cat err
	a=$(fsum "$out" ";func_a( |;)") b=$(fsum "$out" ";func_b( |;)")
	echo "SIG$1 -> exit $rc; func_a=$a func_b=$b total=$(fsum "$out" "")"
	[ $rc -eq 0 ] || fail "exit $rc after SIG$1"
	[ "$a" -gt 0 ] && [ "$b" -gt "$a" ] || fail "burn's func_a/func_b samples were not printed"
	[ -z "$(not_folded "$out")" ] || fail "lines that are not folded"
	wait_exit $prof_o 20
	rc=$RC
	cat err.o
	[ $rc -eq 0 ] || fail "-o: exit $rc after SIG$1"
	is_profile "$d/cpu.folded"
	[ "$(fsum "$d/cpu.folded" ";func_b( |;)")" -gt 0 ] || fail "-o: no func_b samples"
	no_temp "$d"
}

test_expect_success ROOT_BPF 'SIGHUP, no duration: samples so far printed, exit 0' 'interrupt HUP'
test_expect_success ROOT_BPF 'SIGQUIT, no duration: samples so far printed, exit 0' 'interrupt QUIT'
test_expect_success ROOT_BPF 'SIGTERM with -o: the file replaced, exit 0' 'interrupt TERM'

# --- 6. Per-interval files ----------------------------------------------------

test_expect_success ROOT_BPF 'per-interval files (-i 1, a %H%M%S pattern): each 0600, complete' '
	bg "$WORKLOADS/burn" -n ivburn -d 8 >/dev/null && pid=$! &&
	mkdir iv &&
	run "$PROFILE" -F 99 -f -p $pid -i 1 -o "iv/cpu-%H%M%S.folded" 3 2>err &&
	cat err && ls -lA iv &&
	n=$(ls iv | grep -c "^cpu-[0-9]*\.folded$") &&
	{ [ "$n" -ge 3 ] || fail "$n interval files, expected 3 or 4"; } &&
	for f in iv/cpu-*.folded; do is_profile "$f"; done &&
	no_temp iv
'

# A fixed name in the pattern: every interval replaces the same file, and
# a link nobody planted there is replaced by the first one.
test_expect_success ROOT_BPF,CAPS 'per-interval files: a link nobody planted at the name is replaced' '
	d=$(attack_dir sticky) &&
	y=$(date +%Y) &&
	printf "root data\n" >victim && cp victim victim.orig &&
	$NOBODY ln -s "$TRASH/victim" "$d/cpu-$y.folded" &&
	bg "$WORKLOADS/burn" -n ivburn -d 8 >/dev/null && pid=$! &&
	run "$PROFILE" -F 99 -f -p $pid -i 1 -o "$d/cpu-%Y.folded" 2 2>err &&
	cat err &&
	cmp victim victim.orig &&
	is_profile "$d/cpu-$y.folded" && no_temp "$d"
'

test_expect_success ROOT_BPF 'a bad -o directory (a file or a pattern) fails at once, in one line' '
	for o in /nonexistent-dir/cpu.folded "/nonexistent-dir/cpu-%S.folded"; do
		rc=0; run "$PROFILE" -F 49 -f -i 1 -o "$o" 1 2>err || rc=$?
		cat err
		[ $rc -eq 1 ] || fail "-o $o: exit $rc"
		[ "$(wc -l <err)" -eq 1 ] || fail "-o $o: not one line"
		grep -q "^profile: cannot open .* for writing: No such file or directory; check the -o path$" err ||
			fail "-o $o: not the message expected"
	done
'

test_done
