#!/usr/bin/env python3
"""Run `shmr-perf ... --json` (or shmr-perf-adopt --json) and check its
stdout against the schema of docs/benchmarks.md, "JSON results".

usage: check_json.py MODE COMMAND [ARG...]

Every line of stdout must be one JSON object (no NaN or Infinity), with
schema 1 and mode MODE; every documented key of its kind must be there
with a value of its type (a figure: a JSON number, never a string or a
boolean); percentiles must be ordered (p50 <= p99 <= p99.9 <= max); every
run must have received every message.  Figures are never compared with a
threshold: a slow machine passes, a wrong or missing figure fails.
Exit status 0 when it all holds, 1 otherwise (each problem on stderr).
"""
import json
import subprocess
import sys

SETUP = ["slot_bytes", "burst", "count", "lane_entries", "round_trips"]
ROUTER = ["routes", "lcores"]
COUNTS = ["sent", "received", "lost", "gaps", "reordered"]
PCT = ["p50", "p99", "p999", "max"]

problems = []


def bad(n, what):
    problems.append("line %d: %s" % (n, what))


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def need(n, rec, keys, check, kind):
    for k in keys:
        if k not in rec:
            bad(n, "%s record without %r" % (rec.get("record"), k))
        elif not check(rec[k]):
            bad(n, "%r is %r, not %s" % (k, rec[k], kind))
        elif is_num(rec[k]) and rec[k] < 0:
            bad(n, "%r is negative: %r" % (k, rec[k]))


def latency(n, rec, series, counts):
    keys = ["%s_%s_ns" % (series, p) for p in PCT]
    need(n, rec, keys, is_num, "a number")
    if counts:
        need(n, rec, [series + "_count"], is_int, "an integer")
        if rec.get(series + "_count") != rec.get("round_trips"):
            bad(n, "%s_count %r, asked for %r round trips" %
                (series, rec.get(series + "_count"), rec.get("round_trips")))
    vals = [rec.get(k) for k in keys]
    if all(is_num(v) for v in vals) and vals != sorted(vals):
        bad(n, "%s percentiles out of order: %r" % (series, vals))


def run_or_median(n, rec, mode):
    median = rec["record"] == "median"
    need(n, rec, ["run"], lambda v: v in ("bare", "router"),
         "'bare' or 'router'")
    need(n, rec, SETUP + ["reps" if median else "rep"], is_int,
         "an integer")
    if not isinstance(rec.get("cpus"), list) or len(rec["cpus"]) != 3 or \
            not all(is_int(c) for c in rec["cpus"]):
        bad(n, "cpus is %r, not three integers" % rec.get("cpus"))
    need(n, rec, ["msgs_per_s"], is_num, "a number")
    if rec.get("run") == "router":
        need(n, rec, ROUTER, is_int, "an integer")
        need(n, rec, ["poll"], lambda v: v in ("busy", "adaptive"),
             "'busy' or 'adaptive'")
        need(n, rec, ["behaviour"], lambda v: v in ("hash", "type"),
             "'hash' or 'type'")
    if mode == "logics":
        need(n, rec, ["vs_bare", "ns_per_msg"], is_num, "a number")
        if rec.get("run") == "router":
            need(n, rec, ["logic"], lambda v: isinstance(v, str) and v,
                 "a name")
            need(n, rec, ["deliveries_per_s"], is_num, "a number")
    if not median:
        need(n, rec, COUNTS, is_int, "an integer")
        if rec.get("ok") is not True:
            bad(n, "run not ok: %r" % rec)
        if rec.get("lost") != 0 or rec.get("sent") != rec.get("received"):
            bad(n, "messages lost: %r" % rec)
    if rec.get("round_trips", 0) > 0:
        latency(n, rec, "rtt", not median)
        if rec.get("run") == "bare":
            latency(n, rec, "rtt3", not median)
            latency(n, rec, "handoff", not median)


def check(mode, lines):
    kinds = {}
    for n, line in enumerate(lines, 1):
        try:
            rec = json.loads(line, parse_constant=lambda c: bad(
                n, "not JSON: %s" % c))
        except ValueError as e:
            bad(n, "not JSON (%s): %r" % (e, line[:80]))
            continue
        if not isinstance(rec, dict):
            bad(n, "not an object")
            continue
        if rec.get("schema") != 1 or not is_int(rec.get("schema")):
            bad(n, "schema %r, not 1" % rec.get("schema"))
        if rec.get("mode") != mode:
            bad(n, "mode %r, not %r" % (rec.get("mode"), mode))
        kind = rec.get("record")
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind in ("run", "median") and mode in ("bare", "router",
                                                   "compare", "logics"):
            run_or_median(n, rec, mode)
        elif kind == "summary" and mode == "compare":
            need(n, rec, SETUP + ROUTER + ["reps"], is_int, "an integer")
            need(n, rec, ["throughput_vs_bare", "throughput_bar"], is_num,
                 "a number")
            need(n, rec, ["throughput_met", "all_in_order"],
                 lambda v: isinstance(v, bool), "a boolean")
            if rec.get("round_trips", 0) > 0:
                need(n, rec, ["latency_vs_pingpong", "latency_bar",
                              "latency_vs_rtt3"], is_num, "a number")
        elif kind in ("run", "median") and mode == "decide":
            need(n, rec, ["logic"], lambda v: isinstance(v, str) and v,
                 "a name")
            need(n, rec, ["routes", "decisions",
                          "reps" if kind == "median" else "rep"], is_int,
                 "an integer")
            need(n, rec, ["ns_per_decision"], is_num, "a number")
        elif kind == "run" and mode == "adopt":
            need(n, rec, ["kills", "phase_ms", "undisturbed_calls",
                          "undisturbed_longest_gap_us", "killed_calls",
                          "killed_longest_gap_us", "restart_p50_us",
                          "restart_p99_us", "restart_max_us"], is_int,
                 "an integer")
        else:
            bad(n, "record %r not expected from mode %r" % (kind, mode))
    want = {"bare": ["run"], "router": ["run"], "adopt": ["run"],
            "compare": ["run", "median", "summary"],
            "logics": ["run", "median"], "decide": ["run", "median"]}
    for kind in want[mode]:
        if not kinds.get(kind):
            problems.append("no %r record at all" % kind)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    mode, cmd = sys.argv[1], sys.argv[2:]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        problems.append("%s exited with %d" % (" ".join(cmd),
                                                proc.returncode))
    lines = proc.stdout.splitlines()
    if not lines:
        problems.append("no output on stdout")
    check(mode, lines)
    for p in problems:
        print("check_json: %s" % p, file=sys.stderr)
    if not problems:
        print("check_json: %d records of mode %s, all as documented" %
              (len(lines), mode))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
