#!/bin/bash
# --top on a terminal, under tmux: the view fits the screen at 80x24 and
# 200x60 (header first, hottest rows below, no line wider than the screen,
# no row without self time), redraws at once on a resize, keeps a decayed
# and steady table, and its keys work: q ends the run and gives the
# terminal back, z zeroes the table.
. "$(dirname "$0")/lib.sh"

ELLIPSIS=$(printf "\342\200\246")

# Run profile --top ARGS in a new tmux session SESS of W x H, killed when
# the test ends.  The wrapper records the terminal modes before and after,
# and the exit status of profile, in ./SESS.*, then prints TOP-EXIT=N on
# the main screen.
start_top() {
	local sess=$1 w=$2 h=$3 dir=$PWD
	shift 3
	cat >"$dir/$sess.sh" <<-EOF
	#!/bin/bash
	stty -g >"$dir/$sess.stty-before"
	"$PROFILE" --top $* 2>"$dir/$sess.err"
	echo \$? >"$dir/$sess.exit"
	stty -g >"$dir/$sess.stty-after"
	echo TOP-EXIT=\$(cat "$dir/$sess.exit")
	exec sleep 60
	EOF
	chmod +x "$dir/$sess.sh"
	trap "tmux kill-session -t $sess 2>/dev/null" EXIT
	tmux new-session -d -s "$sess" -x "$w" -y "$h" "$dir/$sess.sh"
}

snap() { tmux capture-pane -p -t "$1" >"$2"; }

# The decayed window of the header, "(~N s decayed)": at one refresh a
# second, 1, 2, 3, 3, 4 and 5 after 1, 2, 3, 4, 5 and 8 refreshes, 8 at most.
window_s() { sed -n "1s/.*(~\([0-9]*\) s decayed).*/\1/p" "$1"; }

# "in all: N" of the header.
in_all() { sed -n "1s/.*in all: \([0-9]*\).*/\1/p" "$1"; }

# Wait until session SESS shows a window of at least N seconds; its screen in FILE.
wait_window() {
	local w
	for _ in $(seq 300); do
		snap "$1" "$3"
		w=$(window_s "$3")
		[ -n "$w" ] && [ "$w" -ge "$2" ] && return 0
		sleep 0.1
	done
	cat "$3" "$1.err"
	fail "the screen never showed $2 s of refreshes"
}

# The rows of a screen: the lines after the column header, not empty.
rows() { awk 'seen && NF; /^ +Self +Children +Command/ { seen = 1 }' "$1"; }

# Self percentage of the row whose symbol is $2.
self_of() { rows "$1" | awk -v s="$2" '$NF == s { sub("%", "", $1); print $1; exit }'; }

# The checks every frame passes, on a W x H screen.
check_screen() {
	local f=$1 w=$2 h=$3 n
	cat "$f"
	head -1 "$f" | grep -q "^profile --top: " || fail "the header is not the first line"
	sed -n 2p "$f" | grep -q "^keys: q quit, z zero, c " || fail "no keys line"
	sed -n 3p "$f" | grep -q "^ *Self  *Children  *Command  *Shared Object  *Symbol" ||
		fail "no column header on line 3"
	sed "s/$ELLIPSIS/./g" "$f" |
		awk -v w="$w" "length(\$0) > w { print \"wider than \" w \": \" \$0; bad = 1 } END { exit bad }" ||
		fail "a line is wider than $w"
	n=$(rows "$f" | wc -l)
	[ "$n" -ge 2 ] && [ "$n" -le $((h - 3)) ] || fail "$n rows on a screen of $h lines"
	# A wrapped line would not start as a row does.
	! rows "$f" | grep -v -E "^ +[0-9]+\.[0-9]{2}% +[0-9]+\.[0-9]{2}%  " || fail "a line that is not a row"
	! rows "$f" | grep -E "^ +0\.00% " || fail "a row without self time"
}

