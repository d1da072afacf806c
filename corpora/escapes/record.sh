#!/bin/sh
# Records expected/ from Pi 1.6 through the oracle: ./record.sh ORACLE_DIR (a copy of
# ../shared/oracle with `npm ci` run). Run from this folder, in UTC; listing paths are rewritten
# to start with "escapes/".
set -eu
oracle=$1
export TZ=UTC
mkdir -p expected
node "$oracle/list.mjs" "$PWD/sessions" | sed "s#$PWD/sessions/#escapes/#g" > expected/list.json
node "$oracle/context.mjs" sessions > expected/context.jsonl
