#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The side-by-side benchmark behind `make bench`: profile against perf and
bpftrace, in one run, on this machine.  bench/run installs the tools and
builds what is needed, then runs this; BPF run statistics are switched on
(BPF_ENABLE_STATS, the counted form of kernel.bpf_stats_enabled=1) for as
long as it runs.

Cases (issue 5), all at the same frequency and duration for every tool:
  startup   exec -> sampling attached (strace timestamps), and the total wall
            time and CPU of a 1 s profile (perf: record + script)
  scale     manystacks -D 6 -t 2 (about 19k distinct stacks; run as a copy
            named msbench), 10 s, whole host: samples kept, distinct stacks,
            CPU, peak RSS, BPF map memory, BPF ns/sample against a floor of
            two bpf_get_stackid() calls, end of sampling -> output
  accuracy  burn -t 2 (named bbench), that process only: func_b/func_a = 3
  overhead  burn -t 2 -d 4 under each tool and under none, at 999 and 4999 Hz,
            interleaved rounds with the order rotated: BPF ns/sample, tool
            CPU per sample, burn throughput (reported, not judged)
  unwind    stacks without frame pointers (issue 15): burn-nofp -t 2 and
            Debian's python3, perl and gzip -9, each process alone, under
            profile --unwind=dwarf, profile --unwind=fp and perf record
            --call-graph dwarf + perf script: completeness and mean depth
            (tests/e2e/helpers/stackstats), CPU, BPF ns/sample
  python    Python frames, ours only, with Debian's /usr/bin/python3.11 and
            the same duration for every run, interleaved rounds: hot.py
            (tests/workloads/py: hot_b three times hot_a), the share of its
            samples with a named Python frame and hot_b/hot_a; BPF ns/sample
            on deep.py (20 Python frames deep) with Python frames and with
            --python=off, and on burn-nofp (no Python) with --python=off
            and with Python frames, beside another burn-nofp, and beside a
            deep.py: the cost per Python frame, and whether others pay
            for it
  debuginfod  debug files fetched through libdebuginfod (issue 17), ours
            only, burn-stripped (no .symtab) -t 1, interleaved rounds:
            samples and lost-sample counters while a lookup hangs against
            none; the extra wall time a hanging server costs; tool CPU
            with the debug file in a warm debuginfod cache against the
            same file in /usr/lib/debug/.build-id; the share of frames
            named with a server up against the unstripped build
  burn_ratio  burn's func_b/func_a in 20 rounds, the default unwinding and
            --unwind=fp sampling the same burn at once (issue 28;
            bench/case_burn_ratio.py)
  offcpu    off-CPU time of tests/workloads/offcpu against its known
            answer, and the cost on perf bench sched pipe beside
            libbpf-tools offcputime (issue 29; bench/case_offcpu.py)
  agent     profile --otlp against the test collector for
            PROFILE_BENCH_AGENT_MINUTES (default 60): RSS and CPU per
            interval flat, samples sent = received (issue 30;
            bench/case_agent.py)
  cold      the scale run of ours warm, then after dropping the page
            cache (issue 31; bench/case_startup.py)
  lazy      the Python walker verified only when needed: do_sample's
            and the walker's verified instructions, load times and the
            profiler's CPU with no Python process and with one (issue 31;
            bench/case_lazy.py)
  firstwhole  Debian's python3, perl, gzip, sqlite3, bash started afresh
            under a whole-host profile and perf dwarf: their first
            samples whole (issue 31; bench/case_firstwhole.py)
  forkburst  a Python forks 32 workers at once: their samples with a
            Python frame from their fork (issue 31;
            bench/case_forkburst.py)
  churn     a loop starting short processes (Python, a pipeline, gzip),
            about 55 a second: ours' CPU against perf record + script's,
            processes seen and the unwinder's syncs (issue 31;
            bench/case_churn.py)

How each figure is measured is in METHODS below, next to the code that
measures it, and in the "methods" entry of the JSON.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess as sp
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpfprog  # noqa: E402
import case_burn_ratio  # noqa: E402
import folded   # noqa: E402
import case_pyexact  # noqa: E402
import case_exact  # noqa: E402
import case_offcpu  # noqa: E402
import case_agent  # noqa: E402
import case_startup  # noqa: E402
import case_lazy  # noqa: E402
import case_firstwhole  # noqa: E402
import case_forkburst  # noqa: E402
import case_churn  # noqa: E402
from util import log, median

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
# Debian's CPython, named in full: a python3 on PATH may be another build.
PYTHON = "/usr/bin/python3.11"
PYWL = os.path.join(ROOT, "tests", "workloads", "py")
PY_DEPTH = 20
TOOLS = ("ours", "perf", "bpftrace")
BIG_MAP_KEYS = 65536
STRACE_SYSCALLS = "trace=execve,ioctl,exit_group"
FAKE_DEBUGINFOD = os.path.join(ROOT, "tests", "e2e", "helpers", "fakedebuginfod.py")
# DEBUGINFOD_TIMEOUT of the hanging server's runs, seconds
DEBUGINFOD_T = 2
# cleared for every debuginfod run, then set as the condition says
DEBUGINFOD_ENV = ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH", "DEBUGINFOD_TIMEOUT",
                  "DEBUGINFOD_RETRY_LIMIT", "DEBUGINFOD_MAXSIZE", "DEBUGINFOD_PROGRESS")

METHODS = {
    "cpu": "user+sys of every process of the tool's pipeline, from wait4() "
           "rusage (bench/rusage.c, microsecond resolution); perf = record + "
           "`perf script report stackcollapse`",
    "rss": "peak RSS (ru_maxrss) of the largest process of the pipeline",
    "samples_taken": "BPF tools: run_cnt of the sampling program "
                     "(kernel.bpf_stats_enabled=1; a reference to the program is "
                     "taken while the tool runs, so the count survives its exit), "
                     "minus the samples ours reports as filtered (idle) with -v; "
                     "perf: the sample count perf record reports",
    "samples_kept": "sum of the counts of folded lines that have a frame after "
                    "the comm and no [Missed ... Stack] marker, over samples taken",
    "distinct": "distinct folded lines (bpftrace: after folding its map output "
                "and dropping +offsets)",
    "bpf_ns": "run_time_ns / run_cnt of the sampling program, over all its runs",
    "bpf_map_bytes": "the most memlock summed over the BPF maps the tool holds "
                     "(/proc/PID/fdinfo, what bpftool map show prints), sampled "
                     "once a second while it runs",
    "timeline": "strace -f -ttt --seccomp-bpf -e trace=execve,ioctl,exit_group "
                "(only these syscalls stop the tool): exec = the tool's execve; "
                "attached = its last PERF_EVENT_IOC_ENABLE; end of sampling = its "
                "first PERF_EVENT_IOC_DISABLE; output complete = the tool's exit "
                "(perf: + the wall time of perf script report stackcollapse)",
    "floor": "bench/floor.bpf.c: skip idle, then bpf_get_stackid() for the user "
             "and the kernel stack into one 16384-entry stack map, nothing else; "
             "run on the same workload as the scale case",
    "per_sample_cpu": "tool CPU (whole pipeline, start-up included) / samples "
                      "taken (all timer ticks the tool handled, idle included, "
                      "since perf and bpftrace keep idle samples); marginal = "
                      "difference of the medians between the two frequencies "
                      "over the difference in samples, which removes fixed costs",
    "completeness": "tests/e2e/helpers/stackstats on the folded output (ours, "
                    "-a) or on `perf script -F comm,tid,ip,sym,dso` (perf): the "
                    "share of samples whose user stack has a root frame (_start, "
                    "__libc_start_call_main, start_thread, clone3...) among its "
                    "three outermost frames; depth = mean user frames, perf's "
                    "inlined lines counted as the one frame they are in",
    "unwind_cpu": "user+sys of profile; perf: perf record --call-graph dwarf "
                  "+ perf script (the unwinding happens there)",
    "python_named": "hot.py (/usr/bin/python3.11) profiled alone with -p: the "
                    "share of its samples with a frame 'QUALNAME (FILE.py)' "
                    "(or FILE.py:LINE), and samples with hot_b (hot.py) over "
                    "those with hot_a (hot.py)",
    "python_cost": "ns per counted sample of do_sample: (run_time_ns - filtered x "
                   "F) / counted, with counted and filtered from -v and F the "
                   "run_time_ns / run_cnt of a run where every sample is "
                   "filtered out (burn-nofp on CPU 0, a sleeping process "
                   "given to -p; the median of every round's); so that other work "
                   "on the host, which comes and goes, does not dilute the "
                   "figure.  The profiled process is pinned to CPU 0 "
                   "(taskset) and profiled with -C 0, so that nearly every "
                   "run is one of its samples: deep.py 20 with "
                   "Python frames and with "
                   "--python=off; per Python frame = (on - off) / the mean "
                   "Python frames per sample of the on run; burn-nofp with "
                   "--python=off and with Python frames, another burn-nofp "
                   "pinned to CPU 1, and with deep.py there instead, each "
                   "given to -p too (followed, never sampled); medians over "
                   "interleaved rounds",
    "debuginfod": "ours only, F Hz, S s a run, interleaved rounds (order "
                  "rotated), each run on a fresh burn-stripped -t 1 (one CPU "
                  "left to the tool and the servers, so that a lost sample is "
                  "not hidden by the tool's own CPU use); servers are "
                  "tests/e2e/helpers/fakedebuginfod.py on 127.0.0.1.  none: "
                  "no DEBUGINFOD_URLS; hang: a server that never answers, "
                  "DEBUGINFOD_TIMEOUT=T, default --debuginfod-wait; samples "
                  "= the workload's in the folded output, lost = -v's dropped "
                  "samples and lost records; extra wall = median wall (bench/"
                  "rusage) of hang - of none.  cache: a server that answers, "
                  "the cache warmed by one run before the rounds; local: no "
                  "DEBUGINFOD_URLS and burn-dbg.debug in /usr/lib/debug/"
                  ".build-id/ for that run only; CPU = user+sys of profile.  "
                  "fetch: the server that answers and a fresh cache each run; "
                  "full: burn-dbg.full (the same build, unstripped), no server; "
                  "named = share of the workload's user frames, weighted by "
                  "samples, that are not [unknown]",
    "throughput": "burn -t 2 -d B calls per second, medians over interleaved "
                  "rounds (condition order rotated each round); not a valid "
                  "overhead measure on this VM (it is inverted), reported only",
}


