/**
 * A tolerant server-sent-events decoder: lines may end in `\n`, `\r` or `\r\n`; comment lines
 * (`: ping`) and fields other than `data` are skipped; text may be cut anywhere between two
 * pushes, even inside a line or between the `\r` and `\n` of one line ending.
 */
export class SseEventDecoder {
  private buffer = "";
  /** Where the scan for the next line ending resumes (nothing before it holds one). */
  private scanned = 0;
  private data: string[] = [];

  /** Adds text; returns the `data` of every event completed by it. */
  push(text: string): string[] {
    this.buffer += text;
    const out: string[] = [];
    this.drain(out, false);
    return out;
  }

  /** The stream ended: a last line or event without its blank line still counts. */
  finish(): string[] {
    const out: string[] = [];
    this.drain(out, true);
    if (this.buffer !== "") this.line(this.buffer, out);
    this.buffer = "";
    this.scanned = 0;
    this.line("", out);
    return out;
  }

  /**
   * Hands on every complete line. The line endings are found with `indexOf` (native, far faster
   * than a loop over every character for an event of a few hundred bytes); the position of the
   * next `\r` and of the next `\n` are each searched again only once passed, so a stream with no
   * `\r` at all is searched for one once per push, not once per line.
   */
  private drain(out: string[], final: boolean): void {
    const buf = this.buffer;
    let start = 0;
    let from = this.scanned;
    let cr = buf.indexOf("\r", from);
    let lf = buf.indexOf("\n", from);
    for (;;) {
      if (cr !== -1 && cr < from) cr = buf.indexOf("\r", from);
      if (lf !== -1 && lf < from) lf = buf.indexOf("\n", from);
      const end = cr === -1 ? lf : lf === -1 || cr < lf ? cr : lf;
      if (end === -1) {
        from = buf.length;
        break;
      }
      // A `\r` at the very end may be the first half of `\r\n`: wait for the next push.
      if (end === cr && end + 1 === buf.length && !final) {
        from = end;
        break;
      }
      this.line(buf.slice(start, end), out);
      from = end === cr && lf === end + 1 ? end + 2 : end + 1;
      start = from;
    }
    this.buffer = start === 0 ? buf : buf.slice(start);
    this.scanned = from - start;
  }

  private line(line: string, out: string[]): void {
    if (line === "") {
      const data = this.data;
      if (data.length === 1) out.push(data[0] as string);
      else if (data.length > 1) out.push(data.join("\n"));
      if (data.length > 0) this.data = [];
      return;
    }
    // The usual line first: `data: <json>`.
    if (line.startsWith("data:")) {
      this.data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== "data") return;
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    this.data.push(value);
  }
}

/**
 * Whether a chunk's last character is whole: no UTF-8 sequence begun in its last bytes waits for
 * bytes of the next chunk. Looks back at most four bytes for the last byte that starts a sequence;
 * a chunk ending in continuation bytes only is taken as not whole (a decoder may hold them).
 */
export function endsWholeUtf8(bytes: Uint8Array): boolean {
  const n = bytes.length;
  for (let i = n - 1; i >= 0 && i >= n - 4; i--) {
    const b = bytes[i] as number;
    if ((b & 0xc0) === 0x80) continue;
    const length = b < 0xc2 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : b < 0xf5 ? 4 : 1;
    return i + length <= n;
  }
  return false;
}

/**
 * SseEventDecoder over bytes: UTF-8 decoded across chunk boundaries. Lets an adapter read its
 * upstream's body in its own loop, without one more async generator (and its promise per event)
 * between the socket and the client.
 *
 * A chunk that ends on a whole character, with nothing held from the one before, is decoded by
 * Buffer's own UTF-8 slice (about a sixth of a TextDecoder's time for an answer of a few KB, and
 * no decoder made for it); only a chunk cut inside a character, and the one after it, go through
 * the streaming TextDecoder. Both replace a malformed sequence alike. A byte order mark is dropped
 * at the start of the stream only, as a TextDecoder does (and as server-sent events ask).
 */
export class SseByteDecoder {
  private decoder: InstanceType<typeof TextDecoder> | null = null;
  /** The TextDecoder may hold the start of a character: the next chunk goes through it. */
  private held = false;
  private atStart = true;
  private readonly events = new SseEventDecoder();

  /** The `data` of every event completed by this chunk. */
  push(chunk: Uint8Array | string): string[] {
    if (typeof chunk === "string") return this.events.push(this.text(chunk));
    if (chunk.length === 0) return [];
    if (!this.held && endsWholeUtf8(chunk)) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      return this.events.push(this.text(bytes.toString("utf8")));
    }
    this.decoder ??= new TextDecoder("utf-8", { ignoreBOM: true });
    const text = this.decoder.decode(chunk, { stream: true });
    this.held = !endsWholeUtf8(chunk);
    return this.events.push(this.text(text));
  }

  /** The stream ended: the events still held. */
  finish(): string[] {
    const tail = this.held && this.decoder ? this.text(this.decoder.decode()) : "";
    this.held = false;
    const out = tail === "" ? [] : this.events.push(tail);
    out.push(...this.events.finish());
    return out;
  }

  /** The decoded text, without the byte order mark when it is the stream's first character. */
  private text(text: string): string {
    if (!this.atStart || text === "") return text;
    this.atStart = false;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
}

/** The `data` of each event of a byte stream, as soon as the event is complete. */
export async function* readSseEvents(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new SseByteDecoder();
  for await (const chunk of source) for (const data of decoder.push(chunk)) yield data;
  for (const data of decoder.finish()) yield data;
}
