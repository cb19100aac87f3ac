"""case_pyexact: Python frames merged exactly with the native ones (issue 28).

For every CPython present (Debian's /usr/bin/python3.11, pyenv's 3.8 to
3.13 under /root/.pyenv/versions), tests/workloads/py/exact.py runs with no
thread and with two more, each profiled alone with -p for a few seconds;
tests/e2e/helpers/pyexact, which knows the workload's call graph, counts
the samples with a C function at the boundary of an interpreter call under
the wrong Python frame (misplaced, of the samples with such a function),
those whose Python frames are not a path of the program (impossible, of
all its samples), and those marked [python: unaligned].  Target: <= 1% of
each on every version, with and without threads.
"""
import glob
import os
import re
import subprocess as sp
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
WORKLOAD = os.path.join(ROOT, "tests", "workloads", "py", "exact.py")
CHECKER = os.path.join(ROOT, "tests", "e2e", "helpers", "pyexact")
SECS = 3
TARGET_PCT = 1.0


def pythons():
    """(label, path) of each CPython 3.8+ on the machine."""
    out = []
    if os.access("/usr/bin/python3.11", os.X_OK):
        out.append(("debian-3.11", "/usr/bin/python3.11"))
    for v in ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13"):
        for p in sorted(glob.glob(f"/root/.pyenv/versions/{v}.*/bin/python3")):
            out.append(("pyenv-" + p.split("/")[-3], p))
    return out


def one_run(profile, py, threads, out):
    """pyexact's counts for one profiled run of exact.py, or None."""
    wl = sp.Popen([py, WORKLOAD, str(SECS + 3), str(threads)], stdout=sp.PIPE, text=True)
    try:
        wl.stdout.readline()            # "exact: running"
        with open(out, "w") as f:
            sp.run([profile, "-U", "-F", "499", "-p", str(wl.pid), "-f", str(SECS)],
                   stdout=f, stderr=sp.DEVNULL, check=False, timeout=SECS + 30)
    finally:
        wl.kill()
        wl.wait()
    r = sp.run(["python3", CHECKER, out], capture_output=True, text=True)
    if r.returncode:
        return None
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", r.stdout)}


def case_pyexact(b):
    """Run by bench.py with its Bench object; returns the case's dict."""
    res = {"secs": SECS, "runs": {}}
    for label, py in pythons():
        for threads in (0, 2):
            name = f"{label} threads={threads}"
            t = time.monotonic()
            r = one_run(b.profile, py, threads, os.path.join(b.out, f"pyexact-{label}-{threads}.folded"))
            res["runs"][name] = r
            if r:
                print(f"  pyexact {name}: {int(r['samples'])} samples, misplaced "
                      f"{r['misplaced_pct']:.2f}% of {int(r['boundary'])}, impossible "
                      f"{r['impossible_pct']:.2f}%, unaligned {int(r['unaligned'])} "
                      f"({time.monotonic() - t:.1f} s)", flush=True)
    return res


def report_pyexact(res, w):
    """Lines for the table; returns the targets (label, value, pass)."""
    runs = res.get("runs") or {}
    if not runs:
        return []
    w("")
    w(f"Python merged exactly (exact.py, {res.get('secs')} s each; misplaced: % of the "
      "samples with a boundary C function; impossible: % of all)")
    worst_m = worst_i = 0.0
    ok = True
    for name, r in runs.items():
        if not r:
            w(f"  {name:34} FAILED")
            ok = False
            continue
        worst_m = max(worst_m, r["misplaced_pct"])
        worst_i = max(worst_i, r["impossible_pct"])
        w(f"  {name:34} samples {int(r['samples']):6}  misplaced {r['misplaced_pct']:5.2f}%  "
          f"impossible {r['impossible_pct']:5.2f}%  unaligned {int(r['unaligned'])}")
    return [("Python: misplaced C frames, worst version", f"{worst_m:.2f}%",
             ok and worst_m <= TARGET_PCT),
            ("Python: impossible paths, worst version", f"{worst_i:.2f}%",
             ok and worst_i <= TARGET_PCT)]
