#!/usr/bin/env python3
"""Read what the test collector's file exporter wrote, and print it folded.

The OTLP tests (t93-t95) send profiles to the collector built by
scripts/build-collector; its file exporter writes one JSON line per request
it received: a ProfilesData (profiles v1development, pdata v1.67.0) with the
request's dictionary.  This prints the stacks as folded lines,
"root;...;leaf COUNT", summed over every request read, sorted by count
(highest first), ties by text; or totals, resource attributes, mappings.

Every index is resolved through the dictionary of its own line (a request
carries its own tables), and one out of its table's range is an error, as
is a table whose entry 0 is not the zero value: a test reading this output
must not see a wrong name for a right one.

  otlp_read.py [OPTIONS] FILE...

  --type TYPE          profiles whose sample type is TYPE (samples, off_cpu);
                       required when the files hold more than one
  --resource KEY=VAL   only resources with this attribute (repeatable)
  --root KEY           start each stack with the sample's attribute KEY (or
                       its profile's, or its resource's): thread.name gives
                       profile's own "comm;..." folded lines (repeatable)
  --totals             print "requests N", "resources N", "profiles N",
                       "samples N" (the sum of the sample values), "stacks N"
  --resources          print each resource's attributes, one resource a line,
                       "key=value" sorted by key, separated by tabs
  --mappings           print "FILE BUILD_ID" for each mapping a sample uses
                       (BUILD_ID is process.executable.build_id.gnu, or -)

An unnamed frame (a location without lines, or a function without a name)
is its mapping's file name in brackets, [libc.so.6], as profile's
--unknown module prints it; [unknown] when it has no mapping.
A sample's count is the sum of its values, or the number of its
timestamps when it has no values.
"""

import argparse
import json
import os
import sys
from collections import defaultdict


class BadInput(Exception):
    pass


def at(table, index, what):
    """Entry INDEX of TABLE, or BadInput when it is out of range."""
    if not isinstance(index, int) or index < 0 or index >= len(table):
        raise BadInput(f"{what} index {index!r} out of range (table of {len(table)})")
    return table[index]


def anyvalue(v, strings):
    """An AnyValue (JSON form) as a string."""
    if not v:
        return ""
    if "stringValue" in v:
        return v["stringValue"]
    if "stringValueStrindex" in v:
        return at(strings, v["stringValueStrindex"], "stringValueStrindex")
    if "intValue" in v:
        return str(int(v["intValue"]))
    if "boolValue" in v:
        return "true" if v["boolValue"] else "false"
    if "doubleValue" in v:
        return repr(float(v["doubleValue"]))
    if "bytesValue" in v:
        return v["bytesValue"]
    if "arrayValue" in v:
        return "[" + ",".join(anyvalue(x, strings)
                              for x in v["arrayValue"].get("values", [])) + "]"
    if "kvlistValue" in v:
        return "{" + ",".join(k + "=" + val for k, val in
                              keyvalues(v["kvlistValue"].get("values", []), strings)) + "}"
    return ""


def keyvalues(kvs, strings):
    """A list of KeyValue (key or keyStrindex) as (key, value) pairs."""
    out = []
    for kv in kvs:
        if "key" in kv:
            key = kv["key"]
        else:
            key = at(strings, kv.get("keyStrindex", 0), "keyStrindex")
        out.append((key, anyvalue(kv.get("value"), strings)))
    return out


def is_zero(x):
    """Whether a JSON value is a message's zero value (JSON may spell out
    empty submessages: {"value": {}})."""
    if isinstance(x, dict):
        return all(is_zero(v) for v in x.values())
    if isinstance(x, list):
        return not x
    if isinstance(x, str):
        return x in ("", "0")
    return not x


