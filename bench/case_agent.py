"""case_agent: the agent over a long run (issue 30).

profile --otlp=URL -i 10 -v, whole host, sends to the test collector
(/opt/profile-tests/otelcol-v0.161.0/otelcol, built by scripts/build-collector;
OTLP receiver on 127.0.0.1, file exporter) for MINUTES minutes
(PROFILE_BENCH_AGENT_MINUTES, default 60) while manystacks -D 6 -t 1 keeps
~19k distinct stacks coming and about ten short-lived processes a second
(a Python one every five seconds) come and go.  Every interval (10 s) the agent's RSS (VmRSS
of /proc/PID/status) and CPU (utime + stime of /proc/PID/stat) are read.
At the end it gets SIGINT (it flushes its queue), the collector SIGTERM.

flat    as bench/soak judges it: the samples after a warm-up (5 minutes, or
        the first third of a shorter run) split in thirds; RSS is flat if the
        lowest value of the last third exceeds the lowest of the first by at
        most max(1 MiB, 5%); CPU per interval is flat if the median of the
        last third is at most 1.10 x the median of the first + 10 ms.
counts  samples the agent says it sent (its summary line) against the
        samples the collector wrote (tests/collector/otlp_read.py --totals),
        and the profiles (requests) on both sides.
"""
import os
import re
import signal
import socket
import statistics
import subprocess as sp
import time

COLLECTOR = "/opt/profile-tests/otelcol-v0.161.0/otelcol"
INTERVAL = 10
WARMUP = 300
HZ = os.sysconf("SC_CLK_TCK")


