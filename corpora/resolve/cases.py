# `python3 cases.py SEED`, in a folder holding sessions/ (a store written by corpora/hostile/gen.py):
# writes cases.json and mtimes.json for `cargo xtask differential --shape resolve`. Cases: `pi -c` in
# the store's cwds (absolute ones: Pi and the test run in different folders) and in the flat folder
# `--tmp-x y--`; `pi --session` with ids, prefixes of ids and ids that are not there, from those
# cwds, with and without the flat folder as --session-dir. Mtimes: 60 s apart by name order, every
# seventh file tied with the one before it.
import json, os, random, sys

R = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
T0 = 1767225600
files = sorted(os.path.join('sessions', d, f) for d in os.listdir('sessions') for f in os.listdir(os.path.join('sessions', d)))
mtimes = {f: T0 + 60 * (k - 1 if k % 7 == 0 and k > 0 else k) for k, f in enumerate(files)}
ids, cwds = [], set()
for f in files:
    try:
        with open(f, 'rb') as data:
            first = next((l for l in data if l.strip()), b'')
        head = json.loads(first)
    except (ValueError, OSError):
        continue
    if isinstance(head, dict):
        if isinstance(head.get('id'), str) and head['id']:
            ids.append(head['id'])
        if isinstance(head.get('cwd'), str) and head['cwd'].startswith('/'):
            cwds.add(head['cwd'])
cwds = sorted(cwds) + ['/home/u/proj', '/nowhere']
flat = 'sessions/--tmp-x y--'
cases = [{"continue": True, "cwd": c} for c in cwds]
cases += [{"continue": True, "cwd": c, "dir": flat} for c in cwds[:4]]
for _ in range(40):
    sid = R.choice(ids) if ids else 'x'
    arg = R.choice([sid, sid, sid[:R.randint(1, len(sid))], sid[:1], sid + 'z', R.choice(['zzzz', '0', 'ffffffff0'])])
    case = {"session": arg, "cwd": R.choice(cwds)}
    if R.random() < 0.3:
        case["dir"] = flat
    cases.append(case)
with open('cases.json', 'w') as out:
    out.write('[\n' + ',\n'.join(json.dumps(c, ensure_ascii=False) for c in cases) + '\n]\n')
with open('mtimes.json', 'w') as out:
    json.dump(mtimes, out, indent=0)
    out.write('\n')
