/**
 * One wasmoon (Lua 5.4) engine for every declaration file: it loads the prelude, takes away
 * what a declaration must not reach (`os`, `io`, `package`, `debug`, `load`, `loadfile`,
 * `dofile`, `require`), loads files and runs one tool call at a time per Lua thread, with a
 * time limit (an instruction hook) and a memory cap (wasmoon's allocation tracing).
 *
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LuaEngine, LuaFactory, LuaGlobal } from "wasmoon";
import {
  type ExecDecision,
  type ExecJob,
  execLimits,
  type HostCall,
  HostCalls,
  hostFunctions,
} from "./host_api.ts";
import { HOOK_INSTRUCTIONS, PRELUDE, PRELUDE_NAME } from "./prelude.ts";

/**
 * The path of wasmoon's `glue.wasm`, beside its `dist/index.js` in `node_modules` (also inside
 * a `deno compile` binary, which embeds `node_modules`). wasmoon's own default is a CDN URL in
 * some contexts, which fails offline, so magi always passes this path.
 */
export function glueWasmPath(): string {
  return join(dirname(fileURLToPath(import.meta.resolve("wasmoon"))), "glue.wasm");
}

let factory: LuaFactory | undefined;
/** Lua's registry pseudo-index (wasmoon's `LUA_REGISTRYINDEX`), known once wasmoon is loaded. */
let LUA_REGISTRYINDEX = 0;

/** What loading one file gave. */
export interface LoadedFile {
  /** Why the whole file failed (syntax error, error while it ran, time limit). */
  error?: string;
  /** `file:line` of the failure, when known. */
  where?: string;
  decls: RawDeclaration[];
}

/** One `magi.tool` call as the prelude recorded it. */
export interface RawDeclaration {
  /** The engine's handle of the run function; absent when the call itself was unusable. */
  id?: number;
  name: unknown;
  /** Line of the `magi.tool` call. */
  line: number;
  /** Why the declaration is unusable, found on the Lua side. */
  problem?: string;
  /** description, needs, transport, program, argv, stdin, builtin, peer, tool. */
  spec?: Record<string, unknown>;
  has_run?: boolean;
}

/** How a call of a Lua body ended. */
export type RunReply =
  | { said: string; shown?: string; is_error?: boolean }
  | { ask: string; choices?: string[] }
  | { error: string; where?: string }
  | { timeout: true };

/** What one call of a body gets: a {@link HostCall} with a time limit instead of a deadline. */
export interface RunContext extends Omit<HostCall, "deadline"> {
  /** Milliseconds. */
  timeoutMs: number;
}

/** How to start the engine. */
export interface EngineOptions {
  /** The Lua heap's cap in bytes. */
  memoryBytes: number;
  /** Receives each line a declaration prints. */
  print: (line: string) => void;
}

interface Refs {
  load: number;
  dispatch: number;
  collect: number;
  timeout: number;
}

/** Lua's count-hook event mask (`LUA_MASKCOUNT`). */
const MASK_COUNT = 8;
/** A busy body gives magi's event loop a turn this often (milliseconds), when it can yield. */
const YIELD_EVERY_MS = 20;

const REMOVED = ["os", "io", "package", "debug", "load", "loadfile", "dofile", "require"];

/** The engine and the prelude's three entry points. */
export class LuaHost {
  readonly #engine: LuaEngine;
  readonly #calls: HostCalls;
  readonly #refs: Refs;
  readonly memoryBytes: number;

  private constructor(
    engine: LuaEngine,
    calls: HostCalls,
    refs: Refs,
    memoryBytes: number,
  ) {
    this.#engine = engine;
    this.#calls = calls;
    this.#refs = refs;
    this.memoryBytes = memoryBytes;
  }

  /**
   * Starts an engine: wasm module (shared by every engine of this process), state, prelude,
   * sandbox.
   *
   * @throws Error when wasmoon cannot start (its glue.wasm is missing, for instance)
   */
  static async start(opts: EngineOptions): Promise<LuaHost> {
    // Imported here, not at the top: magi pays for wasmoon only when a Lua body runs or a
    // declaration file is new.
    const wasmoon = await import("wasmoon");
    LUA_REGISTRYINDEX = wasmoon.LUA_REGISTRYINDEX;
    factory ??= new wasmoon.LuaFactory(glueWasmPath());
    const engine = await factory.createEngine({
      traceAllocations: true,
      enableProxy: false,
      injectObjects: false,
    });
    const g = engine.global;
    const calls = new HostCalls();
    const limits = execLimits(opts.memoryBytes);
    const pack = (...values: unknown[]) => wasmoon.LuaMultiReturn.of(...values);
    g.set("__magi_host", hostFunctions(calls, limits, opts.print, pack));
    g.loadString(PRELUDE, PRELUDE_NAME);
    g.assertOk(g.lua.lua_pcallk(g.address, 0, 4, 0, 0, null));
    const timeout = g.lua.luaL_ref(g.address, LUA_REGISTRYINDEX);
    const collect = g.lua.luaL_ref(g.address, LUA_REGISTRYINDEX);
    const dispatch = g.lua.luaL_ref(g.address, LUA_REGISTRYINDEX);
    const load = g.lua.luaL_ref(g.address, LUA_REGISTRYINDEX);
    g.loadString(REMOVED.join(", ") + " = nil", PRELUDE_NAME);
    g.assertOk(g.lua.lua_pcallk(g.address, 0, 0, 0, 0, null));
    g.setMemoryMax(opts.memoryBytes);
    return new LuaHost(engine, calls, { load, dispatch, collect, timeout }, opts.memoryBytes);
  }

