#!/bin/bash
# Filters and output switches, each checked against a workload whose answer
# is known: -p, -L, -C, --cgroup, -U, -K, -d, -a, -I, -c and -F.
. "$(dirname "$0")/lib.sh"

# bg records its pids in the test body's subshell, where lib.sh's EXIT
# cleanup never sees them: each body kills its own workloads when it ends.
reap() {
	for p in "${BG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || :; done
	wait 2>/dev/null || :
	true
}

# Total of all counts in folded output, and the comms present.
total() { fsum "$1" ""; }
comms() { awk '{ sub(/;.*/, ""); sub(/ [0-9]+$/, ""); print }' "$1" | sort -u; }

# Sum of the count lines of plain output.
plain_total() { awk '/^        [0-9]+$/ { n += $1 } END { print n + 0 }' "$1"; }

# On-CPU nanoseconds of a process's main thread, and the time now.
oncpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
now_ns() { date +%s%N; }

# Idle + iowait time of all CPUs, in clock ticks.
idle_ticks() { awk '/^cpu / { print $5 + $6 }' /proc/stat; }

# The "taken" counter of -v output.
taken() { sed -n 's/^profile: samples: taken \([0-9]*\),.*/\1/p' "$1"; }

CG2=$(findmnt -n -o TARGET -t cgroup2 2>/dev/null | head -1)
CGDIR=${CG2:+$CG2/profile-t02-$$}
rm_cgroup() {
	[ -n "$CGDIR" ] && [ -d "$CGDIR" ] || return 0
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		rmdir "$CGDIR/sub" 2>/dev/null
		rmdir "$CGDIR" 2>/dev/null && return 0
		sleep 0.2
	done
	echo "could not remove $CGDIR" >&2
	return 1
}
trap 'cleanup; rm_cgroup' EXIT

test_expect_success ROOT_BPF '-p: only the given processes are sampled, under their pids' '
	trap reap EXIT &&
	bg "$WORKLOADS/burn" -n pfa -d 5 >/dev/null && a=$! &&
	bg "$WORKLOADS/burn" -n pfb -d 5 >/dev/null && b=$! &&
	sleep 0.3 &&
	{ "$PROFILE" -F 199 -p $a,$b 2 >both.plain 2>both.err & both=$!; } &&
	"$PROFILE" -F 199 -f -p $a 2 >one.folded 2>one.err &&
	wait $both &&
	cat one.err both.err &&
	n=$(fsum one.folded "^pfa;") && t=$(total one.folded) &&
	echo "pfa=$n total=$t comms: $(comms one.folded | tr "\n" " ")" &&
	{ [ "$n" -ge 100 ] || fail "too few pfa samples: $n"; } &&
	{ [ "$n" -eq "$t" ] || fail "samples from other processes with -p $a"; } &&
	{ grep -q "^pfa;.*;func_b [0-9]*$" one.folded || fail "no pfa;...;func_b"; } &&
	echo "Sampling at 199 Hertz of PID $a,$b by user + kernel stack for 2 secs." >expect &&
	head -1 both.plain >header && diff expect header &&
	{ grep -q -x "    -                pfa ($a)" both.plain || fail "-p a,b: pfa ($a) missing"; } &&
	{ grep -q -x "    -                pfb ($b)" both.plain || fail "-p a,b: pfb ($b) missing"; } &&
	{ ! grep "^    -    " both.plain | grep -v -e "pfa ($a)" -e "pfb ($b)" ||
		fail "-p a,b shows other processes"; }
'