class Dictionary:
    """One request's ProfilesDictionary, every table checked at entry 0."""

    def __init__(self, d):
        self.strings = d.get("stringTable", [])
        self.mappings = d.get("mappingTable", [])
        self.locations = d.get("locationTable", [])
        self.functions = d.get("functionTable", [])
        self.attributes = d.get("attributeTable", [])
        self.stacks = d.get("stackTable", [])
        if self.strings and self.strings[0] != "":
            raise BadInput(f"stringTable[0] is {self.strings[0]!r}, not \"\"")
        for name, table in (("mappingTable", self.mappings),
                            ("locationTable", self.locations),
                            ("functionTable", self.functions),
                            ("attributeTable", self.attributes),
                            ("stackTable", self.stacks)):
            if table and not is_zero(table[0]):
                raise BadInput(f"{name}[0] is {table[0]!r}, not the zero value")
        self._attrs = {}

    def string(self, i, what):
        return at(self.strings, i, what) if self.strings or i else ""

    def attrs(self, indices):
        """Attribute-table entries as (key, value) pairs."""
        out = []
        for i in indices:
            a = at(self.attributes, i, "attribute")
            out.append((self.string(a.get("keyStrindex", 0), "attribute key"),
                        anyvalue(a.get("value"), self.strings)))
        return out

    def mapping_attr(self, mi, key):
        m = at(self.mappings, mi, "mapping")
        for k, v in self.attrs(m.get("attributeIndices", [])):
            if k == key:
                return v
        return None

    def mapping_file(self, mi):
        m = at(self.mappings, mi, "mapping")
        return self.string(m.get("filenameStrindex", 0), "mapping filename")

    def frames(self, li):
        """Location li's frame names, outermost first (inlined ones last)."""
        loc = at(self.locations, li, "location")
        names = []
        # Lines: the innermost inlined function first, its caller last.
        for line in reversed(loc.get("lines", [])):
            f = at(self.functions, line.get("functionIndex", 0), "function")
            name = self.string(f.get("nameStrindex", 0), "function name")
            if name:
                names.append(name)
        if names:
            return names
        mi = loc.get("mappingIndex", 0)
        if mi:
            base = os.path.basename(self.mapping_file(mi))
            if base:
                return [f"[{base}]"]
        return ["[unknown]"]

    def stack(self, si):
        """Stack si as frame names, root first (the table has the leaf first)."""
        s = at(self.stacks, si, "stack")
        names = []
        for li in reversed(s.get("locationIndices", [])):
            names.extend(self.frames(li))
        return names

    def stack_mappings(self, si):
        s = at(self.stacks, si, "stack")
        for li in s.get("locationIndices", []):
            mi = at(self.locations, li, "location").get("mappingIndex", 0)
            if mi:
                yield mi


def sample_count(s):
    values = s.get("values", [])
    if values:
        return sum(int(v) for v in values)
    return len(s.get("timestampsUnixNano", []))


def read(args):
    folded = defaultdict(int)
    totals = defaultdict(int)
    resources = []
    mappings = set()
    types = set()
    want = [tuple(r.split("=", 1)) for r in args.resource]

    for path in args.files:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    req = json.loads(line)
                    read_request(req, args, want, folded, totals, resources, mappings, types)
                except (BadInput, ValueError, KeyError, TypeError) as e:
                    raise BadInput(f"{path}:{n}: {e}") from None
    if args.type is None and len(types) > 1:
        raise BadInput(f"profiles of several sample types ({', '.join(sorted(types))}): "
                       "pick one with --type")
    return folded, totals, resources, mappings


def read_request(req, args, want, folded, totals, resources, mappings, types):
    d = Dictionary(req.get("dictionary", {}))
    totals["requests"] += 1
    for rp in req.get("resourceProfiles", []):
        rattrs = keyvalues(rp.get("resource", {}).get("attributes", []), d.strings)
        if any((k, v) not in rattrs for k, v in want):
            continue
        totals["resources"] += 1
        resources.append(rattrs)
        for sp in rp.get("scopeProfiles", []):
            for p in sp.get("profiles", []):
                st = p.get("sampleType", {})
                stype = d.string(st.get("typeStrindex", 0), "sample type")
                if args.type is not None and stype != args.type:
                    continue
                types.add(stype)
                totals["profiles"] += 1
                pattrs = d.attrs(p.get("attributeIndices", []))
                for s in p.get("samples", []):
                    count = sample_count(s)
                    si = s.get("stackIndex", 0)
                    sattrs = d.attrs(s.get("attributeIndices", []))
                    roots = []
                    for key in args.root:
                        for k, v in sattrs + pattrs + rattrs:
                            if k == key:
                                roots.append(v)
                                break
                    frames = roots + d.stack(si)
                    folded[";".join(frames)] += count
                    totals["samples"] += count
                    for mi in d.stack_mappings(si):
                        mappings.add((d.mapping_file(mi),
                                      d.mapping_attr(mi, "process.executable.build_id.gnu") or "-"))
    return


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--type")
    ap.add_argument("--resource", action="append", default=[])
    ap.add_argument("--root", action="append", default=[])
    ap.add_argument("--totals", action="store_true")
    ap.add_argument("--resources", action="store_true")
    ap.add_argument("--mappings", action="store_true")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    for r in args.resource:
        if "=" not in r:
            ap.error(f"--resource {r}: want KEY=VALUE")
    try:
        folded, totals, resources, mappings = read(args)
    except (BadInput, OSError) as e:
        print(f"otlp_read: {e}", file=sys.stderr)
        return 1
    if args.totals:
        totals["stacks"] = len(folded)
        for k in ("requests", "resources", "profiles", "samples", "stacks"):
            print(k, totals[k])
    elif args.resources:
        for r in resources:
            print("\t".join(f"{k}={v}" for k, v in sorted(r)))
    elif args.mappings:
        for m in sorted(mappings):
            print(*m)
    else:
        for stack, count in sorted(folded.items(), key=lambda kv: (-kv[1], kv[0])):
            if stack:
                print(stack, count)
            else:
                print("[empty]", count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
