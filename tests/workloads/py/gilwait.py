# Three threads spinning in pure Python for SECONDS (argv[1], default 4):
# one holds the GIL at a time, the others wait for it in take_gil, off the
# CPU.  Prints "gilwait: running" once the threads run.
import sys
import threading
import time


def spin(n):
    x = 0
    for i in range(n):
        x += i
    return x


def worker(end):
    while time.time() < end:
        spin(10000)


def main():
    end = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 4.0)
    threads = [threading.Thread(target=worker, args=(end,)) for _ in range(3)]
    for t in threads:
        t.start()
    print("gilwait: running", flush=True)
    for t in threads:
        t.join()


main()
