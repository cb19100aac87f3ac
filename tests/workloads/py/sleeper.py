"""sleeper.py: a Python program that blocks in known functions, for
off-CPU profiles (issue 29).

    sleeper.py SECONDS

The main thread loops until SECONDS of wall time have passed:

  slow_io    time.sleep(0.030)
  fast_io    time.sleep(0.010)
  pipe_wait  os.read() on a pipe that the thread "feeder" writes to 20 ms
             after pipe_wait asked it to (a wait on another thread)

so that slow_io blocks three times as long as fast_io, and pipe_wait twice
as long.  The feeder waits in feeder_wait and sleeps in feeder_nap; none
of the main thread's functions is on its stacks.  It prints
"sleeper: running" once the feeder is started.
"""
import os
import sys
import threading
import time


def slow_io():
    time.sleep(0.030)


def fast_io():
    time.sleep(0.010)


def pipe_wait(req_w, ans_r):
    os.write(req_w, b"x")
    os.read(ans_r, 1)


def feeder_wait(req_r):
    return os.read(req_r, 1)


def feeder_nap():
    time.sleep(0.020)


def feeder(req_r, ans_w):
    while feeder_wait(req_r):
        feeder_nap()
        os.write(ans_w, b"y")


def main():
    seconds = float(sys.argv[1])
    req_r, req_w = os.pipe()
    ans_r, ans_w = os.pipe()
    threading.Thread(target=feeder, args=(req_r, ans_w), daemon=True).start()
    deadline = time.monotonic() + seconds
    print("sleeper: running", flush=True)
    while time.monotonic() < deadline:
        slow_io()
        fast_io()
        pipe_wait(req_w, ans_r)


if __name__ == "__main__":
    main()
