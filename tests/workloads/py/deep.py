"""deep.py: a CPU-bound Python program at a known Python depth.

    deep.py SECONDS [DEPTH]

Every sample of it has DEPTH Python frames (default 20, at least 4):
<module>, main, DEPTH - 3 frames of down, and burn at the bottom, where
it spends SECONDS of CPU time.  The benchmark (bench/, case python)
measures the cost of walking Python frames with it.
"""
import sys
import time


def burn(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for i in range(2000):
            x ^= i
    return x


def down(n, seconds):
    if n <= 1:
        return burn(seconds)
    return down(n - 1, seconds)


def main(seconds, depth):
    down(depth - 3, seconds)


if __name__ == "__main__":
    main(float(sys.argv[1]), max(4, int(sys.argv[2]) if len(sys.argv) > 2 else 20))
