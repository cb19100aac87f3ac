# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A prefork server's workers, named from their fork (issue 31): Debian's
python3.11 runs tests/workloads/py/prefork.py, which spins a second (so
that it is found), then forks WORKERS workers at once, each spinning
0.5 s.  ROUNDS whole-host profiles of 4 s at 999 Hz (--per-thread, -v),
the loader at its normal priority and at nice -10 in turn: the share of
the processes' samples with a Python frame, the worst worker's samples
without one, and the -v count of processes found as their parent's
fork.  On 2 CPUs the 33 spinning processes leave the loader's threads
little: at nice -10 what is left is the loader's own latency.

The same start without Python: tests/workloads/forkspin (no frame
pointers) spins a second, then forks WORKERS children that spin 0.2 s
each as "forkchild": the share of the children's samples whose stack is
cut short (not whole from main, their exit included), and the -v count of
lists copied from the parent's at the fork (bpf/klist.bpf.c).
"""
import os
import re
import subprocess as sp
import time
from util import log, median

ROUNDS = 3
WORKERS = 32
PY = "/usr/bin/python3.11"
COMM = "pyprefork"
PYFRAME = re.compile(r" \(.*\.py(:[0-9]+)?\)[; ]")
FOUND = re.compile(r"(\d+) processes found as their parent's fork")
COPIED = re.compile(r"(\d+) copied from the parent's at forks")


def one(b, nice, rnd):
    """One profile of one prefork start: its counts."""
    wl = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "tests", "workloads", "py", "prefork.py")
    out = os.path.join(b.tmp, f"forkburst-{nice}-{rnd}.folded")
    err = out + ".err"
    cmd = [b.profile, "-v", "--per-thread", "-F", "999", "-f", "4"]
    if nice:
        cmd = ["nice", "-n", str(nice)] + cmd
    with open(out, "w") as o, open(err, "w") as e:
        p = sp.Popen(cmd, stdout=o, stderr=e)
        try:
            time.sleep(1)
            started = sp.run([PY, wl, str(WORKERS), "0.5", COMM]).returncode == 0
        finally:
            p.wait()
    total = unnamed = 0
    per = {}
    with open(out) as f:
        for line in f:
            if not line.startswith(COMM + "-"):
                continue
            stack, _, n = line.rstrip("\n").rpartition(" ")
            n = int(n)
            total += n
            if not PYFRAME.search(stack + " "):
                unnamed += n
                key = stack.split(";", 1)[0]
                per[key] = per.get(key, 0) + n
    with open(err) as f:
        m = FOUND.search(f.read())
    return {"ok": started and p.returncode == 0 and total > 0, "samples": total,
            "unnamed": unnamed,
            "named_pct": 100.0 * (total - unnamed) / total if total else None,
            "worst": max(per.values()) if per else 0,
            "inherited": int(m.group(1)) if m else None}


def native(b, rnd):
    """One profile of one forkspin start: its children's samples cut short."""
    out = os.path.join(b.tmp, f"forkspin-{rnd}.folded")
    err = out + ".err"
    cmd = [b.profile, "-v", "--per-thread", "-F", "999", "-f", "4"]
    with open(out, "w") as o, open(err, "w") as e:
        p = sp.Popen(cmd, stdout=o, stderr=e)
        try:
            time.sleep(1)
            started = sp.run([os.path.join(b.wl, "forkspin"), "1", str(WORKERS), "0.2"],
                             stdout=sp.DEVNULL).returncode == 0
        finally:
            p.wait()
    total = cut = 0
    with open(out) as f:
        for line in f:
            if not line.startswith("forkchild-"):
                continue
            stack, _, n = line.rstrip("\n").rpartition(" ")
            n = int(n)
            total += n
            if "__libc_start_call_main;main;" not in stack:
                cut += n
    with open(err) as f:
        m = COPIED.search(f.read())
    return {"ok": started and p.returncode == 0 and total > 0, "samples": total, "cut": cut,
            "cut_pct": 100.0 * cut / total if total else None,
            "copied": int(m.group(1)) if m else None}


def case(b):
    """Run by bench.py with its Bench object; returns the case's dict."""
    if not os.access(PY, os.X_OK):
        log(f"forkburst: no {PY}: left out")
        return {}
    runs = {"normal": [], "nice": []}
    natives = []
    for rnd in range(ROUNDS):
        runs["normal"].append(one(b, 0, rnd))
        runs["nice"].append(one(b, -10, rnd))
        natives.append(native(b, rnd))
    out = {"rounds": ROUNDS, "workers": WORKERS, "runs": runs, "native_runs": natives}
    for tag, rs in runs.items():
        rs = [r for r in rs if r["ok"]]
        out[tag] = {k: median([r[k] for r in rs])
                    for k in ("samples", "unnamed", "named_pct", "worst", "inherited")}
        log(f"forkburst: {tag}: {out[tag]}")
    rs = [r for r in natives if r["ok"]]
    out["native"] = {k: median([r[k] for r in rs]) for k in ("samples", "cut", "cut_pct", "copied")}
    log(f"forkburst: native: {out['native']}")
    return out


def fmt(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def report(res, w):
    """Lines for the table; returns the targets (label, value, pass)."""
    if not res:
        return []
    w("")
    w(f"A prefork start (issue 31): python3.11 prefork.py forks {res['workers']} workers at once, "
      f"4 s whole host at 999 Hz, medians of {res['rounds']} rounds")
    for tag, label in (("normal", "loader at normal priority"), ("nice", "loader at nice -10")):
        r = res.get(tag) or {}
        w(f"  {label:26} {fmt(r.get('named_pct'), 2)}% of {fmt(r.get('samples'), 0)} samples "
          f"with a Python frame; worst process {fmt(r.get('worst'), 0)} without; "
          f"{fmt(r.get('inherited'), 0)} found as their parent's fork")
    r = res.get("native") or {}
    w(f"  forkspin, no frame pointers: {fmt(r.get('cut_pct'), 2)}% of {fmt(r.get('samples'), 0)} "
      f"children's samples cut short; {fmt(r.get('copied'), 0)} lists copied from the parent's "
      f"at the fork")
    r = res.get("nice") or {}
    return [("prefork workers: >= 98% of samples with a Python frame (loader at nice -10)",
             fmt(r.get("named_pct"), 2), (r.get("named_pct") or 0) >= 98)]
