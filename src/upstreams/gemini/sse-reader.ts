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
 * SseEventDecoder over bytes: UTF-8 decoded across chunk boundaries. Lets an adapter read its
 * upstream's body in its own loop, without one more async generator (and its promise per event)
 * between the socket and the client.
 */
export class SseByteDecoder {
  private readonly decoder = new TextDecoder("utf-8");
  private readonly events = new SseEventDecoder();

  /** The `data` of every event completed by this chunk. */
  push(chunk: Uint8Array | string): string[] {
    return this.events.push(typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true }));
  }

  /** The stream ended: the events still held. */
  finish(): string[] {
    const tail = this.decoder.decode();
    const out = tail === "" ? [] : this.events.push(tail);
    out.push(...this.events.finish());
    return out;
  }
}

/** The `data` of each event of a byte stream, as soon as the event is complete. */
export async function* readSseEvents(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new SseByteDecoder();
  for await (const chunk of source) for (const data of decoder.push(chunk)) yield data;
  for (const data of decoder.finish()) yield data;
}
