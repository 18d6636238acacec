/**
 * `magi mcp login`'s loopback redirect listener takes only the redirect carrying its login's
 * `state`: real HTTP on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { listenForLogin } from "../../lib/cli/mcp_login_callback.ts";

const get = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
};

Deno.test({
  name: "listenForLogin() ignores a redirect without this login's state, takes the one with it",
  fn: async () => {
    const login = listenForLogin();
    try {
      assert.match(login.redirect, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      assert.match(login.state, /^[\w-]{43}$/);
      let settled = false;
      login.code.then(() => settled = true, () => settled = true);

      for (const query of ["code=evil", "code=evil&state=", "code=evil&state=wrong", "error=x"]) {
        const res = await get(`${login.redirect}?${query}`);
        assert.equal(res.status, 400, query);
        assert.match(res.text, /state does not match/);
      }
      assert.equal((await get(login.redirect.replace("/callback", "/other"))).status, 404);
      await Promise.resolve();
      assert.equal(settled, false, "a redirect with the wrong state finished the login");

      const state = encodeURIComponent(login.state);
      const ok = await get(`${login.redirect}?code=good&state=${state}`);
      assert.equal(ok.status, 200);
      assert.match(ok.text, /logged in/);
      assert.equal(await login.code, "good");
      assert.equal((await get(`${login.redirect}?code=again&state=${state}`)).status, 409);
    } finally {
      await login.close();
    }
  },
});

Deno.test("listenForLogin() ends the login when the right redirect carries an error", async () => {
  const login = listenForLogin();
  try {
    const res = await get(`${login.redirect}?error=access_denied&state=${login.state}`);
    assert.match(res.text, /login failed/);
    await assert.rejects(login.code, /the server refused the login: access_denied/);
  } finally {
    await login.close();
  }
});

Deno.test("listenForLogin() takes a new round's state after again(), and no longer the old", async () => {
  const login = listenForLogin();
  try {
    const first = login.state;
    await get(`${login.redirect}?code=one&state=${first}`);
    assert.equal(await login.code, "one");
    login.again();
    assert.notEqual(login.state, first);
    assert.equal((await get(`${login.redirect}?code=stale&state=${first}`)).status, 400);
    await get(`${login.redirect}?code=two&state=${login.state}`);
    assert.equal(await login.code, "two");
  } finally {
    await login.close();
  }
});
