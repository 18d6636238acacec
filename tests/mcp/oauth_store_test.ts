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

/** The header and claims of a JWT, after checking its signature with `publicKey`. */
async function verifiedJwt(
  jwt: string,
  publicKey: import("node:crypto").KeyObject,
): Promise<{ header: Record<string, unknown>; claims: Record<string, unknown> }> {
  const { createVerify } = await import("node:crypto");
  const [head, body, signature] = jwt.split(".");
  const header = JSON.parse(atob(head.replace(/-/g, "+").replace(/_/g, "/")));
  const hash = `SHA${String(header.alg).slice(2)}`;
  const ok = createVerify(hash).update(`${head}.${body}`).verify(
    {
      key: publicKey,
      ...(String(header.alg).startsWith("ES") ? { dsaEncoding: "ieee-p1363" as const } : {}),
    },
    Buffer.from(signature, "base64url"),
  );
  assert.ok(ok, "the JWT's signature does not verify");
  return { header, claims: JSON.parse(Buffer.from(body, "base64url").toString()) };
}

Deno.test("a machine client with a private key (oauth.private_key) signs its token request (private_key_jwt)", async () => {
  const { generateKeyPairSync } = await import("node:crypto");
  await using home = await tempDir();
  const file = StoredOAuth.fileFor(join(home.path, "oauth"), "f".repeat(64));
  for (
    const [type, alg] of [["ec", "ES256"], ["rsa", "RS256"]] as const
  ) {
    const pair = type === "ec"
      ? generateKeyPairSync("ec", { namedCurve: "prime256v1" })
      : generateKeyPairSync("rsa", { modulusLength: 2048 });
    const pem = pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const client = { client_id: "machine", private_key: pem, grant: "client_credentials" as const };
    const auth = new StoredOAuth("remote", file, { client });
    assert.equal(auth.redirectUrl, undefined);
    assert.equal(auth.clientMetadata.token_endpoint_auth_method, "private_key_jwt");
    // No secret to send: the signed assertion is the client's proof.
    assert.deepEqual(auth.clientInformation(), { client_id: "machine" });
    const params = new URLSearchParams({ grant_type: "client_credentials" });
    const headers = new Headers();
    await auth.addClientAuthentication!(headers, params, "https://as.example/token", {
      issuer: "https://as.example",
      authorization_endpoint: "https://as.example/authorize",
      token_endpoint: "https://as.example/token",
      response_types_supported: ["code"],
    });
    assert.equal(headers.get("authorization"), null);
    assert.equal(
      params.get("client_assertion_type"),
      "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
    );
    const { header, claims } = await verifiedJwt(params.get("client_assertion")!, pair.publicKey);
    // The algorithm is the key's own when the config names none.
    assert.equal(header.alg, alg);
    assert.equal(claims.iss, "machine");
    assert.equal(claims.sub, "machine");
    assert.equal(claims.aud, "https://as.example");
  }
  // A key that is none, or one of another type than the algorithm named, is one line.
  const sign = async (client: { private_key: string; signing_algorithm?: string }) => {
    const auth = new StoredOAuth("remote", file, {
      client: { client_id: "m", grant: "client_credentials", ...client },
    });
    await auth.addClientAuthentication!(
      new Headers(),
      new URLSearchParams(),
      "https://as.example/token",
    );
  };
  await assert.rejects(
    sign({ private_key: "not a key" }),
    /oauth.private_key is not a PEM private key/,
  );
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey
    .export({ type: "pkcs8", format: "pem" }).toString();
  await assert.rejects(
    sign({ private_key: rsa, signing_algorithm: "ES256" }),
    (e: Error) =>
      /^Cannot sign the client assertion \(ES256\) with oauth.private_key: /.test(e.message) &&
      !e.message.includes(rsa.split("\n")[1]),
  );
  // A person's client, or one with a secret, signs nothing.
  assert.equal(new StoredOAuth("remote", file).addClientAuthentication, undefined);
});

