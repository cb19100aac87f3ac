"""exact.py: Python calls at the boundary of C, with known call paths.

    exact.py SECONDS [THREADS]

Every function here has a name of its own and is called from one known
place, so that a profile's stacks can be checked frame by frame
(tests/e2e/helpers/pyexact, which holds the same call graph): each Python
frame of this file must sit on the Python frame that calls it, and each C
function at the boundary (builtin_sum, sorted's, map's, a generator's send,
a property's getter) under the Python frame that called it.

The main thread (and THREADS more, default 0, each a thread_loop) run
run_round() in a loop until SECONDS of wall time have passed.  A round
calls each feature for a small amount of work, with short Python bodies so
that frames are entered and left all the time:

  f_sum_gen     sum() over the generator sum_gen (resumed from C)
  f_for_gen     a for loop over the generator loop_gen
  f_sorted      sorted(key=sort_key)
  f_map         list(map(<lambda>)) and list(filter(filter_pred))
  f_send        a coroutine (coro_outer awaiting coro_inner) driven by send()
  f_asyncio     asyncio's event loop running async_main, gathering async_task
  f_recurse     recurse, 12 deep, then recurse_leaf
  f_decorated   deco_wrapper (a decorator's wrapper) calling deco_target
  f_property    a property's getter prop_value, read in a loop

It prints "exact: running" once its threads are started.
"""
import asyncio
import functools
import sys
import threading
import time


def sum_gen(n):
    for i in range(n):
        yield i & 7


def f_sum_gen():
    return sum(sum_gen(400))


def loop_gen(n):
    for i in range(n):
        yield i


def f_for_gen():
    t = 0
    for x in loop_gen(400):
        t += x
    return t


def sort_key(x):
    return -x


def f_sorted():
    return sorted(range(300), key=sort_key)


def filter_pred(x):
    return x & 1


def f_map():
    a = list(map(lambda x: x + 1, range(300)))
    b = list(filter(filter_pred, range(300)))
    return len(a) + len(b)


class Step:
    def __await__(self):
        yield 1


async def coro_inner():
    await Step()
    return 1


async def coro_outer(n):
    t = 0
    for _ in range(n):
        t += await coro_inner()
    return t


def f_send():
    c = coro_outer(200)
    try:
        while True:
            c.send(None)
    except StopIteration:
        pass


async def async_task(n):
    t = 0
    for i in range(n):
        t += i
        if i % 50 == 0:
            await asyncio.sleep(0)
    return t


async def async_main():
    return await asyncio.gather(async_task(300), async_task(300))


def f_asyncio():
    return asyncio.run(async_main())


def recurse_leaf():
    t = 0
    for i in range(50):
        t += i
    return t


def recurse(n):
    if n == 0:
        return recurse_leaf()
    return recurse(n - 1) + 1


def f_recurse():
    return recurse(12)


def decorate(fn):
    @functools.wraps(fn)
    def deco_wrapper(*args):
        return fn(*args) + 1
    return deco_wrapper


@decorate
def deco_target(x):
    return x * 2


def f_decorated():
    t = 0
    for i in range(200):
        t += deco_target(i)
    return t


class Holder:
    def __init__(self):
        self.v = 3

    @property
    def prop_value(self):
        return self.v + 1


def f_property():
    h = Holder()
    t = 0
    for _ in range(300):
        t += h.prop_value
    return t


FEATURES = (f_sum_gen, f_for_gen, f_sorted, f_map, f_send, f_asyncio,
            f_recurse, f_decorated, f_property)


def run_round():
    for f in FEATURES:
        f()


def main_loop(deadline):
    while time.monotonic() < deadline:
        run_round()


def thread_loop(deadline):
    while time.monotonic() < deadline:
        run_round()


def main():
    seconds = float(sys.argv[1])
    nthreads = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=thread_loop, args=(deadline,))
               for _ in range(nthreads)]
    for t in threads:
        t.start()
    print("exact: running", flush=True)
    main_loop(deadline)
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
