// Numbers across the module boundary without silent loss.
//
// The engine's numbers are decimals (FEEL's decimal128): 0.1 + 0.2 is 0.3,
// 12345678901234567890 keeps every digit. The module writes each number as
// JSON text, in full. A JavaScript number is a double, so here a number
// arrives as a `number` when the double holds its exact value (0.3, 1005,
// 2.5, every integer up to 2^53) and as a `Decimal` holding its exact text
// otherwise (1/3 at 34 digits, 12345678901234567890). A `Decimal` or a
// `bigint` in a request is sent as that exact JSON number, so a value read
// from the engine goes back to it unchanged.

/** JSON's number grammar. */
const jsonNumber = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * Decimal is a number the engine holds exactly and a JavaScript `number`
 * cannot: its `text` is the exact decimal as JSON writes it. Numeric
 * coercion (`+d`, `d * 2`, `Number(d)`) gives the nearest double; `toString`
 * and `toJSON` the exact text; `toBigInt` the integer, when it is one.
 * Sent back to the engine in variables, it is the same number.
 */
export class Decimal {
  /** The exact value as JSON number text, e.g. "12345678901234567890". */
  readonly text: string;

  constructor(text: string) {
    if (typeof text !== 'string' || !jsonNumber.test(text)) {
      throw new TypeError(`flowtrack: Decimal: ${JSON.stringify(text)} is not a JSON number`);
    }
    this.text = text;
  }

  /** The exact text. */
  toString(): string {
    return this.text;
  }

  /** The nearest double, for arithmetic and comparisons. */
  valueOf(): number {
    return Number(this.text);
  }

  /** The exact text: JSON.stringify outside the SDK writes it as a string. */
  toJSON(): string {
    return this.text;
  }

  /** The value as a bigint; throws RangeError when it is not an integer. */
  toBigInt(): bigint {
    const { digits, exp, negative } = decompose(this.text);
    if (exp < 0) throw new RangeError(`flowtrack: Decimal ${this.text} is not an integer`);
    const n = BigInt(digits + '0'.repeat(exp));
    return negative ? -n : n;
  }
}

/** decompose reads number text as sign, significant digits and exponent. */
function decompose(text: string): { negative: boolean; digits: string; exp: number } {
  let s = text;
  const negative = s.startsWith('-');
  if (negative) s = s.slice(1);
  let exp = 0;
  const e = s.search(/[eE]/);
  if (e >= 0) {
    exp = Number(s.slice(e + 1));
    s = s.slice(0, e);
  }
  const dot = s.indexOf('.');
  if (dot >= 0) {
    exp -= s.length - dot - 1;
    s = s.slice(0, dot) + s.slice(dot + 1);
  }
  s = s.replace(/^0+/, '');
  const trimmed = s.replace(/0+$/, '');
  exp += s.length - trimmed.length;
  return trimmed === '' ? { negative: false, digits: '0', exp: 0 } : { negative, digits: trimmed, exp };
}

/** exactNumber returns the number JSON text denotes: a number when a double holds it exactly, else a Decimal. */
export function exactNumber(text: string): number | Decimal {
  const n = Number(text);
  if (text.length <= 15 && !/[eE]/.test(text)) return n; // at most 15 digits: a double holds them

  if (Number.isFinite(n)) {
    const a = decompose(text);
    const b = decompose(String(n));
    if (a.digits === b.digits && a.exp === b.exp && a.negative === b.negative) return n;
  }
  return new Decimal(text);
}

// A response can hold a number no double holds only where the text has 16
// digits in a row or an exponent; anything else JSON.parse reads exactly.
const mayBeInexact = /[0-9](?:[eE]|[0-9]{15})/;

/**
 * parseJSON is JSON.parse, except that a number no double holds exactly
 * becomes a Decimal. Text without a long digit run or an exponent takes
 * JSON.parse itself.
 */
export function parseJSON(text: string): unknown {
  if (!mayBeInexact.test(text)) return JSON.parse(text);
  const p = new Parser(text);
  const v = p.value();
  p.end();
  return v;
}

// A literal or a number at the parser's position (sticky).
const scalar = /true|false|null|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

// Characters JSON text may not hold raw inside a string.
const controls = /[\u0000-\u001f]/;

/** Parser reads JSON the module wrote (valid, as JSON.parse checks on the way). */
class Parser {
  #i = 0;
  constructor(private readonly s: string) {}

