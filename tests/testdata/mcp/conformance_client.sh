#!/bin/sh
# magi as the client under test in the MCP conformance suite's client scenarios: the suite
# runs this with its server's URL; magi reaches it as MCP server "conf" (config mcp_servers).
set -e
repo=$(cd "$(dirname "$0")/../../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '{"shipped_tools": false, "mcp_servers": {"conf": {"url": "%s", "start": "eager"}}}' "$1" >"$dir/config.json"
export XDG_CONFIG_HOME="$dir/config" XDG_CACHE_HOME="$dir/cache" XDG_STATE_HOME="$dir/state"
magi() { "${DENO:-deno}" run -A --quiet --config "$repo/deno.json" "$repo/main.ts" "$@" --config "$dir/config.json"; }
case "$MCP_CONFORMANCE_SCENARIO" in
tools_call) magi call conf__add_numbers '{"a": 2, "b": 3}' ;;
sse-retry) magi call conf__test_reconnection ;;
elicitation-sep1034-client-defaults) magi call conf__test_client_elicitation_defaults ;;
*) magi tools ;;
esac
