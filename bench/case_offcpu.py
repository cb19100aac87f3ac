"""case_offcpu: off-CPU time against a known answer, and its cost under
heavy switching, beside libbpf-tools' offcputime (issue 29).

answer  tests/workloads/offcpu (no frame pointers) blocks its main thread
        in func_a 6 ms, func_b 2 ms and func_c 4 ms (a pipe another thread
        writes to): profile --off-cpu -f -L TID (the main thread) for SECS
        s, and libbpf-tools offcputime -t TID on the same thread at the
        same time.  Truth: func_a/func_b = 3.0, func_c/func_b = 2.0, the
        thread blocked for the whole duration (it uses microseconds of CPU
        a round), every stack under main.  whole = the share of the
        thread's blocked time in stacks with a frame main.
cost    `taskset -c 0 perf bench sched pipe -l LOOPS` (two tasks on one
        CPU, a switch each way per round trip): its "Total time" alone,
        beside profile --off-cpu (whole host, until SIGINT), beside
        profile --off-cpu -m 1000 (bcc-style threshold: shorter blocks are
        counted and never unwound), and beside offcputime (whole host).
        A tool is started, the bench is run once its BPF links are
        attached and have stayed the same for 0.5 s, then the tool gets
        SIGINT.  Conditions interleaved, order rotated, medians of ROUNDS;
        added = median beside - median alone.  Ours unwinds whole stacks
        meanwhile: the share of sched-pipe's blocked time in stacks with a
        root frame (_start, __libc_start_main, clone3...) among their three
        outermost, the lowest of the rounds.  Targets: added by ours <=
        added by offcputime; with -m 1000, less than without.
"""
import os
import re
import signal
import statistics
import subprocess as sp
import time

SECS = 5
LOOPS = 200000
ROUNDS = 3
OFFCPUTIME = "/usr/sbin/offcputime"
CONDS = ("alone", "ours", "ours_m1000", "offcputime")


def log(msg):
    print(f"  offcpu: {msg}", flush=True)


def links(pid):
    """BPF links and perf events the process holds."""
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                t = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            n += t in ("anon_inode:bpf_link", "anon_inode:[perf_event]")
    except OSError:
        return None
    return n


def wait_attached(p, timeout=30):
    """True once p holds a link and the count has not moved for 0.5 s."""
    last, since, end = -1, time.monotonic(), time.monotonic() + timeout
    while time.monotonic() < end and p.poll() is None:
        n = links(p.pid)
        if n != last:
            last, since = n, time.monotonic()
        elif n and time.monotonic() - since >= 0.5:
            return True
        time.sleep(0.1)
    return False


def stop(p, timeout=60):
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout)
    except sp.TimeoutExpired:
        p.kill()
        p.wait()


def fold_offcputime(path):
    """offcputime's blocks (frames leaf first, '- comm (pid)', count) as
    (frames, count) pairs."""
    out, frames = [], []
    with open(path, errors="replace") as f:
        for line in f:
            s = line.strip()
            if not s:
                frames = []
            elif line.startswith("    -"):
                pass
            elif line.startswith("        ") and s.isdigit():
                out.append((frames, int(s)))
                frames = []
            elif line.startswith("    "):
                frames.append(s)
    return out


def fold_ours(path, comm=None):
    """Folded lines as (frames, us) pairs, of one comm if given."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            st, _, n = line.rstrip("\n").rpartition(" ")
            fr = st.split(";")
            if st and n.isdigit() and comm in (None, fr[0]):
                out.append((fr[1:], int(n)))
    return out


def answer(stacks, secs):
    """The known answer's measures from (frames, us) pairs."""
    def us(name):
        return sum(n for fr, n in stacks if name in fr)
    tot = sum(n for _, n in stacks)
    a, b, c = us("func_a"), us("func_b"), us("func_c")
    return {"func_a_us": a, "func_b_us": b, "func_c_us": c, "total_us": tot,
            "a_b": a / b if b else None, "c_b": c / b if b else None,
            "blocked_vs_wall": tot / (secs * 1e6),
            "whole": us("main") / tot if tot else None}


def run_answer(b):
    res = {}
    wl = sp.Popen([os.path.join(b.wl, "offcpu"), "-d", str(SECS + 15)],
                  stdout=sp.PIPE, text=True)
    try:
        wl.stdout.readline()            # "offcpu: running"
        ours_out = os.path.join(b.out, "offcpu-answer-ours.folded")
        oct_out = os.path.join(b.out, "offcpu-answer-offcputime.txt")
        with open(ours_out, "w") as o, open(ours_out + ".err", "w") as e:
            ours = sp.Popen([b.profile, "--off-cpu", "-f", "-v", "-L", str(wl.pid), str(SECS)],
                            stdout=o, stderr=e)
        oct_p = None
        if os.access(OFFCPUTIME, os.X_OK):
            with open(oct_out, "w") as o:
                oct_p = sp.Popen([OFFCPUTIME, "-t", str(wl.pid), str(SECS)],
                                 stdout=o, stderr=sp.STDOUT)
        ours.wait(SECS + 60)
        res["ours"] = answer(fold_ours(ours_out), SECS)
        if oct_p:
            oct_p.wait(SECS + 60)
            res["offcputime"] = answer(fold_offcputime(oct_out), SECS)
    finally:
        wl.kill()
        wl.wait()
    return res


ROOTS = ("_start", "__libc_start_main", "__libc_start_call_main", "clone3", "start_thread")


def bench_whole(path):
    """The share of perf bench's blocked time (comm sched-pipe) in stacks
    with a root frame among their three outermost: unwound whole."""
    tot = whole = 0
    try:
        stacks = fold_ours(path, "sched-pipe")
    except OSError:
        return None
    for fr, n in stacks:
        if not fr:
            continue
        tot += n
        whole += n * any(f in ROOTS for f in fr[:3])
    return whole / tot if tot else None