test_expect_success ROOT_BPF '-L: only the given thread: worker stacks or main stacks, not both' '
	trap reap EXIT &&
	bg "$WORKLOADS/burn" -n lburn -t 2 -d 5 >/dev/null && pid=$! &&
	sleep 0.3 &&
	worker=$(ls /proc/$pid/task | grep -v -x $pid) &&
	echo "pid=$pid worker=$worker" &&
	[ -n "$worker" ] && [ "$(echo "$worker" | wc -l)" -eq 1 ] &&
	{ "$PROFILE" -F 199 -f -L $pid 2 >main.folded 2>main.err & m=$!; } &&
	"$PROFILE" -F 199 -L $worker 2 >worker.plain 2>worker.err &&
	wait $m &&
	cat main.err worker.err &&
	echo "Sampling at 199 Hertz of TID $worker by user + kernel stack for 2 secs." >expect &&
	head -1 worker.plain >header && diff expect header &&
	mb=$(fsum main.folded ";main;func_b( |;)") &&
	mw=$(fsum main.folded ";worker;") &&
	echo "-L main thread: main;func_b=$mb worker=$mw total=$(total main.folded)" &&
	{ [ "$mb" -ge 50 ] || fail "-L $pid: too few main;func_b samples"; } &&
	{ [ "$mw" -eq 0 ] || fail "-L $pid: the worker thread was sampled"; } &&
	{ [ "$(comms main.folded)" = lburn ] || fail "-L $pid: other comms"; } &&
	{ grep -B1 -x "    worker" worker.plain | grep -q -x "    func_b" ||
		fail "-L $worker: no func_b called from worker"; } &&
	{ ! grep -q -x "    main" worker.plain || fail "-L $worker: the main thread was sampled"; } &&
	{ ! grep "^    -    " worker.plain | grep -v -x "    -                lburn ($pid)" ||
		fail "-L $worker: other processes, or not printed under the pid $pid"; }
'

test_expect_success ROOT_BPF '-C 1: only what runs on CPU 1, and the header says so' '
	trap reap EXIT &&
	{ [ "$(nproc)" -ge 2 ] || fail "needs 2 CPUs"; } &&
	bg taskset -c 1 "$WORKLOADS/burn" -n oncpu1 -d 5 >/dev/null &&
	bg taskset -c 0 "$WORKLOADS/burn" -n oncpu0 -d 5 >/dev/null &&
	sleep 0.3 &&
	{ "$PROFILE" -C 1 1 >plain 2>plain.err & pp=$!; } &&
	"$PROFILE" -F 199 -f -C 1 2 >cpu1.folded 2>err &&
	wait $pp &&
	cat err plain.err &&
	one=$(fsum cpu1.folded "^oncpu1;") && zero=$(fsum cpu1.folded "^oncpu0;") &&
	t=$(total cpu1.folded) &&
	echo "oncpu1=$one oncpu0=$zero total=$t" &&
	{ [ "$one" -ge 100 ] || fail "too few samples of the burn on CPU 1"; } &&
	{ [ "$zero" -eq 0 ] || fail "the burn pinned to CPU 0 was sampled"; } &&
	{ [ "$t" -le 440 ] || fail "more samples than one CPU at 199 Hz gives in 2 s"; } &&
	echo "Sampling at 49 Hertz of all threads by user + kernel stack on CPU#1 for 1 secs." >expect &&
	head -1 plain >header && diff expect header
'

test_expect_success ROOT_BPF '--cgroup: only tasks in that cgroup v2 directory and below' '
	trap reap EXIT &&
	{ [ -n "$CG2" ] || fail "no cgroup2 mount (findmnt -t cgroup2)"; } &&
	echo "cgroup2 at $CG2" &&
	mkdir "$CGDIR" "$CGDIR/sub" &&
	bg "$WORKLOADS/burn" -n cgin -d 5 >/dev/null && in=$! &&
	echo $in >"$CGDIR/sub/cgroup.procs" &&
	bg "$WORKLOADS/burn" -n cgout -d 5 >/dev/null &&
	sleep 0.3 &&
	{ "$PROFILE" -F 199 -f --cgroup "$CGDIR/sub" 2 >sub.folded 2>sub.err & s=$!; } &&
	"$PROFILE" -F 199 -f --cgroup "$CGDIR" 2 >cg.folded 2>err &&
	wait $s &&
	cat err sub.err &&
	n=$(fsum cg.folded "^cgin;") && t=$(total cg.folded) &&
	ns=$(fsum sub.folded "^cgin;") && ts=$(total sub.folded) &&
	echo "parent: cgin=$n total=$t; sub: cgin=$ns total=$ts" &&
	{ [ "$n" -ge 100 ] || fail "--cgroup parent: too few samples from the task below it"; } &&
	{ [ "$n" -eq "$t" ] || fail "--cgroup parent: samples from outside: $(comms cg.folded)"; } &&
	{ [ "$ns" -ge 100 ] || fail "--cgroup sub: too few samples from the task in it"; } &&
	{ [ "$ns" -eq "$ts" ] || fail "--cgroup sub: samples from outside: $(comms sub.folded)"; } &&
	{ grep -q "^cgin;.*;func_b [0-9]*$" cg.folded || fail "no cgin;...;func_b"; } &&
	reap && rm_cgroup
