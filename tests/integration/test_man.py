#!/usr/bin/env python3
"""The man pages (man/): each renders without a warning, has its sections,
is installed where man(1) looks, and covers what the code knows.

usage: test_man.py SOURCE_DIR BUILD_DIR PAGE...   (PAGE: e.g. shmrctl.8)

Coverage is read from the code itself, never from a hand list:

  shmr.conf(5)  every configuration key the parser accepts.  The parser
                refuses any key it does not know, at every level, through
                shmr_conf_check_keys(p, group, path, LIST): the keys it
                knows are exactly the string literals of the arrays named
                in LIST ("static const char *const NAME[] = { ... };" in
                the same config/parse*.c file).  Each must be a term of the
                page (a line that starts with it in bold).
  shmrctl(8)    every command: the words shmrctl*.c compare its command
                word with (strcmp(cmd, "WORD")) and the first column of the
                lifecycle table ({ "word", "VERB" }), and dlq's
                sub-commands (strcmp(sub, "WORD")).  Each a term.
  libshmr(3)    every function declared in include/shmr/shmr.h.  Each a
                term ("NAME(...)"), and its declaration, exactly as the
                header has it (whitespace aside), in the SYNOPSIS.

Each extraction must find at least as many as the code had when this test
was written, so that a change in how the code spells them makes the test
fail rather than pass on an empty list.
"""
import glob
import json
import os
import re
import subprocess
import sys

MIN_CONFIG_KEYS = 52   # 52 before i11-roles' five access keys, 57 with them
MIN_SHMRCTL_VERBS = 18
MIN_FUNCTIONS = 28

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def config_keys(src):
    keys = set()
    files = sorted(glob.glob(os.path.join(src, "config", "parse*.c")))
    for path in files:
        text = open(path).read()
        arrays = {
            m.group(1): re.findall(r'"([A-Za-z0-9_]+)"', m.group(2))
            for m in re.finditer(
                r"const\s+char\s*\*\s*const\s+(\w+)\s*\[\]\s*=\s*\{(.*?)\};",
                text, re.S)
        }
        for call in re.finditer(r"shmr_conf_check_keys\s*\(([^()]*)\)",
                                text):
            if "struct pctx" in call.group(1):
                continue  # the definition, not a call
            last = call.group(1).split(",")[-1]
            names = [w for w in re.findall(r"\w+", last) if w in arrays]
            if not names:
                fail("%s: cannot read the key list of "
                     "shmr_conf_check_keys(%s)" % (path, call.group(1)))
            for n in names:
                keys.update(arrays[n])
    return keys


def shmrctl_verbs(src):
    # shmrctl.c and the files it is split into (shmrctl_read.c, ...).
    text = "".join(open(f).read() for f in sorted(
        glob.glob(os.path.join(src, "control", "shmrctl*.c"))))
    verbs = set(re.findall(r'strcmp\(cmd,\s*"([a-z-]+)"\)', text))
    verbs |= set(re.findall(r'\{\s*"([a-z-]+)",\s*"[A-Z_]+"\s*\}', text))
    subs = set(re.findall(r'strcmp\(sub,\s*"([a-z-]+)"\)', text))
    return verbs, subs


def functions(src):
    text = open(os.path.join(src, "include", "shmr", "shmr.h")).read()
    return set(re.findall(r"^[a-z][^;(]*?\b(shmr_\w+)\(", text, re.M))


def squash(s):
    return re.sub(r"\s+", " ", s).strip()


def declarations(src):
    """Each function's declaration in shmr.h, whitespace squashed."""
    text = open(os.path.join(src, "include", "shmr", "shmr.h")).read()
    return {m.group(2): squash(m.group(1))
            for m in re.finditer(r"^([a-z][^;{}#(]*?\b(shmr_\w+)\([^;]*\);)",
                                 text, re.M)}


def is_term(roff, words):
    """A line of the page that starts with WORDS, each in bold."""
    pat = r"^" + r"\s+".join(r"\\fB" + re.escape(w) + r"\\fR"
                             for w in words)
    return re.search(pat, roff, re.M) is not None


