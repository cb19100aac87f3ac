# Shared by the debuginfod tests (t90, t91), sourced instead of lib.sh:
# the file runs in a network namespace of its own where only loopback
# exists (Debian's debuginfod listens on every address, it has no option to
# bind to one, and a profiler that reached out to anything but 127.0.0.1
# would find nothing there); the servers, and a cache per test.
if [ -z "${T90_NETNS:-}" ] && [ "$(id -u)" = 0 ] && unshare --net true 2>/dev/null; then
	export T90_NETNS=1
	exec unshare --net -- bash -c 'ip link set lo up 2>/dev/null; exec bash "$0"' "$0"
fi
. "$(dirname "$0")/lib.sh"

DI_PORT=8002			# Debian's debuginfod; nothing else is in this namespace
HELPERS=$PROFILE_TOP/tests/e2e/helpers

# A fresh libdebuginfod cache for this test.
new_cache() {
	DEBUGINFOD_CACHE_PATH=$(mktemp -d "$TRASH/cache.XXXXXX") &&
	export DEBUGINFOD_CACHE_PATH
}

# fake MODE [ARG]: fakedebuginfod.py in MODE, its URL in URL; every request
# it gets is a line of ./requests.
fake() {
	rm -f port requests
	bg python3 "$HELPERS/fakedebuginfod.py" "$PWD/port" "$PWD/requests" "$@"
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
	[ -s port ] || { fail "fakedebuginfod.py $* did not start"; return 1; }
	URL=http://127.0.0.1:$(cat port)
}

requests() { if [ -f requests ]; then wc -l <requests; else echo 0; fi; }

# start_debuginfod_dir DIR: Debian's debuginfod on DI_PORT, serving the
# ELF files in DIR (-F), no rescans, no grooming; returns once it has
# indexed them.  Its HTTP server answers at once, 404 until the scan is
# done (about 1 s here): the /metrics page says when, scanned_files_total
# counting the files scanned and thread_work_pending{role="scan"} the
# files still to go.
start_debuginfod_dir() {
	local n
	n=$(find "$1" -type f | wc -l)
	bg debuginfod -F -p $DI_PORT -d "$(mktemp -u "$TRASH/di.XXXXXX.sqlite")" \
		-t 0 -g 0 -c 1 "$1" >>"$TRASH/debuginfod.log" 2>&1
	DI_PID=$!
	for _ in $(seq 600); do
		curl -s "http://127.0.0.1:$DI_PORT/metrics" >metrics 2>/dev/null &&
			grep -q -x "scanned_files_total{source=\"file\"} $n" metrics &&
			grep -q -x 'thread_work_pending{role="scan"} 0' metrics &&
			break
		sleep 0.05
	done
	grep -q -x "scanned_files_total{source=\"file\"} $n" metrics ||
		{ fail "debuginfod did not index $1 in 30 s"; return 1; }
}
