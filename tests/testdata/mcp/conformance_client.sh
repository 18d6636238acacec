#!/bin/sh
# magi as the client under test in the MCP conformance suite's client scenarios: the suite
# runs this with its server's URL; magi reaches it as MCP server "conf" (config mcp_servers).
set -e
repo=$(cd "$(dirname "$0")/../../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export XDG_CONFIG_HOME="$dir/config" XDG_CACHE_HOME="$dir/cache" XDG_STATE_HOME="$dir/state"
# A pre-registered client (auth/pre-registration) comes in the suite's context: config oauth.
# (Only a context naming a client is read: a Deno start is not free.)
oauth=
case "${MCP_CONFORMANCE_CONTEXT:-}" in
*client_id*)
  # A private key (auth/client-credentials-jwt) makes a machine client signing its own JWTs;
  # an enterprise ID token (auth/cross-app-access-complete-flow), one with the ID-JAG grant.
  oauth=$("${DENO:-deno}" eval 'const c = JSON.parse(Deno.env.get("MCP_CONFORMANCE_CONTEXT") ?? "{}");
if (c.client_id) console.log(JSON.stringify({ client_id: c.client_id, ...(c.client_secret ? { client_secret: c.client_secret } : {}),
  ...(c.private_key_pem ? { private_key: c.private_key_pem, signing_algorithm: c.signing_algorithm, grant: "client_credentials" } : {}),
  ...(c.idp_id_token ? { grant: "id_jag", idp_token_endpoint: c.idp_token_endpoint, idp_client_id: c.idp_client_id, idp_id_token: c.idp_id_token } : {}) }));')
  ;;
esac
# A machine client (auth/client-credentials-basic): its id and secret with the client
# credentials grant, so tokens come at once, with no login.
[ "$MCP_CONFORMANCE_SCENARIO" = auth/client-credentials-basic ] &&
  oauth=$(printf '%s' "$oauth" | sed 's/}$/, "grant": "client_credentials"}/')
# Client ID Metadata Documents (auth/basic-cimd): the document's URL, as a person who
# publishes one names it (the suite's authorization server expects this one).
[ "$MCP_CONFORMANCE_SCENARIO" = auth/basic-cimd ] &&
  oauth='{"client_metadata_url": "https://conformance-test.local/client-metadata.json"}'
printf '{"shipped_tools": false, "mcp_servers": {"conf": {"url": "%s", "start": "eager"%s}}}' "$1" "${oauth:+, \"oauth\": $oauth}" >"$dir/config.json"
magi() { "${DENO:-deno}" run -A --quiet --config "$repo/deno.json" "$repo/main.ts" "$@" --config "$dir/config.json"; }
# OAuth: `magi mcp login conf` prints each authorization URL (one more for each step-up);
# curl plays the person's browser and opens every one (the suite's authorization server
# redirects at once to magi's loopback callback).
login() {
  magi mcp login conf 2>"$dir/login.err" &
  pid=$!
  opened=0
  for _ in $(seq 1 400); do
    urls=$(grep -o 'https\{0,1\}://[^ ]*authorize[^ ]*' "$dir/login.err")
    count=$(printf '%s' "$urls" | grep -c .)
    if [ "$count" -gt "$opened" ]; then
      opened=$((opened + 1))
      curl -s -L -o /dev/null "$(printf '%s\n' "$urls" | sed -n "${opened}p")"
      continue
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  wait "$pid"
  status=$?
  cat "$dir/login.err" >&2
  return $status
}
case "$MCP_CONFORMANCE_SCENARIO" in
# Step-up: the call needs more scope than the listing; its refusal names the login to run.
auth/scope-step-up)
  login && { magi call conf__test-tool || { login && magi call conf__test-tool; }; } ;;
auth/client-credentials-* | auth/cross-app-access-*) magi tools ;;
auth/*) login && magi tools ;;
tools_call) magi call conf__add_numbers '{"a": 2, "b": 3}' ;;
sse-retry) magi call conf__test_reconnection ;;
elicitation-sep1034-client-defaults) magi call conf__test_client_elicitation_defaults ;;
*) magi tools ;;
esac
