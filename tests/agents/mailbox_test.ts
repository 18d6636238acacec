import assert from "node:assert/strict";
import { join } from "node:path";
import { mailText, sendMail, takeMail } from "../../lib/agents/mailbox.ts";
import { tempDir } from "../helpers.ts";

Deno.test("sendMail() writes one JSON file by rename; takeMail() gives them in order, once", async () => {
  await using dir = await tempDir();
  const first = sendMail(dir.path, "child-a", "parent-1", "one");
  const second = sendMail(dir.path, "child-b", "parent-1", "two");
  assert.ok(first < second);
  assert.deepEqual(JSON.parse(Deno.readTextFileSync(first)).text, "one");
  // A half-written message (a temp file) and a bad file are not delivered.
  Deno.writeTextFileSync(join(dir.path, "parent-1", ".x.tmp"), '{"from":');
  Deno.writeTextFileSync(join(dir.path, "parent-1", "zz.json"), "not json");
  const warnings: string[] = [];
  const mail = takeMail(dir.path, "parent-1", (m) => warnings.push(m));
  assert.deepEqual(mail.map((m) => [m.from, m.text]), [["child-a", "one"], ["child-b", "two"]]);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /zz\.json: not a message .*moved to bad\//);
  assert.deepEqual(takeMail(dir.path, "parent-1", () => {}), []);
  assert.equal([...Deno.readDirSync(join(dir.path, "parent-1", "delivered"))].length, 2);
  assert.equal(mailText(mail[0]), "[mail from child-a]\none");
  assert.throws(() => sendMail(dir.path, "a", "../x", "t"), /Cannot send mail to "\.\.\/x"/);
});
