#!/bin/bash
# The profiler inside a PID namespace: -p takes and prints the namespace's
# pids, and a whole-namespace profile leaves out the tasks outside it (they
# count as filtered).
. "$(dirname "$0")/lib.sh"

reap() {
	for p in "${BG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || :; done
	wait 2>/dev/null || :
	true
}

counter() { sed -n "s/^profile: samples: .*$1 \\([0-9]*\\).*/\\1/p" "$2"; }

# Run a script in a new PID namespace with its own /proc; $W, $P and $D
# (the scratch directory) are set for it.
in_pidns() {
	W=$WORKLOADS P=$PROFILE D=$PWD unshare --pid --fork --mount-proc sh -c "$1"
}

test_expect_success ROOT_BPF '-p inside a PID namespace: samples, printed under the namespace pid' '
	trap reap EXIT &&
	{ in_pidns '\''
		"$W/burn" -n nsburn -d 5 >/dev/null & b=$!
		sleep 0.3
		echo $b >"$D/nspid"
		"$P" -F 199 -p $b 2 >"$D/plain" 2>"$D/err"; echo $? >"$D/rc"
		"$P" -F 199 -f -p $b 1 >"$D/folded" 2>"$D/ferr"; echo $? >>"$D/rc"
		kill $b
	'\'' & ns=$!; } &&
	sleep 0.3 && host=$(pgrep -x nsburn) &&
	wait $ns &&
	cat err ferr &&
	nspid=$(cat nspid) &&
	echo "burn: pid $nspid in the namespace, $host on the host" &&
	{ [ "$(cat rc)" = "0
0" ] || fail "exit statuses $(cat rc)"; } &&
	{ [ "$nspid" -le 5 ] && [ "$nspid" != "$host" ] || fail "not a fresh PID namespace"; } &&
	echo "Sampling at 199 Hertz of PID $nspid by user + kernel stack for 2 secs." >expect &&
	head -1 plain >header && diff expect header &&
	n=$(awk "/^        [0-9]+\$/ { n += \$1 } END { print n + 0 }" plain) &&
	echo "$n samples" &&
	{ [ "$n" -ge 100 ] || fail "too few samples: $n"; } &&
	{ grep -q -x "    func_b" plain || fail "no func_b frame"; } &&
	{ ! grep "^    -    " plain | grep -v -x "    -                nsburn ($nspid)" ||
		fail "records not printed as nsburn ($nspid)"; } &&
	{ ! grep -q "($host)" plain || fail "the host pid $host was printed"; } &&
	{ [ "$(fsum folded "^nsburn;.*;func_b ")" -ge 20 ] || fail "folded: no nsburn;...;func_b"; }
'

test_expect_success ROOT_BPF 'whole-namespace profile: nothing from outside, which counts as filtered' '
	trap reap EXIT &&
	bg "$WORKLOADS/burn" -n hostburn -d 5 >/dev/null && outside=$! &&
	in_pidns '\''
		"$W/burn" -n nsburn2 -d 4 >/dev/null & b=$!
		sleep 0.3
		echo $b >"$D/nspid"
		"$P" -F 199 -v 2 >"$D/plain" 2>"$D/err"; echo $? >"$D/rc"
		kill $b
	'\'' &&
	cat err &&
	nspid=$(cat nspid) &&
	{ [ "$(cat rc)" = 0 ] || fail "exit status $(cat rc)"; } &&
	taken=$(counter taken err) && filtered=$(counter filtered err) &&
	n=$(grep -A1 -x "    -                nsburn2 ($nspid)" plain |
		awk "/^        [0-9]+\$/ { n += \$1 } END { print n + 0 }") &&
	echo "nsburn2 ($nspid): $n samples; taken $taken, filtered $filtered; outside: hostburn ($outside)" &&
	{ [ "$n" -ge 100 ] || fail "too few samples of the burn in the namespace"; } &&
	{ ! grep -q "hostburn" plain || fail "hostburn, outside the namespace, was sampled"; } &&
	{ ! grep -q "($outside)" plain || fail "the host pid $outside was printed"; } &&
	{ [ "$filtered" -ge 100 ] || fail "samples from outside the namespace were not counted as filtered"; } &&
	{ grep -q "^profile: counted + filtered + dropped == taken\$" err || fail "counters do not add up"; } &&
	comms=$(sed -n "s/^    -                \\(.*\\) ([0-9]*)\$/\\1/p" plain | sort -u | tr "\n" " ") &&
	echo "comms: $comms" &&
	pids=$(sed -n "s/^    -                .* (\\([0-9]*\\))\$/\\1/p" plain | sort -un | tr "\n" " ") &&
	echo "pids: $pids" &&
	{ echo $pids | awk "NF == 0 { exit 1 } { for (i = 1; i <= NF; i++) if (\$i > 20) exit 1 }" ||
		fail "pids that cannot be in the fresh namespace: $pids"; }
'

test_done
