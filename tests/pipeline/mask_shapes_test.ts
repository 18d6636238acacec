/**
 * Credentials by the shape of their value that no name marks: a connection string's
 * `Password=`, a token in a URL's query or fragment (a JDBC URL's `?password=`, OAuth's
 * `#access_token=`), a Discord webhook URL. The whole value and the
 * password or token alone are masked in every channel; look-alikes are not credentials.
 */
import assert from "node:assert/strict";
import { collectSecrets } from "../../lib/pipeline/mask.ts";
import { credentialShape } from "../../lib/pipeline/secret_shapes.ts";
import { assertMasked, throughChannels } from "./mask_channels.ts";

const ENV = {
  MSSQL_CONN: "Server=db;Database=x;User Id=sa;Password=Qw3rtyUi0pAs;",
  PG_CONN: "host=db user=app password=Pg5ecretWord9 dbname=app",
  API_URL: "https://api.example.com/v1?access_token=Zx8Qw2Er4Ty6Ui8Op0As",
  FEED_URL: "https://feeds.example.com/x.json?format=json&token=Fe3dT0kenAbC%2F99",
  JDBC_URL: "jdbc:postgresql://db/app?user=u&password=Secr3tPa55wd9",
  CALLBACK: "https://app.example.com/cb#access_token=Yt5Rd3Es1Wq9Az7Xs&token_type=bearer",
  DISCORD_HOOK: "https://discord.com/api/webhooks/1234567890123456789/" +
    "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrStUvWxYz01",
};

Deno.test("a connection string's password, a URL's token and a Discord webhook leak into no channel", async () => {
  const channels = await throughChannels(
    [
      'printf "%s\\n" "$MSSQL_CONN" "$PG_CONN" "$API_URL" "$FEED_URL" "$DISCORD_HOOK"',
      'env | grep -E "^(JDBC_URL|CALLBACK)="',
      'echo "alone: ${JDBC_URL##*=} ${CALLBACK#*=}"',
      'echo "password alone: ${MSSQL_CONN##*Password=}"',
      'echo "token alone: ${API_URL#*=} ${DISCORD_HOOK##*/}"',
      "echo 'decoded: Fe3dT0kenAbC/99'",
    ].join("\n"),
    { env: ENV },
  );
  const leaks = [
    "Qw3rtyUi0pAs",
    "Pg5ecretWord9",
    "Zx8Qw2Er4Ty6Ui8Op0As",
    "Fe3dT0kenAbC",
    "AbCdEfGhIjKlMnOpQrSt",
    "Secr3tPa55wd9",
    "Yt5Rd3Es1Wq9Az7Xs",
  ];
  assertMasked(channels, leaks, "$MSSQL_CONN");
  for (
    const mark of ["$PG_CONN", "$API_URL", "$FEED_URL", "$DISCORD_HOOK", "$JDBC_URL", "$CALLBACK"]
  ) {
    for (const [channel, text] of Object.entries(channels)) {
      assert.ok(text.includes(mark), `${channel} lacks ${mark}`);
    }
  }
});

Deno.test("look-alikes of those shapes are not credentials", () => {
  for (
    const value of [
      "password=x",
      "a=b;c=d",
      "https://example.com/search?q=token&page=2",
      "https://example.com/?page=2&sort=asc",
      "https://discord.com/channels/123/456",
      "https://example.com/docs#section-2",
      "jdbc:postgresql://db/app?ssl=true&user=app",
      "Server=db;Database=x;Trusted_Connection=True;",
    ]
  ) {
    assert.equal(credentialShape(value), undefined, value);
  }
  const { secrets } = collectSecrets(ENV);
  assert.deepEqual(
    secrets.filter((s) => s.name === "FEED_URL").map((s) => s.value),
    [ENV.FEED_URL, "Fe3dT0kenAbC%2F99", "Fe3dT0kenAbC/99"],
  );
});
