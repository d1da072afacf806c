# Writes sessions/--<cwd>--/*.jsonl: 240 small hostile sessions drawn at random (seed 19), the kind
# that finds differences from Pi 1.6: timestamps in every shape Date.parse takes or
# refuses, contents of every type, null blocks, non-string names, duplicate keys, broken and
# truncated lines, CR and CRLF line ends, migrations (versions 1, 2, "3", null), compactions, branch
# summaries, usage entries, context edits and labels. No parent loops (Pi never returns on those).
# The tests and record.sh set each file's mtime to 1767225600 s + 1000 s * (k % 6) + 0.4 ms * (k % 3),
# k its place in name order: ties for the sort, and sub-millisecond parts for stats.mtime's rounding.
import datetime, json, random, sys, os
# `python3 gen.py [SEED [FILES [ROOT [SHAPE]]]]` writes another store (`cargo xtask differential`);
# SHAPE `tree` writes sessions shaped to test trees, leaves and contexts instead (tree_store below).
seed, nfiles, root, shape = 19, 240, "sessions", "listing"
if len(sys.argv) > 1: seed = int(sys.argv[1])
if len(sys.argv) > 2: nfiles = int(sys.argv[2])
if len(sys.argv) > 3: root = sys.argv[3]
if len(sys.argv) > 4: shape = sys.argv[4]
R = random.Random(seed)
def rid(): return ''.join(R.choice('0123456789abcdef') for _ in range(8))
def ts_iso():
    return "2026-%02d-%02dT%02d:%02d:%02d.%03dZ" % (R.randint(1,12), R.randint(1,28), R.randint(0,23), R.randint(0,59), R.randint(0,59), R.randint(0,999))
def odd_ts():
    if False: return R.choice([ts_iso(), "", "garbage", 0, None, 1767225600000, True, "2026-13-01T00:00:00.000Z", "1970-01-01T00:00:00.000Z", "+012026-01-01T00:00:00.000Z", "2026-01-01T24:00:00.000Z", "2026-01-01T00:00:00.000+02:00"])
    return R.choice([ts_iso(), ts_iso(), "", "garbage", "2026-01-01", "2026-01-01T00:00:00", "2026-01-01T00:00:00+02:00",
        "Thu, 01 Jan 2026 00:00:00 GMT", "2026-13-01T00:00:00.000Z", "1970-01-01T00:00:00.000Z", "0", 0, 1767225600000, None,
        "2026-02-30T00:00:00.000Z", "+012026-01-01T00:00:00.000Z", " 2026-01-01T00:00:00.000Z", "2026-01-01T24:00:00.000Z",
        "2026-1-1", "Jan 5 2026", "2026/01/05", -1, 1.5, True, [], {}])
def texts():
    return R.choice(["hello", "", " ", "  padded  ", "multi\nline", "tab\there", "quote \" and \\ back", "\u001b[31mred", "emoji 🚀", "数据",
        "\ud800 lone" if False else "lone", "a" * R.randint(0, 300), "\u2028sep\u2029", "\r\ncrlf", "null"])
def content(role):
    k = R.random()
    if k < 0.35: return texts()
    if k < 0.8:
        blocks = []
        for _ in range(R.randint(0, 4)):
            t = R.random()
            if t < 0.5: blocks.append({"type": "text", "text": texts()})
            elif t < 0.6: blocks.append({"type": "text", "text": R.choice([None, 5, ["x"], {"a": 1}])})
            elif t < 0.65: blocks.append({"type": "text"})
            elif t < 0.75: blocks.append({"type": "thinking", "thinking": texts(), "thinkingSignature": "sig"})
            elif t < 0.85: blocks.append({"type": "toolCall", "id": rid(), "name": "bash", "arguments": {"command": texts()}})
            elif t < 0.9: blocks.append({"type": "image", "data": "AAAA", "mimeType": "image/png"})
            elif t < 0.95: blocks.append(R.choice(["str", 5, None, [], {"text": "no type"}]))
            else: blocks.append({"type": "TEXT", "text": "caps"})
        return blocks
    return R.choice([None, 5, {"text": "obj"}, True, "MISSING"])
