#!/bin/sh
# git-status selftest: the --help contract, then one call in a scratch repository.
set -eu
[ "$(./git-status --help | wc -l)" -eq 2 ]
here=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
git init -q -b main .
echo hi > new.txt
out=$("$here/git-status")
printf '%s\n' "$out" | grep -q '^## No commits yet on main$'
printf '%s\n' "$out" | grep -q '^?? new.txt$'