Deno.test("a private key and an ID token in config oauth are masked, each key line too", () => {
  const pem = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n" +
    "SI2J+Vrf/0DhzjJ9atjuVRQIuuAd+1rxYQIl+7TTDve\n-----END PRIVATE KEY-----\n";
  const secrets = specSecrets({
    url: "https://mcp.example/mcp",
    oauth: {
      client_id: "id",
      private_key: "${KEY}",
      grant: "client_credentials",
      idp_token_endpoint: "https://idp.example/token",
      idp_id_token: "${ID_TOKEN}",
    },
  }, { KEY: pem, ID_TOKEN: "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln" });
  assert.deepEqual(secrets, [
    { name: "SECRET", value: "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln" },
    { name: "PRIVATE_KEY", value: pem },
    { name: "PRIVATE_KEY", value: "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg" },
    { name: "PRIVATE_KEY", value: "SI2J+Vrf/0DhzjJ9atjuVRQIuuAd+1rxYQIl+7TTDve" },
  ]);
});

Deno.test("the ID-JAG grant (oauth.grant id_jag) exchanges the ID token at the identity provider", async () => {
  await using home = await tempDir();
  const file = StoredOAuth.fileFor(join(home.path, "oauth"), "9".repeat(64));
  let asked: URLSearchParams | undefined;
  let refuse = false;
  // A real identity provider's token endpoint on loopback (RFC 8693 token exchange).
  await using idp = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      asked = new URLSearchParams(await request.text());
      if (refuse) {
        return Response.json({ error: "invalid_grant", error_description: "expired" }, {
          status: 400,
        });
      }
      return Response.json({
        access_token: "jag-header.jag-claims.jag-signature",
        issued_token_type: "urn:ietf:params:oauth:token-type:id-jag",
        token_type: "N_A",
      });
    },
  );
  const endpoint = `http://127.0.0.1:${idp.addr.port}/token`;
  const client = {
    client_id: "mcp-client",
    client_secret: "mcp-client-secret",
    grant: "id_jag" as const,
    idp_token_endpoint: endpoint,
    idp_client_id: "idp-client",
    idp_id_token: "id-token-of-the-person",
  };
  const auth = new StoredOAuth("remote", file, { client, resource: "https://mcp.example/mcp" });
  assert.equal(auth.redirectUrl, undefined);
  assert.deepEqual(auth.clientMetadata.grant_types, [
    "urn:ietf:params:oauth:grant-type:jwt-bearer",
  ]);
  // What the SDK's discovery found: the authorization server is the ID-JAG's audience.
  auth.saveDiscoveryState({
    authorizationServerUrl: "https://as.example/",
    authorizationServerMetadata: {
      issuer: "https://as.example",
      authorization_endpoint: "https://as.example/authorize",
      token_endpoint: "https://as.example/token",
      response_types_supported: ["code"],
    },
  });
  const request = await auth.prepareTokenRequest("read");
  assert.equal(request?.get("grant_type"), "urn:ietf:params:oauth:grant-type:jwt-bearer");
  assert.equal(request?.get("assertion"), "jag-header.jag-claims.jag-signature");
  assert.equal(request?.get("scope"), "read");
  assert.deepEqual(Object.fromEntries(asked!), {
    grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
    subject_token: "id-token-of-the-person",
    subject_token_type: "urn:ietf:params:oauth:token-type:id_token",
    requested_token_type: "urn:ietf:params:oauth:token-type:id-jag",
    audience: "https://as.example",
    // No protected-resource metadata was found: the server's own URL.
    resource: "https://mcp.example/mcp",
    client_id: "idp-client",
    scope: "read",
  });
  refuse = true;
  await assert.rejects(
    async () => await auth.prepareTokenRequest(),
    new RegExp(
      `the identity provider at 127.0.0.1:${idp.addr.port} gave no ID-JAG ` +
        `\\(HTTP 400: invalid_grant: expired\\)`,
    ),
  );
});
