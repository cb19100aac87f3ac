# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Every first sample whole (issue 31): Debian's python3, perl, gzip,
sqlite3 and bash started afresh, ROUNDS times each, one after another,
each for a fraction of a second, under a whole-host profile and, at the
same time, a whole-host perf record --call-graph dwarf: the share of each
program's samples whose stack is whole (stackstats: a root among the three
outermost frames), ours and perf's.

A process's first samples are the ones at stake: those taken before the
unwinder has its mapping list.  Each program is run through a symlink
named fw-NAME, so that its samples are told from the host's other
processes by comm (exec names it after the link) while its file, and the
tables compiled from it, are Debian's own.  The first round compiles each
program's table; it counts like the others.
"""
import os
import subprocess as sp
import sys
import time
from util import log

ROUNDS = 20	# about 500 samples each of sqlite3 and bash, the shortest
FREQ = 499
SETTLE = 1.5		# seconds between the start of the profilers and the first program
PY = ("import time\nt = time.time()\ns = 0\n"
      "while time.time() - t < 0.2:\n    s += sum(i * i for i in range(1000))\n")
PL = ("use Time::HiRes qw(time); my $t = time; my $s = 0; "
      "while (time - $t < 0.2) { $s += $_ * $_ for 1 .. 1000 }")
SQL = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) "
       "SELECT sum(x * x % 7) FROM c;")
SH = "i=0; s=0; while [ $i -lt 20000 ]; do s=$((s + i * i)); i=$((i + 1)); done"


def programs(b, d):
    """(comm, command line): each about 0.1-0.3 s of CPU."""
    text = os.path.join(d, "gzip-input.txt")
    with open(text, "w") as f:
        for i in range(1, 300001):
            f.write(f"{i * 7919 % 100003} lorem {i % 97} ipsum dolor\n")
    real = {"python3": "/usr/bin/python3", "perl": "/usr/bin/perl", "gzip": "/bin/gzip",
            "sqlite3": "/usr/bin/sqlite3", "bash": "/bin/bash"}
    link = {}
    for name, path in real.items():
        link[name] = os.path.join(d, "fw-" + name)
        if os.path.lexists(link[name]):
            os.unlink(link[name])
        os.symlink(os.path.realpath(path), link[name])
    return (("fw-python3", [link["python3"], "-c", PY]),
            ("fw-perl", [link["perl"], "-e", PL]),
            ("fw-gzip", [link["gzip"], "-9", "-c", text]),
            ("fw-sqlite3", [link["sqlite3"], ":memory:", SQL]),
            ("fw-bash", [link["bash"], "-c", SH]))


def stats(stackstats, path, comm, perf):
    """stackstats -c COMM on a folded or perf script file."""
    cmd = [sys.executable, stackstats, "-c", comm] + (["--perf"] if perf else []) + [path]
    p = sp.run(cmd, capture_output=True, text=True)
    st = dict(kv.split("=", 1) for kv in p.stdout.split() if "=" in kv)
    try:
        return {"samples": int(st["samples"]), "complete": float(st["complete"]),
                "depth": float(st["depth"])}
    except (KeyError, ValueError):
        return {}


def case(b):
    """b: bench.py's Bench (profile, perf, name(), out)."""
    d = os.path.join(b.out, "firstwhole")
    os.makedirs(d, exist_ok=True)
    progs = programs(b, d)
    secs = int(SETTLE + ROUNDS * len(progs) * 0.4 + 3)
    log(f"firstwhole: {', '.join(c for c, _ in progs)} afresh, {ROUNDS} rounds, "
        f"whole host, {FREQ} Hz, ours and perf dwarf at once")
    base = b.name("firstwhole")
    ours = base + ".folded"
    with open(ours, "w") as o, open(base + ".err", "w") as e:
        prof = sp.Popen([b.profile, "-a", "-F", str(FREQ), "-f", str(secs)], stdout=o, stderr=e)
    perf = None
    if b.perf:
        perf = sp.Popen([b.perf, "record", "-q", "-e", "cpu-clock", "--call-graph", "dwarf",
                         "-F", str(FREQ), "-a", "-o", base + ".data", "--", "sleep", str(secs)],
                        stdout=sp.DEVNULL, stderr=open(base + ".perf.err", "w"))
    time.sleep(SETTLE)
    for _ in range(ROUNDS):
        for _, cmd in progs:
            sp.run(cmd, stdout=sp.DEVNULL, stderr=sp.DEVNULL)
    out = {"rounds": ROUNDS, "freq": FREQ, "exit": prof.wait(secs + 60), "programs": {}}
    script = None
    if perf:
        out["perf_exit"] = perf.wait(secs + 60)
        script = base + ".perf"
        with open(script, "w") as f:
            sp.run([b.perf, "script", "-F", "comm,tid,ip,sym,dso", "-i", base + ".data"],
                   stdout=f, stderr=sp.DEVNULL)
        if not getattr(b.a, "keep", False) and os.path.exists(base + ".data"):
            os.unlink(base + ".data")
    helper = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "tests", "e2e", "helpers", "stackstats")
    for comm, _ in progs:
        r = {"ours": stats(helper, ours, comm, False)}
        if script:
            r["perf"] = stats(helper, script, comm, True)
        out["programs"][comm] = r
        log(f"  {comm}: ours {r['ours'].get('complete')}% of {r['ours'].get('samples')}, "
            f"perf {r.get('perf', {}).get('complete')}% of {r.get('perf', {}).get('samples')}")
    return out


def fmt(x, nd=2):
    return "-" if x is None else f"{x:.{nd}f}"


def report(res, w):
    """Lines for the table; the targets as (label, measured, pass)."""
    if not res or not res.get("programs"):
        return []
    w("")
    w(f"First samples (issue 31): each program afresh, {res['rounds']} rounds of about 0.2 s, "
      f"whole host, {res['freq']} Hz, ours and perf record --call-graph dwarf at once")
    w(f"{'':12} {'ours whole %':>13} {'samples':>8} {'perf whole %':>13} {'samples':>8}")
    targets = []
    for comm, r in res["programs"].items():
        o, p = r.get("ours") or {}, r.get("perf") or {}
        w(f"{comm:12} {fmt(o.get('complete')):>13} {o.get('samples') or 0:>8}"
          f" {fmt(p.get('complete')):>13} {p.get('samples') or 0:>8}")
        targets.append((f"{comm} afresh: >= 99.8% whole", f"{fmt(o.get('complete'))}%",
                        (o.get("complete") or 0) >= 99.8))
    return targets
