# Writes sessions/--home-u-*--/*.jsonl: 64 small sessions whose headers name parent sessions
# (`parentSession`) as Pi's threaded picker view reads them: earlier sessions in the same folder or
# another, spelled with `./` or `..`, parents that are not there, an empty string, two sessions
# that name each other, one that names itself, chains up to six deep, tied and Invalid `modified`
# times. Parent paths are relative to the store's root: the recorder and the test run there.
# The test and record.mjs set each file's mtime to 1767225600 + 60 * k, k its place in name order.
# `python3 gen.py [SEED [COUNT]]` (default 11 and 64, the committed store) writes another store of
# the kind for `cargo xtask differential --shape threads`; other seeds also spell parents with a
# trailing or doubled slash, a `./` inside, or through a folder that is not there (`nope/../`).
import os, random, sys
seed = int(sys.argv[1]) if len(sys.argv) > 1 else 11
count = int(sys.argv[2]) if len(sys.argv) > 2 else 64
more_spellings = (seed, count) != (11, 64)
r = random.Random(seed)
folders = ['--home-u-proj--', '--home-u-other--', '--tmp-x y--']
for f in folders:
    os.makedirs(os.path.join('sessions', f), exist_ok=True)
made = []
for k in range(count):
    folder = folders[k % 3 if k % 5 else 0]
    sid = '01a0%04x-0000-7000-8000-%012d' % (k, k)
    name = '2026-01-01T00-%02d-%02d-000Z_%s.jsonl' % (k // 60, k % 60, sid)
    rel = folder + '/' + name
    roll = r.random()
    parent = None
    if made and roll < 0.55:
        p = r.choice(made[-12:])
        spelling = r.random()
        if spelling < 0.15:
            p = './' + p
        elif spelling < 0.25:
            p = p.split('/')[0] + '/../' + p
        elif more_spellings and spelling < 0.45:
            p = r.choice([p + '/', p.replace('/', '//'), p.replace('/', '/./'), 'nope/../' + p])
        parent = p
    elif roll < 0.62:
        parent = folder + '/missing-%d.jsonl' % k
    elif roll < 0.66:
        parent = '/nonexistent/%d.jsonl' % k
    elif roll < 0.70:
        parent = ''
    if k == 40:
        parent = rel  # names itself
    if k == 50:
        parent = made[-1]
    if k == 49 and count > 50:
        # names the next session, which names it back (k == 50 above)
        parent = folders[50 % 3 if 50 % 5 else 0] + '/2026-01-01T00-00-50-000Z_01a00032-0000-7000-8000-000000000050.jsonl'
    hour = r.choice([1, 2, 3, 3, 4, 5, 6])
    t = 1767225600000 + hour * 3600000 + r.choice([0, 0, 1000, 2000])
    ts = '1e999' if r.random() < 0.12 else str(t)
    head = '{"type":"session","version":3,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/%s"' % (sid, folder.strip('-'))
    if parent is not None:
        head += ',"parentSession":"%s"' % parent
    lines = [
        head + '}',
        '{"type":"message","id":"a%07d","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"session %d","timestamp":%d}}' % (k, k, t - 1000),
        '{"type":"message","id":"b%07d","parentId":"a%07d","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"timestamp":%s}}' % (k, k, ts),
    ]
    with open(os.path.join('sessions', rel), 'w') as out:
        out.write('\n'.join(lines) + '\n')
    made.append(rel)