def ratio(a, b):
    if a is None or b in (None, 0):
        return None
    return a / b


_live = []


def cleanup():
    for p in _live:
        if p.poll() is None:
            try:
                p.terminate()
                p.wait(5)
            except (OSError, sp.TimeoutExpired):
                p.kill()


class Bench:
    def __init__(self, args):
        self.a = args
        self.out = os.path.abspath(args.out)
        self.tmp = os.path.join(self.out, "runs")	# every run's files, for a look
        shutil.rmtree(self.tmp, ignore_errors=True)
        os.makedirs(self.tmp)
        self.profile = os.path.abspath(args.profile)
        self.wl = os.path.abspath(args.workloads)
        self.perf = shutil.which("perf")
        self.bpftrace = shutil.which("bpftrace")
        self.floor = os.path.abspath(args.floor)
        self.rusage = os.path.abspath(args.rusage)
        self.seq = 0
        # Debian's perf has Python, hence `perf script report stackcollapse`;
        # without it, fold `perf script` output with bench/stackcollapse.awk.
        scripts = sp.run([self.perf, "script", "-l"], capture_output=True, text=True).stdout
        self.collapse = "report" if "stackcollapse" in scripts else "awk"
        self.collapse_why = "" if self.collapse == "report" else "this perf has no stackcollapse script"
        if args.perf_collapse:
            self.collapse, self.collapse_why = args.perf_collapse, "--perf-collapse"
        self.attach_est = {"ours": 0.3, "perf": 0.5, "bpftrace": 1.5}
        self.res = {"methods": METHODS}
        self.failures = []
        self.res["failures"] = self.failures

    # ----- running one tool -----------------------------------------------
    def name(self, what):
        self.seq += 1
        return os.path.join(self.tmp, f"{self.seq:03d}-{what}")

    def launch(self, cmd, base, stdout, trace=False, hold=False):
        """Start cmd under bench/rusage (and strace when timing it)."""
        run = {"cmd": cmd, "base": base, "rusage": base + ".rusage.json",
               "stdout": stdout, "stderr": base + ".err", "trace": trace}
        full = [self.rusage, run["rusage"], "--"] + cmd
        if trace:
            run["strace"] = base + ".strace"
            full = ["strace", "-f", "-ttt", "--seccomp-bpf", "-e", STRACE_SYSCALLS,
                    "-o", run["strace"]] + full
        with open(stdout, "w") as o, open(run["stderr"], "w") as e:
            run["p"] = sp.Popen(full, stdout=o, stderr=e)
        _live.append(run["p"])
        run["holder"] = bpfprog.ProgHolder(run["p"].pid) if hold else None
        return run

    def interrupt(self, run):
        """SIGINT to bench/rusage, which passes it on to the tool."""
        pid = run["p"].pid
        if run["trace"]:
            kids = bpfprog.descendants(pid)
            pid = kids[1] if len(kids) > 1 else pid
        run["interrupted"] = True
        os.kill(pid, signal.SIGINT)

    def finish(self, run, timeout=120):
        try:
            run["p"].wait(timeout)
        except sp.TimeoutExpired:
            log(f"{run['cmd'][0]} did not finish in {timeout} s; killing it")
            run["p"].kill()
            run["p"].wait()
        r = {"cmd": " ".join(run["cmd"])}
        try:
            with open(run["rusage"]) as f:
                ru = json.load(f)
        except (OSError, ValueError):
            ru = {"wall": None, "user": None, "sys": None, "maxrss_kb": None, "exit": -1}
        r.update(wall=ru["wall"], user=ru["user"], sys=ru["sys"],
                 maxrss_kb=ru["maxrss_kb"], exit=ru["exit"],
                 inblock=ru.get("inblock"), majflt=ru.get("majflt"))
        r["cpu"] = None if ru["user"] is None else ru["user"] + ru["sys"]
        if run["holder"]:
            run["holder"].stop()
            main, progs = run["holder"].stats()
            run["holder"].close()
            r["bpf"] = main
            r["bpf_progs"] = progs
            r["bpf_map_bytes"] = run["holder"].map_bytes or None
        if run["trace"]:
            r["timeline"] = parse_strace(run["strace"], run["cmd"][0])
        with open(run["stderr"], errors="replace") as f:
            r["stderr_tail"] = f.read()[-2000:]
        expected = (0, 124) if run["cmd"][0] == "timeout" else (0,)
        if r["exit"] not in expected and not run.get("interrupted"):
            log(f"{run['cmd'][0]} exited with {r['exit']}: {r['stderr_tail'][-300:]}")
        return r

    def tool_cmd(self, tool, freq, dur, base, pid=None, extra=()):
        """The command, where its output goes.  Whole host, or only pid;
        extra: more options for ours."""
        if tool == "ours":
            cmd = [self.profile, "-F", str(freq), "-f", "-v", *extra]
            cmd += ["-p", str(pid)] if pid else []
            return cmd + ([str(dur)] if dur else []), base + ".folded"
        if tool == "bpftrace":
            pred = f"/pid == {pid}/ " if pid else ""
            prog = f"profile:hz:{freq} {pred}{{ @[comm, kstack, ustack] = count(); }}"
            if dur:
                prog += f" interval:s:{dur} {{ exit(); }}"
            return [self.bpftrace, "-e", prog], base + ".bt"
        if tool == "perf":
            cmd = [self.perf, "record", "-g", "-F", str(freq), "-o", base + ".data"]
            if pid:
                # with -p, a command would be profiled instead of timing it
                cmd = ["timeout", "-s", "INT", str(dur)] + cmd if dur else cmd
                return cmd + ["-p", str(pid)], base + ".record.out"
            cmd += ["-a"]
            if dur:
                cmd += ["--", "sleep", str(dur)]
            return cmd, base + ".record.out"
        raise ValueError(tool)

    def run_tool(self, tool, freq, dur, what, trace=False, during=None, pid=None, extra=()):
        """Run one tool for dur seconds (or until `during` returns), then
        its post-processing; return everything measured."""
        base = self.name(f"{what}-{tool}-{freq}")
        cmd, stdout = self.tool_cmd(tool, freq, dur, base, pid, extra)
        run = self.launch(cmd, base, stdout, trace=trace, hold=tool != "perf")
        extra = None
        if during:
            time.sleep(self.attach_est[tool] + 0.3)
            extra = during()
            self.interrupt(run)
        r = self.finish(run)
        r.update(tool=tool, freq=freq, dur=dur, during=extra, steps=[dict(r)])
        if tool == "ours":
            r["folded_path"] = stdout
            r.update(parse_ours_stderr(r["stderr_tail"]))
        elif tool == "bpftrace":
            r["folded_path"] = base + ".folded"
            r["bpftrace_entries"] = folded.fold_bpftrace(stdout, r["folded_path"])
            r["stack_id_errors"] = r["stderr_tail"].count("failed to look up stack id")
        elif tool == "perf":
            m = re.search(r"\((\d+) samples\)", r["stderr_tail"])
            r["perf_samples"] = int(m[1]) if m else None
            r["folded_path"] = base + ".folded"
            if self.collapse == "report":
                ccmd = [self.perf, "script", "report", "stackcollapse", "-i", base + ".data"]
            else:	# no Python in perf: perf script | awk, in one shell
                ccmd = ["sh", "-c", f'"$0" script -F comm,ip,sym -i "$1" | awk -f "$2"',
                        self.perf, base + ".data", os.path.join(BENCH, "stackcollapse.awk")]
            srun = self.launch(ccmd, base + "-script", r["folded_path"])
            s = self.finish(srun)
            s["what"] = ("perf script report stackcollapse" if self.collapse == "report"
                         else "perf script | awk -f bench/stackcollapse.awk")
            r["steps"].append(s)
            r["script_wall"] = s["wall"]
            m = re.search(r"lost (\d+) chunks", s["stderr_tail"])
            r["perf_lost_chunks"] = int(m[1]) if m else 0
            # the whole pipeline
            r["cpu"] = sum(x["cpu"] or 0 for x in r["steps"])
            r["maxrss_kb"] = max(x["maxrss_kb"] or 0 for x in r["steps"])
            r["wall"] = sum(x["wall"] or 0 for x in r["steps"])
        r["folded"] = folded.stats(r["folded_path"])
        bad = [s for s in r["steps"] if s["exit"] not in (0, 124, 130)]
        if bad:	# e.g. perf 6.1's script segfaults now and then
            r["failed"] = "; ".join(f"{s.get('what', s['cmd'].split()[0])} exited with "
                                    f"{s['exit']}" for s in bad)
            self.failures.append(f"{what} {tool} {freq} Hz: {r['failed']}")
            log(f"{tool}: {r['failed']}; this run is left out of the medians")
        self.derive(r)
        if not self.a.keep:
            for p in (base + ".data", base + ".data.old"):
                if os.path.exists(p):
                    os.unlink(p)
        return r

    def derive(self, r):
        """Samples taken, kept, per-sample costs, latency."""
        tool, fs = r["tool"], r["folded"] or {}
        bpf = r.get("bpf")
        if bpf and bpf["run_cnt"]:
            r["bpf_ns_per_sample"] = bpf["run_time_ns"] / bpf["run_cnt"]
            r["ticks"] = bpf["run_cnt"]
        if tool == "ours":
            r["taken"] = (bpf["run_cnt"] - (r.get("filtered") or 0)) if bpf else r.get("self_taken")
        elif tool == "bpftrace":
            r["taken"] = bpf["run_cnt"] if bpf else None
        else:
            r["taken"] = r.get("perf_samples")
            r["ticks"] = r.get("perf_samples")
        r["kept"] = fs.get("real")
        r["kept_frac"] = ratio(fs.get("real"), r["taken"])
        r["distinct"] = fs.get("distinct")
        r["cpu_us_per_sample"] = ratio(r["cpu"] * 1e6 if r["cpu"] is not None else None,
                                       r.get("ticks"))
        if fs.get("func_a"):
            r["ratio_b_a"] = fs["func_b"] / fs["func_a"]
        tl = r.get("timeline")
        if tl and tl.get("exec") and tl.get("attach"):
            r["exec_to_attach"] = tl["attach"] - tl["exec"]
        if tl and tl.get("end") and tl.get("exit"):
            lat = tl["exit"] - tl["end"]
            if tool == "perf":
                lat += r.get("script_wall") or 0
            r["end_to_output"] = lat
            if tl.get("attach"):
                r["sampling_window"] = tl["end"] - tl["attach"]

    # ----- cases --------------------------------------------------------------
    def case_startup(self):
        """Exec -> attached from strace timestamps; total wall of a 1 s profile
        (perf: record + script) from bench/rusage, on the host as it is."""
        log("start-up: 1 s profiles, exec -> attached, %d rounds" % self.a.startup_rounds)
        runs = {t: [] for t in TOOLS}
        for rnd in range(self.a.startup_rounds):
            for tool in rotate(TOOLS, rnd):
                r = self.run_tool(tool, self.a.freq, 1, "startup", trace=True)
                runs[tool].append(slim(r))
        out = {}
        for tool in TOOLS:
            rs = [r for r in runs[tool] if not r.get("failed")]
            out[tool] = {
                "exec_to_attach": median([r.get("exec_to_attach") for r in rs]),
                "wall_1s": median([r.get("wall") for r in rs]),
                "cpu_1s": median([r.get("cpu") for r in rs]),
                "end_to_output": median([r.get("end_to_output") for r in rs]),
                "runs": runs[tool]}
            if out[tool]["exec_to_attach"]:
                self.attach_est[tool] = out[tool]["exec_to_attach"]
        self.res["startup"] = out

    def manystacks(self, extra_start):
        """manystacks, run as msbench: a copy under another name, so that its
        samples are told apart from any other manystacks on the host."""
        d = max(12.0, 0.5 + extra_start + self.a.scale_dur + 1.0)
        ms = os.path.join(self.out, "msbench")
        shutil.copy2(os.path.join(self.wl, "manystacks"), ms)
        cmd = [ms, "-D", "6", "-t", "2", "-d", f"{d:g}"]
        p = sp.Popen(cmd)
        _live.append(p)
        time.sleep(0.5)
        return p, " ".join(cmd[1:])

    def case_scale(self):
        dur = self.a.scale_dur
        log(f"scale: manystacks -D 6 -t 2, {self.a.freq} Hz, {dur} s, whole host")
        out = {}
        for tool in TOOLS:
            ms, msargs = self.manystacks(self.attach_est[tool])
            r = self.run_tool(tool, self.a.freq, dur, "scale", trace=True)
            ms.wait()
            r["workload"] = "manystacks (as msbench) " + msargs
            out[tool] = r
            log(f"  {tool}: taken {r.get('taken')} kept {r.get('kept')} "
                f"distinct {r.get('distinct')} cpu {fmt(r.get('cpu'), 3)} s "
                f"rss {r.get('maxrss_kb')} KiB")
        # bpftrace doing the same work: maps big enough to keep every sample
        # (by default its 4096-key maps fill up and most samples are dropped
        # after both stack walks, which makes its per-sample cost look low)
        ms, msargs = self.manystacks(self.attach_est["bpftrace"])
        os.environ["BPFTRACE_MAP_KEYS_MAX"] = str(BIG_MAP_KEYS)
        try:
            r = self.run_tool("bpftrace", self.a.freq, dur, "scale-bigmaps", trace=True)
        finally:
            del os.environ["BPFTRACE_MAP_KEYS_MAX"]
        ms.wait()
        out["bpftrace_bigmaps"] = r
        log(f"  bpftrace, BPFTRACE_MAP_KEYS_MAX={BIG_MAP_KEYS}: taken {r.get('taken')} "
            f"kept {r.get('kept')} ns/sample {fmt(r.get('bpf_ns_per_sample'), 0)}")
        # Ours and bpftrace (big maps) at once on one manystacks: the same
        # samples on the same caches.  Sequential runs of either moved by
        # 15% from one to the next here; at once, the ratio held within 3%.
        ms, msargs = self.manystacks(max(self.attach_est["ours"], self.attach_est["bpftrace"]))
        os.environ["BPFTRACE_MAP_KEYS_MAX"] = str(BIG_MAP_KEYS)
        try:
            runs = {}
            for tool in ("bpftrace", "ours"):
                base = self.name(f"scale-together-{tool}")
                cmd, stdout = self.tool_cmd(tool, self.a.freq, dur, base, None, ())
                runs[tool] = self.launch(cmd, base, stdout, hold=True)
            together = {t: self.finish(runs[t]) for t in runs}
        finally:
            del os.environ["BPFTRACE_MAP_KEYS_MAX"]
        ms.wait()
        out["together"] = {}
        for t, r in together.items():
            b = r.get("bpf")
            out["together"][t] = {"bpf_ns_per_sample": b["run_time_ns"] / b["run_cnt"]
                                  if b and b["run_cnt"] else None}
        log(f"  at once: ours {fmt(out['together']['ours']['bpf_ns_per_sample'], 0)} ns/sample, "
            f"bpftrace (big maps) {fmt(out['together']['bpftrace']['bpf_ns_per_sample'], 0)}")
        # the floor of two bpf_get_stackid() calls, same workload
        ms, msargs = self.manystacks(0.05)
        base = self.name("scale-floor")
        run = self.launch([self.floor, self.floor + ".bpf.o", str(self.a.freq), str(dur)],
                          base, base + ".out", hold=True)
        f = self.finish(run)
        ms.wait()
        if f.get("bpf") and f["bpf"]["run_cnt"]:
            f["bpf_ns_per_sample"] = f["bpf"]["run_time_ns"] / f["bpf"]["run_cnt"]
        out["floor"] = f
        self.res["scale"] = out

    def case_accuracy(self):
        """burn -t 2 (renamed bbench) runs throughout, each tool profiles
        that process only (-p PID; bpftrace /pid == PID/) for accuracy_secs:
        the question is attribution, and profiling the whole host here would
        mostly time bpftrace symbolizing everything else at exit.  burn is
        stopped after the tool has printed, since bpftrace symbolizes user
        stacks at print time and needs it alive."""
        secs = self.a.accuracy_secs
        log(f"accuracy: burn -t 2, {self.a.freq} Hz, {secs} s")
        out = {}
        for tool in TOOLS:
            burn = sp.Popen([os.path.join(self.wl, "burn"), "-t", "2", "-n", "bbench"],
                            stdout=sp.DEVNULL)
            _live.append(burn)
            time.sleep(0.3)
            r = self.run_tool(tool, self.a.freq, secs, "accuracy", pid=burn.pid)
            burn.terminate()
            burn.wait()
            fs = r["folded"] or {}
            out[tool] = {"ratio_b_a": r.get("ratio_b_a"), "func_a": fs.get("func_a"),
                         "func_b": fs.get("func_b"), "run": slim(r)}
            log(f"  {tool}: func_b/func_a = {fmt(r.get('ratio_b_a'), 3)} "
                f"({fs.get('func_b')}/{fs.get('func_a')})")
        self.res["accuracy"] = out

    def burn(self, secs):
        p = sp.run([os.path.join(self.wl, "burn"), "-t", "2", "-n", "bbench",
                    "-d", str(secs)],
                   capture_output=True, text=True)
        m = re.search(r"burn: (\d+) (\d+)", p.stdout)
        if not m:
            return None
        return {"calls_a": int(m[1]), "calls_b": int(m[2]),
                "throughput": (int(m[1]) + int(m[2])) / secs}

    def case_burn_ratio(self):
        self.res["burn_ratio"] = case_burn_ratio.case(self)

    def case_overhead(self):
        secs, rounds = self.a.burn_secs, self.a.rounds
        conds = ("none",) + TOOLS
        out = {}
        for freq in self.a.freqs:
            log(f"overhead: burn -t 2 -d {secs} at {freq} Hz, {rounds} interleaved rounds")
            runs = {c: [] for c in conds}
            for rnd in range(rounds):
                for c in rotate(conds, rnd):
                    if c == "none":
                        runs[c].append({"during": self.burn(secs)})
                        continue
                    r = self.run_tool(c, freq, None, "overhead",
                                      during=lambda: self.burn(secs))
                    runs[c].append(slim(r))
            agg = {}
            none_tp = median([(r["during"] or {}).get("throughput") for r in runs["none"]])
            for c in conds:
                rs = [r for r in runs[c] if not r.get("failed")]
                tp = median([(r.get("during") or {}).get("throughput") for r in rs])
                agg[c] = {"throughput": tp, "throughput_vs_none": ratio(tp, none_tp),
                          "runs": runs[c]}
                if c == "none":
                    continue
                agg[c].update(
                    cpu=median([r.get("cpu") for r in rs]),
                    ticks=median([r.get("ticks") for r in rs]),
                    cpu_us_per_sample=median([r.get("cpu_us_per_sample") for r in rs]),
                    bpf_ns_per_sample=median([r.get("bpf_ns_per_sample") for r in rs]),
                    ratio_b_a=median([r.get("ratio_b_a") for r in rs]),
                    kept_frac=median([r.get("kept_frac") for r in rs]))
            out[str(freq)] = agg
        # marginal CPU per sample between the two frequencies
        if len(self.a.freqs) >= 2:
            lo, hi = str(min(self.a.freqs)), str(max(self.a.freqs))
            for t in TOOLS:
                a, b = out[lo][t], out[hi][t]
                if None not in (a["cpu"], b["cpu"], a["ticks"], b["ticks"]) and b["ticks"] != a["ticks"]:
                    out.setdefault("marginal_cpu_us_per_sample", {})[t] = \
                        (b["cpu"] - a["cpu"]) * 1e6 / (b["ticks"] - a["ticks"])
        self.res["overhead"] = out

    def perf_dwarf(self, freq, dur, what, pid, script_extra=()):
        """perf record --call-graph dwarf on pid for dur seconds, then perf
        script, which unwinds: CPU of both, completeness of the script's
        stacks."""
        base = self.name(f"{what}-perf-dwarf-{freq}")
        cmd = ["timeout", "-s", "INT", str(dur), self.perf, "record", "-e", "cpu-clock",
               "--call-graph", "dwarf", "-F", str(freq), "-p", str(pid), "-o", base + ".data"]
        r = self.finish(self.launch(cmd, base, base + ".record.out"))
        script = [self.perf, "script", "-F", "comm,tid,ip,sym,dso", *script_extra,
                  "-i", base + ".data"]
        s = self.finish(self.launch(script, base + "-script", base + ".script"))
        r = {"tool": "perf-dwarf", "steps": [r, s],
             "cpu": sum(x["cpu"] or 0 for x in (r, s)),
             "stacks": stackstats(base + ".script", perf=True),
             "script_path": base + ".script"}
        bad = [x for x in r["steps"] if x["exit"] not in (0, 124, 130)]
        if bad:
            r["failed"] = "; ".join(f"{x['cmd'].split()[0]} exited with {x['exit']}" for x in bad)
            self.failures.append(f"{what} perf-dwarf: {r['failed']}")
        if not self.a.keep and os.path.exists(base + ".data"):
            os.unlink(base + ".data")
        return r

    def unwind_programs(self):
        """(name, command): burn without frame pointers, and Debian's own
        programs as they are installed, each busy for longer than a run."""
        text = os.path.join(self.out, "gzip-input.txt")
        if not os.path.exists(text):
            with open(text, "w") as f:
                for i in range(1, 3000001):
                    f.write(f"{i * 7919 % 100003} lorem {i % 97} ipsum dolor\n")
        py = ("def work(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n"
              "    return s\nwhile True:\n    work(10000)\n")
        pl = "sub work { my $s = 0; $s += $_ * $_ for 1 .. 10000; $s } work() while 1;"
        return (("burn-nofp", [os.path.join(self.wl, "burn-nofp"), "-t", "2"]),
                ("python3", ["/usr/bin/python3", "-c", py]),
                ("perl", ["/usr/bin/perl", "-e", pl]),
                # -c FILE FILE: about 12 s of CPU here
                ("gzip", ["/bin/gzip", "-9", "-c", text, text]))

    def case_unwind(self):
        """Each program, started afresh for each tool, profiled alone (-p)
        for unwind_secs: profile --unwind=dwarf, --unwind=fp, then perf
        record --call-graph dwarf + perf script."""
        secs, freq = self.a.unwind_secs, self.a.unwind_freq
        log(f"unwind: burn-nofp, python3, perl, gzip -9; {freq} Hz, {secs} s each")
        out = {}
        for name, cmd in self.unwind_programs():
            res = {}
            for tool in ("dwarf", "fp", "perf"):
                w = sp.Popen(cmd, stdout=sp.DEVNULL)
                _live.append(w)
                time.sleep(0.3)
                what = f"unwind-{name}"
                if tool == "perf":
                    r = self.perf_dwarf(freq, secs, what, w.pid)
                else:
                    r = self.run_tool("ours", freq, secs, f"{what}-{tool}", pid=w.pid,
                                      extra=(f"--unwind={tool}", "-a"))
                    r["stacks"] = stackstats(r["folded_path"],
                                             ratio="func_b,func_a" if name == "burn-nofp" else None)
                w.terminate()
                w.wait()
                st = {} if r.get("failed") else r["stacks"]
                res[tool] = {"complete": st.get("complete"), "depth": st.get("depth"),
                             "samples": st.get("samples"), "ratio_b_a": st.get("ratio"),
                             "failed": r.get("failed"), "run": slim(r)}
                if not r.get("failed"):
                    res[tool].update(cpu=r.get("cpu"),
                                     bpf_ns_per_sample=r.get("bpf_ns_per_sample"))
                log(f"  {name} {tool}: {st.get('samples')} samples, {st.get('complete')}% "
                    f"complete, depth {st.get('depth')}, cpu {fmt(r.get('cpu'), 3)} s")
            out[name] = res
        self.res["unwind"] = out

    # ----- Python frames -----------------------------------------------------
    def python_conditions(self, secs):
        """(name, workloads, extra options, pinned): each workload is a
        command line; the first is the process whose samples count, and
        with pinned, the first is on CPU 0 and the second on CPU 1, but in
        "filtered", where the first sleeps and burn-nofp, not profiled,
        runs on CPU 0: every run there filters its sample out."""
        hot = [PYTHON, os.path.join(PYWL, "hot.py"), f"{secs + 3:g}"]
        deep = [PYTHON, os.path.join(PYWL, "deep.py"), f"{secs + 3:g}", str(PY_DEPTH)]
        burn = [os.path.join(self.wl, "burn-nofp"), "-d", f"{secs + 3:g}"]
        idle = ["sleep", f"{secs + 3:g}"]
        return (("hot", [hot], (), False),
                ("filtered", [idle, burn], (), True),
                ("deep-on", [deep], (), True),
                ("deep-off", [deep], ("--python=off",), True),
                # burn-nofp on CPU 0; on CPU 1, the same again or deep.py,
                # both followed (-p), never sampled (-C 0): the same load
                # beside it (2 CPUs may be one core's two threads), a
                # Python or not
                ("burn-off", [burn, burn], ("--python=off",), True),
                ("burn-on", [burn, burn], (), True),
                # the same beside a Python, with and without Python frames:
                # what a process with no Python pays for them, the co-runner
                # the same on both sides
                ("burn-beside-py-off", [burn, deep], ("--python=off",), True),
                ("burn-beside-py", [burn, deep], (), True))

    def python_run(self, name, cmds, extra, pinned, secs):
        procs = []
        for i, cmd in enumerate(cmds):
            if pinned:
                cpu = "0" if (i == 0) != (name == "filtered") else "1"
                cmd = ["taskset", "-c", cpu] + cmd
            p = sp.Popen(cmd, stdout=sp.DEVNULL)
            _live.append(p)
            procs.append(p)
        time.sleep(0.5)		# past the interpreter's start-up
        extra = tuple(extra) + (("-C", "0") if pinned else ())
        pids = procs[:1] if name == "filtered" else procs
        r = self.run_tool("ours", self.a.freq, secs, f"python-{name}",
                          pid=",".join(str(p.pid) for p in pids), extra=extra)
        for p in procs:
            p.terminate()
            p.wait()
        r["python"] = py_stats(r["folded_path"])
        r.update(parse_err_file(r["folded_path"]))
        return r

    def case_python(self):
        """Each condition in turn, the order rotated each round; every run
        python_secs at --freq (see METHODS python_named, python_cost)."""
        secs, rounds = self.a.python_secs, self.a.rounds
        if not os.access(PYTHON, os.X_OK):
            log(f"python: no {PYTHON} (scripts/install-deps); case skipped")
            self.res["python"] = {"skipped": f"no {PYTHON}"}
            return
        conds = self.python_conditions(secs)
        log(f"python: hot.py, deep.py {PY_DEPTH}, burn-nofp; {self.a.freq} Hz, {secs} s, "
            f"{rounds} interleaved rounds")
        runs = {c[0]: [] for c in conds}
        for rnd in range(rounds):
            for name, cmds, extra, pinned in rotate(conds, rnd):
                r = self.python_run(name, cmds, extra, pinned, secs)
                runs[name].append(slim(r))
                py = r["python"] or {}
                log(f"  {name}: {py.get('samples')} samples, named "
                    f"{fmt(py.get('named'), 2, pct=True)}, hot_b/hot_a {fmt(py.get('ratio'), 3)}, "
                    f"python depth {fmt(py.get('depth'), 1)}, BPF ns/run "
                    f"{fmt(r.get('bpf_ns_per_sample'), 0)}, filtered {r.get('filtered_all')}")
        # What a run that filters its sample out costs, and from it each
        # run's cost per counted sample (see METHODS python_cost).
        cf = median([r.get("bpf_ns_per_sample") for r in runs["filtered"] if not r.get("failed")])
        for rs in runs.values():
            for r in rs:
                b = r.get("bpf")
                if cf is not None and b and r.get("counted_all"):
                    r["bpf_ns_per_counted"] = ((b["run_time_ns"] - (r.get("filtered_all") or 0) * cf)
                                               / r["counted_all"])
        out = {"filtered_run_ns": cf}
        for name, *_ in conds:
            rs = [r for r in runs[name] if not r.get("failed")]
            pys = [r.get("python") or {} for r in rs]
            out[name] = {
                "bpf_ns_per_sample": median([r.get("bpf_ns_per_sample") for r in rs]),
                "bpf_ns_per_counted": median([r.get("bpf_ns_per_counted") for r in rs]),
                "python_v": next((r["python_v"] for r in rs if r.get("python_v")), None),
                "bpf_prog": next((r["bpf"]["name"] for r in rs if r.get("bpf")), None),
                "kept_frac": median([r.get("kept_frac") for r in rs]),
                "samples": median([p.get("samples") for p in pys]),
                "named": median([p.get("named") for p in pys]),
                "ratio_b_a": median([p.get("ratio") for p in pys]),
                "py_depth": median([p.get("depth") for p in pys]),
                "failed": [r["failed"] for r in runs[name] if r.get("failed")],
                "runs": runs[name]}
        ns = {k: out[k]["bpf_ns_per_counted"] for k, *_ in conds if k != "filtered"}
        depth = out["deep-on"]["py_depth"]
        if None not in (ns["deep-on"], ns["deep-off"]) and depth:
            out["ns_per_python_frame"] = (ns["deep-on"] - ns["deep-off"]) / depth
            out["added_vs_native"] = ratio(ns["deep-on"] - ns["deep-off"], ns["deep-off"])
        out["burn_beside_py_vs_alone"] = ratio(ns["burn-beside-py"], ns["burn-on"])
        out["burn_beside_py_on_vs_off"] = ratio(ns["burn-beside-py"], ns["burn-beside-py-off"])
        out["burn_on_vs_off"] = ratio(ns["burn-on"], ns["burn-off"])
        self.res["python"] = out

    # ----- debuginfod ---------------------------------------------------------
    def fake_server(self, name, *args):
        """tests/e2e/helpers/fakedebuginfod.py MODE ARGS on 127.0.0.1:
        (process, URL, its request log)."""
        port, log_ = os.path.join(self.out, f"fake-{name}.port"), os.path.join(self.out, f"fake-{name}.log")
        for f in (port, log_):
            if os.path.exists(f):
                os.unlink(f)
        p = sp.Popen([sys.executable, FAKE_DEBUGINFOD, port, log_, *args])
        _live.append(p)
        for _ in range(100):
            if os.path.exists(port):
                break
            time.sleep(0.05)
        with open(port) as f:
            return p, f"http://127.0.0.1:{int(f.read())}", log_

    def debuginfod_run(self, cond, secs, srv, local_debug):
        """One run of condition cond on a fresh burn-stripped (burn-dbg.full
        for full)."""
        exe = "burn-dbg.full" if cond == "full" else "burn-stripped"
        burn = sp.Popen([os.path.join(self.wl, exe), "-d", f"{secs + 3:g}"], stdout=sp.DEVNULL)
        _live.append(burn)
        time.sleep(0.3)
        env = {"DEBUGINFOD_CACHE_PATH": tempfile.mkdtemp(prefix="cache-", dir=self.tmp)}
        if cond == "hang":
            env.update(DEBUGINFOD_URLS=srv["hang"], DEBUGINFOD_TIMEOUT=str(DEBUGINFOD_T))
        elif cond in ("cache", "fetch"):
            env["DEBUGINFOD_URLS"] = srv["ok"]
        if cond == "cache":
            env["DEBUGINFOD_CACHE_PATH"] = srv["warm_cache"]
        installed = False
        if cond == "local":
            os.makedirs(os.path.dirname(local_debug), exist_ok=True)
            shutil.copyfile(os.path.join(self.wl, "burn-dbg.debug"), local_debug)
            installed = True
        saved = {k: os.environ.get(k) for k in DEBUGINFOD_ENV}
        try:
            for k in DEBUGINFOD_ENV:
                os.environ.pop(k, None)
            os.environ.update(env)
            r = self.run_tool("ours", self.a.freq, secs, f"debuginfod-{cond}", pid=burn.pid)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            if installed:
                os.unlink(local_debug)
            burn.terminate()
            burn.wait()
        r["env"] = env
        r["named"] = named_frames(r["folded_path"], exe[:15])
        try:	# the whole of -v: stderr_tail may have cut its first lines
            with open(r["folded_path"][:-len(".folded")] + ".err", errors="replace") as f:
                m = re.search(r"records: [^\n]*?(\d+) lost", f.read())
        except OSError:
            m = None
        r["lost_records"] = int(m[1]) if m else None
        return r

    def case_debuginfod(self):
        """Each condition in turn, the order rotated each round (see
        METHODS debuginfod)."""
        secs, rounds = self.a.debuginfod_secs, self.a.rounds
        bid = build_id(os.path.join(self.wl, "burn-stripped"))
        local_debug = f"/usr/lib/debug/.build-id/{bid[:2]}/{bid[2:]}.debug" if bid else None
        if not bid or os.path.exists(local_debug):
            why = "burn-stripped has no build-id" if not bid else f"{local_debug} exists already"
            log(f"debuginfod: {why}; case skipped")
            self.res["debuginfod"] = {"skipped": why}
            return
        conds = ("none", "hang", "cache", "local", "fetch", "full")
        log(f"debuginfod: burn-stripped -t 1, {self.a.freq} Hz, {secs} s, {rounds} interleaved "
            f"rounds: {', '.join(conds)}")
        okdir = os.path.join(self.out, "debuginfod-ok")
        os.makedirs(okdir, exist_ok=True)
        shutil.copyfile(os.path.join(self.wl, "burn-dbg.debug"), os.path.join(okdir, bid + ".debug"))
        procs = []
        try:
            p, hang_url, hang_log = self.fake_server("hang", "hang")
            procs.append(p)
            p, ok_url, ok_log = self.fake_server("ok", "ok", okdir)
            procs.append(p)
            srv = {"hang": hang_url, "ok": ok_url,
                   "warm_cache": os.path.join(self.out, "debuginfod-warm-cache")}
            shutil.rmtree(srv["warm_cache"], ignore_errors=True)
            os.makedirs(srv["warm_cache"])
            warm = self.debuginfod_run("cache", 1, srv, local_debug)
            warmed = os.path.getsize(os.path.join(srv["warm_cache"], bid, "debuginfo")) \
                if os.path.exists(os.path.join(srv["warm_cache"], bid, "debuginfo")) else 0
            log(f"  warm-up: {warmed} bytes in the cache")
            runs = {c: [] for c in conds}
            for rnd in range(rounds):
                for c in rotate(conds, rnd):
                    before = count_lines(ok_log)
                    r = self.debuginfod_run(c, secs, srv, local_debug)
                    r["ok_requests"] = count_lines(ok_log) - before
                    runs[c].append(slim(r))
                    nm = r["named"] or {}
                    log(f"  {c}: {nm.get('samples')} samples, named {fmt(nm.get('share'), 2, pct=True)}, "
                        f"wall {fmt(r.get('wall'), 3)} s, cpu {fmt(r.get('cpu'), 3)} s, dropped "
                        f"{r.get('dropped')}, lost records {r.get('lost_records')}, "
                        f"requests to the ok server {r['ok_requests']}")
        finally:
            for p in procs:
                p.terminate()
                p.wait()
        out = {"warm_cache_bytes": warmed, "warm_run": slim(warm),
               "hang_requests": count_lines(hang_log), "timeout": DEBUGINFOD_T}
        for c in conds:
            rs = [r for r in runs[c] if not r.get("failed")]
            out[c] = {
                "samples": median([(r["named"] or {}).get("samples") for r in rs]),
                "named": median([(r["named"] or {}).get("share") for r in rs]),
                "wall": median([r.get("wall") for r in rs]),
                "cpu": median([r.get("cpu") for r in rs]),
                "dropped": max([r.get("dropped") or 0 for r in rs], default=None),
                "lost_records": max([r.get("lost_records") or 0 for r in rs], default=None),
                "accounted": all(r.get("accounted") for r in rs) if rs else None,
                "ok_requests": sum(r.get("ok_requests") or 0 for r in rs),
                "failed": [r["failed"] for r in runs[c] if r.get("failed")],
                "runs": runs[c]}
        out["samples_hang_vs_none"] = ratio(out["hang"]["samples"], out["none"]["samples"])
        if None not in (out["hang"]["wall"], out["none"]["wall"]):
            out["extra_wall_hang"] = out["hang"]["wall"] - out["none"]["wall"]
        out["cpu_cache_vs_local"] = ratio(out["cache"]["cpu"], out["local"]["cpu"])
        out["named_fetch_vs_full"] = ratio(out["fetch"]["named"], out["full"]["named"])
        self.res["debuginfod"] = out

    # ----- report ----------------------------------------------------------------
    def meta(self):
        def cmd_out(cmd):
            try:
                return sp.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
            except OSError:
                return None
        self.res["meta"] = {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "kernel": platform.release(), "cpus": os.cpu_count(),
            "perf": cmd_out([self.perf, "version"]),
            "bpftrace": cmd_out([self.bpftrace, "--version"]),
            "profile": cmd_out([self.profile, "--version"]),
            "git": cmd_out(["git", "-C", ROOT, "describe", "--always", "--dirty"]),
            "freq": self.a.freq, "accuracy_note": "tools given burn's pid", "scale_dur": self.a.scale_dur,
            "freqs": self.a.freqs, "rounds": self.a.rounds,
            "burn_secs": self.a.burn_secs, "accuracy_secs": self.a.accuracy_secs,
            "unwind_secs": self.a.unwind_secs, "unwind_freq": self.a.unwind_freq,
            "python_secs": self.a.python_secs, "python": PYTHON, "python_depth": PY_DEPTH,
            "debuginfod_secs": self.a.debuginfod_secs,
            "quick": self.a.quick,
            "perf_collapse": ("perf script report stackcollapse" if self.collapse == "report"
                              else "perf script | awk -f bench/stackcollapse.awk "
                                   f"({self.collapse_why})"),
            "host_at_start": host_load(),
            "profile_at_start": file_stamp(self.profile),
        }


