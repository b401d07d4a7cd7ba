#!/usr/bin/env python3
"""An interrupted shmr-perf leaves nothing behind.

    check_interrupt.py SHMR_PERF

Three runs, each stopped the way a user stops one:
  - `router`, Ctrl-C: SIGINT to its whole process group, as a terminal
    sends it, once the appliance is up;
  - `bare`, `kill PID`: SIGTERM to shmr-perf alone, its three pinned,
    busy-polling children running;
  - `churn`, the same, with the control plane applying route changes.
Each must die of that signal, say so in one line on stderr, and leave no
process (this script is the children's subreaper, so an orphan would
become its child and be seen), no run directory and no EAL runtime
directory.  No figure is measured.
"""
import ctypes
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time

PR_SET_CHILD_SUBREAPER = 36
UP_TIMEOUT = 60     # liveness bounds only
STOP_TIMEOUT = 60


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    for line in descendants():  # nothing of ours outlives the test
        os.kill(int(line.split()[0]), signal.SIGKILL)
    reap()
    sys.exit(1)


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def descendants():
    """Every live process whose parent is this script (orphans included)."""
    out = []
    for p in children(os.getpid()):
        try:
            with open(f"/proc/{p}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state != "Z":
            out.append(f"{p} {cmd.strip()}")
    return out


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def run_dir(pid):
    """The run directory of shmr-perf @pid: where its socket is."""
    for sock in glob.glob("/tmp/shmr-perf-*/perf%d.sock" % pid) + \
            glob.glob("/dev/shm/shmr-perf-*/perf%d.sock" % pid):
        return os.path.dirname(sock)
    return None


def wait_for(what, cond):
    t_end = time.time() + UP_TIMEOUT
    while time.time() < t_end:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    fail(f"{what}: not within {UP_TIMEOUT} s")


def check(perf, args, sig, group, up):
    name = args[0]
    # A file, not a pipe: children left running would hold a pipe open.
    errf = tempfile.TemporaryFile()
    p = subprocess.Popen(
        [perf] + args, stdout=subprocess.DEVNULL, stderr=errf,
        # A terminal's foreground job: SIGINT at its default, a process
        # group of its own (the one Ctrl-C signals).
        preexec_fn=lambda: (signal.signal(signal.SIGINT, signal.SIG_DFL),
                            os.setpgid(0, 0)))
    where = up(p.pid)
    time.sleep(0.5)  # inside the run, not at its start
    if group:
        os.killpg(p.pid, sig)
    else:
        os.kill(p.pid, sig)
    try:
        p.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        fail(f"{name}: still running {STOP_TIMEOUT} s after "
             f"{signal.Signals(sig).name}")
    errf.seek(0)
    err = errf.read().decode(errors="replace").strip().splitlines()
    last = err[-1] if err else ""
    if p.returncode != -sig:
        fail(f"{name}: ended with {p.returncode}, not killed by "
             f"{signal.Signals(sig).name}; stderr: {last}")
    word = {signal.SIGINT: "interrupted (SIGINT)",
            signal.SIGTERM: "terminated (SIGTERM)"}[sig]
    if not last.startswith("shmr-perf: " + word):
        fail(f"{name}: last line on stderr is {last!r}")
    # The roles killed with SIGKILL are gone at once; allow a moment for
    # any orphan to be reparented to us before looking.
    time.sleep(0.3)
    reap()
    left = descendants()
    if left:
        fail(f"{name}: left running: {'; '.join(left)}")
    if isinstance(where, str):
        if os.path.exists(where):
            fail(f"{name}: left its run directory {where}")
        if "removed " + where not in last:
            fail(f"{name}: its last line does not name {where}: {last!r}")
    eal = "/var/run/dpdk/shmr-perf%d" % p.pid
    if os.path.exists(eal):
        fail(f"{name}: left the EAL runtime directory {eal}")
    print(f"ok: {name}: {signal.Signals(sig).name}"
          f"{' to its group' if group else ''}: {last}")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    perf = sys.argv[1]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        fail("prctl(PR_SET_CHILD_SUBREAPER): "
             + os.strerror(ctypes.get_errno()))
    check(perf, ["router", "--count", "100000M", "--routes", "2",
                 "--poll", "adaptive", "--rtt", "0"],
          signal.SIGINT, True,
          lambda pid: wait_for("the router run's socket",
                               lambda: run_dir(pid)))
    check(perf, ["bare", "--count", "100000M", "--rtt", "0"],
          signal.SIGTERM, False,
          lambda pid: wait_for("the bare chain's three roles",
                               lambda: len(children(pid)) >= 3))
    check(perf, ["churn", "--rate", "1000", "--phase-ms", "100000",
                 "--reps", "1", "--poll", "adaptive"],
          signal.SIGTERM, False,
          lambda pid: wait_for("the churn run's socket",
                               lambda: run_dir(pid)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
