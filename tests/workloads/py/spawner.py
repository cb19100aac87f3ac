"""spawner.py: a Python process that runs another program, again and again.

    spawner.py SECONDS NAME PROGRAM [ARG...]

Names itself NAME (prctl PR_SET_NAME), spins for a second in
parent_wait (on the CPU, so that a profiler has found it running
Python), then until SECONDS after its start runs PROGRAM and waits for
it, in turn by fork() and execv(), the child spinning 20 ms in
before_exec first, and by subprocess (which spawns with vfork where it
can).  Each child is a copy of the Python process until its exec, then
another program: no sample of it after the exec may be walked as
Python.  Prints "spawner: N children" at the end.
"""
import ctypes
import os
import subprocess
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


def before_exec(seconds):
    return spin_until(time.time() + seconds)


def fork_exec(argv):
    pid = os.fork()
    if pid == 0:
        try:
            before_exec(0.02)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    os.waitpid(pid, 0)


def main(seconds, name, argv):
    end = time.time() + seconds
    ctypes.CDLL(None).prctl(15, name.encode()[:15], 0, 0, 0)     # PR_SET_NAME
    parent_wait(1)
    n = 0
    while time.time() < end:
        if n % 2:
            subprocess.run(argv, check=True)
        else:
            fork_exec(argv)
        n += 1
    print("spawner:", n, "children", flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]), sys.argv[2], sys.argv[3:])
