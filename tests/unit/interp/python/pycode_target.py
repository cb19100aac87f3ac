# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The live interpreter test_pycode and test_pyversions read.

Run by an interpreter (3.8 to 3.13) as `python pycode_target.py DIR`: it
makes code objects of many kinds, prints what the interpreter itself says
of each (the test's ground truth), then blocks reading stdin while the test
reads its memory.  DIR is a scratch directory for a file with a non-ASCII
name.  Everything printed is one record a line, fields separated by
spaces, strings as hex of their UTF-8 so that nothing needs quoting:

  version MAJOR MINOR
  types CODE STR BYTES               id() of types.CodeType, str, bytes
  runtime ADDR                       &_PyRuntime, 0 if ctypes cannot say
  thread MAIN SPIN                   threading idents (pthread_self())
  walk CODE LINE                     the main thread's frames, innermost
                                     first, and the line each one runs
  code ID FIRSTLINE NAMEHEX FILEHEX UNITS
  lines START END LINE               for the code before: code units
                                     [START, END) are on LINE (0: none)
  ready

NAMEHEX and FILEHEX are what pycode__read must return: co_qualname (3.11+)
or co_name, and co_filename, with control characters, surrogates and the
like as U+FFFD, cut to PYCODE_NAME_MAX - 1 and PYCODE_FILE_MAX - 1 bytes at
a character.  Lines come from PyCode_Addr2Line, the interpreter's own C
function, for every code unit.
"""

import ctypes
import os
import sys
import threading
import types

NAME_MAX = 1024  # PYCODE_NAME_MAX
FILE_MAX = 4096  # PYCODE_FILE_MAX

QUALNAME = sys.version_info >= (3, 11)

codes = []  # every code object printed: kept alive while the test reads


def shown(s):
    """s as pycode.c shows it: what is not printable text is U+FFFD."""
    out = []
    for ch in s:
        c = ord(ch)
        if c < 0x20 or 0x7F <= c < 0xA0 or 0xD800 <= c < 0xE000:
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out)


def cut(s, limit):
    """The UTF-8 of s, at most limit - 1 bytes, cut at a character."""
    b = b""
    for ch in s:
        e = ch.encode("utf-8")
        if len(b) + len(e) > limit - 1:
            break
        b += e
    return b


def addr2line():
    f = ctypes.pythonapi.PyCode_Addr2Line
    f.argtypes = [ctypes.py_object, ctypes.c_int]
    f.restype = ctypes.c_int
    return f


ADDR2LINE = addr2line()


def line_runs(code):
    """(start, end, line) runs of code units, lines from PyCode_Addr2Line."""
    units = len(code.co_code) // 2
    runs = []
    for u in range(units):
        line = ADDR2LINE(code, 2 * u)
        line = line if line > 0 else 0
        if runs and runs[-1][2] == line and runs[-1][1] == u:
            runs[-1][1] = u + 1
        else:
            runs.append([u, u + 1, line])
    # Where the interpreter has co_lines() too, it must say the same.
    if hasattr(code, "co_lines"):
        for start, end, line in code.co_lines():
            for off in range(start, end, 2):
                want = line if line is not None and line > 0 else 0
                got = ADDR2LINE(code, off)
                got = got if got > 0 else 0
                if want != got:
                    raise SystemExit("co_lines and PyCode_Addr2Line differ")
    return runs


def put_code(code):
    codes.append(code)
    name = code.co_qualname if QUALNAME else code.co_name
    print("code", id(code), code.co_firstlineno,
          cut(shown(name), NAME_MAX).hex() or "-",
          cut(shown(code.co_filename), FILE_MAX).hex() or "-",
          len(code.co_code) // 2)
    for start, end, line in line_runs(code):
        print("lines", start, end, line)


def all_codes(code):
    """code and every code object among its constants, depth first."""
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from all_codes(c)


# --- Code objects of every kind -------------------------------------------

def plain(a, b):
    c = a + b
    return c * 2


def outer_fn():
    x = 1

    def nested(y):
        return x + y

    return nested


class Klass:
    def method(self):
        return [i for i in range(3)]

    @staticmethod
    def static():
        return 1

    class Inner:
        def deep(self):
            return 2


def gen():
    yield 1
    yield 2


async def coro():
    return 3


def naïve_λ():
    return "non-ASCII: kind 1 and kind 2 characters"


def spread_out():
    a = 1



















    b = 2
    return a + b


lam = lambda q: q + 1  # noqa: E731


def long_function_source(n):
    """A function of n statements, with a few far jumps in its lines."""
    body = ["def long_one(v):"]
    for i in range(n):
        body.append("    v = v + %d" % i)
        if i % 500 == 499:
            body.extend([""] * 300)
    body.append("    return v")
    return "\n".join(body) + "\n"


def made_codes(scratch):
    """Code objects compiled here: long ones, odd names and file names."""
    out = []
    ns = {}
    exec(compile(long_function_source(2000), "<long>", "exec"), ns)
    out.append(ns["long_one"].__code__)

    # A file with a non-ASCII (and kind 4) name, really on disk.
    path = os.path.join(scratch, "módulo_λ_\U0001F40D.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write("def from_file():\n    return 'file'\n")
    with open(path, encoding="utf-8") as f:
        ns = {}
        exec(compile(f.read(), path, "exec"), ns)
    out.append(ns["from_file"].__code__)

    base = plain.__code__

    def renamed(name, filename):
        if QUALNAME:
            return base.replace(co_name=name, co_qualname=name,
                                co_filename=filename)
        return base.replace(co_name=name, co_filename=filename)

    # Control characters, a lone surrogate, C1 controls, kind 4.
    out.append(renamed("tab\there\x7f\x85", "new\nline\udcff.py"))
    out.append(renamed("snake_\U0001F40D", "/tmp/\u00e9t\u00e9.py"))
    # Longer than the caps: cut, and cut at a character.
    out.append(renamed("n" * 3000, "/" + "f" * 6000))
    out.append(renamed("\u03bb" * 700, "/" + "\u00e9" * 3000))
    out.append(renamed("", ""))
    return out


def spin(stop):
    """Holds the GIL while the main thread blocks: the runtime's current
    thread state (3.8 to 3.11) is this thread's."""
    n = 0
    while not stop.is_set():
        n += 1


def runtime_address():
    try:
        v = ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime")
        return ctypes.addressof(v)
    except (ValueError, AttributeError):
        return 0


def marker_line(mark):
    with open(__file__, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + mark):
                return n
    raise SystemExit("no marker " + mark)


def inner_block(stop):
    sys.stdin.read()  # @block
    stop.set()


def outer_block(stop):
    inner_block(stop)  # @call-inner


def main():
    scratch = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
    print("version", sys.version_info[0], sys.version_info[1])
    print("types", id(types.CodeType), id(str), id(bytes))
    print("runtime", runtime_address())

    module = sys._getframe(1).f_code
    roots = [module, plain.__code__, outer_fn.__code__, outer_fn().__code__,
             Klass.method.__code__, Klass.static.__code__,
             Klass.Inner.deep.__code__, gen.__code__, gen().gi_code,
             coro.__code__, naïve_λ.__code__, spread_out.__code__,
             lam.__code__, (x for x in ()).gi_code,
             inner_block.__code__, outer_block.__code__, main.__code__]
    roots += made_codes(scratch)
    seen = set()
    for root in roots:
        for code in all_codes(root):
            if id(code) not in seen:
                seen.add(id(code))
                put_code(code)

    stop = threading.Event()
    spinner = threading.Thread(target=spin, args=(stop,), daemon=True)
    spinner.start()
    print("thread", threading.get_ident(), spinner.ident)
    print("walk", id(inner_block.__code__), marker_line("@block"))
    print("walk", id(outer_block.__code__), marker_line("@call-inner"))
    print("walk", id(main.__code__), marker_line("@call-outer"))
    print("walk", id(module), marker_line("@call-main"))
    print("ready", flush=True)
    outer_block(stop)  # @call-outer


main()  # @call-main
