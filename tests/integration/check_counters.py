#!/usr/bin/env python3
"""Check the three outputs of a running appliance against the counter
registry (shm/include/shmr/counters.def): `shmrctl inspect --json`, the
Prometheus text (`shmrctl metrics`, and GET /metrics over real HTTP from
the appliance's metrics_listen, each parsed by a real Prometheus parser)
and the dataplane's DPDK telemetry (Debian's dpdk-telemetry.py against the
appliance).

usage: check_counters.py COUNTERS.DEF OBSERVABILITY.md INSPECT.json
                         METRICS.txt METRICS_URL TELEMETRY_PREFIX ROUTER
                         ROUTE[,ROUTE...] NLCORES SLOT:GEN[,SLOT:GEN...]
                         [KEY=N | KEY>=N]...

Every line of the registry must appear in each: in the JSON as a number
under its inspect key; in both metrics texts as its family (HELP and TYPE
from the registry) with a sample for the router, each route, each lcore
and each client endpoint named (by its PID; they must be the only client
endpoints but for the control plane's own, name="shmr:admin", which must
be there) and each payload arena class that inspect shows (label
class); in telemetry as a number under its registry name in the answer
of the command that docs/observability.md's table names for it (its
"telemetry" column; a line whose cell says "no: WHY" is left out, and
only the registry's SHMR_CTR_CONTROL lines may say so).  Each KEY=N (an
inspect key) must hold N in every output; KEY>=N at least N.
Exit 0 when all holds, 1 with one line per failure otherwise.
"""
import json
import re
import subprocess
import sys
import urllib.request

ENTRY = re.compile(
    r'^SHMR_CTR\(\s*(ROUTER|ROUTE|LCORE|ENDPOINT|ARENA)\s*,\s*([a-z_]+)\s*,\s*'
    r'(COUNTER|GAUGE)\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"\s*,([^\n]*)', re.M)


def registry(path):
    """(scope, name, kind, unit, help, control) for each line; control is
    True for a value only the control plane has (SHMR_CTR_CONTROL)."""
    text = open(path, encoding='utf-8').read()
    # Lines of the table only, comments left out.
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    text = re.sub(r'\s*\n\s*', ' ', text).replace('SHMR_CTR(', '\nSHMR_CTR(')
    return [m.groups()[:5] + ('SHMR_CTR_CONTROL(' in m.group(6),)
            for m in ENTRY.finditer(text)]


def telemetry_column(path):
    """metric -> its telemetry cell in docs/observability.md's table."""
    page = open(path, encoding='utf-8').read()
    m = re.search(r'^## The counters\n(.*?)(?=^## |\Z)', page, re.M | re.S)
    cols = {}
    for line in (m.group(1).splitlines() if m else []):
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if line.startswith('| `') and len(cells) == 7:
            cols[cells[0].strip('`')] = cells[5]
    return cols


def telemetry(prefix, cmds):
    """Each command's answer (None: refused), from one run of Debian's
    dpdk-telemetry.py, commands on its input, one JSON line each out."""
    out = subprocess.run(['dpdk-telemetry.py', '-f', prefix],
                         input=''.join(c + '\n' for c in cmds),
                         capture_output=True, text=True, timeout=60).stdout
    answers = [json.loads(l) for l in out.splitlines() if l.startswith('{')]
    if len(answers) != len(cmds):
        raise SystemExit(f'dpdk-telemetry.py -f {prefix}: {len(answers)} '
                         f'answers to {len(cmds)} commands:\n{out}')
    return {c: a.get(c.split(',')[0]) for c, a in zip(cmds, answers)}


def same(got, want):
    """Label sets equal, an empty label being no label (as Prometheus
    has it: name="" for an endpoint that registered no name)."""
    return {k: v for k, v in got.items() if v} == want


