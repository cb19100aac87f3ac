"""mixed.py: the shapes of real Python programs, each under its own name.

    mixed.py SECONDS

Four threads, each renamed (prctl PR_SET_NAME) so that a profile tells
them apart by comm, and so that a test can read each one's CPU time from
/proc/PID/task/TID/stat:

  py-main   the main thread: run_features() in a loop, each feature for a
            fixed amount of work a round:
              descend      recursion 30 deep (30 descend frames), then
                           burn_deep at the bottom
              use_generator  a for loop over the generator gen_squares
                           (the generator runs in its own C-level call of
                           the interpreter, under gen_iternext's C frames)
              run_async    an event loop running async_main, which gathers
                           two async_compute coroutines that yield with
                           asyncio.sleep(0)
              Accumulator.add_all  a method; Accumulator.from_range, a
                           classmethod
              apply_lambda calls the module-level lambda TRIPLE (its
                           qualname is <lambda>)
              encode_json  json.dumps of a big object: json's C encoder
                           under dumps (json/__init__.py)
  py-alpha  thread_alpha: alpha_spin in a loop
  py-beta   thread_beta: beta_spin in a loop
  py-nogil  thread_nogil: hash_chunk, hashlib.sha256 of 64 MiB, which runs
            in OpenSSL with the GIL released

py-main, py-alpha and py-beta share the GIL, each runnable all the time, so
each gets about a third of one CPU (the exact shares are the GIL's; read
them from /proc); py-nogil runs beside them.  Ends after SECONDS of wall
time.  It prints "mixed: running" once the threads are started, and at the
end each thread's CPU seconds by Python's own clock.
"""
import asyncio
import ctypes
import hashlib
import json
import sys
import threading
import time

_libc = ctypes.CDLL(None, use_errno=True)


def set_comm(name):
    _libc.prctl(15, name.encode()[:15], 0, 0, 0)     # PR_SET_NAME


TRIPLE = lambda x: x * 3 + 1  # noqa: E731


def burn_deep(n):
    x = 0
    for i in range(n):
        x ^= i
    return x


def descend(depth, n):
    if depth <= 1:
        return burn_deep(n)
    return descend(depth - 1, n)


def gen_squares(n):
    for i in range(n):
        yield i * i


def use_generator(n):
    total = 0
    for v in gen_squares(n):
        total += v
    return total


async def async_compute(n):
    x = 0
    for i in range(n):
        x ^= i
        if i % 5000 == 0:
            await asyncio.sleep(0)
    return x


async def async_main(n):
    return await asyncio.gather(async_compute(n), async_compute(n))


def run_async(loop, n):
    return loop.run_until_complete(async_main(n))


class Accumulator:
    def __init__(self):
        self.total = 0

    def add_all(self, n):
        t = 0
        for i in range(n):
            t += i & 7
        self.total += t
        return self

    @classmethod
    def from_range(cls, n):
        acc = cls()
        t = 0
        for i in range(n):
            t += i & 3
        acc.total = t
        return acc


def apply_lambda(n):
    t = 0
    for i in range(n):
        t += TRIPLE(i)
    return t


def encode_json(obj):
    return len(json.dumps(obj))


def run_features(loop, obj):
    descend(30, 60000)
    use_generator(60000)
    run_async(loop, 30000)
    Accumulator().add_all(60000)
    Accumulator.from_range(60000)
    apply_lambda(40000)
    encode_json(obj)


def alpha_spin(n):
    x = 0
    for i in range(n):
        x ^= i
    return x


def beta_spin(n):
    x = 0
    for i in range(n):
        x ^= i
    return x


def hash_chunk(data):
    return hashlib.sha256(data).digest()


def thread_alpha(stop, cpu):
    set_comm("py-alpha")
    while not stop.is_set():
        alpha_spin(20000)
    cpu["alpha"] = time.thread_time()


def thread_beta(stop, cpu):
    set_comm("py-beta")
    while not stop.is_set():
        beta_spin(20000)
    cpu["beta"] = time.thread_time()


def thread_nogil(stop, cpu):
    set_comm("py-nogil")
    data = bytes(range(256)) * (64 << 12)       # 64 MiB
    while not stop.is_set():
        hash_chunk(data)
    cpu["nogil"] = time.thread_time()


def main(seconds):
    set_comm("py-main")
    obj = {f"key{i}": [i, str(i), {"x": i * 0.5, "y": [1, 2, 3]}] for i in range(3000)}
    loop = asyncio.new_event_loop()
    stop = threading.Event()
    cpu = {}
    threads = [threading.Thread(target=f, args=(stop, cpu))
               for f in (thread_alpha, thread_beta, thread_nogil)]
    for t in threads:
        t.start()
    print("mixed: running", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        run_features(loop, obj)
    stop.set()
    for t in threads:
        t.join()
    cpu["main"] = time.thread_time()
    loop.close()
    print("mixed: " + " ".join(f"{k}={v:.3f}" for k, v in sorted(cpu.items())), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]))
