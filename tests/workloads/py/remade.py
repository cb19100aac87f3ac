"""remade.py: code objects freed and made anew where the last one was.

    remade.py SECONDS [MS]

Two call paths, each ending in a function made anew for every turn and
dropped once it has run for MS milliseconds of CPU (default 10):

    <module>;main;stage_a;alpha_K      <module>;main;stage_b;beta_K

K counts the turns, alpha's and beta's in turn.  Each is a copy of one
template's code object under a new name (code.replace()): CPython gives it
the memory of the one just freed, and its name the memory of the last name,
so that the code object's address, and often its name's, are those of
another function with another name.  A profiler that names a frame by the
code object's address (and fields that point elsewhere) shows beta_K
under stage_a, or one name for many turns.  Prints "remade: running" once
the first turn begins, and "remade: N turns" at the end.
"""
import sys
import time
import types


def template(ms):
    end = time.thread_time() + ms / 1000.0
    x = 0
    while time.thread_time() < end:
        for i in range(500):
            x ^= i
    return x


def make(kind, k):
    name = "%s_%d" % (kind, k)
    names = {"co_name": name}
    if hasattr(template.__code__, "co_qualname"):
        names["co_qualname"] = name
    return types.FunctionType(template.__code__.replace(**names), globals(), name)


def stage_a(k, ms):
    f = make("alpha", k)
    f(ms)


def stage_b(k, ms):
    f = make("beta", k)
    f(ms)


def main(seconds, ms):
    end = time.monotonic() + seconds
    k = 0
    print("remade: running", flush=True)
    while time.monotonic() < end:
        (stage_a if k % 2 == 0 else stage_b)(k, ms)
        k += 1
    print("remade: %d turns" % k, flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 10.0)