def main(argv):
    # Here, not at the top: test_counters_doc.py imports registry() alone.
    from prometheus_client.parser import text_string_to_metric_families
    (defs, docs, jpath, mpath, url, prefix, router, routes, nlcores,
     eps) = argv[1:11]
    routes = routes.split(',')
    eps = eps.split(',')
    nlcores = int(nlcores)
    reg = registry(defs)
    tcol = telemetry_column(docs)
    errors = []
    if len(reg) < 10:
        errors.append(f'{defs}: only {len(reg)} entries parsed')
    inspect = json.load(open(jpath, encoding='utf-8'))
    with urllib.request.urlopen(url, timeout=30) as r:
        http_text = r.read().decode('utf-8')
    texts = {'metrics': open(mpath, encoding='utf-8').read(),
             f'GET {url}': http_text}
    fams = {}
    for src, text in texts.items():
        fams[src] = {f.name: f for f in text_string_to_metric_families(text)}
    # key -> (sample, labels, telemetry command or None, telemetry key).
    where = {}
    tel_cmds = []
    for scope, name, kind, unit, helptext, control in reg:
        base = f'shmr_{scope.lower()}_{name}'
        sample = base + ('_total' if kind == 'COUNTER' else '')
        cell = tcol.get(sample)
        tel = re.fullmatch(r'`(/shmr/[a-z]+),([A-Z/]+)` `([a-z_]+)`',
                           cell or '')
        if cell is None:
            errors.append(f'{docs}: no telemetry cell for {sample}')
        elif cell.startswith('no: ') != control:
            errors.append(f'{docs}: {sample}: telemetry cell {cell!r}, but '
                          f'the registry says {"control plane only" if control else "in the domain"}')
        elif not control and (not tel or tel.group(3) != name):
            errors.append(f'{docs}: {sample}: telemetry cell {cell!r} names '
                          f'no command and key {name}')
            tel = None
        for src, fs in fams.items():
            # The parser names a counter's family without "_total".
            fam = fs.get(base)
            if fam is None:
                errors.append(f'{src}: no family {base} (registry {scope} {name})')
                continue
            want_type = kind.lower()
            if fam.type != want_type:
                errors.append(f'{src}: {base} is a {fam.type}, not {want_type}')
            if helptext not in fam.documentation:
                errors.append(f'{src}: {base} HELP "{fam.documentation}" '
                              f'lacks "{helptext}"')
            if scope == 'ENDPOINT':
                got = sorted(x.labels['endpoint'] for x in fam.samples
                             if x.name == sample
                             and x.labels.get('name') != 'shmr:admin')
                admin = [x for x in fam.samples if x.name == sample
                         and x.labels.get('name') == 'shmr:admin']
                if len(admin) != 1:
                    errors.append(f'{src}: {sample}: {len(admin)} samples '
                                  f'for the admin endpoint, want 1')
                if got != sorted(eps):
                    errors.append(f'{src}: {sample} for endpoints {got}, '
                                  f'want {sorted(eps)}')
        if scope == 'ROUTER':
            keys = [(f'shmr:{name}', {'router': router}, router)]
        elif scope == 'ROUTE':
            keys = [(f'shmr:route:{q}:{name}', {'router': router, 'route': q},
                     f'{router}/{q}') for q in routes]
        elif scope == 'LCORE':
            keys = [(f'shmr:lcore:{l}:{name}', {'lcore': str(l)}, str(l))
                    for l in range(nlcores)]
        elif scope == 'ARENA':
            # The payload arena's classes, as inspect names them (none
            # without an arena: then its families have no sample).
            classes = sorted({k.split(':')[2] for k in inspect
                              if k.startswith('shmr:arena:')
                              and k.endswith(':buffers')})
            keys = [(f'shmr:arena:{k}:{name}', {'class': k}, k)
                    for k in classes]
        else:
            keys = [(f'shmr:endpoint:{e}:{name}', {'endpoint': e},
                     e.split(':')[0]) for e in eps]
        for key, labels, item in keys:
            v = inspect.get(key)
            if not isinstance(v, int) or isinstance(v, bool):
                errors.append(f'inspect --json: {key} is {v!r}, not a number')
            cmd = f'{tel.group(1)},{item}' if tel and not control else None
            if cmd and cmd not in tel_cmds:
                tel_cmds.append(cmd)
            where[key] = (sample, labels, cmd, name)
            for src, fs in fams.items():
                fam = fs.get(base)
                if fam is not None and not any(
                        x.name == sample and same(x.labels, labels)
                        for x in fam.samples):
                    errors.append(f'{src}: no sample {sample}{labels}')
    tel_ans = telemetry(prefix, tel_cmds) if tel_cmds else {}
    for e in eps:
        a = tel_ans.get(f'/shmr/endpoints,{e.split(":")[0]}')
        if a is not None and a.get('gen') != int(e.split(':')[1]):
            errors.append(f'telemetry /shmr/endpoints,{e.split(":")[0]}: '
                          f'gen {a.get("gen")!r}, not that of {e}')
    for key, (sample, labels, cmd, name) in where.items():
        if cmd is None:
            continue
        a = tel_ans.get(cmd)
        v = a.get(name) if isinstance(a, dict) else None
        if not isinstance(v, int) or isinstance(v, bool):
            errors.append(f'telemetry {cmd}: {name} is {v!r}, not a number '
                          f'(registry {key})')
    for exp in argv[11:]:
        m = re.fullmatch(r'([^=>]+)(>?=)(\d+)', exp)
        if not m or m.group(1) not in where:
            errors.append(f'expectation {exp!r}: not a registry key')
            continue
        key, op, n = m.group(1), m.group(2), int(m.group(3))
        sample, labels, cmd, name = where[key]
        got = [('inspect --json', inspect.get(key))]
        base = sample[:-6] if sample.endswith('_total') else sample
        for src, fs in fams.items():
            fam = fs.get(base)
            got += [(src, x.value) for x in (fam.samples if fam else [])
                    if x.name == sample and same(x.labels, labels)]
        if cmd is not None:
            a = tel_ans.get(cmd)
            got.append((f'telemetry {cmd}',
                        a.get(name) if isinstance(a, dict) else None))
        for src, g in got:
            ok = g is not None and (g == n if op == '=' else g >= n)
            if not ok:
                errors.append(f'{src}: {key}: {g!r}, want {op}{n}')
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
