/**
 * Private keys by content (SPEC S2.3), for keys whose marker lines were dropped or altered
 * (`sed 1d key.pem`, `tr -d -`, a space in the BEGIN line) or that were printed in another
 * form:
 *
 * - a run of base64 (on one line, or wrapped into lines of 16–128 characters, each full line
 *   as long as the first, joined by line breaks, indentation or single spaces) whose first
 *   bytes are those of a DER private key — PKCS#1 `RSAPrivateKey` (and DSA's), PKCS#8
 *   `PrivateKeyInfo` (v1 and v2), `EncryptedPrivateKeyInfo` (PBES2 / PKCS#12 PBE) or SEC1
 *   `ECPrivateKey` — or of an OpenSSH key (`openssh-key-v1\0`);
 * - the same DER as a run of hex digits (`xxd -p`, `od -An -tx1 | tr -d ' \n'`);
 * - the hex-colon dumps of `openssl pkey/rsa/ec/dsa -text`: every `xx:xx:…` line of a section
 *   that a `Private-Key:` line or a private field (`priv:`, `privateExponent:`, `prime1:`, …)
 *   opens, up to the first line that is neither such a line nor a field name.
 *
 * The whole run becomes `$PRIVATE_KEY` (one for a run, one a line for a dump). Public keys,
 * certificates, CSRs, PKCS#7 and PKCS#12 files start otherwise and stay.
 *
 * @module
 */
import { Buffer } from "node:buffer";

/** What key material is replaced by (as in `private_keys.ts`). */
const PRIVATE_KEY = "$PRIVATE_KEY";

/** Base64 characters a run is made of (standard alphabet and padding). */
const B64 = new Uint8Array(256);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") {
  B64[c.charCodeAt(0)] = 1;
}
/** Hex digits. */
const HEX = new Uint8Array(256);
for (const c of "0123456789abcdefABCDEF") HEX[c.charCodeAt(0)] = 1;

/** The characters a run is looked at for: 24 of base64 or 36 hex digits (18 bytes). */
const B64_PREFIX = 24;
const HEX_PREFIX = 36;

/**
 * Where a run could start: a base64 `M` (a DER SEQUENCE, 0x30) or OpenSSH's magic, or hex
 * `30`, with no base64 character before it.
 */
const CANDIDATE =
  /(?<![A-Za-z0-9+/])(?:M[A-Za-z0-9+/]{23}|b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]{5}|30[0-9A-Fa-f]{34})/g;

/** A wrapped run's lines are this wide at least and at most (PEM 64, OpenSSH 70, base64 76). */
const MIN_WIDTH = 16;
const MAX_WIDTH = 128;

/** OIDs of password-based encryption: PKCS#5 (1.2.840.113549.1.5) and PKCS#12 (…1.12). */
const PBE_OID = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01];

/**
 * Whether `b` (at least 18 bytes) starts a DER private key: see the module comment.
 */
export function derPrivateKeyStart(b: Uint8Array): boolean {
  if (b.length >= 15 && Buffer.from(b.subarray(0, 15)).toString("latin1") === "openssh-key-v1\0") {
    return true;
  }
  if (b[0] !== 0x30) return false;
  let i = lengthEnd(b, 1);
  if (i < 0) return false;
  if (b[i] === 0x02 && b[i + 1] === 0x01) {
    const version = b[i + 2];
    const next = b[i + 3];
    // RSA/DSA (v0, then an INTEGER), PKCS#8 (v0/v1, then an AlgorithmIdentifier), SEC1 (v1,
    // then the key's OCTET STRING).
    return (version === 0 && (next === 0x02 || next === 0x30)) ||
      (version === 1 && (next === 0x30 || next === 0x04));
  }
  if (b[i] !== 0x30) return false;
  i = lengthEnd(b, i + 1);
  if (i < 0 || b[i] !== 0x06 || b[i + 1] < PBE_OID.length + 1) return false;
  for (let k = 0; k < PBE_OID.length; k++) if (b[i + 2 + k] !== PBE_OID[k]) return false;
  const arc = b[i + 2 + PBE_OID.length];
  return arc === 0x05 || arc === 0x0c;
}

/** The offset after a DER length that starts at `at` (short or 1–3 bytes long), or -1. */
function lengthEnd(b: Uint8Array, at: number): number {
  const first = b[at];
  if (first < 0x80) return at + 1;
  if (first >= 0x81 && first <= 0x83) return at + 1 + (first - 0x80);
  return -1;
}

/** Whether the run that starts with `text` (a candidate) is a private key's. */
function isKeyRun(text: string): boolean {
  const bytes = text.startsWith("30")
    ? Buffer.from(text.slice(0, HEX_PREFIX), "hex")
    : Buffer.from(text.slice(0, B64_PREFIX), "base64");
  return derPrivateKeyStart(bytes);
}

/** The magic of an OpenSSH key in base64 (`openssh-key-v1`). */
const OPENSSH = "b3BlbnNzaC1rZXktdjE";

