#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A debuginfod server that misbehaves on purpose, for t90.

    fakedebuginfod.py PORTFILE LOG MODE [ARG]

Listens on 127.0.0.1, on a port the kernel picks, and writes that port to
PORTFILE once it accepts connections (written to PORTFILE.tmp and renamed,
so a reader sees all of it or nothing).  Every request is one line in LOG,
"METHOD PATH", written as it arrives, before any answer: `wc -l LOG` is how
many requests it got.  It answers GET /buildid/ID/debuginfo (anything else
is 404) as MODE says:

    ok DIR [DELAY]  DIR/ID.debug, or 404 if there is none, after DELAY
                    seconds (default 0): a server that asks its own
                    upstream servers before it says it has nothing
    hang            nothing: reads the request and keeps the connection
                    open, silent, until it is killed
    wrongid FILE    FILE, whatever ID was asked (an ELF file with another
                    build-id)
    truncated FILE  the first half of FILE, with a Content-Length of that
                    half: a complete HTTP answer of a cut file
    huge [RATE]     a Content-Length of 8 GiB, then an ELF magic and zero
                    bytes at RATE bytes a second (default 2000), never all
                    of them.  libdebuginfod 0.188 gives up on a transfer
                    slower than 100 KiB/s over DEBUGINFOD_TIMEOUT seconds
                    (CURLOPT_LOW_SPEED_*), so by default a client that
                    ignores the size still ends at its timeout; a RATE
                    over 102400 leaves only the size to stop it

It runs until killed (SIGTERM ends it at once).  Python 3 standard library
only.
"""
import http.server
import os
import re
import signal
import sys
import threading
import time

BUILDID = re.compile(r"^/buildid/([0-9a-f]+)/debuginfo$")
HUGE = 8 << 30


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):	# no access log on stderr
        pass

    def record(self):
        with open(self.server.log, "a") as f:
            f.write(f"{self.command} {self.path}\n")

    def send_bytes(self, data, length=None):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def not_found(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.record()
        try:
            self.answer()
        except (BrokenPipeError, ConnectionResetError):
            pass			# the client gave up: expected here

    def answer(self):
        m = BUILDID.match(self.path)
        mode, arg = self.server.mode, self.server.arg
        if not m:
            self.not_found()
        elif mode == "ok":
            path = os.path.join(arg, m[1] + ".debug")
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    self.send_bytes(f.read())
            else:
                self.server.stop.wait(self.server.delay)
                self.not_found()
        elif mode == "hang":
            self.server.stop.wait()		# until the server is killed
        elif mode == "wrongid":
            with open(arg, "rb") as f:
                self.send_bytes(f.read())
        elif mode == "truncated":
            with open(arg, "rb") as f:
                data = f.read()
            self.send_bytes(data[:len(data) // 2])
        elif mode == "huge":
            rate = int(arg) if arg else 2000
            chunk = max(1, rate // 10)
            self.send_bytes(b"\x7fELF" + bytes(chunk - 4), length=HUGE)
            sent = chunk
            while sent < HUGE and not self.server.stop.wait(0.1):
                self.wfile.write(bytes(chunk))
                self.wfile.flush()
                sent += chunk

    def do_HEAD(self):
        self.record()
        self.not_found()


def main():
    if len(sys.argv) < 4 or sys.argv[3] not in ("ok", "hang", "wrongid", "truncated", "huge"):
        sys.exit("usage: fakedebuginfod.py PORTFILE LOG ok DIR [DELAY]|hang|wrongid FILE|"
                 "truncated FILE|huge [RATE]")
    portfile, log, mode = sys.argv[1:4]
    arg = sys.argv[4] if len(sys.argv) > 4 else None
    delay = float(sys.argv[5]) if mode == "ok" and len(sys.argv) > 5 else 0
    if mode in ("ok", "wrongid", "truncated") and not arg:
        sys.exit(f"fakedebuginfod.py: {mode} needs an argument")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.mode, srv.arg, srv.log, srv.delay = mode, arg, log, delay
    srv.stop = threading.Event()
    open(log, "a").close()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    with open(portfile + ".tmp", "w") as f:
        f.write(f"{srv.server_address[1]}\n")
    os.rename(portfile + ".tmp", portfile)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    srv.stop.set()


if __name__ == "__main__":
    main()
