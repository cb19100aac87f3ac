#!/usr/bin/env python3
# pprof_strings.py FILE.pb.gz: check that every string of a pprof profile's
# string table (profile.proto, field 6) is valid UTF-8, as proto3 requires.
# Prints the count of strings, of invalid ones and of ones with a control
# character (each shown with repr), and exits 1 if there is any.
import gzip
import sys


def varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, i


def strings(buf):
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(buf, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = varint(buf, i)
            if field == 6:
                yield buf[i:i + n]
            i += n
        else:
            raise ValueError("wire type %d at %d" % (wire, i))


def main():
    data = gzip.open(sys.argv[1]).read()
    total = bad = controls = 0
    for s in strings(data):
        total += 1
        try:
            text = s.decode("utf-8")
        except UnicodeDecodeError:
            bad += 1
            print("invalid UTF-8: %r" % s)
            continue
        if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text):
            controls += 1
            print("control character: %r" % s)
    print("%s: %d strings, %d invalid UTF-8, %d with controls"
          % (sys.argv[1], total, bad, controls))
    return 1 if bad or controls else 0


sys.exit(main())
