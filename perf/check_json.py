#!/usr/bin/env python3
"""Run `shmr-perf ... --json` (or shmr-perf-adopt --json) and check its
stdout against the schema of docs/benchmarks.md, "JSON results".

usage: check_json.py [--appliance SHMR_CONTROL WORKER] MODE COMMAND [ARG...]

--appliance: first start SHMR_CONTROL on a private domain (router
"events", types 1, 2 and 3 to one route running WORKER) and replace
{domain} and {run_dir} in COMMAND's arguments with its domain and run
directory: for `shmr-perf load`, which attaches to a running appliance.

Every line of stdout must be one JSON object (no NaN or Infinity), with
schema 1 and mode MODE; every documented key of its kind must be there
with a value of its type (a figure: a JSON number, never a string or a
boolean); percentiles must be ordered (p50 <= p99 <= p99.9 <= max); every
run must have received every message; a median record's figures must be
the medians of its runs' (and as many runs as its "reps").  Figures are never compared with a
threshold: a slow machine passes, a wrong or missing figure fails.
Exit status 0 when it all holds, 1 otherwise (each problem on stderr).
"""
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile

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
    cpus(n, rec)
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


LARGE_SETUP = ["size_bytes", "count", "round_trips"]


def close(a, b):
    return is_num(a) and is_num(b) and abs(a - b) <= 1e-6 * max(abs(b), 1)


def cpus(n, rec):
    if not isinstance(rec.get("cpus"), list) or len(rec["cpus"]) != 3 or \
            not all(is_int(c) for c in rec["cpus"]):
        bad(n, "cpus is %r, not three integers" % rec.get("cpus"))


def delivered(n, rec, keys):
    """A stream run's tallies: KEYS integers, ok, nothing lost."""
    need(n, rec, keys, is_int, "an integer")
    need(n, rec, ["ok"], lambda v: isinstance(v, bool), "a boolean")
    if rec.get("ok") is not True or rec.get("lost") != 0 or \
            rec.get("sent") != rec.get("received") or \
            any(rec.get(k) for k in keys[3:]):
        bad(n, "messages lost or out of order: %r" % rec)


def rate(n, rec, prefix=""):
    """PREFIXmsgs_per_s and PREFIXgb_per_s, the latter the former's
    payload: msgs_per_s x size_bytes / 10^9."""
    m, g = prefix + "msgs_per_s", prefix + "gb_per_s"
    need(n, rec, [m, g], is_num, "a number")
    if is_num(rec.get(m)) and is_int(rec.get("size_bytes")) and \
            not close(rec.get(g), rec[m] * rec["size_bytes"] / 1e9):
        bad(n, "%s %r is not %s x size_bytes / 10^9" % (g, rec.get(g), m))


