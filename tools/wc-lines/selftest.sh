#!/bin/sh
# wc-lines selftest: the header holds the --help contract, and a harmless call counts right.
set -eu
head -3 ./wc-lines | grep -q '^# wc-lines <путь> \[--no-empty\]$'
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf 'one\n\n  \nfour\n' > "$tmp"
[ "$(./wc-lines "$tmp")" = "$tmp: 4" ]
[ "$(./wc-lines "$tmp" --no-empty)" = "$tmp: 2" ]
