"""thread_exec.py: a thread other than the main one execs hot.py.

    thread_exec.py HOT SECONDS NAME

Two threads spin for 0.6 s, so that the process is sampled (and noted)
before its exec; then the second calls os.execv(python, [HOT, SECONDS,
NAME]).  The kernel makes the old main thread exit before the new image
runs (de_thread): that exit is the leader's, but not the process's end.
"""
import os
import sys
import threading
import time


def spin(seconds):
    end = time.time() + seconds
    while time.time() < end:
        pass


def execer(argv):
    spin(0.6)
    os.execv(sys.executable, [sys.executable] + argv)


def main():
    t = threading.Thread(target=execer, args=(sys.argv[1:4],))
    t.start()
    spin(10)


main()
