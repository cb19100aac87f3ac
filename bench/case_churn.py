# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A host that starts many short processes (issue 31, whole-host cost
with other processes): a shell loop starts, one after another for DUR
seconds, a Python that imports json and re and sums squares for a few
milliseconds, a pipeline `ls | sort | head`, and a gzip of /etc/services:
five processes a round, about 100 a second here.  Ours (`profile -F 999
-f -v`) and perf (`perf record -a -g -F 999`, then `perf script`), one
after the other, alternated, each on a loop of its own: the profiler's
CPU from wait4() (perf: record + script), and from ours' -v the processes
seen, the unwinder's syncs, the share of user stacks that reach a root
and its CPU line.  perf's -g walks frame pointers only: its stacks of
Debian's programs, built without them, are shorter and cheaper than
ours.  Target: ours at most perf's all the same.
"""
import os
import re
import subprocess as sp
import time
from util import log, median

ROUNDS = 2
DUR = 8
# bash's own clock (EPOCHREALTIME, microseconds): no process of its own.
CHURN = r'''
end=$(( ${{EPOCHREALTIME//[.,]/}} + {dur_us} ))
n=0
while [ "${{EPOCHREALTIME//[.,]/}}" -lt "$end" ]; do
    python3 -c 'import json, re; s = sum(i * i for i in range(200000))'
    ls /usr/lib | sort | head -3 >/dev/null
    gzip -c /etc/services >/dev/null
    n=$((n + 5))
done
echo "$n" >"{out}"
'''
SEEN = re.compile(r"^profile: processes: (\d+) seen", re.M)
SYNCS = re.compile(r"\((\d+) syncs, (\d+) failed", re.M)
CPU_LINE = re.compile(r"^profile: CPU: .*$", re.M)
WHOLE = re.compile(r"user stack completeness: ([0-9.]+)% of (\d+) samples", re.M)


def churn(b, tag):
    """Start the churn; returns (Popen, file that gets its process count)."""
    out = os.path.join(b.tmp, f"churn-{tag}.n")
    p = sp.Popen(["bash", "-c", CHURN.format(dur_us=int((DUR + 0.5) * 1e6), out=out)],
                 stdout=sp.DEVNULL, stderr=sp.DEVNULL)
    return p, out


def stop(c):
    """The loop ends by itself; on an error in between, end it here."""
    if c.poll() is None:
        c.kill()
    c.wait()


def timed(cmd, stdout, stderr):
    """Run cmd; its wait status, CPU seconds (user + system), peak RSS KiB."""
    p = sp.Popen(cmd, stdout=stdout, stderr=stderr)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return status, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def ours(b, rnd):
    base = os.path.join(b.tmp, f"churn-ours-{rnd}")
    c, n = churn(b, f"ours-{rnd}")
    try:
        time.sleep(0.2)
        with open(base + ".folded", "w") as o, open(base + ".err", "w") as e:
            status, cpu, rss = timed([b.profile, "-F", "999", "-f", "-v", str(DUR)], o, e)
        c.wait()
    finally:
        stop(c)
    with open(base + ".err") as f:
        text = f.read()
    seen, syncs, whole = SEEN.search(text), SYNCS.search(text), WHOLE.search(text)
    line = CPU_LINE.search(text)
    return {"ok": status == 0, "cpu": cpu, "rss_kb": rss, "started": started(n),
            "seen": int(seen.group(1)) if seen else None,
            "syncs": int(syncs.group(1)) if syncs else None,
            "whole": float(whole.group(1)) if whole else None,
            "cpu_line": line.group(0) if line else None}


def perf(b, rnd):
    base = os.path.join(b.tmp, f"churn-perf-{rnd}")
    c, n = churn(b, f"perf-{rnd}")
    try:
        time.sleep(0.2)
        with open(base + ".err", "w") as e:
            s1, rec, rss1 = timed([b.perf, "record", "-a", "-g", "-F", "999", "-o",
                                   base + ".data", "--", "sleep", str(DUR)], sp.DEVNULL, e)
        c.wait()
    finally:
        stop(c)
    with open(base + ".txt", "w") as o, open(base + ".script.err", "w") as e:
        s2, scr, rss2 = timed([b.perf, "script", "-i", base + ".data"], o, e)
    for p in (base + ".data", base + ".txt"):
        if not b.a.keep and os.path.exists(p):
            os.unlink(p)
    return {"ok": s1 == 0 and s2 == 0, "cpu": rec + scr, "record": rec, "script": scr,
            "rss_kb": max(rss1, rss2), "started": started(n)}


def started(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def case(b):
    """Run by bench.py with its Bench object; returns the case's dict."""
    log(f"churn: short processes for {DUR} s, ours and perf record + script, "
        f"{ROUNDS} rounds alternated")
    runs = {"ours": [], "perf": []}
    for rnd in range(ROUNDS):
        order = (("ours", ours), ("perf", perf))
        for tool, fn in (order if rnd % 2 == 0 else order[::-1]):
            r = fn(b, rnd)
            runs[tool].append(r)
            log(f"  {tool}: cpu {r['cpu']:.3f} s, {r.get('started')} processes started"
                + (f", {r['seen']} seen, {r['syncs']} syncs, {r['whole']}% whole"
                   if tool == "ours" else ""))
    out = {"dur": DUR, "rounds": ROUNDS, "runs": runs}
    for tool, rs in runs.items():
        rs = [r for r in rs if r["ok"]]
        out[tool] = {k: median([r.get(k) for r in rs if r.get(k) is not None])
                     for k in ("cpu", "rss_kb", "started", "seen", "syncs", "whole")}
    return out


def report(res, w):
    """Lines for the table; returns the targets (label, value, pass)."""
    if not res or not (res.get("ours") or {}).get("cpu") or not (res.get("perf") or {}).get("cpu"):
        return []
    o, p = res["ours"], res["perf"]
    ratio = o["cpu"] / p["cpu"] if o.get("cpu") and p.get("cpu") else None
    w(f"\nShort processes (issue 31): {res['dur']} s of a loop starting Python, ls | sort | "
      f"head and gzip, whole host, 999 Hz, medians of {res['rounds']} rounds "
      f"(perf -g walks frame pointers only: shorter stacks)")
    w(f"  ours  CPU {o['cpu'] * 1000:.0f} ms, peak RSS {o['rss_kb'] / 1024:.1f} MiB, "
      f"{o['started']} processes started, {o['seen']} seen, {o['syncs']} unwinder syncs, "
      f"user stacks whole {o['whole']}%")
    w(f"  perf  CPU {p['cpu'] * 1000:.0f} ms (record + script), peak RSS "
      f"{p['rss_kb'] / 1024:.1f} MiB, {p['started']} processes started")
    for r in res["runs"]["ours"]:
        if r.get("cpu_line"):
            w(f"  ours -v: {r['cpu_line']}")
    return [("short processes: CPU <= perf record + script",
             "-" if ratio is None else f"{ratio:.2f}x",
             ratio is not None and ratio <= 1.0)]
