# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Find a tool's perf_event BPF programs and read their run statistics.

A profiler's program is unloaded when the profiler exits, and with it its
run_cnt and run_time_ns (kernel.bpf_stats_enabled=1).  ProgHolder watches a
process tree, and as soon as a process in it holds a BPF_PROG_TYPE_PERF_EVENT
program (a bpf-prog or bpf_link fd, found through /proc/PID/fdinfo), it takes
its own reference with BPF_PROG_GET_FD_BY_ID.  Once the tool has exited the
program no longer runs, and the final counts are read from our fd's fdinfo.
"""
import ctypes
import os
import platform
import struct
import threading
import time

BPF_PROG_GET_FD_BY_ID = 13
BPF_OBJ_GET_INFO_BY_FD = 15
BPF_ENABLE_STATS = 32
BPF_STATS_RUN_TIME = 0
BPF_PROG_TYPE_PERF_EVENT = 7
NR_BPF = {"x86_64": 321, "aarch64": 280}.get(platform.machine(), 321)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _bpf(cmd, attr):
    buf = ctypes.create_string_buffer(bytes(attr), 128)
    r = _libc.syscall(ctypes.c_long(NR_BPF), ctypes.c_long(cmd), buf,
                      ctypes.c_uint(128))
    if r < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return r


def prog_fd_by_id(prog_id):
    return _bpf(BPF_PROG_GET_FD_BY_ID, struct.pack("=III", prog_id, 0, 0))


def enable_stats():
    """Turn on run_cnt/run_time_ns accounting for as long as the returned fd
    stays open: the same switch as kernel.bpf_stats_enabled=1, but counted,
    so it goes back off by itself when we exit, and does not turn it off
    under anyone else who also wants it."""
    return _bpf(BPF_ENABLE_STATS, struct.pack("=I", BPF_STATS_RUN_TIME))


def prog_name(fd):
    """The program's name from bpf_prog_info (the first 80 bytes suffice)."""
    info = ctypes.create_string_buffer(80)
    try:
        _bpf(BPF_OBJ_GET_INFO_BY_FD,
             struct.pack("=IIQ", fd, 80, ctypes.addressof(info)))
    except OSError:
        return "?"
    return info.raw[64:80].split(b"\0", 1)[0].decode(errors="replace")


def fdinfo(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.partition(":")
                out[k.strip()] = v.strip()
    except OSError:
        pass
    return out


def descendants(root):
    """root and every process below it."""
    seen, todo = [], [root]
    while todo:
        pid = todo.pop()
        seen.append(pid)
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return seen


def bpf_fds(pid, kinds=("anon_inode:bpf-prog", "anon_inode:bpf_link",
                        "anon_inode:bpf-map")):
    """(fd, link target) of the process's BPF fds of the given kinds."""
    out = []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return out
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target in kinds:
            out.append((fd, target))
    return out


class ProgHolder(threading.Thread):
    """Hold references to the perf_event programs of a process tree."""

    def __init__(self, root_pid, settle=0.5):
        super().__init__(daemon=True)
        self.root = root_pid
        self.settle = settle	# keep looking this long after the first find
        self.progs = {}		# prog id -> (our fd, name)
        self.map_bytes = 0	# the most BPF map memory the tree held at once
        self._halt = threading.Event()
        self.start()

    def _scan(self):
        for pid in descendants(self.root):
            for fd, _ in bpf_fds(pid, ("anon_inode:bpf-prog", "anon_inode:bpf_link")):
                info = fdinfo(f"/proc/{pid}/fdinfo/{fd}")
                if "prog_id" not in info:
                    continue
                pid_ = int(info["prog_id"])
                if pid_ in self.progs:
                    continue
                try:
                    ours = prog_fd_by_id(pid_)
                except OSError:
                    continue
                mine = fdinfo(f"/proc/self/fdinfo/{ours}")
                if mine.get("prog_type") != str(BPF_PROG_TYPE_PERF_EVENT):
                    os.close(ours)
                    self.progs[pid_] = None
                    continue
                self.progs[pid_] = (ours, prog_name(ours))

    def _maps(self):
        total = sum(map_memlock(pid)[0] for pid in descendants(self.root))
        self.map_bytes = max(self.map_bytes, total)

    def run(self):
        """Look for programs every 10 ms until settle s after the first
        find, then only sample map memory, once a second."""
        found = None
        while not self._halt.is_set():
            if found is None or time.monotonic() - found <= self.settle:
                self._scan()
                if found is None and any(self.progs.values()):
                    found = time.monotonic()
                    self._maps()
                self._halt.wait(0.01)
            else:
                self._maps()
                self._halt.wait(1.0)

    def stop(self):
        self._halt.set()
        self.join()

    def stats(self):
        """All held programs' counts, and the busiest one (the sampler)."""
        progs = []
        for pid_, held in self.progs.items():
            if not held:
                continue
            info = fdinfo(f"/proc/self/fdinfo/{held[0]}")
            progs.append({"id": pid_, "name": held[1],
                          "run_cnt": int(info.get("run_cnt", 0)),
                          "run_time_ns": int(info.get("run_time_ns", 0))})
        main = max(progs, key=lambda p: p["run_cnt"]) if progs else None
        return main, progs

    def close(self):
        for held in self.progs.values():
            if held:
                os.close(held[0])
        self.progs = {}


def map_memlock(pid):
    """Sum of memlock over the BPF maps a process holds (what `bpftool map
    show` prints as memlock; the kernel's map memory usage)."""
    maps = {}
    for fd, _ in bpf_fds(pid, ("anon_inode:bpf-map",)):
        info = fdinfo(f"/proc/{pid}/fdinfo/{fd}")
        if "memlock" in info:
            maps[info.get("map_id", fd)] = int(info["memlock"])
    return sum(maps.values()), len(maps)
