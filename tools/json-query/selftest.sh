#!/bin/sh
# json-query selftest: the --help contract, a value found, a missing key explained.
set -eu
[ "$(./json-query --help | wc -l)" -eq 2 ]
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf '{"a": {"list": [1, {"name": "x"}]}}' > "$tmp"
[ "$(./json-query "$tmp" a.list.1.name)" = '"x"' ]
if ./json-query "$tmp" a.nope 2>/dev/null; then exit 1; fi
./json-query "$tmp" a.nope 2>&1 | grep -q "no 'nope' at a (keys: list)"
