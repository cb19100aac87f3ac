"""exiting.py: a Python process that is gone before the profile ends.

    exiting.py [SECONDS]

Prints "exiting: started", burns SECONDS (default 2) of CPU time and
exits: three quarters of it in burn_until_exit, the last quarter in
final_burst, a function compiled only then, so that its code object exists
only in the last half second of the process's life.
"""
import sys
import time

FINAL = '''
def final_burst(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for i in range(2000):
            x ^= i
    return x
'''


def burn_until_exit(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for i in range(2000):
            x ^= i
    return x


def main(seconds):
    print("exiting: started", flush=True)
    burn_until_exit(seconds * 0.75)
    ns = {"time": time}
    exec(compile(FINAL, __file__, "exec"), ns)
    ns["final_burst"](seconds * 0.25)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
