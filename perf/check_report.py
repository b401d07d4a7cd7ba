#!/usr/bin/env python3
"""Check `shmr-perf report` on saved JSON results.

usage: check_report.py SHMR_PERF SAMPLE.jsonl

1. `report --out DIR SAMPLE.jsonl` exits 0 and writes throughput.svg,
   logics.svg, decide.svg and latency-SLOT-BURST.svg for each setup of
   the sample's compare medians, and nothing else: each non-empty,
   starting with <?xml or <svg, well-formed XML whose root is an SVG
   element, with a bar for every category of the sample (its label is in
   the SVG).
2. The same sample as one JSON array gives the same files.
3. Hostile input never crashes it nor writes anything: a figure that is a
   string, a label with a quote in it, truncated JSON, an unknown schema
   each exit 1 with one line naming the file, the line and what is wrong.

Exits 77 (skipped) when gnuplot is not installed (CI installs
gnuplot-nox: shmr.sh).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

problems = []


def report(perf, out, *files):
    return subprocess.run([perf, "report", "--out", out, *files],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=120)


def check_svgs(out, labels, what):
    if sorted(os.listdir(out)) != sorted(labels):
        problems.append("%s: wrote %r, not %r" % (
            what, sorted(os.listdir(out)), sorted(labels)))
    for name in labels:
        path = os.path.join(out, name)
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            problems.append("%s: %s missing or empty" % (what, name))
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if not (text.startswith("<?xml") or text.startswith("<svg")):
            problems.append("%s: %s starts with %r" % (what, name,
                                                       text[:20]))
        try:
            root = ET.fromstring(text)
        except ET.ParseError as e:
            problems.append("%s: %s is not well-formed XML: %s" %
                            (what, name, e))
            continue
        if not root.tag.endswith("svg"):
            problems.append("%s: %s root is %s" % (what, name, root.tag))
        for label in labels.get(name, []):
            if label not in text:
                problems.append("%s: %s has no bar labelled %r" %
                                (what, name, label))


def sample_labels(records):
    """The category labels the sample must produce, per file."""
    labels = {n: [] for n in ["throughput.svg", "logics.svg",
                              "decide.svg"]}
    for r in records:
        if r.get("record") == "summary" and r["mode"] == "compare":
            labels["throughput.svg"].append("%d B, burst %d" %
                                            (r["slot_bytes"], r["burst"]))
        if r.get("record") == "median" and r["mode"] == "logics" and \
                r["run"] == "router":
            labels["logics.svg"].append(r["logic"])
        if r.get("record") == "median" and r["mode"] == "decide":
            labels["decide.svg"].append(r["logic"])
        if r.get("record") == "median" and r["mode"] == "compare":
            labels.setdefault("latency-%d-%d.svg" % (
                r["slot_bytes"], r["burst"]), []).append(
                "bare ping-pong" if r["run"] == "bare" else
                "router call, %s" % r["poll"])
    return labels


def hostile(perf, tmp, records):
    compare = next(r for r in records if r.get("record") == "summary")
    cases = {
        "string-figure": json.dumps(dict(compare,
                                         throughput_vs_bare="0.5 x")),
        "quote-label": json.dumps(dict(
            next(r for r in records if r["mode"] == "decide" and
                 r["record"] == "median"), logic='a"b')),
        "truncated": json.dumps(compare)[:-10],
        "schema": json.dumps(dict(compare, schema=99)),
        "not-object": "[1, 2]",
    }
    for name, text in cases.items():
        path = os.path.join(tmp, name + ".jsonl")
        out = os.path.join(tmp, "out-" + name)
        os.mkdir(out)
        with open(path, "w") as f:
            f.write(json.dumps(records[0]) + "\n" + text + "\n")
        p = report(perf, out, path)
        err = p.stderr.strip().splitlines()
        if p.returncode != 1:
            problems.append("%s: exit %d, not 1" % (name, p.returncode))
        if len(err) != 1 or path not in err[0] or "line 2" not in err[0]:
            problems.append("%s: not one line naming %s, line 2: %r" %
                            (name, path, err))
        if os.listdir(out):
            problems.append("%s: wrote %r" % (name, os.listdir(out)))


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    perf, sample = sys.argv[1], sys.argv[2]
    if shutil.which(os.environ.get("GNUPLOT") or "gnuplot") is None:
        print("check_report: gnuplot is not installed (gnuplot-nox)")
        return 77
    with open(sample) as f:
        records = [json.loads(line) for line in f if line.strip()]
    labels = sample_labels(records)
    with tempfile.TemporaryDirectory(prefix="shmr-perf-report-") as tmp:
        out = os.path.join(tmp, "lines")
        os.mkdir(out)
        p = report(perf, out, sample)
        if p.returncode != 0:
            problems.append("report exited %d: %s" % (p.returncode,
                                                      p.stderr))
        check_svgs(out, labels, "JSON Lines")

        array = os.path.join(tmp, "array.json")
        with open(array, "w") as f:
            json.dump(records, f, indent=1)
        out = os.path.join(tmp, "array")
        os.mkdir(out)
        p = report(perf, out, array)
        if p.returncode != 0:
            problems.append("report (array) exited %d: %s" %
                            (p.returncode, p.stderr))
        check_svgs(out, labels, "one array")

        hostile(perf, tmp, records)
    for p in problems:
        print("check_report: %s" % p, file=sys.stderr)
    if not problems:
        print("check_report: %d SVG files from %d records, hostile input "
              "refused" % (len(labels), len(records)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
