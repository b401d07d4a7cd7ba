#!/usr/bin/env python3
"""Check `shmrctl inspect --json` and `shmrctl metrics` against the counter
registry (control/counters.def), with a real Prometheus parser.

usage: check_counters.py COUNTERS.DEF INSPECT.json METRICS.txt ROUTER
                         ROUTE[,ROUTE...] NLCORES SLOT:GEN[,SLOT:GEN...]
                         [KEY=N | KEY>=N]...

Every line of the registry must appear in both: in the JSON as a number
under its inspect key, in the metrics as its family (HELP and TYPE from the
registry) with a sample for the router, each route, each lcore and each
client endpoint named (by its PID; they must be the only client endpoints
but for the control plane's own, name="shmr:admin", which must be there),
and each payload arena class that inspect shows (label class).  Each
KEY=N (an inspect key) must hold N in both outputs; KEY>=N at least N.
Exit 0 when all holds, 1 with one line per failure otherwise.
"""
import json
import re
import sys

ENTRY = re.compile(
    r'^SHMR_CTR\(\s*(ROUTER|ROUTE|LCORE|ENDPOINT|ARENA)\s*,\s*([a-z_]+)\s*,\s*'
    r'(COUNTER|GAUGE)\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"', re.M)


def registry(path):
    text = open(path, encoding='utf-8').read()
    # Lines of the table only, comments left out.
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    text = re.sub(r'\s*\n\s*', ' ', text).replace('SHMR_CTR(', '\nSHMR_CTR(')
    return [m.groups() for m in ENTRY.finditer(text)]


def same(got, want):
    """Label sets equal, an empty label being no label (as Prometheus
    has it: name="" for an endpoint that registered no name)."""
    return {k: v for k, v in got.items() if v} == want


def main(argv):
    # Here, not at the top: test_counters_doc.py imports registry() alone.
    from prometheus_client.parser import text_string_to_metric_families
    defs, jpath, mpath, router, routes, nlcores, eps = argv[1:8]
    routes = routes.split(',')
    eps = eps.split(',')
    nlcores = int(nlcores)
    reg = registry(defs)
    errors = []
    if len(reg) < 10:
        errors.append(f'{defs}: only {len(reg)} entries parsed')
    inspect = json.load(open(jpath, encoding='utf-8'))
    fams = {}
    for f in text_string_to_metric_families(
            open(mpath, encoding='utf-8').read()):
        fams[f.name] = f
    # key -> (family name, labels) for the expectations below.
    where = {}
    for scope, name, kind, unit, helptext in reg:
        base = f'shmr_{scope.lower()}_{name}'
        # The parser names a counter's family without "_total".
        fam = fams.get(base)
        if fam is None:
            errors.append(f'metrics: no family {base} (registry {scope} {name})')
        else:
            want_type = kind.lower()
            if fam.type != want_type:
                errors.append(f'metrics: {base} is a {fam.type}, not {want_type}')
            if helptext not in fam.documentation:
                errors.append(f'metrics: {base} HELP "{fam.documentation}" '
                              f'lacks "{helptext}"')
        sample = base + ('_total' if kind == 'COUNTER' else '')
        if scope == 'ROUTER':
            keys = [(f'shmr:{name}', {'router': router})]
        elif scope == 'ROUTE':
            keys = [(f'shmr:route:{q}:{name}', {'router': router, 'route': q})
                    for q in routes]
        elif scope == 'LCORE':
            keys = [(f'shmr:lcore:{l}:{name}', {'lcore': str(l)})
                    for l in range(nlcores)]
        elif scope == 'ARENA':
            # The arena's classes, as inspect names them (none without
            # an arena: then its families have no sample).
            classes = sorted({k.split(':')[2] for k in inspect
                              if k.startswith('shmr:arena:')
                              and k.endswith(':buffers')})
            keys = [(f'shmr:arena:{k}:{name}', {'class': k})
                    for k in classes]
        else:
            keys = [(f'shmr:endpoint:{e}:{name}', {'endpoint': e})
                    for e in eps]
            got = sorted(s.labels['endpoint'] for s in
                         (fam.samples if fam else []) if s.name == sample
                         and s.labels.get('name') != 'shmr:admin')
            admin = [s for s in (fam.samples if fam else [])
                     if s.name == sample and s.labels.get('name') == 'shmr:admin']
            if fam is not None and len(admin) != 1:
                errors.append(f'metrics: {sample}: {len(admin)} samples for '
                              f'the admin endpoint, want 1')
            if fam is not None and got != sorted(eps):
                errors.append(f'metrics: {sample} for endpoints {got}, '
                              f'want {sorted(eps)}')
        for key, labels in keys:
            v = inspect.get(key)
            if not isinstance(v, int) or isinstance(v, bool):
                errors.append(f'inspect --json: {key} is {v!r}, not a number')
            where[key] = (sample, labels)
            if fam is not None and not any(
                    s.name == sample and same(s.labels, labels)
                    for s in fam.samples):
                errors.append(f'metrics: no sample {sample}{labels}')
    for exp in argv[8:]:
        m = re.fullmatch(r'([^=>]+)(>?=)(\d+)', exp)
        if not m or m.group(1) not in where:
            errors.append(f'expectation {exp!r}: not a registry key')
            continue
        key, op, n = m.group(1), m.group(2), int(m.group(3))
        sample, labels = where[key]
        got = [inspect.get(key)]
        base = sample[:-6] if sample.endswith('_total') else sample
        fam = fams.get(base)
        got += [s.value for s in (fam.samples if fam else [])
                if s.name == sample and same(s.labels, labels)]
        for g in got:
            ok = g is not None and (g == n if op == '=' else g >= n)
            if not ok:
                errors.append(f'{key}: {g!r}, want {op}{n}')
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
