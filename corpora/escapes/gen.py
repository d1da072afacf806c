#!/usr/bin/env python3
"""Writes sessions/: every fifth session of ../sample-16 (in name order), with escapes put into the
text of three lines in ten (seed 21): runs of backslashes, \\u escapes that may cross a 64-byte
block, surrogates, the rare letters, and escapes JSON.parse refuses, so that Pi skips the line."""
import os, random, shutil

R = random.Random(21)
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "sample-16", "sessions")
OUT = os.path.join(HERE, "sessions")
GOOD = [rb'\u001b', rb'\\', rb'\\\"', rb'\/', rb'\b\f\r', rb'\uABCD', rb'\uD83D\uDE80', rb'\ud800', rb'\n\t\"',
        rb'\u00e9\\path\\x']
BAD = [rb'\u12g4', rb'\x', rb'\u00"', b'\x01', b'\t', rb'\u', rb'\uabc', rb'\U0041', rb"\'", b'\x1f']


def piece():
    k = R.random()
    if k < 0.25:
        n = R.randint(1, 140)
        return b'\\' * n + (b'' if n % 2 == 0 else R.choice([b'n', b'u0041', b'q', b'"', b'\\']))
    if k < 0.85:
        return R.choice(GOOD)
    return R.choice(BAD)


files = sorted(os.path.relpath(os.path.join(d, f), SRC) for d, _, fs in os.walk(SRC) for f in fs if f.endswith(".jsonl"))
shutil.rmtree(OUT, ignore_errors=True)
for rel in files[::5]:
    lines = open(os.path.join(SRC, rel), "rb").read().split(b"\n")
    for i in range(1, len(lines)):
        if R.random() > 0.3:
            continue
        line = lines[i]
        for key in (b'"text":"', b'"thinking":"', b'"content":"'):
            at = line.find(key)
            if at < 0:
                continue
            at += len(key)
            text = b''.join(b'x' * R.randint(0, 70) + piece() for _ in range(R.randint(1, 6)))
            lines[i] = line[:at] + text + line[at:]
            break
    out = os.path.join(OUT, rel)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    open(out, "wb").write(b"\n".join(lines))
