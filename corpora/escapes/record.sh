#!/bin/sh
# Records expected/ from Pi 1.6: ./record.sh RECORDER_DIR (the folder `cargo xtask recorder`
# prints). Run from this folder, in UTC; listing paths are rewritten
# to start with "escapes/".
set -eu
ref=$1
export TZ=UTC
mkdir -p expected
node "$ref/record.mjs" list "$PWD/sessions" | sed "s#$PWD/sessions/#escapes/#g" > expected/list.json
node "$ref/record.mjs" context sessions > expected/context.jsonl
