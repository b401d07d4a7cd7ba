#!/usr/bin/env python3
"""Every limit is documented, with the value the code has (issue 12).

usage: test_limits.py SOURCE_DIR

Read from the code, never from a hand list: every "#define SHMR_MAX_*" of
shm/include/shmr/layout.h, and the other limits the operator guide's
"Limits" table names by constant (SHMR_SLOT_MIN, SHMR_CHASH_VNODES_MAX,
...), found in the headers under shm/include, include and config.  Each
SHMR_MAX_* must have a row of that table naming it, and every row's named
constants (its third cell) must agree with its limit (its second cell):
that holds the constant's value (or, for a size with its NUL, one less).
"""
import os
import re
import sys

src = sys.argv[1]
fail = []


def defines(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#define\s+(SHMR_[A-Z0-9_]+)\s+\(?(\d+)u?\)?", line)
            if m:
                out[m.group(1)] = int(m.group(2))
    return out


consts = {}
for d in ("shm/include/shmr", "include/shmr", "config"):
    for name in sorted(os.listdir(os.path.join(src, d))):
        if name.endswith(".h"):
            consts.update(defines(os.path.join(src, d, name)))
layout_max = [k for k in defines(os.path.join(src, "shm/include/shmr/layout.h"))
              if k.startswith("SHMR_MAX_")]

with open(os.path.join(src, "docs/operator-guide.md"), encoding="utf-8") as f:
    guide = f.read()
m = re.search(r"^## Limits\n(.*?)(?=^## |\Z)", guide, re.M | re.S)
if not m:
    sys.exit("docs/operator-guide.md: no \"## Limits\" section")
rows = [l for l in m.group(1).splitlines() if l.startswith("| ") and "---" not in l]

for k in layout_max:
    if not any("`%s`" % k in r for r in rows):
        fail.append("%s (= %d, layout.h) has no row in the Limits table" % (k, consts[k]))
for r in rows:
    cells = [c.strip() for c in r.strip().strip("|").split("|")]
    if len(cells) != 3:
        fail.append("row without its 3 cells (what | limit | where): " + r)
        continue
    numbers = {int(n) for n in
               re.findall(r"(?<![\w.])(\d+)(?![\w.])", cells[1])}
    for k in re.findall(r"`(SHMR_[A-Z0-9_]+)`", cells[2]):
        if k not in consts:
            continue  # a function or a file, not a number
        v = consts[k]
        if v not in numbers and v - 1 not in numbers:
            fail.append("row naming %s gives %s, not its value %d: %s"
                        % (k, sorted(numbers), v, r))

for f in fail:
    print("test_limits: " + f)
print("test_limits: %d rows, %d SHMR_MAX_* checked, %d problems"
      % (len(rows), len(layout_max), len(fail)))
sys.exit(1 if fail else 0)
