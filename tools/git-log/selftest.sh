#!/bin/sh
# git-log selftest: the --help contract, then one call in a scratch repository.
set -eu
[ "$(./git-log --help | wc -l)" -eq 2 ]
here=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
git init -q -b main .
echo a > a.txt && git add a.txt
git -c user.name=Tester -c user.email=t@example.invalid commit -q -m "first commit"
"$here/git-log" --limit 1 | grep -q ' Tester: first commit$'
if "$here/git-log" --limit many 2>/dev/null; then exit 1; fi