  value(): unknown {
    this.#ws();
    const c = this.s[this.#i];
    if (c === '{') {
      this.#i++;
      const out: Record<string, unknown> = {};
      this.#ws();
      if (this.s[this.#i] === '}') {
        this.#i++;
        return out;
      }
      for (;;) {
        this.#ws();
        const k = this.#string();
        this.#ws();
        this.#expect(':');
        const v = this.value();
        // Like JSON.parse: an own property even for "__proto__".
        if (k === '__proto__') Object.defineProperty(out, k, { value: v, writable: true, enumerable: true, configurable: true });
        else out[k] = v;
        this.#ws();
        if (this.s[this.#i] === ',') {
          this.#i++;
          continue;
        }
        this.#expect('}');
        return out;
      }
    }
    if (c === '[') {
      this.#i++;
      const out: unknown[] = [];
      this.#ws();
      if (this.s[this.#i] === ']') {
        this.#i++;
        return out;
      }
      for (;;) {
        out.push(this.value());
        this.#ws();
        if (this.s[this.#i] === ',') {
          this.#i++;
          continue;
        }
        this.#expect(']');
        return out;
      }
    }
    if (c === '"') return this.#string();
    scalar.lastIndex = this.#i;
    const m = scalar.exec(this.s);
    if (!m) throw new SyntaxError(`JSON: unexpected ${c === undefined ? 'end' : JSON.stringify(c)} at ${this.#i}`);
    this.#i += m[0].length;
    switch (m[0]) {
      case 'true':
        return true;
      case 'false':
        return false;
      case 'null':
        return null;
    }
    return exactNumber(m[0]);
  }

  end(): void {
    this.#ws();
    if (this.#i !== this.s.length) throw new SyntaxError(`JSON: data after the value at ${this.#i}`);
  }

  #string(): string {
    const start = this.#i;
    if (this.s[start] !== '"') throw new SyntaxError(`JSON: expected a string at ${start}`);
    let i = start + 1;
    for (;;) {
      const q = this.s.indexOf('"', i);
      if (q < 0) throw new SyntaxError(`JSON: unterminated string at ${start}`);
      let backslashes = 0;
      for (let j = q - 1; this.s[j] === '\\'; j--) backslashes++;
      i = q + 1;
      if (backslashes % 2 === 0) break;
    }
    this.#i = i;
    const raw = this.s.slice(start + 1, i - 1);
    if (!raw.includes('\\') && !controls.test(raw)) return raw;
    return JSON.parse(this.s.slice(start, i)) as string; // escapes (and errors) exactly as JSON.parse has them
  }

  #ws(): void {
    for (let c = this.s.charCodeAt(this.#i); c === 32 || c === 9 || c === 10 || c === 13; c = this.s.charCodeAt(++this.#i));
  }

  #expect(c: string): void {
    if (this.s[this.#i] !== c) throw new SyntaxError(`JSON: expected ${JSON.stringify(c)} at ${this.#i}`);
    this.#i++;
  }
}

// A Decimal or bigint is written as a string marked with this process's
// random tag, then the marked strings are replaced by the bare number.
const tag = `\u0000flowtrack-number-${Math.random().toString(36).slice(2)}:`;
const tagged = new RegExp(`"${JSON.stringify(tag).slice(1, -1).replace(/\\/g, '\\\\')}(-?[0-9.eE+]+)"`, 'g');

/**
 * stringifyJSON is JSON.stringify, except that a Decimal or a bigint is
 * written as its exact JSON number. onObject, if given, sees every object
 * and array on the way.
 */
export function stringifyJSON(value: unknown, onObject?: (o: object) => void): string {
  let marked = false;
  const text = JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
    const raw = this[key]; // before toJSON
    if (onObject && raw !== null && typeof raw === 'object') onObject(raw);
    if (raw instanceof Decimal) {
      marked = true;
      return tag + raw.text;
    }
    if (typeof v === 'bigint') {
      marked = true;
      return tag + v.toString();
    }
    return v;
  });
  return marked ? text.replace(tagged, '$1') : text;
}

// Characters the engine's JSON writer (Go's encoding/json) escapes inside
// strings and JSON.stringify writes raw. JSON text holds them only inside
// strings, so replacing them anywhere in the text escapes exactly those.
const goEscaped = /[<>&\u2028\u2029]/g;

// An array index: JavaScript puts such keys first in an object, in numeric
// order, whatever order they were written in.
const arrayIndex = /^(?:0|[1-9][0-9]{0,9})$/;
const isIndex = (k: string): boolean => arrayIndex.test(k) && Number(k) < 4294967295;

/**
 * stringifyDocument is stringifyJSON writing a document read from the
 * module as the module wrote it: strings escaped as Go's encoding/json
 * escapes them (`<`, `>`, `&`, U+2028 and U+2029 as \u escapes), and the
 * keys of an object JavaScript reordered (a map with keys like "10" and
 * "2", which Go writes sorted byte-wise) sorted again. A state document
 * read and written here is then the very bytes every other host writes.
 */
export function stringifyDocument(value: unknown): string {
  let reordered = false;
  const text = stringifyJSON(value, (o) => {
    if (Array.isArray(o)) return;
    for (const k in o) {
      reordered ||= isIndex(k); // index keys come first, if any
      break;
    }
  });
  return (reordered ? writeSorted(value) : text).replace(goEscaped, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// writeSorted writes v as stringifyJSON does, except that an object with an
// array-index key has all its keys in code point (UTF-8 byte) order.
function writeSorted(v: unknown): string {
  if (v instanceof Decimal) return v.text;
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : writeSorted(x))).join(',')}]`;
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined);
  if (keys.length > 0 && isIndex(keys[0]!)) keys.sort(byCodePoint);
  return `{${keys.map((k) => `${JSON.stringify(k)}:${writeSorted(o[k])}`).join(',')}}`;
}

// byCodePoint orders strings by code point, which is UTF-8 byte order
// (Go's), where < on UTF-16 code units is not.
function byCodePoint(a: string, b: string): number {
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(j)!;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}
