# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The Python walker verified only when needed (issue 31): what a start
costs without a Python process and with one.

ROUNDS interleaved rounds of two 1 s profiles at 99 Hz, each of one -p
target: burn (no Python: do_sample alone is verified) and Debian's
python3.11 running tests/workloads/py/hot.py (the walker, do_sample_interp,
is loaded too, before the first sample).  From each run's -v: do_sample's
and the walker's verified instructions and load times; from wait4(): the
profiler's CPU time, user and system (the verifier runs in the bpf()
call, as system time).  Medians.
"""
import os
import re
import subprocess as sp
import time
from util import log, median

ROUNDS = 5
PY = "/usr/bin/python3.11"
INSNS = re.compile(r"^profile: verified instructions: do_sample (\d+),", re.M)
LOAD = re.compile(r"^profile: BPF load: ([0-9.]+) ms", re.M)
WALKER = re.compile(r"^profile: interpreter walker: do_sample_interp loaded on first need in "
                    r"([0-9.]+) ms, (\d+) instructions verified", re.M)


def one(b, pid, tag, rnd):
    """profile -v -p pid 1: its -v numbers and CPU seconds."""
    err = os.path.join(b.tmp, f"lazy-{tag}-{rnd}.err")
    with open(err, "w") as e:
        p = sp.Popen([b.profile, "-v", "-F", "99", "-f", "-p", str(pid), "1"],
                     stdout=sp.DEVNULL, stderr=e)
        _, status, ru = os.wait4(p.pid, 0)
    with open(err) as f:
        text = f.read()
    m, l, w = INSNS.search(text), LOAD.search(text), WALKER.search(text)
    return {"ok": status == 0,
            "do_sample": int(m.group(1)) if m else None,
            "load_ms": float(l.group(1)) if l else None,
            "walker": int(w.group(2)) if w else None,
            "walker_ms": float(w.group(1)) if w else None,
            "user": ru.ru_utime, "sys": ru.ru_stime}


def case(b):
    """Run by bench.py with its Bench object; returns the case's dict."""
    hot = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "tests", "workloads", "py", "hot.py")
    wls = [("no_python", [os.path.join(b.wl, "burn"), "-d", "30"])]
    if os.access(PY, os.X_OK):
        wls.append(("python", [PY, hot, "30"]))
    else:
        log(f"lazy: no {PY}: the run with Python is left out")
    procs = {tag: sp.Popen(cmd, stdout=sp.DEVNULL) for tag, cmd in wls}
    time.sleep(1)
    runs = {tag: [] for tag, _ in wls}
    try:
        for rnd in range(ROUNDS):
            for tag, _ in (wls if rnd % 2 == 0 else wls[::-1]):
                runs[tag].append(one(b, procs[tag].pid, tag, rnd))
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
    out = {"rounds": ROUNDS, "runs": runs}
    for tag, rs in runs.items():
        rs = [r for r in rs if r["ok"]]
        out[tag] = {k: median([r[k] for r in rs])
                    for k in ("do_sample", "load_ms", "walker", "walker_ms", "user", "sys")}
        log(f"lazy: {tag}: {out[tag]}")
    return out


def fmt(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def report(res, w):
    """Lines for the table; returns the targets (label, value, pass)."""
    if not res:
        return []
    w("")
    w(f"The Python walker loaded on first need (issue 31): 1 s profiles at 99 Hz of -p burn "
      f"and of -p python3.11 hot.py, medians of {res['rounds']} rounds")
    for tag in ("no_python", "python"):
        r = res.get(tag)
        if not r:
            continue
        w(f"  {tag:10} do_sample {fmt(r['do_sample'], 0)} insns, loaded in {fmt(r['load_ms'])} ms; "
          f"walker {fmt(r['walker'], 0)} insns in {fmt(r['walker_ms'])} ms; "
          f"CPU {fmt(r['user'], 3)} s user, {fmt(r['sys'], 3)} s system")
    r = res.get("no_python") or {}
    return [("no Python: no walker verified, do_sample <= 20,000 insns",
             fmt(r.get("do_sample"), 0),
             r.get("walker") is None and (r.get("do_sample") or 1e9) <= 20000)]
