"""hot.py: a Python workload with a known answer.

    hot.py SECONDS [NAME]

main() loops for SECONDS of this thread's CPU time (time.thread_time),
calling hot_a(n) once and then hot_b(3 * n).  Both run the same loop,
spin(), so hot_b runs three times as long as hot_a, and a correct profiler
sees hot_b on-CPU three times as often: stacks read
main (hot.py);hot_b (hot.py);spin (hot.py).  The loop is one function
rather than a copy in each: two copies of the same loop, at addresses that
address-space randomization picks for each run, differed in speed by up to
7% in some runs (2.80 instead of 3.0 by Python's own clock); one loop
measures 2.98 to 3.02.  n is drawn at random each round (N/2 .. 3N/2, fixed
seed), so that the loop has no fixed period for a sampling timer to lock
onto (see tests/workloads/burn.c).

NAME, if given, becomes the thread's comm (prctl PR_SET_NAME), so that a
whole-host profile can be filtered by it.  The loop is on one line, so that
with --py-lines every sample of spin names that line; tests find the lines
with grep -n on the markers "# loop", "# call-a", "# call-b" (the calls
of spin), "# main-a", "# main-b" (the calls in main) and "# module" (the
call of main).

It prints "hot: running" as main() starts, and on exit "hot: a=SECONDS
b=SECONDS ratio=R", the CPU time spent in each function by Python's own
clock.
"""
import random
import sys
import time

N = 20000


def spin(n):
    for i in range(n): pass  # loop


def hot_a(n):
    spin(n)  # call-a


def hot_b(n):
    spin(n)  # call-b


def set_comm(name):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(15, name.encode()[:15], 0, 0, 0)     # PR_SET_NAME


def main(seconds):
    rng = random.Random(1)
    clock = time.thread_time
    ta = tb = 0.0
    print("hot: running", flush=True)
    end = clock() + seconds
    while clock() < end:
        n = rng.randrange(N // 2, 3 * N // 2)
        t0 = clock()
        hot_a(n)  # main-a
        t1 = clock()
        hot_b(3 * n)  # main-b
        t2 = clock()
        ta += t1 - t0
        tb += t2 - t1
    print(f"hot: a={ta:.3f} b={tb:.3f} ratio={tb / ta if ta else 0:.3f}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2:
        set_comm(sys.argv[2])
    main(float(sys.argv[1]))  # module
