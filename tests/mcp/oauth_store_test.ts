/**
 * What an MCP OAuth login keeps is private (0600 in a 0700 folder), and a server that needs
 * a login it has not had says which command to run.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { LoginNeeded, StoredOAuth } from "../../lib/sources/mcp/oauth.ts";
import { specSecrets } from "../../lib/sources/mcp/client.ts";
import { tempDir } from "../helpers.ts";

Deno.test("OAuth tokens are stored 0600; a needed login names magi mcp login", async () => {
  await using home = await tempDir();
  const dir = join(home.path, "state", "magi", "mcp-oauth");
  const file = StoredOAuth.fileFor(dir, "a".repeat(64));
  const auth = new StoredOAuth("remote", file, { redirect: "http://127.0.0.1:5555/callback" });
  auth.saveClientInformation({ client_id: "magi-client" });
  auth.saveTokens({ access_token: "at-0123456789", token_type: "Bearer" });
  auth.saveCodeVerifier("verifier-xyz");
  assert.equal(Deno.statSync(file).mode! & 0o777, 0o600);
  assert.equal(Deno.statSync(dir).mode! & 0o777, 0o700);
  assert.equal(auth.tokens()?.access_token, "at-0123456789");
  assert.equal(auth.clientInformation()?.client_id, "magi-client");
  assert.equal(auth.codeVerifier(), "verifier-xyz");
  // A client registered for another redirect (an earlier login's port) is not reused.
  const later = new StoredOAuth("remote", file, { redirect: "http://127.0.0.1:6666/callback" });
  assert.equal(later.clientInformation(), undefined);
  await assert.rejects(
    async () => await auth.redirectToAuthorization(new URL("https://as.example/authorize")),
    (e: Error) => e instanceof LoginNeeded && /run `magi mcp login remote`/.test(e.message),
  );
});

Deno.test("a pre-registered OAuth client (config oauth) is used as it is, its secret masked", async () => {
  await using home = await tempDir();
  const file = StoredOAuth.fileFor(join(home.path, "oauth"), "b".repeat(64));
  const client = { client_id: "pre-registered-client", client_secret: "pre-registered-secret" };
  const auth = new StoredOAuth("remote", file, { client });
  assert.deepEqual(auth.clientInformation(), client);
  assert.equal(auth.clientMetadata.token_endpoint_auth_method, "client_secret_basic");
  const spec = {
    url: "https://mcp.example/mcp",
    oauth: { client_id: "id", client_secret: "${S}" },
  };
  assert.deepEqual(specSecrets(spec, { S: "s3cr3t-value-42" }), [
    { name: "SECRET", value: "s3cr3t-value-42" },
  ]);
});

Deno.test("a 403 insufficient_scope is noted for the next login, with the scope the tokens have", async () => {
  await using home = await tempDir();
  const file = StoredOAuth.fileFor(join(home.path, "oauth"), "c".repeat(64));
  const auth = new StoredOAuth("remote", file);
  auth.saveTokens({ access_token: "at-0123456789", token_type: "Bearer", scope: "read" });
  // A real HTTP server on loopback answers as a resource server refusing for scope.
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () =>
      new Response("{}", {
        status: 403,
        headers: {
          "www-authenticate": 'Bearer error="insufficient_scope", scope="read write"',
        },
      }),
  );
  const res = await auth.watching()(`http://127.0.0.1:${server.addr.port}/mcp`);
  await res.body?.cancel();
  assert.equal(auth.wantedScope(), "read write");
  await assert.rejects(
    async () => await auth.redirectToAuthorization(new URL("https://as.example/authorize")),
    /needs more access \(scope "read write"\): run `magi mcp login remote`/,
  );
  auth.gotWantedScope();
  assert.equal(auth.wantedScope(), undefined);
  // Discovery is kept for later starts; what the server invalidates is forgotten.
  auth.saveDiscoveryState({ authorizationServerUrl: "https://as.example" });
  assert.equal(auth.discoveryState()?.authorizationServerUrl, "https://as.example");
  auth.invalidateCredentials("tokens");
  assert.equal(auth.tokens(), undefined);
  assert.ok(auth.discoveryState());
});

Deno.test("a Client ID Metadata Document's URL (config oauth) is offered as the client id", async () => {
  await using home = await tempDir();
  const file = StoredOAuth.fileFor(join(home.path, "oauth"), "d".repeat(64));
  const url = "https://magi.example/client.json";
  const auth = new StoredOAuth("remote", file, { client: { client_metadata_url: url } });
  assert.equal(auth.clientMetadataUrl, url);
  // No client id of its own: the SDK uses the URL where the server supports it, else registers.
  assert.equal(auth.clientInformation(), undefined);
  assert.equal(auth.clientMetadata.token_endpoint_auth_method, "none");
});

Deno.test("a machine client (oauth.grant client_credentials) asks for tokens with no redirect", async () => {
  await using home = await tempDir();
  const file = StoredOAuth.fileFor(join(home.path, "oauth"), "e".repeat(64));
  const client = {
    client_id: "machine",
    client_secret: "machine-secret-0001",
    grant: "client_credentials" as const,
  };
  const auth = new StoredOAuth("remote", file, { client });
  // No redirect: the SDK goes to the token endpoint at once.
  assert.equal(auth.redirectUrl, undefined);
  assert.equal(
    auth.prepareTokenRequest("read")?.toString(),
    "grant_type=client_credentials&scope=read",
  );
  assert.deepEqual(auth.clientInformation(), {
    client_id: "machine",
    client_secret: "machine-secret-0001",
  });
  assert.deepEqual(auth.clientMetadata.grant_types, ["client_credentials"]);
  // A person's client keeps the SDK's own authorization-code request.
  const person = new StoredOAuth("remote", file, { redirect: "http://127.0.0.1:1/callback" });
  assert.equal(person.prepareTokenRequest("read"), undefined);
});
