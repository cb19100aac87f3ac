"""case_startup: the scale run warm, then right after dropping the page
cache (issue 31's cold start).

cold    manystacks -D 6 -t 2 (as msbench), ours alone, whole host, the
        scale case's frequency and duration: once on a warm cache, then
        `sync; echo 3 > /proc/sys/vm/drop_caches` and again, msbench
        started after the drop.  CPU user+sys, peak RSS, blocks read
        (getrusage's ru_inblock, 512-byte units: what came from the disk),
        major faults, exec -> attached.  Target: the cold run's CPU within
        1.5x the warm run's.  Dropping the cache slows everything else on
        the host for a while: the case runs only when asked for, or in the
        full default list.
"""
import subprocess as sp

DROP = "/proc/sys/vm/drop_caches"


def log(msg):
    print(f"bench: {msg}", flush=True)


def drop_caches():
    sp.run(["sync"], check=False)
    with open(DROP, "w") as f:
        f.write("3\n")


def one(b, what):
    ms, msargs = b.manystacks(b.attach_est["ours"])
    r = b.run_tool("ours", b.a.freq, b.a.scale_dur, what, trace=True)
    ms.wait()
    r["workload"] = "manystacks (as msbench) " + msargs
    keys = ("cpu", "user", "sys", "maxrss_kb", "inblock", "majflt", "wall", "exec_to_attach",
            "kept_frac", "taken", "workload")
    return {k: r.get(k) for k in keys}


def case(b):
    log(f"cold: ours on manystacks -D 6 -t 2, {b.a.freq} Hz, {b.a.scale_dur} s, "
        "warm, then after dropping the page cache")
    out = {"warm": one(b, "cold-warm")}
    drop_caches()
    out["cold"] = one(b, "cold-cold")
    for k in ("warm", "cold"):
        r = out[k]
        log(f"  {k}: cpu {fmt(r['cpu'])} s, rss {r['maxrss_kb']} KiB, "
            f"read {fmt((r['inblock'] or 0) / 2048, 1)} MiB, major faults {r['majflt']}")
    return out


def fmt(x, nd=3):
    return "-" if x is None else f"{x:.{nd}f}"


def report(res, w):
    """Lines for the table; returns the targets (label, value, pass)."""
    if not res:
        return []
    wa, co = res["warm"], res["cold"]
    w("")
    w(f"Cold start (issue 31): ours on {wa.get('workload')}, warm, then after "
      f"dropping the page cache")
    for k, r in (("warm", wa), ("cold", co)):
        w(f"  {k:5} CPU {fmt(r['cpu'] and r['cpu'] * 1e3, 0)} ms (user "
          f"{fmt(r['user'] and r['user'] * 1e3, 0)}, sys {fmt(r['sys'] and r['sys'] * 1e3, 0)}), "
          f"peak RSS {fmt((r['maxrss_kb'] or 0) / 1024, 1)} MiB, read from disk "
          f"{fmt((r['inblock'] or 0) / 2048, 1)} MiB, major faults {r['majflt']}, "
          f"exec -> attached {fmt(r['exec_to_attach'] and r['exec_to_attach'] * 1e3, 0)} ms, "
          f"kept {fmt(r['kept_frac'] and 100 * r['kept_frac'], 2)}%")
    ratio = co["cpu"] / wa["cpu"] if co.get("cpu") and wa.get("cpu") else None
    return [("cold start: CPU <= 1.5x warm", f"{fmt(ratio, 2)}x",
             ratio is not None and ratio <= 1.5)]