def message_line(parent):
    role = R.choice(["user"] * 4 + ["assistant"] * 4 + ["toolResult"] * 2 + ["bashExecution", "custom", "system", "User", 5, None, "MISSING"])
    m = {}
    if role != "MISSING": m["role"] = role
    c = content(role)
    if c != "MISSING": m["content"] = c
    r = R.random()
    if r < 0.6: m["timestamp"] = R.choice([1767225600000 + R.randint(0, 10**10), 0, -5, 1.5e12, 1e400 if False else 8.64e15, 8.64e15 + 1, "1767225600000", None, 1767225600000.5])
    if role == "assistant" and R.random() < 0.7:
        m.update({"api": "messages", "provider": "anthropic", "model": "x", "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "stop"})
    e = {"type": "message", "id": rid(), "parentId": parent, "timestamp": odd_ts() if R.random() < 0.3 else ts_iso(), "message": m}
    if R.random() < 0.05: e["message"] = R.choice([None, "str", [], 5])
    return e
def usage_obj():
    if R.random() < 0.1: return R.choice([None, 5, {}, {"input": 1}, {"input": "3", "cost": {"total": "1"}}])
    return {"input": R.randint(0, 9), "output": R.randint(0, 9), "cacheRead": R.randint(0, 3), "cacheWrite": 0, "totalTokens": 1, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": R.choice([0, 0.5, 1e-7, 0.1, 0.2])}}
def extra_line(parent, ids):
    r = R.random()
    base = {"id": rid(), "parentId": parent, "timestamp": ts_iso()}
    if r < 0.2: return {"type": "compaction", **base, "summary": texts(), "firstKeptEntryId": R.choice(ids + ["nope", None]) if ids else None, "tokensBefore": 100, **({"usage": usage_obj()} if R.random() < 0.5 else {})}
    if r < 0.35: return {"type": "branch_summary", **base, "fromId": R.choice(ids) if ids else "x", "summary": texts(), **({"usage": usage_obj()} if R.random() < 0.5 else {})}
    if r < 0.5: return {"type": "usage", **base, "provider": R.choice(["p", None]), "model": "m", "usage": usage_obj()}
    if r < 0.6: return {"type": "custom_message", **base, "customType": "x", "content": content("user"), "display": R.choice([True, False])}
    if r < 0.7: return {"type": "thinking_level_change", **base, "thinkingLevel": R.choice(["high", "off", None, 5])}
    if r < 0.8: return {"type": "model_change", **base, "provider": R.choice(["p", None]), "modelId": R.choice(["m", 5])}
    if r < 0.9: return {"type": "label", **base, "targetId": R.choice(ids + ["ghost"]) if ids else "ghost", "label": R.choice(["x", "", None])}
    if r < 0.95 and ids and True:
        return {"type": "context_edit", **base, "targetId": R.choice(ids + ["ghost"]), "replacement": R.choice([None, {"content": texts()}, {"content": content("user")}, {"content": None}, 5, {}])}
    b = dict(base); b["parentId"] = R.choice(ids) if ids else None  # branch off
    return {"type": "message", **b, "message": {"role": "user", "content": texts()}}
def entry_line(parent, ids=[]):
    if True and R.random() < 0.4: return extra_line(parent, ids)
    r = R.random()
    if r < 0.7: return message_line(parent)
    if r < 0.8: return {"type": "session_info", "id": rid(), "parentId": parent, "timestamp": ts_iso(), **({"name": R.choice(["my name", "", "  ", " spaced ", None, 5, "名前", "x" * 50])} if R.random() < 0.9 else {})}
    if r < 0.85: return {"type": "label", "id": rid(), "parentId": parent, "timestamp": ts_iso(), "targetId": parent, "label": "l"}
    if r < 0.9: return {"type": "model_change", "id": rid(), "parentId": parent, "timestamp": ts_iso(), "provider": "p", "modelId": "m"}
    if r < 0.95: return {"type": "custom", "customType": "x", "id": rid(), "parentId": parent, "timestamp": ts_iso(), "data": {"a": [1, 2]}}
    return {"type": R.choice(["Message", "message ", "", None, 5]), "id": rid(), "parentId": parent, "timestamp": ts_iso(), "message": {"role": "user", "content": "typo type"}}
def dump(v):
    s = json.dumps(v, ensure_ascii=R.random() < 0.3, separators=(",", ":") if R.random() < 0.9 else (", ", ": "))
    return s
def mutate(line):
    k = R.random()
    if k < 0.02: return line[:R.randint(0, len(line))]  # truncated
    if k < 0.03: return line + " "
    if k < 0.04: return " \t" + line
    if k < 0.05: return line.replace('"type":"message"', '"type":"message","type":"label"', 1)
    if k < 0.06: return line.replace('"role":"', '"role":"assistant","role":"', 1)
    if k < 0.065: return line.replace(":", ": ", 3)
    if k < 0.07: return line + ","
    if k < 0.075: return line.replace('"timestamp":"', '"timestamp" : "', 1)
    if k < 0.08: return line[:-1] + ',"extra":1e5}' if line.endswith("}") else line
    if k < 0.085: return line.replace("\\n", "\\u000a")
    if k < 0.09: return line.replace("e", "\\u0065", 2) if '"' in line else line
    if k < 0.095: return line.replace("hello", "hel\x01lo")
    if k < 0.1: return "[" + line + "]"
    return line
cwds = ["/home/u/proj", "/home/u/other", "/tmp/x y", "/home/u/proj/"]
os.makedirs(root, exist_ok=True)
def good_usage():
    return {"input": R.randint(0, 9), "output": R.randint(0, 9), "cacheRead": R.randint(0, 3), "cacheWrite": 0, "totalTokens": 1, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": R.choice([0, 0.5, 1e-7, 0.1, 0.2])}}
def tree_store():
    # Valid headers and mostly valid lines, with the tree's hard cases: branches from any earlier
    # entry, new roots, missing parents, ids written again (only where no parent loop results: Pi
    # never returns on those; every record links its id under its parent, so a loop is a cycle of
    # those links), numeric ids (Pi's Maps treat 0, -0 and 0.0 as one key, as Python's dict does),
    # labels, compactions and branch summaries pointing anywhere, and entry times out of order or
    # tied (children are sorted by them).
    for f in range(nfiles):
        cwd = R.choice(cwds[:3])
        d = os.path.join(root, "--" + cwd.strip("/").replace("/", "-") + "--")
        os.makedirs(d, exist_ok=True)
        header = {"type": "session", "version": R.choice([3] * 6 + [2, 1]), "id": rid() + "-" + rid(), "timestamp": ts_iso(), "cwd": cwd}
        lines = [dump(header)]
        kids = {}  # id -> the ids of records linked under it
        order = []
        def below(top, p):
            # Whether p is top or lies below it.
            todo, seen = [top], []
            while todo:
                x = todo.pop()
                if x == p: return True
                if x in seen: continue
                seen.append(x); todo.extend(kids.get(x, []))
            return False
        parent, t = None, 1767225600000 + R.randint(0, 10**9)
        for _ in range(R.randint(1, 40)):
            r = R.random()
            if not order or r < 0.6: p = parent
            elif r < 0.8: p = R.choice(order)
            elif r < 0.86: p = None
            elif r < 0.92: p = "ghost"
            else: p = R.choice(order[-3:])
            eid = rid()
            k = R.random()
            if order and k < 0.06: eid = R.choice(order)
            elif k < 0.09: eid = R.choice([0, -0.0, 0.0, 1, 1.0, 2, "0"])
            if p is not None and below(eid, p): eid = rid()
            t += R.choice([0, 1, 1000, 60000, -5000])
            when = "%s.%03dZ" % (datetime.datetime.fromtimestamp(t // 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"), t % 1000)
            base = {"id": eid, "parentId": p, "timestamp": when}
            c = R.random()
            targets = order + ["ghost", None]
            if c < 0.25: e = {"type": "message", **base, "message": {"role": "user", "content": R.choice([texts(), [{"type": "text", "text": texts()}]]), "timestamp": t}}
            elif c < 0.45: e = {"type": "message", **base, "message": {"role": "assistant", "content": [{"type": "text", "text": texts()}] + ([{"type": "toolCall", "id": rid(), "name": "bash", "arguments": {"command": "ls"}}] if R.random() < 0.4 else []), "api": "messages", "provider": "anthropic", "model": R.choice(["m1", "m2"]), "usage": good_usage(), "stopReason": "stop", "timestamp": t}}
            elif c < 0.55: e = {"type": "message", **base, "message": {"role": "toolResult", "toolCallId": rid(), "toolName": "bash", "content": [{"type": "text", "text": texts()}], "isError": R.random() < 0.2, "timestamp": t}}
            elif c < 0.63: e = {"type": "compaction", **base, "summary": texts(), "firstKeptEntryId": R.choice(targets), "tokensBefore": R.randint(0, 9999), **({"usage": good_usage()} if R.random() < 0.3 else {})}
            elif c < 0.69: e = {"type": "branch_summary", **base, "fromId": R.choice(targets), "summary": texts()}
            elif c < 0.77: e = {"type": "label", **base, "targetId": R.choice(targets), "label": R.choice(["l1", "l2", "", None])}
            elif c < 0.81: e = {"type": "session_info", **base, "name": R.choice(["n1", "n2", ""])}
            elif c < 0.85: e = {"type": "model_change", **base, "provider": "p", "modelId": R.choice(["m1", "m2"])}
            elif c < 0.89: e = {"type": "thinking_level_change", **base, "thinkingLevel": R.choice(["high", "off", "low"])}
            elif c < 0.93: e = {"type": "custom_message", **base, "customType": "x", "content": texts(), "display": R.random() < 0.5}
            elif c < 0.96: e = {"type": "context_edit", **base, "targetId": R.choice(targets), "replacement": R.choice([None, {"content": texts()}])}
            else: e = {"type": "custom", **base, "customType": "x", "data": {"a": 1}}
            line = dump(e)
            lines.append(line[:R.randint(0, len(line))] if R.random() < 0.02 else line)
            if line == lines[-1]:
                if p is not None: kids.setdefault(p, []).append(eid)
                if eid not in order: order.append(eid)
                parent = eid
        name = "2026-01-01T00-00-00-000Z_%06d.jsonl" % f
        with open(os.path.join(d, name), "w", encoding="utf-8", newline="") as fh: fh.write("\n".join(lines) + "\n")
if shape == "tree":
    tree_store(); sys.exit(0)
for f in range(nfiles):
    cwd = R.choice(cwds)
    d = os.path.join(root, "--" + cwd.strip("/").replace("/", "-") + "--")
    os.makedirs(d, exist_ok=True)
    lines = []
    hk = R.random()
    header = {"type": "session", "version": R.choice([3, 3, 3, 2, 1, "3", None]), "id": R.choice([rid() + "-" + rid()] * 8 + [5, None, ""]),
              "timestamp": odd_ts() if hk < 0.3 else ts_iso(), "cwd": R.choice([cwd] * 8 + [5, None, ""])}
    if R.random() < 0.2: header["parentSession"] = R.choice(["/p/a.jsonl", 5, None])
    if R.random() < 0.05: lines.append("garbage")
    if R.random() < 0.05: lines.append("")
    if R.random() < 0.03: lines.append(dump({"type": "message", "id": "x", "message": {"role": "user", "content": "before header"}}))
    lines.append(dump(header) if R.random() < 0.97 else dump({"type": "Session", "id": "x"}))
    parent = None; ids = []
    for _ in range(R.randint(0, 12)):
        e = entry_line(parent, ids); parent = e.get("id"); ids.append(parent) if isinstance(parent, str) else None
        lines.append(mutate(dump(e)))
    sep = R.choice(["\n"] * 12 + ["\r\n", "\r"])
    body = sep.join(lines) + R.choice(["\n", "", "\n\n", "\r"])
    name = "2026-01-01T00-00-00-000Z_%06d.jsonl" % f
    p = os.path.join(d, name)
    with open(p, "w", encoding="utf-8", newline="") as fh: fh.write(body)
