"""case_exact: whole native stacks by default against perf --call-graph
dwarf, on the programs issue 28 named (bench.py's case "exact").

Each program is started afresh for each tool and profiled alone (-p) for
unwind_secs at unwind_freq: profile with its default unwinding, then perf
record --call-graph dwarf + perf script on the same kind of process.

  rustburn        a Rust release build (rustc -C opt-level=3): the standard
                  library with frame pointers, the program's code without;
                  rustburn::func_b / func_a is 3.0
  tlsburn         a leaf in ld.so (__tls_get_addr), the highest mapping
  pyenv-3.12/13   CPython with its interpreter in a shared libpython
  python3-inline  Debian's python3.11 with its debug file, inlined
                  functions as frames on both sides (--inline, perf script
                  --inline): the depth perf reads
"""
import glob
import os
import subprocess as sp
import time

HOT_PY = ("def work(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n"
          "    return s\nwhile True:\n    work(10000)\n")
GEN_PY = ("def gen(n):\n    for i in range(n):\n        yield i * 2\n"
          "while True:\n    sum(gen(20000))\n")


def programs(b):
    """(name, command, folded ratio or None, our extra options, perf script's)."""
    out = []
    rust = os.path.join(b.wl, "rustburn")
    if os.access(rust, os.X_OK):
        out.append(("rustburn", [rust], "rustburn::func_b,rustburn::func_a", (), ()))
    tls = os.path.join(b.wl, "tlsburn")
    if os.access(tls, os.X_OK):
        out.append(("tlsburn", [tls], None, (), ()))
    for v in ("3.12", "3.13"):
        for p in sorted(glob.glob(f"/root/.pyenv/versions/{v}.*/bin/python3"))[-1:]:
            out.append((f"pyenv-{v}", [p, "-c", HOT_PY], None, ("--python", "off"), ()))
    if os.access("/usr/bin/python3.11", os.X_OK):
        out.append(("python3-inline", ["/usr/bin/python3.11", "-c", GEN_PY], None,
                    ("--python", "off", "--inline"), ("--inline",)))
    return out


def one(b, h, name, cmd, ratio, extra, script_extra, tool):
    """One program under one tool; h: bench.py's helpers."""
    secs, freq = b.a.unwind_secs, b.a.unwind_freq
    w = sp.Popen(cmd, stdout=sp.DEVNULL)
    h["live"].append(w)
    time.sleep(0.3)
    what = f"exact-{name}"
    if tool == "perf":
        r = b.perf_dwarf(freq, secs, what, w.pid, script_extra=script_extra)
        if script_extra and not r.get("failed"):
            r["stacks"] = h["stackstats"](r["script_path"], perf=True, inlined=True)
    else:
        r = b.run_tool("ours", freq, secs, f"{what}-auto", pid=w.pid, extra=extra)
        r["stacks"] = h["stackstats"](r["folded_path"], ratio=ratio)
    w.terminate()
    w.wait()
    st = {} if r.get("failed") else r["stacks"]
    if tool == "perf" and ratio and not r.get("failed"):
        st["ratio"] = h["stackstats"](r["script_path"], perf=True, ratio=ratio).get("ratio")
    return {"complete": st.get("complete"), "depth": st.get("depth"),
            "samples": st.get("samples"), "ratio_b_a": st.get("ratio"),
            "cpu": r.get("cpu"), "failed": r.get("failed"), "run": h["slim"](r)}


def case_exact(b, h):
    """Run by bench.py with its Bench object and helpers (stackstats, slim,
    live: the processes to kill at the end); returns the case's dict."""
    out = {}
    for name, cmd, ratio, extra, script_extra in programs(b):
        res = {}
        for tool in ("auto", "perf"):
            res[tool] = one(b, h, name, cmd, ratio, extra, script_extra, tool)
            x = res[tool]
            print(f"  exact {name} {tool}: {x['samples']} samples, {x['complete']}% whole, "
                  f"depth {x['depth']}, ratio {x['ratio_b_a']}", flush=True)
        out[name] = res
    return out


def _f(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def report_exact(res, w):
    """Its table; returns (target, value, met) rows."""
    if not res:
        return []
    w("")
    w("Exact stacks (issue 28): default unwinding against perf --call-graph dwarf, each program alone")
    w(f"{'':16} {'tool':5} {'samples':>8} {'whole %':>8} {'depth':>7} {'b/a':>7}")
    for name, r in res.items():
        for t in ("auto", "perf"):
            x = r[t]
            w(f"{name if t == 'auto' else '':16} {t:5} {_f(x['samples'], 0):>8} "
              f"{_f(x['complete']):>8} {_f(x['depth'], 2):>7} {_f(x['ratio_b_a'], 3):>7}")
    targets = []
    rb = res.get("rustburn", {}).get("auto", {})
    c, rt = rb.get("complete"), rb.get("ratio_b_a")
    if rb:
        targets.append(("Rust release build: >= 99% whole by default, b/a 3.0 +-10%",
                        f"{_f(c)}%, {_f(rt, 3)}",
                        c is not None and rt is not None and c >= 99 and 2.7 <= rt <= 3.3))
    for name in ("pyenv-3.12", "pyenv-3.13", "tlsburn"):
        if name not in res:
            continue
        a, p = res[name]["auto"].get("complete"), res[name]["perf"].get("complete")
        d = None if None in (a, p) else a - p
        targets.append((f"{name}: whole within 1 pt of perf dwarf", f"{_f(d)} pt",
                        d is not None and d >= -1))
    if "python3-inline" in res:
        a, p = res["python3-inline"]["auto"].get("depth"), res["python3-inline"]["perf"].get("depth")
        q = None if None in (a, p) or not p else a / p
        targets.append(("Debian python3 depth with inlines, within 10% of perf dwarf's",
                        f"{_f(q, 2)}x", q is not None and 0.9 <= q <= 1.1))
    return targets
