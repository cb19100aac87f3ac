"""prefork.py: a Python server's start, as a prefork server makes it.

    prefork.py N SECONDS NAME

Names itself NAME (prctl PR_SET_NAME; the children inherit it), spins a
second in parent_wait (on the CPU, so that a profiler has found it
running Python), then forks N workers at once, each running worker_loop
for SECONDS, and waits for them.  Each worker's samples should show
worker_loop from its first: it runs the parent's code objects at the
parent's addresses, in its own memory.
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


def parent_wait(seconds):
    return spin_until(time.time() + seconds)


def worker_loop(seconds):
    return spin_until(time.time() + seconds)


def main(n, seconds, name):
    ctypes.CDLL(None).prctl(15, name.encode()[:15], 0, 0, 0)     # PR_SET_NAME
    parent_wait(1)
    workers = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            worker_loop(seconds)
            os._exit(0)
        workers.append(pid)
    for pid in workers:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]), sys.argv[3])