def large_run(n, rec, mode):
    """A run record of `large` (arena, memcpy, inline, call) or of
    `iceoryx` (memcpy, shmr, iceoryx)."""
    runs = {"large": ("arena", "memcpy", "inline", "call"),
            "iceoryx": ("memcpy", "shmr", "iceoryx")}[mode]
    need(n, rec, ["run"], lambda v: v in runs, " or ".join(runs))
    need(n, rec, LARGE_SETUP, is_int, "an integer")
    cpus(n, rec)
    run = rec.get("run")
    if run in ("shmr", "iceoryx"):
        need(n, rec, ["rep"], is_int, "an integer")
    if run in ("arena", "shmr"):
        delivered(n, rec, COUNTS)
        if rec.get("sent") != rec.get("count"):
            bad(n, "sent %r slots, not count %r" %
                (rec.get("sent"), rec.get("count")))
    elif run == "iceoryx":
        delivered(n, rec, ["sent", "received", "lost", "out_of_sequence"])
    elif run == "inline":
        need(n, rec, ["chunk_bytes", "slots_per_msg"], is_int,
             "an integer")
        delivered(n, rec, COUNTS)
        c, k = rec.get("chunk_bytes"), rec.get("slots_per_msg")
        if is_int(c) and c > 0 and is_int(k) and \
                (k != -(-rec.get("size_bytes", 0) // c) or
                 rec.get("sent") != rec.get("count", 0) * k):
            bad(n, "slots_per_msg %r, sent %r: not the size's chunks of "
                "count messages" % (k, rec.get("sent")))
    if run == "call":
        need(n, rec, ["call_bytes"], is_int, "an integer")
        need(n, rec, ["buffer"], lambda v: isinstance(v, bool),
             "a boolean")
        want = rec.get("size_bytes") if rec.get("buffer") else 64
        if rec.get("call_bytes") != want:
            bad(n, "a call of %r bytes (buffer %r), not %r" %
                (rec.get("call_bytes"), rec.get("buffer"), want))
        latency(n, rec, "rtt", True)
    else:
        rate(n, rec)


def large_summary(n, s, runs, mode):
    """large's or iceoryx's summary against the runs it sums up."""
    need(n, s, LARGE_SETUP, is_int, "an integer")
    cpus(n, s)
    by = {}
    for r in runs:
        by.setdefault(r.get("run"), []).append(r)
    cpy = [r.get("msgs_per_s") for r in by.get("memcpy", [])]
    if len(cpy) != 1 or not is_num(cpy[0]) or cpy[0] <= 0:
        bad(n, "memcpy runs %r, not one figure" % cpy)
        return
    if mode == "large":
        return large_sum(n, s, by, cpy[0])
    need(n, s, ["reps"], is_int, "an integer")
    for who in ("shmr", "iceoryx"):
        rate(n, s, who + "_")
        need(n, s, [who + "_vs_memcpy"], is_num, "a number")
        v = [r.get("msgs_per_s") for r in by.get(who, [])]
        if len(v) != s.get("reps") or not all(is_num(x) and x > 0
                                              for x in v):
            bad(n, "%d %s runs, reps %r" % (len(v), who, s.get("reps")))
            return
        if not close(s.get(who + "_msgs_per_s"), statistics.median(v)):
            bad(n, "%s_msgs_per_s %r, the runs' median is %r" %
                (who, s.get(who + "_msgs_per_s"), statistics.median(v)))
        if not close(s.get(who + "_vs_memcpy"),
                     s.get(who + "_msgs_per_s", 0) / cpy[0]):
            bad(n, "%s_vs_memcpy %r is not %s_msgs_per_s / memcpy's" %
                (who, s.get(who + "_vs_memcpy"), who))
    ratio(n, s, "shmr_vs_iceoryx")
    iox = {r.get("rep"): r.get("msgs_per_s") for r in by["iceoryx"]}
    v = [r["msgs_per_s"] / iox[r.get("rep")] for r in by["shmr"]
         if iox.get(r.get("rep"))]
    if len(v) != s.get("shmr_vs_iceoryx_pairs") or len(v) != s.get("reps"):
        bad(n, "shmr_vs_iceoryx over %r pairs, %d pairs ran" %
            (s.get("shmr_vs_iceoryx_pairs"), len(v)))
    elif not close(s.get("shmr_vs_iceoryx"), statistics.median(v)) or \
            not close(s.get("shmr_vs_iceoryx_min"), min(v)) or \
            not close(s.get("shmr_vs_iceoryx_max"), max(v)):
        bad(n, "shmr_vs_iceoryx %r (%r..%r), the pairs' is %r (%r..%r)" %
            (s.get("shmr_vs_iceoryx"), s.get("shmr_vs_iceoryx_min"),
             s.get("shmr_vs_iceoryx_max"), statistics.median(v), min(v),
             max(v)))


def large_sum(n, s, by, cpy):
    for k in ("arena", "inline"):
        if len(by.get(k, [])) != 1:
            bad(n, "%d %s runs, not one" % (len(by.get(k, [])), k))
            return
    arena, inl = by["arena"][0].get("msgs_per_s"), \
        by["inline"][0].get("msgs_per_s")
    if not (is_num(arena) and is_num(inl) and inl > 0):
        return  # said by its run's record
    need(n, s, ["vs_memcpy", "vs_inline"], is_num, "a number")
    for k, want in (("vs_memcpy", arena / cpy), ("vs_inline", arena / inl)):
        if not close(s.get(k), want):
            bad(n, "%s %r, the runs' is %r" % (k, s.get(k), want))
    calls = {r.get("buffer"): r for r in by.get("call", [])}
    if s.get("round_trips", 0) == 0:
        if calls:
            bad(n, "call runs without round_trips")
        return
    if sorted(calls, key=str) != [False, True] or len(by["call"]) != 2:
        bad(n, "%d call runs, not one with a buffer and one without" %
            len(by.get("call", [])))
        return
    need(n, s, ["call_rtt_p50_ns", "call64_rtt_p50_ns", "call_vs_call64",
                "call_goal"], is_num, "a number")
    need(n, s, ["call_goal_met"], lambda v: isinstance(v, bool),
         "a boolean")
    big, tiny = calls[True].get("rtt_p50_ns"), calls[False].get("rtt_p50_ns")
    if not (is_num(big) and is_num(tiny) and tiny > 0):
        return  # said by its run's record
    if not close(s.get("call_rtt_p50_ns"), big) or \
            not close(s.get("call64_rtt_p50_ns"), tiny) or \
            not close(s.get("call_vs_call64"), big / tiny):
        bad(n, "call p50s %r / %r = %r, the calls' are %r / %r" %
            (s.get("call_rtt_p50_ns"), s.get("call64_rtt_p50_ns"),
             s.get("call_vs_call64"), big, tiny))
    if s.get("call_goal") != 1.5 or s.get("call_goal_met") is not \
            (is_num(s.get("call_vs_call64")) and s["call_vs_call64"] <= 1.5):
        bad(n, "call_goal %r, call_goal_met %r with call_vs_call64 %r" %
            (s.get("call_goal"), s.get("call_goal_met"),
             s.get("call_vs_call64")))


FIGURES = ["msgs_per_s", "rtt_p50_ns", "rtt_p99_ns", "rtt3_p50_ns",
           "handoff_p50_ns", "ns_per_decision"]


def medians(runs, meds):
    """Each median record against the run records of the same kind."""
    def kind(r):
        return (r.get("run"), r.get("poll"), r.get("logic"),
                r.get("variant"), r.get("slot_bytes"), r.get("burst"),
                r.get("sojourn"))
    for n, m in meds:
        mine = [r for r in runs if kind(r) == kind(m)]
        if len(mine) != m.get("reps"):
            bad(n, "median of %d runs, %d of its kind ran" %
                (m.get("reps"), len(mine)))
            continue
        for k in FIGURES:
            vals = [r[k] for r in mine if is_num(r.get(k))]
            if k not in m or len(vals) != len(mine):
                continue
            want = statistics.median(vals)
            if abs(m[k] - want) > 1e-6 * max(abs(want), 1):
                bad(n, "median %s %r, the runs' median is %r" %
                    (k, m[k], want))


def probes(n, rec):
    """A router run of compare or logics, or a run of idle: the range of
    its pair's ping-pong probes and whether the pair kept one speed
    (PERF_SPEEDS_APART, 2)."""
    need(n, rec, ["probe_p50_min_us", "probe_p50_max_us"], is_num,
         "a number")
    need(n, rec, ["one_speed"], lambda v: isinstance(v, bool), "a boolean")
    lo, hi = rec.get("probe_p50_min_us"), rec.get("probe_p50_max_us")
    if is_num(lo) and is_num(hi):
        if lo <= 0 or lo > hi:
            bad(n, "probe range %r..%r" % (lo, hi))
        elif rec.get("one_speed") is not (hi <= 2.0 * lo):
            bad(n, "one_speed %r with probes %r..%r" % (
                rec.get("one_speed"), lo, hi))


def ratio(n, rec, key):
    """A ratio of interleaved pairs: KEY (the median), KEY_min, KEY_max,
    KEY_spread, KEY_pairs, KEY_spread_warning, consistent."""
    need(n, rec, [key, key + "_min", key + "_max", key + "_spread"],
         is_num, "a number")
    need(n, rec, [key + "_pairs"], is_int, "an integer")
    need(n, rec, [key + "_spread_warning"], lambda v: isinstance(v, bool),
         "a boolean")
    v = [rec.get(key + s) for s in ("_min", "", "_max")]
    if all(is_num(x) for x in v) and v != sorted(v):
        bad(n, "%s outside its range: %r" % (key, v))
    sp, med = rec.get(key + "_spread"), rec.get(key)
    if all(is_num(x) for x in v + [sp]) and med > 0 and \
            abs(sp - (v[2] - v[0]) / med) > 1e-6:
        bad(n, "%s_spread %r is not (max - min) / median" % (key, sp))
    if is_num(sp) and rec.get(key + "_spread_warning") is not \
            (rec.get(key + "_pairs", 0) > 1 and sp > 0.10):
        bad(n, "%s_spread_warning %r with spread %r" %
            (key, rec.get(key + "_spread_warning"), sp))


def idle_pairs(n, s, runs):
    """idle's summary: its ratio the median of idle / none over the pairs
    that kept one speed (all of them when none did), the others counted
    as left out."""
    by_rep = {}
    for r in runs:
        if is_int(r.get("rep")) and is_num(r.get("msgs_per_s")):
            by_rep.setdefault(r["rep"], {})[
                "none" if r.get("idle_endpoints") == 0 else "idle"] = r
    reps = [p for _, p in sorted(by_rep.items())
            if "none" in p and "idle" in p]
    if len(reps) != s.get("reps"):
        bad(n, "reps %r, %d pairs ran" % (s.get("reps"), len(reps)))
        return
    steady = [p for p in reps if p["none"].get("one_speed") is True and
              p["idle"].get("one_speed") is True]
    left = len(reps) - len(steady) if steady else 0
    if s.get("pairs_left_out") != left:
        bad(n, "pairs_left_out %r, %d pairs changed speed" %
            (s.get("pairs_left_out"), left))
    mine = steady or reps
    if s.get("idle_vs_none_pairs") != len(mine):
        bad(n, "idle_vs_none over %r pairs, %d counted" %
            (s.get("idle_vs_none_pairs"), len(mine)))
    v = sorted(p["idle"]["msgs_per_s"] / p["none"]["msgs_per_s"]
               for p in mine if p["none"]["msgs_per_s"] > 0)
    if not v or not is_num(s.get("idle_vs_none")):
        return
    k = len(v)
    want = v[k // 2] if k % 2 else (v[k // 2 - 1] + v[k // 2]) / 2
    if abs(s["idle_vs_none"] - want) > 1e-6 * max(want, 1):
        bad(n, "idle_vs_none %r, the steady pairs' median is %r" %
            (s["idle_vs_none"], want))


def pairs(runs, sums):
    """Each summary's ratios are the medians of the per-repetition ratios
    (router run over the bare run of the same rep), not of medians."""
    figs = [("throughput_vs_bare", "msgs_per_s", "msgs_per_s"),
            ("latency_vs_pingpong", "rtt_p50_ns", "rtt_p50_ns"),
            ("latency_vs_rtt3", "rtt_p50_ns", "rtt3_p50_ns")]
    bare = {r.get("rep"): r for r in runs if r.get("run") == "bare"}
    for n, s in sums:
        mine = [r for r in runs if r.get("run") == "router" and
                r.get("poll") == s.get("poll") and
                r.get("sojourn") == s.get("sojourn")]
        # compare leaves out the pairs measured across a change of the
        # host's speed, unless no pair kept one speed.
        steady = [r for r in mine if r.get("one_speed") is True]
        if "pairs_left_out" in s:
            left = len(mine) - len(steady) if steady else 0
            if s["pairs_left_out"] != left:
                bad(n, "pairs_left_out %r, %d runs changed speed" %
                    (s["pairs_left_out"], left))
        if steady:
            mine = steady
        for key, rf, bf in figs:
            if key not in s:
                continue
            v = [r[rf] / bare[r["rep"]][bf] for r in mine
                 if r.get("rep") in bare and is_num(r.get(rf)) and
                 is_num(bare[r["rep"]].get(bf)) and r[rf] > 0 and
                 bare[r["rep"]][bf] > 0]
            if len(v) != s.get(key + "_pairs"):
                bad(n, "%s over %r pairs, %d pairs ran" %
                    (key, s.get(key + "_pairs"), len(v)))
                continue
            want = statistics.median(v)
            if abs(s[key] - want) > 1e-6 * max(abs(want), 1):
                bad(n, "%s %r, the median of the pairs' ratios is %r" %
                    (key, s[key], want))
            if abs(s[key + "_min"] - min(v)) > 1e-6 or \
                    abs(s[key + "_max"] - max(v)) > 1e-6:
                bad(n, "%s range %r..%r, the pairs' is %r..%r" %
                    (key, s[key + "_min"], s[key + "_max"], min(v),
                     max(v)))


def churn_pairs(n, s, runs):
    """churn's dips: the median of churn / quiet and of bare / quiet,
    phase by phase, per rep; dip_percent = (1 - the first) x 100,
    bare_dip_percent = (1 - the second) x 100."""
    ph = {(r.get("rep"), r.get("run")): r for r in runs}
    for kind, key, dip in (("churn", "throughput_vs_quiet", "dip_percent"),
                           ("bare", "bare_throughput_vs_quiet",
                            "bare_dip_percent")):
        v = [ph[(i, kind)]["msgs_per_s"] / ph[(i, "quiet")]["msgs_per_s"]
             for i in range(1, s.get("reps", 0) + 1)
             if (i, kind) in ph and (i, "quiet") in ph]
        if len(v) != s.get("reps") or len(v) != s.get(key + "_pairs"):
            bad(n, "%r %s pairs, %d pairs of phases ran" %
                (s.get(key + "_pairs"), kind, len(v)))
            continue
        want = statistics.median(v)
        if abs(s.get(key, -1) - want) > 1e-6:
            bad(n, "%s %r, the pairs' median is %r" % (key, s.get(key), want))
        if abs(s.get(dip, -1) - (1 - want) * 100) > 1e-4:
            bad(n, "%s %r, not (1 - %r) x 100" % (dip, s.get(dip), want))


def check(mode, lines, want_args=()):
    kinds = {}
    runs, meds, sums, sojourn_off, large = [], [], [], [], []
    idle_sums = []
    bare_rounds = []
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
        if kind == "run":
            runs.append(rec)
        elif kind == "median":
            meds.append((n, rec))
        if kind in ("run", "median") and mode in ("bare", "router",
                                                   "compare", "logics",
                                                   "idle"):
            run_or_median(n, rec, mode)
            if mode == "idle":
                need(n, rec, ["idle_endpoints"], is_int, "an integer")
                if kind == "run":
                    probes(n, rec)
            if mode in ("compare", "logics") and kind == "run" and \
                    rec.get("run") == "router":
                probes(n, rec)
        elif kind == "run" and mode in ("large", "iceoryx"):
            large_run(n, rec, mode)
        elif kind == "summary" and mode in ("large", "iceoryx"):
            large.append((n, rec))
        elif kind == "summary" and mode == "idle":
            need(n, rec, SETUP + ROUTER + ["reps", "idle_endpoints",
                                           "pairs_left_out",
                                           "idle_vs_none_pairs"],
                 is_int, "an integer")
            idle_sums.append((n, rec))
            need(n, rec, ["none_mps", "idle_mps", "idle_vs_none",
                          "idle_vs_none_min", "idle_vs_none_max",
                          "idle_goal", "lcore_ns_none", "lcore_ns_idle",
                          "lcore_ns_idle_every_round"], is_num, "a number")
            need(n, rec, ["idle_met", "all_in_order"],
                 lambda v: isinstance(v, bool), "a boolean")
        elif kind == "summary" and mode == "compare":
            need(n, rec, SETUP + ROUTER + ["reps", "pairs_left_out"],
                 is_int, "an integer")
            if is_int(rec.get("pairs_left_out")) and \
                    is_int(rec.get("throughput_vs_bare_pairs")) and \
                    rec["pairs_left_out"] + rec["throughput_vs_bare_pairs"] \
                    > rec.get("reps", 0):
                bad(n, "pairs_left_out %r and %r pairs: over %r reps" % (
                    rec["pairs_left_out"], rec["throughput_vs_bare_pairs"],
                    rec.get("reps")))
            need(n, rec, ["throughput_bar"], is_num, "a number")
            # issue 16's goal: the busy runs with stamps, one route.
            if "throughput_goal" in rec:
                need(n, rec, ["throughput_goal", "throughput_goal_judged"],
                     is_num, "a number")
                need(n, rec, ["throughput_goal_met"],
                     lambda v: isinstance(v, bool), "a boolean")
                judged = rec.get("throughput_goal_judged")
                speeds = [rec.get("throughput_vs_bare_%s_speed" % k)
                          for k in ("fast", "slow")]
                if any(x is not None for x in speeds):
                    need(n, rec, ["throughput_vs_bare_fast_speed",
                                  "throughput_vs_bare_slow_speed"],
                         is_num, "a number")
                    if all(is_num(x) for x in speeds) and is_num(judged) \
                            and abs(judged - min(speeds)) > 1e-9:
                        bad(n, "throughput_goal_judged %r, the lower speed's "
                            "is %r" % (judged, min(speeds)))
                elif is_num(judged) and \
                        is_num(rec.get("throughput_vs_bare")) and \
                        abs(judged - rec["throughput_vs_bare"]) > 1e-9:
                    bad(n, "throughput_goal_judged %r with one speed, the "
                        "median is %r" % (judged, rec["throughput_vs_bare"]))
                # The median of all pairs, or the lower of the two
                # speeds' medians, which is never above it.
                if is_num(judged) and is_num(rec.get("throughput_vs_bare")) \
                        and judged > rec["throughput_vs_bare"] + 1e-9:
                    bad(n, "throughput_goal_judged %r above the median %r" %
                        (judged, rec["throughput_vs_bare"]))
                if is_num(judged) and is_num(rec.get("throughput_goal")) \
                        and rec.get("throughput_goal_met") != \
                        (judged >= rec["throughput_goal"]):
                    bad(n, "throughput_goal_met %r with %r, goal %r" % (
                        rec.get("throughput_goal_met"), judged,
                        rec["throughput_goal"]))
            need(n, rec, ["throughput_met", "all_in_order"],
                 lambda v: isinstance(v, bool), "a boolean")
            ratio(n, rec, "throughput_vs_bare")
            if rec.get("round_trips", 0) > 0:
                need(n, rec, ["latency_bar"], is_num, "a number")
                ratio(n, rec, "latency_vs_pingpong")
                ratio(n, rec, "latency_vs_rtt3")
                need(n, rec, ["call_goal", "call_goal_judged"], is_num,
                     "a number")
                need(n, rec, ["call_goal_vs"],
                     lambda v: v in ("rtt3", "pingpong"),
                     "'rtt3' or 'pingpong'")
                need(n, rec, ["call_goal_met"],
                     lambda v: isinstance(v, bool), "a boolean")
                k = "latency_vs_" + str(rec.get("call_goal_vs"))
                judged = rec.get("call_goal_judged")
                # The median of all pairs, or the higher of the two
                # speeds' medians, which is never below it.
                if is_num(judged) and is_num(rec.get(k)) and \
                        judged < rec[k] - 1e-9:
                    bad(n, "call_goal_judged %r below %s %r" %
                        (judged, k, rec[k]))
                if is_num(judged) and is_num(rec.get("call_goal")) and \
                        rec.get("call_goal_met") is not \
                        (judged <= rec["call_goal"]):
                    bad(n, "call_goal_met %r with %r, goal %r" % (
                        rec.get("call_goal_met"), judged,
                        rec["call_goal"]))
            need(n, rec, ["sojourn"], lambda v: isinstance(v, bool),
                 "a boolean")
            # --sojourn both: the runs without stamps say what the
            # stamps cost, beside the same run's with.
            if rec.get("sojourn") is False:
                sojourn_off.append(n)
                need(n, rec, ["sojourn_on_vs_off", "sojourn_goal_percent",
                              "tsc_read_ns"],
                     is_num, "a number")
                need(n, rec, ["sojourn_met"],
                     lambda v: isinstance(v, bool), "a boolean")
            sums.append((n, rec))
        elif kind in ("run", "median") and mode == "decide":
            need(n, rec, ["logic"], lambda v: isinstance(v, str) and v,
                 "a name")
            need(n, rec, ["routes", "decisions",
                          "reps" if kind == "median" else "rep"], is_int,
                 "an integer")
            need(n, rec, ["ns_per_decision"], is_num, "a number")
            if kind == "median" and rec.get("variant") == "bare-fanout-round":
                need(n, rec, ["bare_vs_router", "bare_vs_router_min",
                              "bare_vs_router_max"], is_num, "a number")
                bare_rounds.append(n)
        elif kind == "run" and mode == "load":
            need(n, rec, ["domain", "router"],
                 lambda v: isinstance(v, str) and v, "a name")
            need(n, rec, ["sent", "lane_full"], is_int, "an integer")
            need(n, rec, ["rate_asked_msgs_per_s", "duration_s",
                          "msgs_per_s"], is_num, "a number")
            if rec.get("sent", 0) <= 0:
                bad(n, "load sent nothing: %r" % rec)
        elif kind == "run" and mode == "adopt":
            need(n, rec, ["kills", "phase_ms", "undisturbed_calls",
                          "undisturbed_longest_gap_us", "killed_calls",
                          "killed_longest_gap_us", "restart_p50_us",
                          "restart_p99_us", "restart_max_us"], is_int,
                 "an integer")
        elif kind == "run" and mode == "churn":
            need(n, rec, ["run"], lambda v: v in ("quiet", "churn", "bare"),
                 "'quiet', 'churn' or 'bare'")
            need(n, rec, SETUP + ROUTER + ["rep", "rate_asked", "phase_ms",
                                           "pushed", "changes_applied"],
                 is_int, "an integer")
            need(n, rec, ["duration_s", "msgs_per_s", "changes_per_s"],
                 is_num, "a number")
            if rec.get("pushed", 0) <= 0:
                bad(n, "a phase that pushed nothing: %r" % rec)
        elif kind == "summary" and mode == "churn":
            need(n, rec, SETUP + ROUTER + ["reps", "rate_asked", "phase_ms",
                                           "changes_refused", "goal_rate"] +
                 COUNTS, is_int, "an integer")
            # A dip may be negative: churn phases faster than quiet ones.
            for k in ("dip_percent", "bare_dip_percent"):
                if not is_num(rec.get(k)):
                    bad(n, "%s is %r, not a number" % (k, rec.get(k)))
            need(n, rec, ["changes_per_s_applied", "bare_changes_per_s",
                          "dip_goal_percent", "quiet_msgs_per_s",
                          "churn_msgs_per_s", "bare_msgs_per_s"], is_num,
                 "a number")
            need(n, rec, ["goal_met", "ok"], lambda v: isinstance(v, bool),
                 "a boolean")
            ratio(n, rec, "throughput_vs_quiet")
            ratio(n, rec, "bare_throughput_vs_quiet")
            if rec.get("ok") is not True or rec.get("lost") != 0 or \
                    rec.get("gaps") != 0 or rec.get("reordered") != 0 or \
                    rec.get("sent") != rec.get("received"):
                bad(n, "the sinks' tallies: lost or misrouted: %r" % rec)
            if rec.get("sent") != sum(r.get("pushed", 0) for r in runs):
                bad(n, "sent %r, the phases pushed %r" % (
                    rec.get("sent"), sum(r.get("pushed", 0) for r in runs)))
            if rec.get("rate_asked", 0) > 0 and \
                    not rec.get("changes_per_s_applied", 0) > 0:
                bad(n, "no change applied: %r" % rec)
            churn_pairs(n, rec, runs)
        else:
            bad(n, "record %r not expected from mode %r" % (kind, mode))
    medians(runs, meds)
    pairs(runs, sums)
    for n, s in idle_sums:
        idle_pairs(n, s, runs)
    for n, s in large:
        large_summary(n, s, runs, mode)
    if len(large) > 1:
        problems.append("%d summaries, not one" % len(large))
    if "--sojourn" in want_args and "both" in want_args and not sojourn_off:
        problems.append("--sojourn both: no summary of a run without "
                        "stamps")
    want = {"bare": ["run"], "router": ["run"], "adopt": ["run"],
            "load": ["run"],
            "compare": ["run", "median", "summary"],
            "logics": ["run", "median"], "decide": ["run", "median"],
            "idle": ["run", "summary"],
            "churn": ["run", "summary"],
            "large": ["run", "summary"], "iceoryx": ["run", "summary"]}
    for kind in want[mode]:
        if not kinds.get(kind):
            problems.append("no %r record at all" % kind)
    if mode == "decide" and len(bare_rounds) != 1:
        problems.append("decide: %d medians of the bare fan-out round, "
                        "not one" % len(bare_rounds))


CONF = """domain = "%s";
routers = ( { name = "events"; behaviour = "type";
  types = ( { type = 1; route = "w"; }, { type = 2; route = "w"; },
            { type = 3; route = "w"; } );
  routes = ( { name = "w"; program = "%s"; } );
} );
"""


def start_appliance(control, worker, tmp):
    """shmr-control on a private domain; returns (process, domain)."""
    domain = "pjl%d" % os.getpid()
    conf = os.path.join(tmp, "load.conf")
    with open(conf, "w") as f:
        f.write(CONF % (domain, os.path.basename(worker)))
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(worker)) +
               os.pathsep + os.environ.get("PATH", ""))
    r, w = os.pipe()
    proc = subprocess.Popen([control, "-c", conf, "--run-dir", tmp,
                             "--ready-fd", str(w)], pass_fds=[w], env=env,
                            stdout=subprocess.DEVNULL)
    os.close(w)
    # Liveness bound only: the domain is up in well under a second.
    ready, _, _ = select.select([r], [], [], 60)
    ok = ready and os.read(r, 1) == b"R"
    os.close(r)
    if not ok:
        proc.kill()
        proc.wait()
        raise SystemExit("check_json: %s did not come up" % control)
    return proc, domain


def main():
    args = sys.argv[1:]
    appliance = None
    if args[:1] == ["--appliance"]:
        appliance, args = args[1:3], args[3:]
    if len(args) < 2 or (appliance is not None and len(appliance) != 2):
        print(__doc__, file=sys.stderr)
        return 2
    mode, cmd = args[0], args[1:]
    with tempfile.TemporaryDirectory(prefix="shmr-check-json-") as tmp:
        control = None
        if appliance:
            control, domain = start_appliance(*appliance, tmp)
            cmd = [a.replace("{domain}", domain).replace("{run_dir}", tmp)
                   for a in cmd]
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True,
                                  timeout=240)
        finally:
            if control:
                control.send_signal(signal.SIGTERM)
                control.wait(timeout=60)
    if proc.returncode != 0:
        problems.append("%s exited with %d" % (" ".join(cmd),
                                                proc.returncode))
    lines = proc.stdout.splitlines()
    if not lines:
        problems.append("no output on stdout")
    check(mode, lines, cmd)
    for p in problems:
        print("check_json: %s" % p, file=sys.stderr)
    if not problems:
        print("check_json: %d records of mode %s, all as documented" %
              (len(lines), mode))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
