# Writes sessions/ and flat/, the store the `resolve` conformance test and record.mjs run on, and
# mtimes.json (each file's mtime in seconds; the test and the recorder set them). Cases for Pi 1.6's
# session discovery (`readSessionHeader`, §1): headers after blank, malformed, `null` and `false`
# lines; a first record that is an array; a header with a numeric id (in the flat folder only:
# Pi's id prefix search throws on it, wherever it reaches it); escaped keys; a header
# that ends just inside, exactly at and just past the 1 MiB scan; a folder named like a session;
# equal mtimes; ids shared between folders and id prefixes shared between sessions; sessions the
# listing leaves out (content null) that discovery still finds; a flat folder of several cwds.
import json, os, shutil

shutil.rmtree('sessions', ignore_errors=True)
shutil.rmtree('flat', ignore_errors=True)
MIB = 1 << 20
T0 = 1767225600
mtimes = {}


def header(sid, cwd, **extra):
    h = {"type": "session", "version": 3, "id": sid, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd}
    h.update(extra)
    return json.dumps(h, separators=(',', ':'), ensure_ascii=False)


def message(k, text, role="user", content=None):
    c = text if content is None else content
    m = {"role": role, "content": c, "timestamp": (T0 + 3600 + k) * 1000}
    return json.dumps({"type": "message", "id": "m%07d" % k, "parentId": None,
                       "timestamp": "2026-01-01T01:00:00.000Z", "message": m}, separators=(',', ':'), ensure_ascii=False)


def write(rel, lines=None, raw=None, minute=0):
    path = rel
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = raw if raw is not None else ('\n'.join(lines) + '\n').encode()
    with open(path, 'wb') as out:
        out.write(data)
    mtimes[rel] = T0 + 60 * minute


P = 'sessions/--home-u-proj--/'
E = 'sessions/--home-u-edge--/'
O = 'sessions/--home-u-other--/'
F = 'flat/'
n = [0]


def name(folder, sid):
    n[0] += 1
    return '%s2026-01-01T00-00-%02d-000Z_%s.jsonl' % (folder, n[0], sid)


# The project's folder: the newest by mtime first.
write(name(P, 'aa11-newest-broken'), ['', 'not json', 'null', 'false', header('aa11-newest-broken', '/home/u/proj'),
      message(1, None, content=None)], minute=50)  # listed by nobody (content null), found by discovery
write(name(P, 'aa12-array-first'), ['[1]', header('aa12-array-first', '/home/u/proj'), message(2, 'array first')], minute=49)
os.makedirs(P + 'zz-folder.jsonl', exist_ok=True)
with open(P + 'zz-folder.jsonl/README', 'w') as out:
    out.write('a folder named like a session file\n')
mtimes[P + 'zz-folder.jsonl'] = T0 + 60 * 51
write(name(P, 'aa14-escaped'), ['{"\\u0074ype":"session","version":3,"\\u0069d":"aa14-escaped","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/proj"}',
      message(4, 'escaped keys')], minute=47)
write(name(P, 'aa15-tie-b'), [header('aa15-tie-b', '/home/u/proj'), message(5, 'tie b')], minute=40)
write(name(P, 'aa15-tie-a'), [header('aa15-tie-a', '/home/u/proj'), message(6, 'tie a')], minute=40)
write(name(P, 'shared-id'), [header('shared-id', '/home/u/proj'), message(7, 'shared id here')], minute=30)
# A folder of headers at the scan's edge, after lines of spaces (blank to Pi): the header line's
# newline is the MiB's last byte (found); the file ends exactly at the MiB without a newline
# (found); the newline is one byte past the MiB (not found, though the listing reads it).


def blank(size):
    lines, left = [], size
    while left > 0:
        k = min(left, 1 << 16)
        lines.append(b' ' * (k - 1) + b'\n')
        left -= k
    return b''.join(lines)


h = header('bb21-edge-in', '/home/u/proj').encode()
# Its message's content is null: the listing leaves it out, so only discovery finds it.
write(name(E, 'bb21-edge-in'), raw=blank(MIB - len(h) - 1) + h + b'\n' + message(21, None).encode() + b'\n', minute=28)
h = header('bb22-edge-eof', '/home/u/proj').encode()
write(name(E, 'bb22-edge-eof'), raw=blank(MIB - len(h)) + h, minute=29)
h = header('bb23-edge-out', '/home/u/proj').encode()
write(name(E, 'bb23-edge-out'), raw=blank(MIB - len(h)) + h + b'\n' + message(23, 'edge out').encode() + b'\n', minute=30)

# Another project.
write(name(O, 'shared-id'), [header('shared-id', '/home/u/other'), message(8, 'shared id there')], minute=35)
write(name(O, 'cc31-prefix-old'), [header('cc31-prefix-old', '/home/u/other'), message(9, 'older')], minute=10)
write(name(O, 'cc31-prefix-new'), [header('cc31-prefix-new', '/home/u/other'), message(10, 'newer')], minute=11)
write(name(O, 'cc3'), [header('cc3', '/home/u/other'), message(11, 'exact cc3')], minute=5)
write(name(O, 'dd41-wrong-cwd'), [header('dd41-wrong-cwd', '/home/u/elsewhere'), message(12, 'wrong cwd')], minute=55)

# A flat folder (Pi's --session-dir) holding several cwds.
write(name(F, 'ee51-flat-proj'), [header('ee51-flat-proj', '/home/u/proj'), message(13, 'flat proj')], minute=20)
write(name(F, 'ee52-flat-other'), [header('ee52-flat-other', '/home/u/other'), message(14, 'flat other')], minute=25)
write(name(F, 'ee53-flat-dotted'), [header('ee53-flat-dotted', '/home/u/./proj/'), message(15, 'flat dotted')], minute=15)
write(name(F, 'ee54-flat-numeric'), ['{"type":"session","version":3,"id":5454,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/proj"}',
      message(16, 'flat numeric')], minute=26)

with open('mtimes.json', 'w') as out:
    json.dump(dict(sorted(mtimes.items())), out, indent=0)
    out.write('\n')