def build_id(path):
    """The GNU build-id of an ELF file in hex (readelf -n), or None."""
    p = sp.run(["readelf", "-n", path], capture_output=True, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", p.stdout)
    return m[1] if m else None


def count_lines(path):
    try:
        with open(path) as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def named_frames(path, comm):
    """samples (comm's, in a folded file) and share: of comm's user frames,
    each weighted by its line's count, those not [unknown]."""
    n = frames = named = 0
    try:
        f = open(path, errors="replace")
    except OSError:
        return None
    with f:
        for line in f:
            stack, _, c = line.rstrip("\n").rpartition(" ")
            parts = stack.split(";")
            if parts[0] != comm or not c.isdigit():
                continue
            c = int(c)
            n += c
            frames += c * (len(parts) - 1)
            named += c * sum(1 for x in parts[1:] if x != "[unknown]")
    return {"samples": n, "share": ratio(named, frames)}


def stackstats(path, perf=False, ratio=None, inlined=False):
    """tests/e2e/helpers/stackstats on a folded or perf script file: its
    numbers (samples, complete %, depth, ratio), None where it has none."""
    cmd = [sys.executable, os.path.join(ROOT, "tests", "e2e", "helpers", "stackstats"), path]
    cmd += ["--perf"] if perf else []
    cmd += ["--inlined"] if inlined else []
    cmd += ["--ratio", ratio] if ratio else []
    if not os.path.exists(path):
        return {}
    p = sp.run(cmd, capture_output=True, text=True)
    st = dict(kv.split("=", 1) for kv in p.stdout.split())
    out = {}
    for k in ("samples", "complete", "depth", "ratio"):
        try:
            out[k] = float(st[k])
        except (KeyError, ValueError):
            out[k] = None
    if not out["samples"]:
        return {}
    return out


# Python frames: "QUALNAME (FILE.py)" or, with --py-lines, "(FILE.py:LINE)".
PY_FRAME = re.compile(r" \(.*\.py(:[0-9]+)?\)$")


def py_stats(path):
    """samples, named (share with a Python frame), ratio (samples with
    hot_b (hot.py) over hot_a (hot.py)) and depth (mean Python frames a
    sample) of a folded file; None if it cannot be read."""
    s = {"samples": 0, "named": 0, "a": 0, "b": 0, "frames": 0}
    try:
        f = open(path, errors="replace")
    except OSError:
        return None
    with f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if not stack or not n.isdigit():
                continue
            n = int(n)
            frames = stack.split(";")[1:]
            py = sum(1 for x in frames if PY_FRAME.search(x))
            s["samples"] += n
            s["frames"] += n * py
            if py:
                s["named"] += n
            if any(x.startswith("hot_b (hot.py") for x in frames):
                s["b"] += n
            elif any(x.startswith("hot_a (hot.py") for x in frames):
                s["a"] += n
    s["ratio"] = ratio(s["b"], s["a"]) if s["a"] else None
    s["depth"] = ratio(s["frames"], s["samples"])
    s["named"] = ratio(s["named"], s["samples"])
    return s


def parse_err_file(folded_path):
    """From -v on stderr, the whole of the run's .err file beside its
    .folded (stderr_tail may have cut it): counted_all and filtered_all from
    "samples: taken T, counted C, filtered F", and python_v from "python: N
    processes, W walks, F frames"."""
    out = {}
    err = folded_path[:-len(".folded")] + ".err" if folded_path.endswith(".folded") else None
    try:
        with open(err, errors="replace") as f:
            text = f.read()
    except (OSError, TypeError):
        return out
    m = re.search(r"samples: taken \d+, counted (\d+), filtered (\d+)", text)
    if m:
        out.update(counted_all=int(m[1]), filtered_all=int(m[2]))
    m = re.search(r"python: (\d+) process\w*(?: \([^)]*\))?, (\d+) walks?, (\d+) frames?", text)
    if m:
        out["python_v"] = {"processes": int(m[1]), "walks": int(m[2]), "frames": int(m[3])}
    return out


def host_load():
    """Load average and the busiest other processes: this bench shares the
    machine with whatever else runs, and says so."""
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    try:
        ps = sp.run(["ps", "-eo", "pcpu,etime,comm", "--sort=-pcpu", "--no-headers"],
                    capture_output=True, text=True, timeout=10).stdout.splitlines()[:6]
    except OSError:
        ps = []
    return {"loadavg": " ".join(load), "top": [" ".join(x.split()) for x in ps]}


def file_stamp(path):
    """The file's inode and modification time: the binary measured must
    be the same one from the first case to the last."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{st.st_ino}:{st.st_mtime_ns}"


def rotate(xs, n):
    n %= len(xs)
    return tuple(xs[n:]) + tuple(xs[:n])


def slim(r):
    return {k: v for k, v in r.items() if k not in ("stderr_tail",)}


def parse_ours_stderr(text):
    out = {}
    m = re.search(r"records: \d+ mmap, (\d+) exec, (\d+) fork", text)
    if m:
        out.update(host_execs=int(m[1]), host_forks=int(m[2]))
    m = re.search(r"samples: taken (\d+), counted (\d+), filtered (\d+), dropped (\d+)", text)
    if m:
        out.update(self_taken=int(m[1]), counted=int(m[2]), filtered=int(m[3]),
                   dropped=int(m[4]))
    out["accounted"] = "counted + filtered + dropped == taken" in text
    for kind in ("user", "kernel"):
        m = re.search(kind + r" stacks: eexist (\d+), enomem (\d+), efault (\d+), other (\d+)", text)
        if m:
            out[kind + "_stack_errors"] = dict(zip(("eexist", "enomem", "efault", "other"),
                                                   map(int, m.groups())))
    m = re.search(r"spilled stacks: stored (\d+), spill map full (\d+), read errors (\d+)", text)
    if m:
        out["spill"] = dict(zip(("stored", "full", "read_errors"), map(int, m.groups())))
    return out


def parse_strace(path, exe):
    """exec, attached, end of sampling and exit timestamps (see METHODS)."""
    tl = {"exec": None, "attach": None, "end": None, "exit": None}
    enables, disables, exits, groups, pid = [], [], {}, {}, None
    line_re = re.compile(r"^(\d+)\s+(\d+\.\d+)\s+(.*)$")
    try:
        f = open(path, errors="replace")
    except OSError:
        return tl
    with f:
        for line in f:
            m = line_re.match(line)
            if not m:
                continue
            p, ts, rest = int(m[1]), float(m[2]), m[3]
            if rest.startswith(f'execve("{exe}"') and pid is None:
                tl["exec"], pid = ts, p
            elif "PERF_EVENT_IOC_ENABLE" in rest:
                enables.append(ts)
            elif "PERF_EVENT_IOC_DISABLE" in rest:
                disables.append(ts)
            elif rest.startswith("+++ exited") or rest.startswith("+++ killed"):
                exits[p] = ts
            elif rest.startswith("exit_group("):
                groups.setdefault(p, ts)
    if disables:
        tl["end"] = min(disables)
    before = [t for t in enables if tl["end"] is None or t < tl["end"]]
    if before:
        tl["attach"] = max(before)
    if pid is not None:
        tl["exit"] = exits.get(pid, groups.get(pid))
    return tl


def fmt(x, nd=1, pct=False):
    if x is None:
        return "-"
    if pct:
        return f"{100 * x:.{nd}f}%"
    if isinstance(x, int):
        return f"{x}"
    return f"{x:.{nd}f}"


def report(res):
    """The table, and the targets of issue 5 with PASS/MISS."""
    lines = []
    m = res["meta"]
    w = lines.append
    w(f"profile bench  {m['date']}  kernel {m['kernel']}, {m['cpus']} CPUs, "
      f"{m['perf']}, {m['bpftrace']}, {m['profile']} ({m['git']})"
      + ("  [QUICK: not a valid result]" if m["quick"] else ""))
    hs, he = m.get("host_at_start", {}), m.get("host_at_end", {})
    if "awk" in m.get("perf_collapse", ""):
        w("NOTE: " + m["perf_collapse"])
    w(f"host load average at start {hs.get('loadavg')}, at end {he.get('loadavg')}; "
      f"busiest at start: {'; '.join(hs.get('top', [])[:3])}")
    if m.get("profile_at_start") != m.get("profile_at_end"):
        w("WARNING: the profile binary was rebuilt during the bench: its results mix two builds")
    hdr = f"{'':44} {'ours':>10} {'perf':>10} {'bpftrace':>10} {'ours/perf':>10} {'ours/bpft':>10}"

    def row(label, vals, nd=1, pct=False, ratios=True):
        cells = [fmt(vals.get(t), nd, pct) for t in TOOLS]
        rs = ["", ""]
        if ratios:
            rs = [fmt(ratio(vals.get("ours"), vals.get(t)), 2) for t in ("perf", "bpftrace")]
        w(f"{label:44} " + " ".join(f"{c:>10}" for c in cells + rs))

    targets = []
    sc = res.get("scale")
    if sc:
        w("")
        w(f"1. Scale: {sc['ours'].get('workload')}, {m['freq']} Hz, {m['scale_dur']} s, whole host")
        w(hdr)
        g = lambda k, s=1.0: {t: (sc[t].get(k) * s if sc[t].get(k) is not None else None) for t in TOOLS}  # noqa: E731
        row("samples taken", g("taken"), 0, ratios=False)
        row("samples in output with real stacks", g("kept"), 0, ratios=False)
        row("  kept / taken", g("kept_frac"), 2, pct=True, ratios=False)
        ms = {t: ratio((sc[t].get("folded") or {}).get("ms_run"), (sc[t].get("folded") or {}).get("ms")) for t in TOOLS}
        row("  msbench samples symbolized down to run()", ms, 1, pct=True, ratios=False)
        w("    (bpftrace symbolizes user stacks as it prints; msbench may have exited by then)")
        row("distinct stacks (folded lines)", g("distinct"), 0)
        row("CPU user+sys, whole pipeline (ms)", g("cpu", 1e3), 0)
        row("peak RSS (MiB)", g("maxrss_kb", 1 / 1024), 1)
        row("BPF map memory, kernel (MiB)", g("bpf_map_bytes", 1 / 2**20), 1)
        row("BPF ns/sample", g("bpf_ns_per_sample"), 0)
        row("end of sampling -> output complete (ms)", g("end_to_output", 1e3), 0)
        row("sampling window, attached -> end (s)", g("sampling_window"), 3, ratios=False)
        fl = sc.get("floor", {}).get("bpf_ns_per_sample")
        o = sc["ours"]
        w(f"floor (2x bpf_get_stackid, same workload): {fmt(fl, 0)} ns/sample; "
          f"ours = {fmt(ratio(o.get('bpf_ns_per_sample'), fl), 2)}x floor, "
          f"bpftrace = {fmt(ratio(sc['bpftrace'].get('bpf_ns_per_sample'), fl), 2)}x floor")
        if o.get("host_execs") or o.get("host_forks"):
            w(f"WARNING: {o.get('host_execs')} execs and {o.get('host_forks')} forks on the host "
              "during ours' run: its CPU and RSS include following and naming them (a quiet "
              "run has none); run again on a quiet host")
        if o.get("self_taken") is not None:
            w(f"ours -v: taken {o['self_taken']}, counted {o['counted']}, filtered "
              f"{o['filtered']}, dropped {o['dropped']}; user stacks {o.get('user_stack_errors')}; "
              f"kernel stacks {o.get('kernel_stack_errors')}; spill {o.get('spill')}")
        b = sc["bpftrace"]
        w(f"bpftrace: {b.get('bpftrace_entries')} map entries printed (its map holds 4096), "
          f"{(b.get('folded') or {}).get('empty')} samples printed with no stack at all, "
          f"{b.get('stack_id_errors')} 'failed to look up stack id' errors")
        bb = sc.get("bpftrace_bigmaps")
        if bb:
            w(f"bpftrace with BPFTRACE_MAP_KEYS_MAX={BIG_MAP_KEYS} (maps big enough to keep the "
              f"samples): kept {fmt(bb.get('kept_frac'), 2, pct=True)}, "
              f"BPF ns/sample {fmt(bb.get('bpf_ns_per_sample'), 0)} "
              f"(ours = {fmt(ratio(o.get('bpf_ns_per_sample'), bb.get('bpf_ns_per_sample')), 2)}x), "
              f"CPU {fmt(bb.get('cpu'), 3)} s (ours = {fmt(ratio(o.get('cpu'), bb.get('cpu')), 3)}x), "
              f"map memory {fmt((bb.get('bpf_map_bytes') or 0) / 2**20, 1)} MiB")
        tg = sc.get("together")
        if tg:
            to, tb = tg["ours"].get("bpf_ns_per_sample"), tg["bpftrace"].get("bpf_ns_per_sample")
            w(f"at once on one manystacks, ours and bpftrace with BPFTRACE_MAP_KEYS_MAX={BIG_MAP_KEYS}: "
              f"BPF ns/sample {fmt(to, 0)} and {fmt(tb, 0)} (ours = {fmt(ratio(to, tb), 2)}x)")
        targets.append(("Samples kept (manystacks) >= 99.5%, losses reported",
                        fmt(o.get("kept_frac"), 2, pct=True) +
                        (", accounted" if o.get("accounted") else ", NOT accounted"),
                        (o.get("kept_frac") or 0) >= 0.995 and o.get("accounted")))
        cp, cb = ratio(o.get("cpu"), sc["perf"].get("cpu")), ratio(o.get("cpu"), b.get("cpu"))
        targets.append(("Profiler CPU <= 0.3x perf", fmt(cp, 3) + "x", cp is not None and cp <= 0.3))
        targets.append(("Profiler CPU <= 0.1x bpftrace", fmt(cb, 3) + "x", cb is not None and cb <= 0.1))
        nb = ratio(o.get("bpf_ns_per_sample"), b.get("bpf_ns_per_sample"))
        targets.append(("BPF ns/sample <= bpftrace's", fmt(nb, 2) + "x (floor: "
                        + fmt(ratio(o.get("bpf_ns_per_sample"), fl), 2) + "x)",
                        nb is not None and nb <= 1.0))
        rss = (o.get("maxrss_kb") or 0) / 1024
        targets.append(("Peak RSS <= 16 MiB at ~19k stacks", f"{rss:.1f} MiB", 0 < rss <= 16))
        lat = o.get("end_to_output")
        targets.append(("End of sampling -> output <= 100 ms",
                        fmt(lat * 1e3 if lat is not None else None, 0) + " ms",
                        lat is not None and lat <= 0.1))

    ac = res.get("accuracy")
    if ac:
        w("")
        w(f"2. Accuracy: burn -t 2, {m['freq']} Hz, {m['accuracy_secs']} s, that process only: "
          "func_b/func_a, expected 3.0")
        w(hdr)
        row("func_b/func_a", {t: ac[t].get("ratio_b_a") for t in TOOLS}, 3, ratios=False)
        row("  samples in func_a", {t: ac[t].get("func_a") for t in TOOLS}, 0, ratios=False)
        ov = res.get("overhead")
        if ov:
            for f in [k for k in ov if k.isdigit()]:
                row(f"  func_b/func_a in the overhead runs, {f} Hz",
                    {t: ov[f][t].get("ratio_b_a") for t in TOOLS}, 3, ratios=False)
        w("  (bpftrace symbolizes at print time: in the overhead runs burn has exited by then)")

    su = res.get("startup")
    if su:
        w("")
        w(f"3. Start-up: 1 s profile at {m['freq']} Hz on the host as it is "
          f"(median of {len(su['ours']['runs'])})")
        w(hdr)
        g = lambda k, s=1.0: {t: (su[t].get(k) * s if su[t].get(k) is not None else None) for t in TOOLS}  # noqa: E731
        row("exec -> sampling attached (ms)", g("exec_to_attach", 1e3), 0)
        row("total wall time, 1 s profile (s)", g("wall_1s"), 3)
        row("CPU user+sys, 1 s profile (ms)", g("cpu_1s", 1e3), 0)
        row("end of sampling -> output complete (ms)", g("end_to_output", 1e3), 0)
        ea = su["ours"].get("exec_to_attach")
        targets.append(("Exec -> attached <= 150 ms",
                        fmt(ea * 1e3 if ea is not None else None, 0) + " ms",
                        ea is not None and ea <= 0.15))

    ov = res.get("overhead")
    if ov:
        freqs = [k for k in ov if k.isdigit()]
        w("")
        w(f"4. Overhead: burn -t 2 -d {m['burn_secs']} under each tool, "
          f"{m['rounds']} interleaved rounds, medians")
        w(hdr)
        for f in freqs:
            row(f"BPF ns/sample at {f} Hz", {t: ov[f][t].get("bpf_ns_per_sample") for t in TOOLS}, 0)
            row(f"tool CPU us/sample at {f} Hz", {t: ov[f][t].get("cpu_us_per_sample") for t in TOOLS}, 2)
        mc = ov.get("marginal_cpu_us_per_sample")
        if mc:
            row("tool CPU us/sample, marginal", mc, 2)
            w("  (marginal = extra CPU per extra sample between the two frequencies;"
              " at or below 0 means below the run-to-run noise of the start-up cost)")
        for f in freqs:
            row(f"burn throughput vs no tool at {f} Hz",
                {t: ov[f][t].get("throughput_vs_none") for t in TOOLS}, 3)
        w("  (not a valid overhead measure on this VM, see issue 5: it can come out inverted;"
          " reported, not judged)")

    uw = res.get("unwind")
    if uw:
        targets += report_unwind(uw, m, w)

    py = res.get("python")
    if py:
        targets += report_python(py, m, w)

    dd = res.get("debuginfod")
    if dd:
        targets += report_debuginfod(dd, m, w)

    targets += case_pyexact.report_pyexact(res.get("pyexact") or {}, w)
    targets += case_exact.report_exact(res.get("exact") or {}, w)
    if res.get("burn_ratio"):
        targets += case_burn_ratio.report(res["burn_ratio"], w)
    targets += case_offcpu.report(res.get("offcpu") or {}, w)
    targets += case_agent.report(res.get("agent") or {}, w)
    targets += case_startup.report(res.get("cold") or {}, w)
    targets += case_lazy.report(res.get("lazy") or {}, w)
    targets += case_firstwhole.report(res.get("firstwhole") or {}, w)
    targets += case_forkburst.report(res.get("forkburst") or {}, w)
    targets += case_churn.report(res.get("churn") or {}, w)

    for f in res.get("failures") or []:
        w(f"FAILED RUN (left out of the medians): {f}")
    w("")
    w("Targets (issue 5" + ("; unwinding: issue 15" if uw else "") +
      ("; debuginfod: issue 17" if dd and not dd.get("skipped") else "") + ")")
    for label, val, ok in targets:
        w(f"  {'PASS' if ok else 'MISS'}  {label:44} {val}")
    res["targets"] = [{"target": l, "measured": v, "pass": bool(ok)} for l, v, ok in targets]
    return "\n".join(lines)


def report_unwind(uw, m, w):
    """Section 5 and the targets of issue 15."""
    tools = ("dwarf", "fp", "perf")
    w("")
    w(f"5. Unwinding without frame pointers: each program alone, {m.get('unwind_freq')} Hz, "
      f"{m.get('unwind_secs')} s; profile --unwind=dwarf and =fp, perf record "
      "--call-graph dwarf + perf script")
    w(f"{'':20} {'complete %':>10} {'mean depth':>10} {'CPU ms':>8} {'BPF ns/sample':>14} {'ns/frame':>9}")
    for name, r in uw.items():
        for t in tools:
            x = r[t]
            w(f"{name if t == 'dwarf' else '':12} {t:7} {fmt(x.get('complete'), 1):>10} "
              f"{fmt(x.get('depth'), 1):>10} "
              f"{fmt(x['cpu'] * 1e3 if x.get('cpu') is not None else None, 0):>8} "
              f"{fmt(x.get('bpf_ns_per_sample'), 0):>14} "
              f"{fmt(ratio(x.get('bpf_ns_per_sample'), x.get('depth')), 0):>9}")
    w("  (perf: CPU of perf record + perf script; BPF ns/frame = BPF ns/sample over mean depth)")
    targets = []
    b = uw.get("burn-nofp", {}).get("dwarf", {})
    c, rt = b.get("complete"), b.get("ratio_b_a")
    targets.append(("burn-nofp dwarf: >=99% whole, b/a 3.0+-10%",
                    f"{fmt(c, 1)}%, {fmt(rt, 3)}",
                    c is not None and rt is not None and c >= 99 and 2.7 <= rt <= 3.3))
    for name in ("python3", "perl", "gzip"):
        if name not in uw:
            continue
        d, p = uw[name]["dwarf"], uw[name]["perf"]
        dc = None if None in (d.get("complete"), p.get("complete")) else d["complete"] - p["complete"]
        dd = ratio(d.get("depth"), p.get("depth"))
        targets.append((f"{name}: whole +-1 pt, depth +-10% of perf",
                        f"{fmt(dc, 1)} pt, depth {fmt(dd, 2)}x",
                        dc is not None and dd is not None and abs(dc) <= 1 and 0.9 <= dd <= 1.1))
    ns = [ratio(r["dwarf"].get("bpf_ns_per_sample"), r["fp"].get("bpf_ns_per_sample")) for r in uw.values()]
    worst = None if None in ns or not ns else max(ns)
    targets.append(("BPF ns/sample, dwarf <= 3x fp (worst)", fmt(worst, 2) + "x",
                    worst is not None and worst <= 3))
    ours = [r["dwarf"].get("cpu") for r in uw.values()]
    perf = [r["perf"].get("cpu") for r in uw.values()]
    cp = None if None in ours + perf else ratio(sum(ours), sum(perf))
    targets.append(("CPU <= 0.1x perf dwarf record+script", fmt(cp, 3) + "x",
                    cp is not None and cp <= 0.1))
    return targets


def report_python(py, m, w):
    """Section 6 and the targets for Python frames."""
    w("")
    if py.get("skipped"):
        w(f"6. Python frames: skipped ({py['skipped']})")
        return []
    w(f"6. Python frames: {m.get('python')}, {m['freq']} Hz, {m.get('python_secs')} s a run, "
      f"{m['rounds']} interleaved rounds (medians); all but hot.py pinned to CPU 0 and "
      "profiled with -C 0")
    w(f"{'':44} {'samples':>8} {'named':>8} {'b/a':>7} {'py depth':>9} {'BPF ns/run':>11} "
      f"{'ns/counted':>11}")
    labels = (("hot", "hot.py alone (-p)"),
              ("deep-on", f"deep.py {m.get('python_depth')}, Python frames"),
              ("deep-off", f"deep.py {m.get('python_depth')}, --python=off"),
              ("burn-off", "burn-nofp (burn-nofp on CPU 1), --python=off"),
              ("burn-on", "burn-nofp (burn-nofp on CPU 1), Python on"),
              ("burn-beside-py-off", "burn-nofp (deep.py on CPU 1), --python=off"),
              ("burn-beside-py", "burn-nofp (deep.py on CPU 1), Python on"))
    for key, label in labels:
        x = py.get(key) or {}
        w(f"{label:44} {fmt(x.get('samples'), 0):>8} {fmt(x.get('named'), 2, pct=True):>8} "
          f"{fmt(x.get('ratio_b_a'), 3):>7} {fmt(x.get('py_depth'), 1):>9} "
          f"{fmt(x.get('bpf_ns_per_sample'), 0):>11} {fmt(x.get('bpf_ns_per_counted'), 0):>11}"
          + (f"  FAILED: {'; '.join(x['failed'])}" if x.get("failed") else ""))
    on = py.get("deep-on") or {}
    w(f"  (ns/run: run_time_ns / run_cnt of do_sample, filtered runs included; ns/counted: "
      f"the same less {fmt(py.get('filtered_run_ns'), 0)} ns a filtered run, over the samples "
      "counted, which the comparisons below use)")
    if on.get("python_v"):
        v = on["python_v"]
        w(f"  -v, deep.py: {v['processes']} Python processes, {v['walks']} walks, {v['frames']} "
          f"frames ({fmt(ratio(v['frames'], v['walks']), 1)} a walk)")
    w(f"  per Python frame: (on - off) / depth = {fmt(py.get('ns_per_python_frame'), 0)} ns; "
      f"added at depth {fmt(on.get('py_depth'), 1)} = {fmt(py.get('added_vs_native'), 2)}x "
      "the native-only cost")
    w(f"  burn-nofp: with Python frames {fmt(py.get('burn_on_vs_off'), 3)}x --python=off "
      "(no Python process: the same BPF instructions, so this is the noise); "
      f"beside a Python {fmt(py.get('burn_beside_py_on_vs_off'), 3)}x --python=off there, "
      f"{fmt(py.get('burn_beside_py_vs_alone'), 3)}x beside burn-nofp (another co-runner: "
      "information only)")
    hot = py.get("hot") or {}
    targets = []
    nm, rt = hot.get("named"), hot.get("ratio_b_a")
    targets.append(("Python: hot.py samples named >= 99%", fmt(nm, 2, pct=True),
                    nm is not None and nm >= 0.99))
    targets.append(("Python: hot_b/hot_a 3.0 +-10%", fmt(rt, 3),
                    rt is not None and 2.7 <= rt <= 3.3))
    av = py.get("added_vs_native")
    targets.append((f"Python: added cost at depth {m.get('python_depth')} <= 2x native",
                    fmt(av, 2) + "x", av is not None and av <= 2))
    # One-sided: no added cost.  burn-on and burn-off run the same BPF
    # instructions (no Python process, so no lookup), and their ratio is
    # this host's noise, printed above.
    bb = py.get("burn_beside_py_on_vs_off")
    targets.append(("Python: no-Python process pays <= +10%", fmt(bb, 3) + "x",
                    bb is not None and bb <= 1.10))
    return targets


def report_debuginfod(dd, m, w):
    """Section 7 and the targets of issue 17."""
    w("")
    if dd.get("skipped"):
        w(f"7. debuginfod: skipped ({dd['skipped']})")
        return []
    w(f"7. debuginfod: burn-stripped -t 1, {m['freq']} Hz, {m.get('debuginfod_secs')} s a run, "
      f"{m['rounds']} interleaved rounds (medians); servers on 127.0.0.1")
    w(f"{'':44} {'samples':>8} {'named':>8} {'wall s':>7} {'CPU ms':>7} {'dropped':>8} "
      f"{'lost rec':>8} {'ok reqs':>8}")
    labels = (("none", "no DEBUGINFOD_URLS"),
              ("hang", f"a server that never answers, TIMEOUT={dd.get('timeout')}"),
              ("cache", "warm debuginfod cache (server up)"),
              ("local", "burn-dbg.debug in /usr/lib/debug/.build-id"),
              ("fetch", "fetched: server up, empty cache"),
              ("full", "burn-dbg.full (unstripped), no server"))
    for key, label in labels:
        x = dd.get(key) or {}
        w(f"{label:44} {fmt(x.get('samples'), 0):>8} {fmt(x.get('named'), 2, pct=True):>8} "
          f"{fmt(x.get('wall'), 3):>7} "
          f"{fmt(x['cpu'] * 1e3 if x.get('cpu') is not None else None, 0):>7} "
          f"{fmt(x.get('dropped'), 0):>8} {fmt(x.get('lost_records'), 0):>8} "
          f"{fmt(x.get('ok_requests'), 0):>8}"
          + (f"  FAILED: {'; '.join(x['failed'])}" if x.get("failed") else ""))
    w(f"  (warm-up put {dd.get('warm_cache_bytes')} bytes in the cache; the hanging server got "
      f"{dd.get('hang_requests')} requests; ok reqs: requests to the answering server, summed)")
    targets = []
    # A figure about a lookup counts only if the lookup happened: the
    # hanging server was asked, the warm cache named the frames.
    h, c, lo = dd.get("hang") or {}, dd.get("cache") or {}, dd.get("local") or {}
    asked = (dd.get("hang_requests") or 0) > 0
    no_ask = "" if asked else ", the server was never asked"
    sv = dd.get("samples_hang_vs_none")
    lost = None if h.get("dropped") is None else (h.get("dropped") or 0) + (h.get("lost_records") or 0)
    targets.append(("debuginfod: samples, hanging >= 0.99x none, 0 lost",
                    f"{fmt(sv, 3)}x, {fmt(lost, 0)} lost" +
                    ("" if h.get("accounted") else ", NOT accounted") + no_ask,
                    asked and sv is not None and sv >= 0.99 and lost == 0 and bool(h.get("accounted"))))
    ex, t = dd.get("extra_wall_hang"), dd.get("timeout")
    targets.append((f"debuginfod: hanging server costs <= {t} + 1 s", f"{fmt(ex, 2)} s" + no_ask,
                    asked and ex is not None and ex <= t + 1))
    cv = dd.get("cpu_cache_vs_local")
    same = None not in (c.get("named"), lo.get("named")) and c["named"] >= lo["named"] - 0.001
    targets.append(("debuginfod: CPU, warm cache <= 1.1x local file", f"{fmt(cv, 3)}x" +
                    ("" if same else ", the cache did not name the frames"),
                    same and cv is not None and cv <= 1.10))
    nv = dd.get("named_fetch_vs_full")
    targets.append(("debuginfod: frames named, fetched = unstripped", fmt(nv, 2, pct=True),
                    nv is not None and nv >= 0.999))
    return targets


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--json", help="results file (default OUT/results.json)")
    ap.add_argument("--profile", default=os.path.join(ROOT, "build", "profile"))
    ap.add_argument("--workloads", default=os.path.join(ROOT, "build", "workloads"))
    helpers = os.path.join(ROOT, "build", "bench")
    ap.add_argument("--rusage", default=os.path.join(helpers, "rusage"),
                    help="bench/rusage.c, built")
    ap.add_argument("--floor", default=os.path.join(helpers, "floor"),
                    help="bench/floor.c, built; FLOOR.bpf.o beside it")
    ap.add_argument("--cases", default="startup,scale,accuracy,overhead,unwind,python,"
                    "debuginfod,pyexact,exact,burn_ratio,offcpu,agent,cold,lazy,firstwhole,"
                    "forkburst,churn")
    ap.add_argument("--freq", type=int, default=999)
    ap.add_argument("--freqs", default="999,4999")
    ap.add_argument("--scale-dur", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--startup-rounds", type=int, default=3)
    ap.add_argument("--burn-secs", type=int, default=4)
    ap.add_argument("--accuracy-secs", type=int, default=5)
    ap.add_argument("--unwind-secs", type=int, default=5)
    ap.add_argument("--unwind-freq", type=int, default=499)
    ap.add_argument("--python-secs", type=int, default=5)
    ap.add_argument("--debuginfod-secs", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep perf.data files")
    ap.add_argument("--perf-collapse", choices=("report", "awk"),
                    help="how to fold perf's samples (default: report if perf has it)")
    ap.add_argument("--quick", action="store_true",
                    help="short runs to check the script itself, not for results")
    a = ap.parse_args()
    a.freqs = [int(x) for x in a.freqs.split(",")]
    if a.quick:
        a.scale_dur, a.rounds, a.startup_rounds, a.burn_secs = 3, 1, 1, 2
        a.accuracy_secs = a.unwind_secs = a.python_secs = a.debuginfod_secs = 2
    cases = a.cases.split(",")
    b = Bench(a)
    b.meta()
    sysctl = "/proc/sys/kernel/bpf_stats_enabled"
    old = None
    try:
        stats_fd = bpfprog.enable_stats()
    except OSError as e:
        log(f"BPF_ENABLE_STATS failed ({e}); setting kernel.bpf_stats_enabled=1 instead")
        stats_fd = None
        with open(sysctl) as f:
            old = f.read().strip()
        with open(sysctl, "w") as f:
            f.write("1")
    t0 = time.monotonic()
    b.res["meta"]["case_secs"] = {}
    try:
        for case in ("startup", "scale", "accuracy", "overhead", "unwind", "python", "debuginfod",
                     "burn_ratio"):
            if case in cases:
                t = time.monotonic()
                getattr(b, "case_" + case)()
                b.res["meta"]["case_secs"][case] = round(time.monotonic() - t, 1)
        if "pyexact" in cases:
            b.res["pyexact"] = case_pyexact.case_pyexact(b)
        if "exact" in cases:
            b.res["exact"] = case_exact.case_exact(
                b, {"stackstats": stackstats, "slim": slim, "live": _live})
        if "offcpu" in cases:
            b.res["offcpu"] = case_offcpu.case(b)
        if "agent" in cases:
            b.res["agent"] = case_agent.case(b)
        if "cold" in cases:
            b.res["cold"] = case_startup.case(b)
        if "lazy" in cases:
            b.res["lazy"] = case_lazy.case(b)
        if "firstwhole" in cases:
            b.res["firstwhole"] = case_firstwhole.case(b)
        if "forkburst" in cases:
            b.res["forkburst"] = case_forkburst.case(b)
        if "churn" in cases:
            b.res["churn"] = case_churn.case(b)
    finally:
        cleanup()
        if stats_fd is not None:
            os.close(stats_fd)
        if old is not None:
            with open(sysctl, "w") as f:
                f.write(old)
    b.res["meta"]["bench_secs"] = round(time.monotonic() - t0, 1)
    b.res["meta"]["host_at_end"] = host_load()
    b.res["meta"]["profile_at_end"] = file_stamp(b.profile)
    text = report(b.res)
    print(text)
    path = a.json or os.path.join(b.out, "results.json")
    with open(path, "w") as f:
        json.dump(b.res, f, indent=1, default=str)
    with open(os.path.join(b.out, "table.txt"), "w") as f:
        f.write(text + "\n")
    log(f"{b.res['meta']['bench_secs']} s; results in {path}, table in "
        f"{os.path.join(b.out, 'table.txt')}")


if __name__ == "__main__":
    main()