/** Whether a run at the end of the text, too short to tell, may still become a candidate. */
function mayStart(tail: string): boolean {
  if (tail.length === 0 || tail.length >= HEX_PREFIX) return false;
  return tail[0] === "M" || OPENSSH.startsWith(tail) || tail.startsWith(OPENSSH) ||
    /^3(?:0[0-9A-Fa-f]*)?$/.test(tail);
}

/** A run being masked: its alphabet, the width of its first line, the current line's length. */
interface Run {
  alphabet: Uint8Array;
  width: number;
  line: number;
}

/**
 * The length of a separator between a wrapped run's lines at `at` — a line break (real, or
 * JSON's `\n` escape) with the line's prefix after it (indentation, a line number and its
 * tab, colon or dash as `cat -n`, `nl` and `grep -n` print it, `> ` quote marks), or one
 * space, tab or comma (`paste -sd,`) — 0 if there is none, or -1 if the text ends before it can
 * be told (and more may come).
 */
function separatorAt(text: string, at: number, final: boolean): number {
  let i = at;
  const c = text.charCodeAt(i);
  if (c === 32 || c === 9 || c === 44) {
    i++;
    if (c === 44 && text.charCodeAt(i) === 32) i++;
  } else {
    if (c === 92 && text.charCodeAt(i + 1) === 114) i += 2; // `\r`
    if (text.charCodeAt(i) === 13) i++;
    if (text.charCodeAt(i) === 10) i++;
    else if (text.charCodeAt(i) === 92 && text.charCodeAt(i + 1) === 110) i += 2; // `\n`
    else {
      const open = i === text.length || (i === text.length - 1 && text.charCodeAt(i) === 92);
      return open && !final ? -1 : 0;
    }
    i = linePrefixEnd(text, i);
  }
  return i === text.length && !final ? -1 : i - at;
}

/**
 * Where the prefix of the line starting at `at` ends: indentation, then a line number with its
 * tab, colon or dash (or space), then `>` quote marks, each with the spaces after it.
 */
export function linePrefixEnd(text: string, at: number): number {
  const blanks = (k: number) => {
    while (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 9) k++;
    return k;
  };
  let i = blanks(at);
  let d = i;
  while (d < text.length && d - i < 10 && text.charCodeAt(d) >= 48 && text.charCodeAt(d) <= 57) d++;
  const after = text.charCodeAt(d);
  if (d > i && (after === 9 || after === 58 || after === 45 || after === 32)) i = blanks(d + 1);
  else if (d === text.length) return d;
  while (text.charCodeAt(i) === 62) i = blanks(i + 1);
  return i;
}

/** Masks base64 and hex runs of key material in a stream; see the module comment. */
class RunStream {
  #carry = "";
  /** Whether the character before the carry is of base64's alphabet. */
  #afterAlpha = false;
  #run: Run | undefined;