for size in 80x24 200x60; do
	W=${size%x*} H=${size#*x}
	test_expect_success ROOT_BPF,tmux "--top at ${W}x${H}: header first, func_b then func_a, fits, steady" '
		bg "$WORKLOADS/burn" -t 2 -d 45 &&
		pid=$! && sleep 0.2 &&
		sess=t35-$$-'"$W"' &&
		start_top $sess '"$W $H"' -F 499 -p $pid 35 &&
		wait_window $sess 5 s1 &&
		check_screen s1 '"$W $H"' &&
		{ rows s1 | sed -n 1p | grep -q " burn  *burn  *func_b$" || fail "func_b is not the first row"; } &&
		{ rows s1 | sed -n 2p | grep -q " burn  *burn  *func_a$" || fail "func_a is not the second row"; } &&
		r1=$(ratio $(self_of s1 func_b) $(self_of s1 func_a)) &&
		sleep 2.2 && snap $sess s2 &&
		check_screen s2 '"$W $H"' &&
		r2=$(ratio $(self_of s2 func_b) $(self_of s2 func_a)) &&
		echo "func_b/func_a: $r1, two refreshes later $r2" &&
		in_range $r1 2.3 3.9 && in_range $r2 2.3 3.9 &&
		in_range $(awk -v a=$r1 -v b=$r2 "BEGIN { print (a - b) / a }") -0.1 0.1
	'
done

test_expect_success ROOT_BPF,tmux 'a resize redraws from the kept table at once, not at the next interval' '
	bg "$WORKLOADS/burn" -t 2 -d 40 &&
	pid=$! && sleep 0.2 &&
	sess=t35-$$-resize &&
	start_top $sess 100 30 -F 499 -i 5 -p $pid 30 &&
	wait_window $sess 1 before &&
	check_screen before 100 30 &&
	tmux resize-window -t $sess -x 60 -y 6 &&
	sleep 0.8 && snap $sess small &&
	[ "$(tmux display -p -t $sess "#{window_width}x#{window_height}")" = 60x6 ] &&
	check_screen small 60 6 &&
	{ [ "$(window_s small)" = "$(window_s before)" ] || fail "an interval came between: not the resize"; } &&
	{ head -1 small | grep -q "$ELLIPSIS$" || fail "the header was not cut to 60 columns: not redrawn"; } &&
	rows small | head -1 | grep -q "func_b$" &&
	tmux resize-window -t $sess -x 200 -y 60 &&
	sleep 0.8 && snap $sess big &&
	check_screen big 200 60 &&
	{ ! head -1 big | grep -q "$ELLIPSIS" || fail "the header is still cut at 200 columns"; }
'

# q, and the signals main.c turns into a stop, end the run the same way.
for how in q TERM HUP; do
	test_expect_success ROOT_BPF,tmux "$how ends the run within a second and restores the terminal" '
		bg "$WORKLOADS/burn" -d 40 &&
		pid=$! && sleep 0.2 &&
		sess=t35-$$-'"$how"' &&
		start_top $sess 80 24 -F 499 -p $pid 30 &&
		wait_window $sess 1 s1 &&
		grep -q "func_b$" s1 &&
		if [ '"$how"' = q ]; then
			tmux send-keys -t $sess q
		else
			kill -'"$how"' $(pgrep -f "^$PROFILE --top -F 499 -p $pid 30")
		fi &&
		for _ in $(seq 10); do [ -s $sess.exit ] && break; sleep 0.1; done &&
		{ [ -s $sess.exit ] || fail "profile still runs a second later"; } &&
		[ "$(cat $sess.exit)" = 0 ] &&
		sleep 0.2 && snap $sess after && cat after &&
		grep -q "^TOP-EXIT=0" after &&
		{ ! grep -q "profile --top" after || fail "still on the alternate screen"; } &&
		{ cmp $sess.stty-before $sess.stty-after || fail "terminal modes not restored"; } &&
		{ ! grep . $sess.err || fail "messages on stderr"; }
	'
done

test_expect_success ROOT_BPF,tmux 'z zeroes the table: the counts in the header drop' '
	bg "$WORKLOADS/burn" -t 2 -d 40 &&
	pid=$! && sleep 0.2 &&
	sess=t35-$$-z &&
	start_top $sess 80 24 -F 499 -i 2 -p $pid 30 &&
	wait_window $sess 5 s1 &&
	tmux send-keys -t $sess z &&
	sleep 0.4 && snap $sess s2 &&
	a=$(in_all s1) b=$(in_all s2) &&
	echo "in all: $a before z, $b after" &&
	[ "$a" -ge 1000 ] && [ "$b" -lt $((a / 2)) ] &&
	head -1 s2 | grep -q "(~[0-2] s decayed)" &&
	wait_window $sess 2 s3 &&
	check_screen s3 80 24 &&
	rows s3 | head -1 | grep -q "func_b$"
'

test_expect_success ROOT_BPF,tmux 'cxxburn at 80x24: full C++ names are cut with an ellipsis, no line wraps' '
	bg "$WORKLOADS/cxxburn" 30 &&
	pid=$! && sleep 0.2 &&
	sess=t35-$$-cxx &&
	start_top $sess 80 24 --names full -F 499 -p $pid 20 &&
	wait_window $sess 2 s1 &&
	check_screen s1 80 24 &&
	rows s1 | grep -q " engine::hash_strings(std::.*$ELLIPSIS$" &&
	rows s1 | grep -q " engine::Matrix<double>::.*$ELLIPSIS$" &&
	tmux send-keys -t $sess c && sleep 0.4 && snap $sess s2 &&
	grep -q "^keys: .*(shown)" s2 &&
	rows s2 | grep -q "^ *0\.00% "
'

test_expect_success ROOT_BPF,tmux 'cxxburn: short C++ names by default, whole' '
	bg "$WORKLOADS/cxxburn" 30 &&
	pid=$! && sleep 0.2 &&
	sess=t35-$$-cxxs &&
	start_top $sess 80 24 -F 499 -p $pid 20 &&
	wait_window $sess 2 s1 &&
	check_screen s1 80 24 &&
	rows s1 | grep -q " engine::hash_strings$" &&
	{ ! rows s1 | awk "\$4 == \"cxxburn\"" | grep -q "$ELLIPSIS" || fail "a name of cxxburn was cut"; }
'

test_expect_success ROOT_BPF,tmux 'stdin not a terminal: no keys, the view still draws' '
	bg "$WORKLOADS/burn" -d 20 &&
	pid=$! && sleep 0.2 &&
	sess=t35-$$-nokeys &&
	trap "tmux kill-session -t $sess 2>/dev/null" EXIT &&
	tmux new-session -d -s $sess -x 80 -y 24 \
		"$(printf %q "$PROFILE") --top -F 499 -p $pid 3 </dev/null; echo TOP-EXIT=\$?; sleep 30" &&
	wait_window $sess 1 s1 &&
	check_screen s1 80 24 &&
	sleep 3 && snap $sess after &&
	grep -q "^TOP-EXIT=0" after
'

test_done
