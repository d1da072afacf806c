# Writes sessions/--home-u-sort--/*.jsonl: 90 small sessions whose `modified` ties often and is an
# Invalid Date in about a third (an assistant timestamp of 1e999 is Infinity), so that listAll's
# sort by `modified` meets NaN over more than 64 items. The listing test sets each file's mtime to
# 1767225600 + 60 * k, k its place in name order, as was done before the golden was taken.
import random, os
r = random.Random(7)
d = 'sessions/--home-u-sort--'
for k in range(90):
    sid = '0199%04x-0000-7000-8000-%012d' % (k, k)
    t = 1767225600000 + r.choice([0, 1, 2, 3]) * 3600000
    ts = '1e999' if r.random() < 0.33 else str(t)
    lines = [
        '{"type":"session","version":3,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/sort"}' % sid,
        '{"type":"message","id":"a%07d","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"session %d","timestamp":%d}}' % (k, k, t - 1000),
        '{"type":"message","id":"b%07d","parentId":"a%07d","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"timestamp":%s}}' % (k, k, ts),
    ]
    open(os.path.join(d, '2026-01-01T00-00-%02d-000Z_%s.jsonl' % (k % 60, sid)), 'w').write('\n'.join(lines) + '\n')