def log(msg):
    print(f"  agent: {msg}", flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def collector_config(d, port):
    """The tests' collector: the profiles pipeline only, HTTP only, the
    file exporter's JSON lines flushed every 100 ms (tests/e2e/lib.sh)."""
    path = os.path.join(d, "config.yaml")
    with open(path, "w") as f:
        f.write(f"""receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{port}
exporters:
  file:
    path: {d}/out.jsonl
    format: json
    append: true
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [otlp]
      exporters: [file]
""")
    return path


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def proc_sample(pid):
    """(RSS in KiB, CPU seconds) of pid, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return rss, (int(fields[11]) + int(fields[12])) / HZ
    except (OSError, StopIteration, IndexError, ValueError):
        return None


def thirds(xs):
    n = max(1, len(xs) // 3)
    return xs[:n], xs[-n:]


def judge(rows, secs):
    warm = min(WARMUP, secs / 3)
    after = [r for r in rows if r["t"] >= warm] or rows[-1:]
    rss = [r["rss_kb"] for r in after]
    first, last = thirds(rss)
    growth = min(last) - min(first)
    rss_limit = max(1024, 0.05 * min(first))
    cpu = [r["cpu_s"] for r in after if r.get("cpu_s") is not None]
    res = {"rss_kb_first_third_min": min(first), "rss_kb_last_third_min": min(last),
           "rss_kb_max": max(rss), "rss_growth_kb": growth, "rss_limit_kb": rss_limit,
           "rss_flat": growth <= rss_limit}
    if len(cpu) >= 3:
        cf, cl = thirds(cpu)
        mf, ml = statistics.median(cf), statistics.median(cl)
        res.update(cpu_first_third_s=mf, cpu_last_third_s=ml,
                   cpu_flat=ml <= 1.10 * mf + 0.010)
    else:
        res.update(cpu_first_third_s=None, cpu_last_third_s=None, cpu_flat=False)
    return res


def sent_counts(err):
    """(profiles, samples) sent, and (profiles, samples) dropped, from the
    agent's last line: "otlp: sent N profiles (S samples) to URL; dropped D
    (DS samples); R retries" (-v's per-report lines come before it)."""
    found = re.findall(r"otlp: sent (\d+) profiles? \((\d+) samples?\) to \S+; "
                       r"dropped (\d+) \((\d+) samples?\)", err)
    m = found[-1] if found else None
    if not m:
        return None, None, None, None
    return tuple(int(g) for g in m)


def received(root, out):
    """requests and samples the collector wrote."""
    if not os.path.exists(out):
        return None, None
    r = sp.run(["python3", os.path.join(root, "tests", "collector", "otlp_read.py"), "--totals", out],
               capture_output=True, text=True)
    tot = dict(l.split() for l in r.stdout.splitlines() if len(l.split()) == 2)
    get = lambda k: int(tot[k]) if k in tot else None  # noqa: E731
    return get("requests"), get("samples")


def case(b):
    """Run by bench.py with its Bench object; returns the case's dict."""
    minutes = float(os.environ.get("PROFILE_BENCH_AGENT_MINUTES", "60"))
    secs = int(minutes * 60)
    res = {"minutes": minutes, "interval": INTERVAL}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    help_text = sp.run([b.profile, "--help"], capture_output=True, text=True).stdout
    if not os.access(COLLECTOR, os.X_OK) or "--otlp" not in help_text:
        res["skipped"] = ("no test collector (scripts/build-collector)" if "--otlp" in help_text
                          else "this profile has no --otlp")
        log(f"skipped: {res['skipped']}")
        return res
    d = os.path.join(b.out, "agent")
    os.makedirs(d, exist_ok=True)
    out = os.path.join(d, "out.jsonl")
    if os.path.exists(out):
        os.unlink(out)
    port = free_port()
    cfg = collector_config(d, port)
    procs = []
    t0 = time.monotonic()
    try:
        with open(os.path.join(d, "collector.log"), "w") as clog:
            col = sp.Popen([COLLECTOR, "--config", cfg, "--feature-gates=service.profilesSupport"],
                           stdout=clog, stderr=sp.STDOUT)
        procs.append(col)
        for _ in range(300):
            if listening(port) or col.poll() is not None:
                break
            time.sleep(0.05)
        if not listening(port):
            res["skipped"] = f"the collector did not start (see {d}/collector.log)"
            log(res["skipped"])
            return res
        wl = sp.Popen([os.path.join(b.wl, "manystacks"), "-D", "6", "-t", "1", "-d", str(secs + 90)],
                      stdout=sp.DEVNULL, stderr=sp.DEVNULL)
        procs.append(wl)
        # Churn: about ten new processes a second (a 10 ms burn), and a
        # Python one every five seconds, so that what the agent keeps per
        # process is seen to go with the process.
        churn = sp.Popen(["sh", "-c", f'end=$(($(date +%s) + {secs + 90})); i=0; '
                          f'while [ $(date +%s) -lt $end ]; do "{b.wl}/burn" -d 0.01 -n churn; '
                          f'i=$((i + 1)); [ $((i % 50)) -ne 0 ] || python3 -c "sum(range(10**6))"; '
                          f'sleep 0.09; done'],
                         stdout=sp.DEVNULL, stderr=sp.DEVNULL, start_new_session=True)
        procs.append(churn)
        errf = os.path.join(d, "agent.err")
        with open(errf, "w") as e:
            ag = sp.Popen([b.profile, f"--otlp=http://127.0.0.1:{port}", "-i", str(INTERVAL), "-v"],
                          stdout=sp.DEVNULL, stderr=e)
        procs.append(ag)
        log(f"pid {ag.pid}, {minutes:g} min, collector on 127.0.0.1:{port}")
        rows, prev, start = [], None, time.monotonic()
        while True:
            t = time.monotonic() - start
            s = proc_sample(ag.pid)
            if s is None or ag.poll() is not None:
                res["died"] = True
                log(f"the agent exited early; see {errf}")
                break
            row = {"t": round(t, 1), "rss_kb": s[0], "cpu_total_s": s[1]}
            if prev is not None:
                row["cpu_s"] = round(s[1] - prev, 3)
            prev = s[1]
            rows.append(row)
            if t >= secs:
                break
            time.sleep(max(0.0, INTERVAL - (time.monotonic() - start) % INTERVAL))
        ag.send_signal(signal.SIGINT)
        try:
            ag.wait(90)
        except sp.TimeoutExpired:
            ag.kill()
            ag.wait()
            res["stop_timeout"] = True
        res["exit"] = ag.returncode
        time.sleep(0.5)		# the file exporter flushes every 100 ms
        col.send_signal(signal.SIGTERM)
        try:
            col.wait(30)
        except sp.TimeoutExpired:
            col.kill()
        with open(errf, errors="replace") as f:
            err = f.read()
        res["samples"] = rows
        if rows:
            res.update(judge(rows, secs))
        sp_, ss, dp, ds = sent_counts(err)
        rp, rs = received(root, out)
        res.update(sent_profiles=sp_, sent_samples=ss, dropped_profiles=dp, dropped_samples=ds,
                   received_requests=rp, received_samples=rs, stderr_tail=err[-1500:])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    res["case_secs"] = round(time.monotonic() - t0, 1)
    return res


def fmt(x, nd=0):
    return "-" if x is None else f"{x:.{nd}f}"


def report(res, w):
    """Lines for the table; returns the targets (label, value, pass)."""
    if not res:
        return []
    w("")
    w(f"Agent (issue 30): profile --otlp -i {res['interval']}, whole host, manystacks and process churn, "
      f"{res['minutes']:g} min, to the test collector")
    if res.get("skipped"):
        w(f"  skipped: {res['skipped']}")
        return []
    w(f"  RSS KiB: lowest of the first third {fmt(res.get('rss_kb_first_third_min'))}, of the last "
      f"{fmt(res.get('rss_kb_last_third_min'))}, highest {fmt(res.get('rss_kb_max'))} "
      f"(growth {fmt(res.get('rss_growth_kb'))}, limit {fmt(res.get('rss_limit_kb'))})")
    w(f"  CPU per interval, median s: first third {fmt(res.get('cpu_first_third_s'), 3)}, "
      f"last third {fmt(res.get('cpu_last_third_s'), 3)}")
    w(f"  sent {fmt(res.get('sent_profiles'))} profiles ({fmt(res.get('sent_samples'))} samples), "
      f"dropped {fmt(res.get('dropped_profiles'))}; the collector wrote "
      f"{fmt(res.get('received_requests'))} requests ({fmt(res.get('received_samples'))} samples)")
    same = (res.get("sent_samples") is not None and
            res.get("sent_samples") == res.get("received_samples") and
            res.get("sent_profiles") == res.get("received_requests"))
    alive = not res.get("died") and not res.get("stop_timeout")
    return [("agent: RSS flat after warm-up", f"{fmt(res.get('rss_growth_kb'))} KiB growth",
             alive and bool(res.get("rss_flat"))),
            ("agent: CPU per interval flat", f"{fmt(res.get('cpu_first_third_s'), 3)} -> "
             f"{fmt(res.get('cpu_last_third_s'), 3)} s", alive and bool(res.get("cpu_flat"))),
            ("agent: samples sent = received by collector",
             f"{fmt(res.get('sent_samples'))} vs {fmt(res.get('received_samples'))}", alive and same)]
