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

  private drain(out: string[], final: boolean): void {
    const buf = this.buffer;
    let start = 0;
    let i = this.scanned;
    while (i < buf.length) {
      const c = buf.charCodeAt(i);
      if (c !== 10 && c !== 13) {
        i += 1;
        continue;
      }
      // A `\r` at the very end may be the first half of `\r\n`: wait for the next push.
      if (c === 13 && i + 1 === buf.length && !final) break;
      this.line(buf.slice(start, i), out);
      i += c === 13 && buf.charCodeAt(i + 1) === 10 ? 2 : 1;
      start = i;
    }
    this.buffer = buf.slice(start);
    this.scanned = i - start;
  }

  private line(line: string, out: string[]): void {
    if (line === "") {
      if (this.data.length > 0) out.push(this.data.join("\n"));
      this.data = [];
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
