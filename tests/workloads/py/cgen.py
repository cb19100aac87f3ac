"""cgen.py: a generator driven from C with no Python caller.

    cgen.py [SECONDS]

Prints "cgen: running", then for SECONDS (default 3) a thread started by
_thread.start_new_thread(list, ...) runs list() on gen_spin(): the thread
has no Python frame of its own, so on 3.11 the generator's frame links to
no caller (previous NULL) while it runs.
"""
import _thread
import sys
import time


def gen_spin(end):
    x = 0
    while time.monotonic() < end:
        for i in range(2000):
            x ^= i
        yield x


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3
    end = time.monotonic() + seconds
    _thread.start_new_thread(list, (gen_spin(end),))
    print("cgen: running", flush=True)
    time.sleep(seconds + 0.2)


main()
