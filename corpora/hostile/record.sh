#!/bin/sh
# Records expected/ from Pi 1.6 through the oracle: ./record.sh ORACLE_DIR (a copy of
# ../shared/oracle with `npm ci` run). Run from this folder, in UTC. The listings are taken on a
# copy whose mtimes are set as gen.py says (git does not keep mtimes); their paths are rewritten
# to start with "hostile/".
set -eu
oracle=$1
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
node "$oracle/list.mjs" "$tmp/root" | sed "s#$tmp/root/#hostile/#g" > expected/list.json
node "$oracle/list.mjs" "$tmp/root" /home/u/proj | sed "s#$tmp/root/#hostile/#g" > expected/list-cwd.json
node "$oracle/list.mjs" --flat-all "$tmp/root/--tmp-x y--" | sed "s#$tmp/root/#hostile/#g" > expected/list-flat-all.json
node "$oracle/tree.mjs" sessions > expected/tree.jsonl
node "$oracle/stats.mjs" sessions > expected/stats.jsonl
node "$oracle/context.mjs" sessions > expected/context.jsonl