'

test_expect_success ROOT_BPF '-U: user frames only, no kernel frames (faulter)' '
	trap reap EXIT &&
	bg "$WORKLOADS/faulter" 5 >/dev/null && pid=$! &&
	sleep 0.3 &&
	{ "$PROFILE" -a -F 199 -f -p $pid 2 >both.folded 2>both.err & b=$!; } &&
	"$PROFILE" -U -a -F 199 -f -p $pid 2 >user.folded 2>err &&
	wait $b &&
	cat err both.err &&
	k=$(fsum both.folded "_[[]k[]]") && u=$(fsum user.folded ";touch_pages( |;|$)") &&
	echo "without -U: $k samples with kernel frames; with -U: $u in touch_pages, $(total user.folded) in all" &&
	{ [ "$k" -ge 20 ] || fail "control: faulter shows no kernel frames without -U"; } &&
	{ ! grep "_\[k\]" user.folded || fail "-U printed kernel frames"; } &&
	{ ! grep "Missed Kernel" user.folded || fail "-U printed a kernel stack marker"; } &&
	{ [ "$u" -ge 100 ] || fail "-U: too few samples with touch_pages"; } &&
	"$PROFILE" -U -p $pid 1 2>/dev/null | head -1 >header &&
	echo "Sampling at 49 Hertz of PID $pid by user stack for 1 secs." >expect &&
	diff expect header
'

test_expect_success ROOT_BPF,strace '/proc/kallsyms is read with --kallsyms only, never with -U' '
	trace_open() {
		ASAN_OPTIONS=detect_leaks=0 strace -f -qq -o "$1" -e trace=openat \
			"$PROFILE" "${@:2}" -F 49 -f 1 >/dev/null 2>>err
	} &&
	trace_open trace.u -U && trace_open trace.d && trace_open trace.k --kallsyms -U &&
	trace_open trace.a --kallsyms &&
	{ grep -q "/proc/kallsyms" trace.a || fail "control: --kallsyms did not open /proc/kallsyms"; } &&
	{ ! grep "/proc/kallsyms" trace.d || fail "the default opened /proc/kallsyms"; } &&
	{ ! grep "/proc/kallsyms" trace.u || fail "-U opened /proc/kallsyms"; } &&
	{ ! grep "/proc/kallsyms" trace.k || fail "-U --kallsyms opened /proc/kallsyms"; }
'

