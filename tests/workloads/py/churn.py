"""churn.py: a Python whose memory changes under the walk.

    churn.py SECONDS

Two threads share the GIL:

  py-churn   churn_main: creates and drops frames as fast as it can.  Each
             round it recurses to a random depth of 1 to 90 (deeper than a
             profiler may walk) and returns; creates generators, advances
             them part way and drops them; creates coroutines and closes
             them unstarted; and compiles a new function (source file
             "churn_dyn.py", its def on line L, named dyn_L<L>), calls it
             and drops it, so that code objects are freed and others are
             allocated where they were.
  py-steady  steady_main: burn_steady in a loop, a stack that never changes.

It prints "churn: running" once both threads are started.  A profile of it
must name only what is here: the functions of this file,
of threading.py, and dyn_L<L> (churn_dyn.py) with a line from L to L + 2.
"""
import ctypes
import random
import sys
import threading
import time

_libc = ctypes.CDLL(None, use_errno=True)


def set_comm(name):
    _libc.prctl(15, name.encode()[:15], 0, 0, 0)     # PR_SET_NAME


def churn_rec(depth):
    if depth <= 0:
        return 0
    return churn_rec(depth - 1) + 1


def churn_gen(n):
    for i in range(n):
        yield i


async def churn_coro(n):
    return n


def churn_dyn(rng):
    line = rng.randrange(1, 200)
    src = "\n" * (line - 1) + f"def dyn_L{line}(n):\n    return sum(range(n))\n"
    ns = {}
    exec(compile(src, "churn_dyn.py", "exec"), ns)
    f = ns[f"dyn_L{line}"]
    for _ in range(3):
        f(200)


def churn_round(rng):
    churn_rec(rng.randrange(1, 91))
    gens = [churn_gen(rng.randrange(2, 50)) for _ in range(8)]
    for g in gens:
        next(g)
        next(g)
    del gens
    coros = [churn_coro(i) for i in range(8)]
    for c in coros:
        c.close()
    del coros
    churn_dyn(rng)


def churn_main(stop):
    set_comm("py-churn")
    rng = random.Random(7)
    rounds = 0
    while not stop.is_set():
        churn_round(rng)
        rounds += 1
    print(f"churn: {rounds} rounds", flush=True)


def burn_steady(n):
    x = 0
    for i in range(n):
        x ^= i
    return x


def steady_main(stop):
    set_comm("py-steady")
    while not stop.is_set():
        burn_steady(20000)


def main(seconds):
    stop = threading.Event()
    threads = [threading.Thread(target=f, args=(stop,)) for f in (churn_main, steady_main)]
    for t in threads:
        t.start()
    print("churn: running", flush=True)
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main(float(sys.argv[1]))
