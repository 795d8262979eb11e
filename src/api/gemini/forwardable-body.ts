/**
 * Whether a client's JSON text may go upstream as it is. It may when it says exactly what the
 * parsed body the gateway validated and billed says. The one way JSON text says more is a key given
 * twice in one object: the gateway's parser keeps the last, another parser may keep the first, and
 * a `generationConfig` or a `fileData` part the gateway never saw could reach the upstream. Text
 * with a repeated key is therefore never forwarded: the parsed body is serialised instead.
 */

const QUOTE = 34;
const COLON = 58;

function isJsonSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** Whether the quote at `at` is preceded by an odd number of backslashes (after `from`). */
function isEscaped(text: string, at: number, from: number): boolean {
  let backslashes = 0;
  for (let k = at - 1; k > from && text.charCodeAt(k) === 92; k--) backslashes++;
  return backslashes % 2 === 1;
}

/** Keys in valid JSON text (strings followed by a colon), by a linear scan jumping over strings. */
export function keysInJsonText(text: string): number {
  let keys = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) !== QUOTE) continue;
    let end = text.indexOf('"', i + 1);
    while (end !== -1 && isEscaped(text, end, i)) end = text.indexOf('"', end + 1);
    if (end === -1) return keys;
    let next = end + 1;
    while (next < text.length && isJsonSpace(text.charCodeAt(next))) next++;
    if (text.charCodeAt(next) === COLON) keys++;
    i = end;
  }
  return keys;
}

/** Own keys of every object in a parsed JSON value, walked with its own stack. */
export function keysInValue(value: unknown): number {
  let keys = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (const item of node) if (item !== null && typeof item === "object") stack.push(item);
    } else if (node !== null && typeof node === "object") {
      for (const key in node) {
        keys++;
        const child = (node as Record<string, unknown>)[key];
        if (child !== null && typeof child === "object") stack.push(child);
      }
    }
  }
  return keys;
}

/** `text` when it may be sent upstream in place of `value` (no key repeated), else undefined. */
export function forwardableText(text: string | undefined, value: unknown): string | undefined {
  if (text === undefined) return undefined;
  return keysInJsonText(text) === keysInValue(value) ? text : undefined;
}