test_expect_success ROOT_BPF '-K: kernel frames only; user-mode samples keep their comm' '
	trap reap EXIT &&
	bg "$WORKLOADS/faulter" 5 >/dev/null && f=$! &&
	bg "$WORKLOADS/burn" -n kburn -d 5 >/dev/null && b=$! &&
	sleep 0.3 &&
	{ "$PROFILE" -K -F 199 -f -p $f 2 >faulter.folded 2>ferr & fp=$!; } &&
	"$PROFILE" -K -F 199 -p $b 2 >burn.plain 2>err &&
	wait $fp &&
	cat err ferr &&
	k=$(fsum faulter.folded ";asm_exc_page_fault;") &&
	echo "faulter -K: $k samples through asm_exc_page_fault, $(total faulter.folded) in all" &&
	{ [ "$k" -ge 20 ] || fail "-K: no page-fault kernel stacks for faulter"; } &&
	{ ! grep -E ";(touch_pages|main)( |;)" faulter.folded || fail "-K printed user frames"; } &&
	{ ! grep "Missed User" faulter.folded || fail "-K printed a user stack marker"; } &&
	echo "Sampling at 199 Hertz of PID $b by kernel stack for 2 secs." >expect &&
	head -1 burn.plain >header && diff expect header &&
	{ ! grep -E -x "    (func_a|func_b|main)" burn.plain || fail "-K printed user frames of burn"; } &&
	n=$(grep -c -x "    -                kburn ($b)" burn.plain) &&
	c=$(plain_total burn.plain) && echo "burn -K: $n records, $c samples" &&
	{ [ "$n" -ge 1 ] && [ "$c" -ge 100 ] || fail "-K: burn samples missing"; }
'

