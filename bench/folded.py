# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Folded stacks: read them, and make them from bpftrace's map output."""
import re

MISSED = ("[Missed User Stack]", "[Missed Kernel Stack]")
_OFFSET = re.compile(r"\+(0x[0-9a-f]+|\d+)$")
_BOTH_EMPTY = re.compile(r"^(.*), , \]: (\d+)$")


def fold_bpftrace(src, dst):
    """bpftrace prints @[comm, kstack, ustack]: N as

        @[comm, <NL>    kframe+off ...<NL>, <NL>    uframe+off ...<NL>]: N

    (an empty kstack gives '@[comm, , ' on the first line, and two empty
    stacks '@[comm, , ]: N' on one line).  Write one folded
    line per entry, comm;user frames outermost first;kernel frames, without
    the +offsets, so that equal stacks fold as they do for the other tools.
    Returns the number of entries."""
    entries, comm, parts, state = 0, None, ([], []), None
    with open(src, errors="replace") as f, open(dst, "w") as out:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("@["):
                rest = line[2:]
                m = _BOTH_EMPTY.match(rest)
                if m:	# both stacks empty: @[comm, , ]: N
                    out.write(f"{m[1]} {m[2]}\n")
                    entries += 1
                    comm = None
                    continue
                if rest.endswith(", , "):
                    comm, state = rest[:-4], 1
                elif rest.endswith(", "):
                    comm, state = rest[:-2], 0
                else:
                    comm = None
                    continue
                parts = ([], [])
            elif comm is None:
                continue
            elif line.startswith("]: "):
                k, u = parts
                frames = [comm] + u[::-1] + k[::-1]
                out.write(";".join(frames) + " " + line[3:].strip() + "\n")
                entries += 1
                comm = None
            elif line.strip() == ",":
                state = 1
            elif line.startswith(" "):
                parts[state].append(_OFFSET.sub("", line.strip()))
    return entries


def stats(path, burn_comm="bbench", ms_comm="msbench"):
    """Sample counts of a folded file.

    samples   sum of all counts
    real      samples whose stack has at least one frame after the comm and
              no [Missed ... Stack] marker
    distinct  distinct folded lines
    empty     samples with no frame at all (only the comm)
    func_a, func_b   samples of burn (renamed burn_comm by burn -n) in each
              function: its known answer is func_b = 3 x func_a
    ms, ms_run       samples of manystacks (run as ms_comm), and those
              symbolized down to its thread function run()
    """
    seen = {}
    s = dict(samples=0, real=0, empty=0, distinct=0, func_a=0, func_b=0, ms=0,
             ms_run=0, lines=0)
    try:
        f = open(path, errors="replace")
    except OSError:
        return None
    with f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            stack, _, n = line.rpartition(" ")
            try:
                n = int(n)
            except ValueError:
                continue
            s["lines"] += 1
            s["samples"] += n
            frames = stack.split(";")
            if len(frames) > 1 and not any(m in frames for m in MISSED):
                s["real"] += n
            elif len(frames) == 1:
                s["empty"] += n
            seen[stack] = seen.get(stack, 0) + n
            if frames[0] == burn_comm:
                if "func_b" in frames:
                    s["func_b"] += n
                elif "func_a" in frames:
                    s["func_a"] += n
            if frames[0] == ms_comm:
                s["ms"] += n
                if "run" in frames:
                    s["ms_run"] += n
    s["distinct"] = len(seen)
    return s
