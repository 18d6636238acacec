/**
 * `magi policy explain` says what the door and the file builtins decide for a hidden path (a
 * credential store under HOME): deny, with the reason, where the rules alone say allow.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { magi, tempDir } from "../helpers.ts";

Deno.test({
  name: "magi policy explain denies a credential store the file builtins refuse as hidden",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using dir = await tempDir();
    const base = await Deno.realPath(dir.path);
    const home = join(base, "home");
    await Deno.mkdir(join(home, ".aws"), { recursive: true });
    await Deno.writeTextFile(join(home, ".aws", "credentials"), "[default]\nkey = k\n");
    await Deno.writeTextFile(join(home, "notes.txt"), "hi\n");
    const opts = {
      cwd: home,
      home,
      env: {
        HOME: home,
        XDG_CONFIG_HOME: join(home, ".config"),
        XDG_STATE_HOME: join(home, ".local", "state"),
        XDG_CACHE_HOME: join(home, ".cache"),
      },
    };
    const explain = await magi(
      ["policy", "explain", "read", '{"path":".aws/credentials"}'],
      opts,
    );
    assert.equal(explain.code, 0, explain.stderr);
    assert.match(
      explain.stdout,
      /^deny by no rule: hidden: a credential store \("\.aws\/credentials"\)$/m,
    );
    assert.match(explain.stdout, /^a model's call: deny \(hidden: a credential store/m);
    const json = await magi(
      ["policy", "explain", "read", '{"path":".aws/credentials"}', "--json"],
      opts,
    );
    const parsed = JSON.parse(json.stdout);
    assert.equal(parsed.decision, "deny");
    assert.equal(parsed.door.decision, "deny");
    // What the builtin itself then does: refuses it, for the same reason.
    const call = await magi(["call", "read", '{"path":".aws/credentials"}'], opts);
    assert.match(call.stdout + call.stderr, /a credential store, hidden from tools/);
    // A path beside it is still what the rules say.
    const plain = await magi(["policy", "explain", "read", '{"path":"notes.txt"}'], opts);
    assert.match(plain.stdout, /^allow /m, plain.stdout);
  },
});
