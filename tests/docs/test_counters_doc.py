#!/usr/bin/env python3
"""docs/observability.md's counters table is the registry (issue 14).

usage: test_counters_doc.py SOURCE_DIR

Read from shm/include/shmr/counters.def, never from a hand list: every
line of the registry must have exactly one row of the table, with its
Prometheus name, kind, unit, labels, inspect key, telemetry command and
key, and help text; and every row must be a line of the registry.  A line
whose value is SHMR_CTR_CONTROL(...) (only the control plane has it) must
say "no: " and why in its telemetry cell, and only such a line.
"""
import os
import re
import sys

src = sys.argv[1]
sys.path.insert(0, os.path.join(src, "tests", "integration"))
from check_counters import registry  # noqa: E402

LABELS = {"ROUTER": "router", "ROUTE": "router, route", "LCORE": "lcore",
          "ENDPOINT": "endpoint, name", "ARENA": "class"}
KEY = {"ROUTER": "shmr:{}", "ROUTE": "shmr:route:ROUTE:{}",
       "LCORE": "shmr:lcore:N:{}", "ENDPOINT": "shmr:endpoint:SLOT:GEN:{}",
       "ARENA": "shmr:arena:CLASS:{}"}
# The arena's lines are the control plane's (SHMR_CTR_CONTROL): their cell
# is "no: WHY", checked below.
TEL = {"ROUTER": "`/shmr/routers,ROUTER` `{}`",
       "ROUTE": "`/shmr/routes,ROUTER/ROUTE` `{}`",
       "LCORE": "`/shmr/lcores,N` `{}`",
       "ENDPOINT": "`/shmr/endpoints,SLOT` `{}`",
       "ARENA": "no: {}"}

reg = registry(os.path.join(src, "shm", "include", "shmr", "counters.def"))
want = {}
control = set()
for scope, name, kind, unit, helptext, ctl in reg:
    metric = "shmr_%s_%s%s" % (scope.lower(), name,
                               "_total" if kind == "COUNTER" else "")
    want[metric] = ["`%s`" % metric, kind.lower(), unit, LABELS[scope],
                    "`%s`" % KEY[scope].format(name),
                    TEL[scope].format(name), helptext]
    if ctl:
        control.add(metric)

with open(os.path.join(src, "docs", "observability.md"), encoding="utf-8") as f:
    page = f.read()
m = re.search(r"^## The counters\n(.*?)(?=^## |\Z)", page, re.M | re.S)
if not m:
    sys.exit("docs/observability.md: no \"## The counters\" section")
rows = [l for l in m.group(1).splitlines()
        if l.startswith("| `") and "---" not in l]
fail = []
seen = set()
for r in rows:
    cells = [c.strip() for c in r.strip().strip("|").split("|")]
    metric = cells[0].strip("`")
    if metric not in want:
        fail.append("row for %s, which the registry does not have" % metric)
        continue
    if metric in seen:
        fail.append("two rows for %s" % metric)
    seen.add(metric)
    if metric in control and len(cells) == 7:
        # Not in telemetry: the cell says so, and why.
        if re.fullmatch(r"no: \S.{9,}", cells[5]):
            want[metric][5] = cells[5]
        else:
            fail.append("row %s: its telemetry cell must be \"no: WHY\" "
                        "(SHMR_CTR_CONTROL in the registry), not %r"
                        % (metric, cells[5]))
    if cells != want[metric]:
        fail.append("row %s differs from the registry:\n  page:     %s\n"
                    "  registry: %s" % (metric, cells, want[metric]))
for metric in want:
    if metric not in seen:
        fail.append("%s (shmr/counters.def) has no row" % metric)
if len(reg) < 10:
    fail.append("only %d registry lines parsed" % len(reg))
for f in fail:
    print("test_counters_doc: " + f)
print("test_counters_doc: %d registry lines, %d rows, %d problems"
      % (len(reg), len(rows), len(fail)))
sys.exit(1 if fail else 0)
