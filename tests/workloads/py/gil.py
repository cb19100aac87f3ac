"""gil.py: one thread that holds the GIL, one that runs without it.

    gil.py SECONDS

Threads, each renamed (prctl PR_SET_NAME) so that a profile tells them
apart by comm:

  py-hold   hold_spin: a pure-Python loop; it holds the GIL whenever it
            runs, except for the moments py-free takes it back
  py-free   hash_chunk: hashlib.sha256 of 32 MiB, which runs in C with
            the GIL released (about 0.1 s a call, a few microseconds of
            Python between two calls)
  py-idle   the main thread: time.sleep, off the CPU, never sampled

On two CPUs both workers run all the time: every sample of py-free inside
hash_chunk's C call is of a thread that does not hold the GIL, and nearly
every sample of py-hold is of the thread that holds it.  Runs on CPython
3.8 to 3.13.  Prints "gil: running" once both threads run, and at the end
each one's CPU seconds by Python's own clock.
"""
import ctypes
import hashlib
import sys
import threading
import time

_libc = ctypes.CDLL(None, use_errno=True)


def set_comm(name):
    _libc.prctl(15, name.encode()[:15], 0, 0, 0)     # PR_SET_NAME


def hold_spin(n):
    x = 0
    for i in range(n):
        x = (x + i * 7) % 1000003
    return x


def hash_chunk(data):
    return hashlib.sha256(data).digest()


def thread_hold(stop, cpu, started):
    set_comm("py-hold")
    started.release()
    while not stop.is_set():
        hold_spin(20000)
    cpu["hold"] = time.thread_time()


def thread_free(stop, cpu, started):
    set_comm("py-free")
    data = bytes(range(256)) * (32 << 12)       # 32 MiB
    started.release()
    while not stop.is_set():
        hash_chunk(data)
    cpu["free"] = time.thread_time()


def main(seconds):
    set_comm("py-idle")
    stop = threading.Event()
    started = threading.Semaphore(0)
    cpu = {}
    threads = [threading.Thread(target=f, args=(stop, cpu, started))
               for f in (thread_hold, thread_free)]
    for t in threads:
        t.start()
    for t in threads:
        started.acquire()
    print("gil: running", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join()
    print("gil: " + " ".join("%s=%.3f" % kv for kv in sorted(cpu.items())), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 10.0)
