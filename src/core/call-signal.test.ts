import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { callSignal, clientLeft, endsWithStop } from "./call-signal.js";

class Answer extends EventEmitter {
  writableFinished = false;
  finish() {
    this.writableFinished = true;
    this.emit("close");
  }
  cut() {
    this.emit("close");
  }
}

describe("a call's signal", () => {
  it("aborts when the client goes away before its answer is complete, not after a complete answer", () => {
    const cut = new Answer();
    const finished = new Answer();
    const a = callSignal(cut);
    const b = callSignal(finished);
    cut.cut();
    finished.finish();
    expect(a.aborted).toBe(true);
    expect(clientLeft(a)).toBe(true);
    expect(b.aborted).toBe(false);
    expect(clientLeft(b)).toBe(false);
  });

  it("of a stream aborts when the gateway stops, told apart from a client leaving; of a call that is no stream, it does not", () => {
    const stopping = new AbortController();
    const stream = callSignal(new Answer(), stopping.signal);
    const plain = callSignal(new Answer());
    expect(endsWithStop(stream, stopping.signal)).toBe(true);
    expect(endsWithStop(plain, stopping.signal)).toBe(false);
    stopping.abort();
    expect(stream.aborted).toBe(true);
    expect(clientLeft(stream)).toBe(false);
    expect(plain.aborted).toBe(false);
  });

  it("forgets a stream once its answer is closed, and is aborted at once when the gateway stops already", () => {
    const stopping = new AbortController();
    const answer = new Answer();
    const stream = callSignal(answer, stopping.signal);
    answer.finish();
    expect(endsWithStop(stream, stopping.signal)).toBe(false);
    stopping.abort();
    expect(stream.aborted).toBe(false);
    const late = callSignal(new Answer(), stopping.signal);
    expect(late.aborted).toBe(true);
    expect(clientLeft(late)).toBe(false);
  });
});