def bench_once(b):
    r = sp.run(["taskset", "-c", "0", b.perf, "bench", "sched", "pipe", "-l", str(LOOPS)],
               capture_output=True, text=True)
    m = re.search(r"Total time:\s*([\d.]+)", r.stdout)
    return float(m[1]) if m else None


def beside(b, cond, rnd):
    """The bench's seconds with cond's tool running, or None."""
    if cond == "alone":
        return bench_once(b)
    base = os.path.join(b.out, f"offcpu-cost-{rnd}-{cond}")
    if cond == "offcputime":
        if not os.access(OFFCPUTIME, os.X_OK):
            return None
        cmd = [OFFCPUTIME]
    else:
        cmd = [b.profile, "--off-cpu", "-f", "-v"] + (["-m", "1000"] if cond == "ours_m1000" else [])
    with open(base + ".out", "w") as o, open(base + ".err", "w") as e:
        p = sp.Popen(cmd, stdout=o, stderr=e)
    try:
        if not wait_attached(p):
            log(f"{cond} never attached (see {base}.err)")
            return None
        return bench_once(b)
    finally:
        stop(p)


def case(b):
    """Run by bench.py with its Bench object; returns the case's dict."""
    res = {"secs": SECS, "loops": LOOPS, "rounds": ROUNDS}
    t = time.monotonic()
    res["answer"] = run_answer(b)
    for tool, r in res["answer"].items():
        log(f"{tool}: a/b {r['a_b']}, c/b {r['c_b']}, blocked/wall {r['blocked_vs_wall']:.3f}, "
            f"whole {r['whole']}")
    runs = {c: [] for c in CONDS}
    for rnd in range(ROUNDS):
        order = CONDS[rnd % len(CONDS):] + CONDS[:rnd % len(CONDS)]
        for c in order:
            runs[c].append(beside(b, c, rnd))
        log(f"round {rnd + 1}: " + ", ".join(f"{c} {runs[c][-1]}" for c in CONDS))
    res["runs"] = runs
    res["bench_whole"] = {c: [bench_whole(os.path.join(b.out, f"offcpu-cost-{r}-{c}.out"))
                              for r in range(ROUNDS)] for c in ("ours", "ours_m1000")}
    med = {c: statistics.median([x for x in v if x is not None]) if any(
        x is not None for x in v) else None for c, v in runs.items()}
    res["median_secs"] = med
    res["added_secs"] = {c: (None if med[c] is None or med["alone"] is None
                             else med[c] - med["alone"]) for c in CONDS if c != "alone"}
    res["case_secs"] = round(time.monotonic() - t, 1)
    return res


def fmt(x, nd=3):
    return "-" if x is None else f"{x:.{nd}f}"


def report(res, w):
    """Lines for the table; returns the targets (label, value, pass)."""
    if not res:
        return []
    targets = []
    w("")
    w(f"Off-CPU time (issue 29): offcpu's main thread, {res['secs']} s, no frame pointers "
      "(truth: a/b 3.000, c/b 2.000, blocked/wall 1.000, whole 100%)")
    for tool, r in (res.get("answer") or {}).items():
        w(f"  {tool:12} a/b {fmt(r['a_b'])}  c/b {fmt(r['c_b'])}  blocked/wall "
          f"{fmt(r['blocked_vs_wall'])}  whole {fmt(None if r['whole'] is None else 100 * r['whole'], 1)}%")
    o = (res.get("answer") or {}).get("ours")
    if o:
        def near(x, want):
            return x is not None and abs(x / want - 1) <= 0.10
        targets += [
            ("off-CPU: func_a/func_b 3.0 within 10%", fmt(o["a_b"]), near(o["a_b"], 3.0)),
            ("off-CPU: func_c/func_b 2.0 within 10%", fmt(o["c_b"]), near(o["c_b"], 2.0)),
            ("off-CPU: blocked time = wall within 10%", fmt(o["blocked_vs_wall"]),
             near(o["blocked_vs_wall"], 1.0)),
            ("off-CPU: stacks under main >= 99%", fmt(None if o["whole"] is None else 100 * o["whole"], 2) + "%",
             o["whole"] is not None and o["whole"] >= 0.99)]
    med, add = res.get("median_secs") or {}, res.get("added_secs") or {}
    w(f"  cost: taskset -c 0 perf bench sched pipe -l {res['loops']}, seconds, medians of "
      f"{res['rounds']} interleaved rounds")
    for c in CONDS:
        w(f"    {c:12} {fmt(med.get(c), 2)} s" +
          ("" if c == "alone" else f"  (+{fmt(add.get(c), 2)} s)") +
          "   runs: " + " ".join(fmt(x, 2) for x in res["runs"][c]))
    for c, v in (res.get("bench_whole") or {}).items():
        v = [x for x in v if x is not None]
        w(f"    {c}: sched-pipe's blocked time in stacks unwound to their root (_start, "
          f"__libc_start_main...): {fmt(100 * min(v), 2) if v else '-'}% at least")
    ao, am, ab = add.get("ours"), add.get("ours_m1000"), add.get("offcputime")
    targets.append(("off-CPU cost: added <= offcputime's", f"{fmt(ao, 2)} s vs {fmt(ab, 2)} s",
                    None not in (ao, ab) and ao <= ab))
    targets.append(("off-CPU cost: -m 1000 adds less", f"{fmt(am, 2)} s vs {fmt(ao, 2)} s",
                    None not in (ao, am) and am < ao))
    return targets