test_expect_success ROOT_BPF '-d -a: user;-;kernel, "--" in plain, _[k] exactly on kernel frames' '
	trap reap EXIT &&
	bg "$WORKLOADS/faulter" 5 >/dev/null && pid=$! &&
	sleep 0.3 &&
	{ "$PROFILE" -F 199 -f -p $pid 2 >nod.folded 2>nod.err & p1=$!; } &&
	{ "$PROFILE" -d -a -F 199 -p $pid 2 >d.plain 2>dplain.err & p2=$!; } &&
	"$PROFILE" -d -a -F 199 -f -p $pid 2 >d.folded 2>err &&
	wait $p1 && wait $p2 &&
	cat err nod.err dplain.err &&
	n=$(fsum d.folded ";-;") && echo "$n samples with both stacks, $(total d.folded) in all" &&
	{ [ "$n" -ge 20 ] || fail "-d: no ;-; delimiter"; } &&
	{ ! grep -e ";-;" -e ";- " -e "_\[k\]" nod.folded || fail "delimiter or _[k] without -d -a"; } &&
	{ ! grep -E -e ";- [0-9]+\$" -e "^[^;]*;-;" d.folded || fail "-d: delimiter without both stacks"; } &&
	{ grep -q ";asm_exc_page_fault;" nod.folded || fail "control: no kernel frames without -d -a"; } &&
	awk "/;-;/ { split(\$0, h, \";-;\"); u = h[1]; k = h[2]; sub(/ [0-9]+\$/, \"\", k);
		nu = split(u, uf, \";\"); nk = split(k, kf, \";\");
		for (i = 2; i <= nu; i++) if (uf[i] ~ /_\[k\]\$/) { print \"annotated user frame: \" \$0; bad = 1 }
		for (i = 1; i <= nk; i++) if (kf[i] !~ /_\[k\]\$/) { print \"unannotated kernel frame: \" \$0; bad = 1 } }
		END { exit bad }" d.folded &&
	{ grep -q "^faulter;.*;touch_pages;-;asm_exc_page_fault_\[k\];" d.folded ||
		fail "no faulter;...;touch_pages;-;asm_exc_page_fault_[k];..."; } &&
	tr ";" "\n" <d.folded | sed -n "s/ [0-9]*\$//; s/_\[k\]\$//p" | sort -u >kframes &&
	awk "NR == FNR { k[\$1]; next } \$3 in k { print \$3 }" kframes /proc/kallsyms | sort -u >known &&
	echo "$(wc -l <kframes) distinct annotated frames" &&
	{ ! comm -23 kframes known | grep -v -x "\[unknown\]" ||
		fail "annotated frames that are not kernel symbols"; } &&
	{ grep -q -x "    --" d.plain || fail "-d: no \"    --\" line in plain"; } &&
	{ awk "/^    --\$/ { below = 1; if (prev !~ /_\[k\]\$/) bad = 1; next }
	     /^    -   / { below = 0; next }
	     /^    [^ ]/ { if (below && \$0 ~ /_\[k\]\$/) bad = 1; prev = \$0 }
	     END { exit bad }" d.plain || fail "plain -d: frames on the wrong side of --"; } &&
	{ grep -A1 -x "    --" d.plain | grep -q -x "    touch_pages" ||
		fail "plain -d: touch_pages is not the user leaf after --"; }
'

test_expect_success ROOT_BPF '-I: idle stacks (swapper/N, do_idle) appear only with -I' '
	hz=$(getconf CLK_TCK) && idle_cs=0 && try=0 &&
	while [ $try -lt 3 ] && [ $idle_cs -lt 25 ]; do
		try=$((try + 1)) &&
		i0=$(idle_ticks) &&
		{ "$PROFILE" -F 199 -f 2 >noidle.folded 2>noidle.err & p=$!; } &&
		"$PROFILE" -I -F 199 -f 2 >idle.folded 2>err &&
		wait $p &&
		idle_cs=$(( ($(idle_ticks) - i0) * 100 / hz )) &&
		echo "try $try: $idle_cs centiseconds of idle CPU time" || break
	done &&
	cat err noidle.err &&
	{ [ $idle_cs -ge 25 ] || fail "no CPU was idle long enough: is the machine saturated?"; } &&
	i=$(fsum idle.folded "^swapper/[0-9]+;") &&
	d=$(fsum idle.folded "^swapper/[0-9]+;.*;do_idle;") &&
	echo "with -I: swapper=$i (through do_idle: $d)" &&
	{ ! grep -E "^swapper/[0-9]+[; ]" noidle.folded || fail "idle samples without -I"; } &&
	{ ! grep -E ";(do_idle|cpu_idle|default_idle)( |;)" noidle.folded || fail "idle frames without -I"; } &&
	{ [ "$i" -ge 5 ] || fail "-I: no (or too few) swapper samples"; } &&
	{ [ "$d" -ge $((i * 9 / 10)) ] || fail "-I: swapper samples without do_idle"; }
'

test_expect_success ROOT_BPF '-c 10000000: one sample per 10 ms of CPU time; -F 199: 199 per second' '
	trap reap EXIT &&
	bg "$WORKLOADS/burn" -n rate -d 7 >/dev/null && pid=$! &&
	sleep 0.3 &&
	{ "$PROFILE" -F 199 -v -f -p $pid 3 >f.folded 2>f.err & fp=$!; } &&
	{ "$PROFILE" -c 10000000 -v -p $pid 3 >c.plain 2>c.err & cp=$!; } &&
	wait_attached $fp && wait_attached $cp &&
	c0=$(oncpu_ns $pid) && t0=$(now_ns) &&
	wait $fp && wait $cp &&
	c1=$(oncpu_ns $pid) && t1=$(now_ns) &&
	cat c.err f.err &&
	share=$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) "BEGIN { printf \"%.3f\", c / t }") &&
	ec=$(awk -v s=$share "BEGIN { printf \"%d\", 300 * s }") &&
	ef=$(awk -v s=$share "BEGIN { printf \"%d\", 597 * s }") &&
	nc=$(plain_total c.plain) && nf=$(total f.folded) &&
	tc=$(taken c.err) && tf=$(taken f.err) &&
	echo "timer samples taken on all CPUs (idle ticks vary, not checked): -c $tc, -F $tf" &&
	echo "burn ran $share of the time: -c: $nc samples (expected $ec); -F 199: $nf (expected $ef)" &&
	{ in_range "$share" 0.3 1.01 || fail "burn barely ran; the machine is too busy"; } &&
	{ in_range "$(ratio $nc $ec)" 0.9 1.1 || fail "-c 10000000: $nc burn samples, expected $ec +-10%"; } &&
	{ in_range "$(ratio $nf $ef)" 0.9 1.1 || fail "-F 199: $nf burn samples, expected $ef +-10%"; } &&
	echo "Sampling at every 10000000 events of PID $pid by user + kernel stack for 3 secs." >expect &&
	head -1 c.plain >header && diff expect header
'

test_done