  get #global(): LuaGlobal {
    return this.#engine.global;
  }

  /**
   * Runs one declaration file's text and returns the declarations it made. Never throws for
   * what the file does.
   *
   * @param path the file's path, used in error messages as `path:line`
   * @param timeoutMs how long the file's top-level code may run
   * @param judge decides each `magi.exec` the top-level code makes
   */
  loadFile(
    path: string,
    text: string,
    timeoutMs: number,
    judge?: (job: ExecJob) => Promise<ExecDecision>,
  ): LoadedFile {
    const g = this.#global;
    const top = g.getTop();
    const id = this.#calls.open({
      cwd: dirname(path),
      env: {},
      deadline: Date.now() + timeoutMs,
      judge,
    });
    try {
      g.lua.lua_rawgeti(g.address, LUA_REGISTRYINDEX, BigInt(this.#refs.load));
      g.pushValue(text);
      g.pushValue("@" + path);
      g.pushValue(id);
      g.assertOk(g.lua.lua_pcallk(g.address, 3, 1, 0, 0, null));
      const reply = JSON.parse(g.getValue(-1) as string);
      if (reply.timeout) {
        return { error: `its code ran past ${timeoutMs / 1000} s while loading`, decls: [] };
      }
      if (reply.error !== undefined) {
        return { error: this.#friendly(String(reply.error)), where: reply.where, decls: [] };
      }
      return { decls: reply.decls as RawDeclaration[] };
    } catch (error) {
      return { error: this.#friendly((error as Error).message), decls: [] };
    } finally {
      this.#calls.close(id);
      g.setTop(top);
      this.#collectIfFull();
    }
  }

  /**
   * Runs a declaration's `run(args)` in a Lua thread of its own. Never throws for what the
   * body does: errors, the time limit and the memory cap come back as a {@link RunReply}.
   */
  async run(declId: number, args: Record<string, unknown>, ctx: RunContext): Promise<RunReply> {
    const g = this.#global;
    const callId = this.#calls.open({
      cwd: ctx.cwd,
      env: ctx.env,
      deadline: Date.now() + ctx.timeoutMs,
      signal: ctx.signal,
      judge: ctx.judge,
    });
    const thread = g.newThread();
    const threadRef = g.lua.luaL_ref(g.address, LUA_REGISTRYINDEX);
    const hook = this.#hook(callId);
    let failed = true;
    try {
      thread.lua.lua_sethook(thread.address, hook, MASK_COUNT, HOOK_INSTRUCTIONS);
      thread.lua.lua_rawgeti(thread.address, LUA_REGISTRYINDEX, BigInt(this.#refs.dispatch));
      thread.pushValue(declId);
      thread.pushValue(callId);
      thread.pushValue(JSON.stringify(args));
      const values = await thread.run(3);
      const reply = JSON.parse(values[0] as string) as RunReply;
      if ("error" in reply) reply.error = this.#friendly(reply.error);
      failed = "error" in reply || "timeout" in reply;
      return reply;
    } catch (error) {
      return { error: this.#friendly((error as Error).message) };
    } finally {
      this.#calls.close(callId);
      thread.lua.lua_sethook(thread.address, null, 0, 0);
      thread.lua.module.removeFunction(hook);
      thread.close();
      g.lua.luaL_unref(g.address, LUA_REGISTRYINDEX, threadRef);
      if (failed) this.#collect();
      else this.#collectIfFull();
    }
  }

  /**
   * The count hook of a call's thread: past the deadline (or once cancelled) it raises the
   * time-limit error, which `pcall` in the body cannot keep; every {@link YIELD_EVERY_MS} it
   * yields the thread (where Lua allows) so timers, signals and other calls get a turn while a
   * body computes — that is how a cancellation reaches a busy body.
   *
   * @returns a function-table index for `lua_sethook`; remove it with `removeFunction`
   */
  #hook(callId: number): number {
    const lua = this.#global.lua;
    const calls = this.#calls;
    const timeoutRef = BigInt(this.#refs.timeout);
    let last = performance.now();
    return lua.module.addFunction((state: number) => {
      if (calls.expired(callId)) {
        lua.lua_rawgeti(state, LUA_REGISTRYINDEX, timeoutRef);
        lua.lua_error(state);
        return;
      }
      const now = performance.now();
      if (now - last >= YIELD_EVERY_MS && lua.lua_isyieldable(state)) {
        last = now;
        lua.lua_yieldk(state, 0, 0, null);
      }
    }, "vii");
  }

  /** Bytes the Lua heap uses now. */
  memoryUsed(): number {
    return this.#global.getMemoryUsed();
  }

  #friendly(message: string): string {
    if (message.startsWith("not enough memory")) {
      return `the Lua heap reached its cap of ${this.memoryBytes} bytes (config "limits.lua_memory_bytes")`;
    }
    return message;
  }

  #collectIfFull(): void {
    if (this.memoryUsed() > this.memoryBytes / 2) this.#collect();
  }

  #collect(): void {
    const g = this.#global;
    const top = g.getTop();
    try {
      g.lua.lua_rawgeti(g.address, LUA_REGISTRYINDEX, BigInt(this.#refs.collect));
      g.lua.lua_pcallk(g.address, 0, 0, 0, 0, null);
    } finally {
      g.setTop(top);
    }
  }
}
