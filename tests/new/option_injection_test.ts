import assert from "node:assert/strict";
import { join } from "node:path";
import { parseHelp } from "../../lib/scaffold/help_parse.ts";
import { schemaFromModel } from "../../lib/scaffold/schema_gen.ts";
import { argumentsProblem } from "../../lib/core/json_schema.ts";
import { TESTDATA } from "../helpers.ts";

Deno.test("a generated tool refuses positional values that would be read as options", async () => {
  const text = await Deno.readTextFile(join(TESTDATA, "new", "corpus", "tar.txt"));
  const { schema } = schemaFromModel(parseHelp(text, ["tar"]));
  const attack = {
    create: true,
    file: "o.tar",
    files: ["f1", "--checkpoint=1", "--checkpoint-action=exec=touch /tmp/pwned"],
  };
  assert.match(argumentsProblem(schema, attack) ?? "", /^field "files\.1" must match pattern/);
  assert.equal(
    argumentsProblem(schema, { create: true, file: "o.tar", files: ["f1", "./-odd"] }),
    null,
  );
});