  push(chunk: string, final = false): string {
    const text = this.#carry + chunk;
    const n = text.length;
    let out = "";
    let i = 0;
    let hold = n;
    for (;;) {
      const run = this.#run;
      if (run) {
        let j = i;
        while (j < n && run.alphabet[text.charCodeAt(j)] === 1) j++;
        run.line += j - i;
        i = j;
        if (i === n) break;
        if (run.width < 0) run.width = run.line;
        const sep = separatorAt(text, i, final);
        if (sep < 0) {
          hold = i;
          break;
        }
        const wrapped = run.width >= MIN_WIDTH && run.width <= MAX_WIDTH &&
          run.line === run.width;
        if (sep > 0 && wrapped && run.alphabet[text.charCodeAt(i + sep)] === 1) {
          i += sep;
          run.line = 0;
          continue;
        }
        this.#run = undefined;
        continue;
      }
      if (i >= n) break;
      CANDIDATE.lastIndex = i;
      let m = CANDIDATE.exec(text);
      while (m && m.index === 0 && this.#afterAlpha) m = CANDIDATE.exec(text);
      if (!m) {
        // A run at the end shorter than a candidate may still become one.
        let start = n;
        while (start > i && B64[text.charCodeAt(start - 1)] === 1) start--;
        const tail = text.slice(start);
        if (!final && !(start === 0 && this.#afterAlpha) && mayStart(tail)) hold = start;
        out += text.slice(i, hold);
        i = hold;
        break;
      }
      if (!isKeyRun(m[0])) {
        out += text.slice(i, m.index + 1);
        i = m.index + 1;
        continue;
      }
      out += text.slice(i, m.index) + PRIVATE_KEY;
      this.#run = { alphabet: m[0].startsWith("30") ? HEX : B64, width: -1, line: 0 };
      i = m.index;
    }
    if (final) this.#run = undefined;
    const kept = text.slice(Math.min(i, hold));
    const released = text.slice(0, n - kept.length);
    if (released.length > 0) {
      const last = released.charCodeAt(released.length - 1);
      this.#afterAlpha = B64[last] === 1 && last !== 61;
    }
    this.#carry = final ? "" : kept;
    return final ? out + kept : out;
  }
}

/** A line that opens a private key's `-text` dump. */
const OPENS =
  /(?:^|[ \t])Private-Key:|^[ \t]*(?:priv|private-key|privateExponent|prime[12]|exponent[12]|coefficient):[ \t]*$/i;
/** A line of a dump's hex bytes. */
const HEX_LINE = /^([ \t]+)(?:[0-9a-fA-F]{2}:)*[0-9a-fA-F]{2}:?[ \t]*$/;
/** A field's name in a dump (`modulus:`, `publicExponent: 65537 (0x10001)`, `ASN1 OID: …`). */
const FIELD = /^[ \t]*[A-Za-z][A-Za-z0-9 -]{0,40}:/;
/** Lines longer than this are never part of a dump. */
const MAX_LINE = 256;

/** What a text holds if a line of it may open a dump (a quick test). */
const MAY_OPEN = /(?:rivate-[Kk]ey|priv|Exponent|prime[12]|exponent[12]|coefficient):/;
const MAY_OPEN_ALL = new RegExp(MAY_OPEN.source, "g");

/**
 * Masks the hex lines of `openssl … -text` dumps of private keys in a stream. Only the start
 * of a line that could be a dump's hex line, inside a dump, is held back; other text goes at
 * once (a model's answer streams unchanged).
 */
class DumpStream {
  /** The released start of the current line (at most MAX_LINE + 1 characters of it). */
  #line = "";
  /** The held start of the current line: it may be a hex line of a dump. */
  #held = "";
  #inside = false;

  push(chunk: string, final = false): string {
    const text = this.#held + chunk;
    this.#held = "";
    // The line begun in an earlier chunk is tested whole, with its end from this one.
    const joined = this.#line === ""
      ? ""
      : this.#line + text.slice(0, text.indexOf("\n") + 1 || text.length);
    const may = (t: string) => t.includes(":") && MAY_OPEN.test(t);
    if (!this.#inside && !may(text) && !may(joined)) {
      const last = text.lastIndexOf("\n");
      this.#line = (last < 0 ? this.#line + text : text.slice(last + 1)).slice(0, MAX_LINE + 1);
      return text;
    }
    let out = "";
    let pos = 0;
    while (pos < text.length) {
      if (!this.#inside && this.#line === "") {
        // Outside a dump, the lines before the next that may open one go at once.
        MAY_OPEN_ALL.lastIndex = pos;
        const next = MAY_OPEN_ALL.exec(text);
        if (!next) {
          const last = text.lastIndexOf("\n");
          this.#line = (last >= pos ? text.slice(last + 1) : text.slice(pos)).slice(
            0,
            MAX_LINE + 1,
          );
          return out + text.slice(pos);
        }
        const start = text.lastIndexOf("\n", next.index) + 1;
        if (start > pos) {
          out += text.slice(pos, start);
          pos = start;
        }
      }
      const nl = text.indexOf("\n", pos);
      if (nl < 0) {
        const rest = text.slice(pos);
        const hexLike = this.#inside && this.#line === "" && rest.length <= MAX_LINE &&
          /^[ \t]*[0-9a-fA-F:]*\r?$/.test(rest);
        if (hexLike && !final) {
          this.#held = rest;
          return out;
        }
        if (hexLike && HEX_LINE.test(rest)) return out + this.#masked(rest, rest);
        this.#line = (this.#line + rest).slice(0, MAX_LINE + 1);
        return out + rest;
      }
      const piece = text.slice(pos, nl + 1);
      const bare = (this.#line + piece).replace(/\r?\n$/, "");
      const started = this.#line !== "";
      this.#line = "";
      pos = nl + 1;
      if (bare.length > MAX_LINE) this.#inside = false;
      else if (OPENS.test(bare)) this.#inside = true;
      else if (this.#inside && !started && HEX_LINE.test(bare)) {
        out += this.#masked(piece, bare);
        continue;
      } else if (!(this.#inside && FIELD.test(bare))) this.#inside = false;
      out += piece;
    }
    return out;
  }

  /** A hex line (`bare`, without its line break) as its indentation and PRIVATE_KEY. */
  #masked(piece: string, bare: string): string {
    return HEX_LINE.exec(bare)![1] + PRIVATE_KEY + piece.slice(bare.length);
  }
}

/** Key material by content over a stream: `push` returns what is safe to release. */
export class KeyMaterialStream {
  readonly #runs = new RunStream();
  readonly #dumps = new DumpStream();

  push(chunk: string): string {
    return this.#dumps.push(this.#runs.push(chunk));
  }

  end(): string {
    return this.#dumps.push(this.#runs.push("", true), true);
  }
}

/** `text` with key material (see the module comment) replaced by `$PRIVATE_KEY`. */
export function maskKeyMaterial(text: string): string {
  const s = new KeyMaterialStream();
  return s.push(text) + s.end();
}
