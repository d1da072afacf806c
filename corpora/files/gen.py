#!/usr/bin/env python3
"""Writes sessions/*.jsonl: tool calls and nested calls in every shape Pi's
extractFileOpsFromMessage meets (or throws on), for `session-scan files`. Run from this folder."""
import json, os

HEADER = {"type": "session", "version": 3, "id": "f0", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
n = 0


def msg(message, raw=None):
    global n
    n += 1
    if raw is not None:
        return '{"type":"message","id":"m%d","parentId":null,"timestamp":"2026-01-01T00:00:%02d.000Z","message":%s}' % (n, n % 60, raw)
    return json.dumps({"type": "message", "id": "m%d" % n, "parentId": None,
                       "timestamp": "2026-01-01T00:00:%02d.000Z" % (n % 60), "message": message},
                      ensure_ascii=False, separators=(",", ":"))


def call(name, args, **extra):
    b = {"type": "toolCall", "id": "c", "name": name, "arguments": args}
    b.update(extra)
    return b


def assistant(*blocks):
    return msg({"role": "assistant", "content": list(blocks)})


def result(nested_raw):
    return msg(None, raw='{"role":"toolResult","toolCallId":"c","toolName":"code","content":[],"isError":false,"nestedCalls":%s}' % nested_raw)


def write(name, lines, header=HEADER):
    with open(os.path.join("sessions", name), "w", encoding="utf-8") as f:
        f.write(json.dumps(header, separators=(",", ":")) + "\n")
        for line in lines:
            f.write(line + "\n")


os.makedirs("sessions", exist_ok=True)
write("blocks.jsonl", [
    assistant(call("read", {"path": "src/a.rs"}), call("read", {"path": "src/b.rs"}), call("edit", {"path": "src/b.rs"}),
              call("write", {"path": "new.txt"}), call("bash", {"path": "not/a/file/op"}), call("grep", {"path": "src"})),
    # What addFileOp passes over: empty or non-string paths, arguments that are not objects,
    # names that are not the three tools' (case counts), blocks without name or arguments.
    assistant(call("read", {"path": ""}), call("read", {"path": 7}), call("read", None), call("read", "x"),
              call("read", ["path"]), call("Read", {"path": "upper"}), call(5, {"path": "numbered"}),
              {"type": "toolCall", "name": "read"}, {"type": "toolCall", "arguments": {"path": "nameless"}},
              {"type": "text", "text": "t", "name": "read", "arguments": {"path": "text-block"}}, None, "s", 3),
    # A user message with a tool call block, and content that is not an array.
    msg({"role": "user", "content": [call("read", {"path": "from-user"})]}),
    msg({"role": "assistant", "content": "toolCall as text"}),
    msg({"role": "assistant", "content": {"0": call("read", {"path": "object-content"})}}),
    # The last of duplicate keys wins, as in JSON.parse; escapes spell the type and the path.
    msg(None, raw='{"role":"assistant","content":[{"type":"toolCall","name":"read","arguments":{"path":"first","path":"second"}},'
        '{"type":"tool\\u0043all","name":"edit","arguments":{"path":"esc\\u0061ped"}},'
        '{"type":"toolCall","name":"read","arguments":{"path":"q\\"uote\\\\slash"}}]}'),
    # Sort order: by UTF-16 units (a surrogate pair sorts below U+FFFD), lone surrogates kept.
    msg(None, raw='{"role":"assistant","content":[{"type":"toolCall","name":"read","arguments":{"path":"\\uFFFD"}},'
        '{"type":"toolCall","name":"read","arguments":{"path":"\\ud83d\\ude00"}},'
        '{"type":"toolCall","name":"read","arguments":{"path":"\\ud800lone"}},'
        '{"type":"toolCall","name":"read","arguments":{"path":"Zed"}},{"type":"toolCall","name":"read","arguments":{"path":"apple"}},'
        '{"type":"toolCall","name":"write","arguments":{"path":"Ä"}},{"type":"toolCall","name":"write","arguments":{"path":"B"}}]}'),
    # Lines Pi skips: malformed, or a message that is not an object.
    '{"type":"message","id":"bad","message":{"role":"assistant","content":[{"type":"toolCall","name":"read","arguments":{"path":"broken"}}]',
    msg(None, raw="null"),
    msg(None, raw='[{"type":"toolCall","name":"read","arguments":{"path":"array-message"}}]'),
    '{"type":"custom","data":{"role":"assistant","content":[{"type":"toolCall","name":"read","arguments":{"path":"custom-entry"}}]}}',
])
write("nested.jsonl", [
    result('{"calls":[{"name":"read","arguments":{"path":"n/read"}},{"name":"edit","arguments":{"path":"n/edit"}},"str",4,[],{"name":"write"}]}'),
    result('null'),
    result('"calls"'),
    result('[{"name":"read","arguments":{"path":"n/array-nested"}}]'),
    result('{"calls":null}'),
    result('{"calls":"read"}'),
    # Pi throws on these: the calls before the throw are kept.
    result('{"calls":[{"name":"write","arguments":{"path":"n/before-null"}},null,{"name":"write","arguments":{"path":"n/after-null"}}]}'),
    result('{"calls":{"0":{"name":"read","arguments":{"path":"n/object-calls"}}}}'),
    result('{"calls":12}'),
    result('{"calls":true}'),
    # An assistant message's nestedCalls are not looked at.
    msg({"role": "assistant", "content": [], "nestedCalls": {"calls": [{"name": "read", "arguments": {"path": "n/assistant"}}]}}),
])
write("migrated-v1.jsonl", [
    json.dumps({"type": "message", "timestamp": "2025-01-01T00:00:01.000Z",
                "message": {"role": "assistant", "content": [call("edit", {"path": "v1/edited"})]}}),
    json.dumps({"type": "message", "timestamp": "2025-01-01T00:00:02.000Z",
                "message": {"role": "hookMessage", "content": [call("read", {"path": "v1/hook"})]}}),
    json.dumps({"type": "session", "id": "second-header", "timestamp": "2025-01-01T00:00:03.000Z", "cwd": "/x"}),
    json.dumps({"type": "message", "timestamp": "2025-01-01T00:00:04.000Z",
                "message": {"role": "assistant", "content": [call("read", {"path": "v1/after-second-header"})]}}),
], header={"type": "session", "id": "f1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"})
write("none.jsonl", [msg({"role": "user", "content": "hello"})])