def main():
    src, build, pages = sys.argv[1], sys.argv[2], sys.argv[3:]
    mandir = os.path.join(os.path.abspath(build), "man")
    need_all = ["NAME", "SYNOPSIS", "DESCRIPTION", "FILES", "SEE ALSO"]
    need_by_section = {
        "1": ["OPTIONS", "EXIT STATUS"],
        "8": ["OPTIONS", "EXIT STATUS"],
        "3": ["RETURN VALUE", "ERRORS"],
        "5": [],
    }
    roffs = {}
    for page in pages:
        path = os.path.join(mandir, page)
        if not os.path.isfile(path):
            fail("%s: not built (is scdoc installed? see man/meson.build)"
                 % path)
            continue
        roff = open(path).read()
        roffs[page] = roff
        r = subprocess.run(["groff", "-man", "-ww", "-Tutf8"],
                           stdin=open(path), stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0 or r.stderr.strip():
            fail("%s: groff -man -ww: %s" % (page, r.stderr.strip()
                                             or "exit %d" % r.returncode))
        sections = re.findall(r'^\.SH "?([^"\n]*)"?', roff, re.M)
        for s in need_all + need_by_section[page.rsplit(".", 1)[1]]:
            if s not in sections:
                fail("%s: no %s section" % (page, s))
        name = page.rsplit(".", 1)[0]
        if not re.search(r'^\.TH "%s" "%s"' % (re.escape(name),
                                                 page.rsplit(".", 1)[1]),
                         roff, re.M):
            fail("%s: its .TH does not name it" % page)

    # Installed where man(1) looks: <mandir>/manN/PAGE.
    installed = json.load(open(os.path.join(build, "meson-info",
                                            "intro-installed.json")))
    for page in pages:
        dest = installed.get(os.path.join(mandir, page))
        sect = page.rsplit(".", 1)[1]
        if not dest or not dest.endswith("/man%s/%s" % (sect, page)):
            fail("%s: installed as %s, not under manN/%s"
                 % (page, dest, sect))

    checks = [
        ("shmr.conf.5", "configuration keys", sorted(config_keys(src)),
         MIN_CONFIG_KEYS, lambda r, k: is_term(r, [k])),
        ("libshmr.3", "functions of shmr.h", sorted(functions(src)),
         MIN_FUNCTIONS, lambda r, f: re.search(
             r"^\\fB%s\\fR\(" % re.escape(f), r, re.M) is not None),
    ]
    # libshmr(3)'s SYNOPSIS: the header's declarations, word for word.
    roff = roffs.get("libshmr.3")
    if roff is not None:
        syn = re.search(r"^\.SH SYNOPSIS\n(.*?)^\.SH ", roff, re.M | re.S)
        syn = squash(syn.group(1).replace("\\&", "")) if syn else ""
        for name, decl in sorted(declarations(src).items()):
            if decl not in syn:
                fail("libshmr.3: SYNOPSIS lacks or differs from shmr.h's "
                     "'%s'" % decl)
    verbs, subs = shmrctl_verbs(src)
    checks.append(("shmrctl.8", "shmrctl commands", sorted(verbs),
                   MIN_SHMRCTL_VERBS, lambda r, v: is_term(r, [v])))
    checks.append(("shmrctl.8", "dlq sub-commands", sorted(subs), 2,
                   lambda r, s: is_term(r, ["dlq", s])))
    for page, what, items, floor, covered in checks:
        print("%s: %d %s: %s" % (page, len(items), what, " ".join(items)))
        if len(items) < floor:
            fail("found only %d %s in the code (at least %d expected): "
                 "has the way the code spells them changed?"
                 % (len(items), what, floor))
        roff = roffs.get(page)
        if roff is None:
            continue
        for it in items:
            if not covered(roff, it):
                fail("%s does not document %s (%s)" % (page, it, what))

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok: %d pages" % len(pages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
