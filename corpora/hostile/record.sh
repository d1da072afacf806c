#!/bin/sh
# Records expected/ from Pi 1.6: ./record.sh RECORDER_DIR (the folder `cargo xtask recorder`
# prints). Run from this folder, in UTC. The listings are taken on a
# copy whose mtimes are set as gen.py says (git does not keep mtimes); their paths are rewritten
# to start with "hostile/".
set -eu
ref=$1
export TZ=UTC
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r sessions "$tmp/root"
python3 - "$tmp/root" <<'PY'
import os, sys
root = sys.argv[1]
files = sorted(os.path.join(d, f) for d in os.listdir(root) for f in os.listdir(os.path.join(root, d)))
for k, rel in enumerate(files):
    ns = (1767225600 + 1000 * (k % 6)) * 10**9 + 400_000 * (k % 3)
    os.utime(os.path.join(root, rel), ns=(ns, ns))
PY
mkdir -p expected
node "$ref/record.mjs" list "$tmp/root" | sed "s#$tmp/root/#hostile/#g" > expected/list.json
node "$ref/record.mjs" list "$tmp/root" /home/u/proj | sed "s#$tmp/root/#hostile/#g" > expected/list-cwd.json
node "$ref/record.mjs" list --flat-all "$tmp/root/--tmp-x y--" | sed "s#$tmp/root/#hostile/#g" > expected/list-flat-all.json
node "$ref/record.mjs" tree sessions > expected/tree.jsonl
node "$ref/record.mjs" stats sessions > expected/stats.jsonl
node "$ref/record.mjs" context sessions > expected/context.jsonl
