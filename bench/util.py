"""What bench.py and its case modules share: the log line and the median
that skips runs with no value."""
import statistics
import sys


def log(msg):
    sys.stderr.write(f"bench: {msg}\n")
    sys.stderr.flush()


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None
