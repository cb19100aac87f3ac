"""forked.py: a Python process and its forked children, each in its own
function.

    forked.py SECONDS NAME

The parent names itself NAME (prctl PR_SET_NAME; the children inherit
it), forks a child at once, runs parent_wait for a second (on the CPU,
so that a profiler has found it running Python), forks another, both
children running child_work, and runs parent_burn; each runs until
SECONDS after the parent's start.  Children of fork() run the parent's
code objects at the parent's addresses, and the second child's stacks
are all the first's: a profiler that learns code objects per process
must learn them for each child too (prefork servers, multiprocessing
with fork).  It prints "forked: running PID1 PID2", the children's pids,
when both run.
"""
import ctypes
import os
import sys
import time


def spin_until(end):
    x = 0
    while time.time() < end:
        for i in range(2000):
            x ^= i
    return x


def parent_burn(seconds):
    return spin_until(time.time() + seconds)


def parent_wait(seconds):
    return spin_until(time.time() + seconds)


def child_work(seconds):
    return spin_until(time.time() + seconds)


def start(work, seconds):
    pid = os.fork()
    if pid == 0:
        work(seconds)
        os._exit(0)
    return pid


def main(seconds, name):
    libc = ctypes.CDLL(None)
    libc.prctl(15, name.encode()[:15], 0, 0, 0)     # PR_SET_NAME
    kids = [start(child_work, seconds)]
    parent_wait(1)
    kids.append(start(child_work, seconds - 1))
    print("forked: running", *kids, flush=True)
    parent_burn(seconds - 1)
    for pid in kids:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main(float(sys.argv[1]), sys.argv[2])
