import { describe, expect, it } from "vitest";
import { ChatAccount } from "./account.js";
import { answerAsEvents } from "./answer-events.js";
import type { ChatAnswer, ChatEvent } from "./canonical.js";

const answer: ChatAnswer = {
  id: "a",
  model: "m",
  choices: [{ index: 0, text: "42", reasoning: "six times seven", toolCalls: [], finishReason: "stop" }],
  usage: null,
};

describe("reasoning in a chat answer's account", () => {
  it("counts the reasoning produced as output, streamed or whole, when no usage is reported", async () => {
    const streamed = new ChatAccount();
    const events: ChatEvent[] = [];
    for await (const event of answerAsEvents(answer)) {
      events.push(event);
      streamed.observe(event);
    }
    expect(events.map((e) => e.type)).toEqual(["start", "reasoning", "text", "finish"]);
    expect(events[1]).toEqual({ type: "reasoning", choice: 0, text: "six times seven" });
    const whole = new ChatAccount();
    whole.observeAnswer(answer);
    expect(streamed.textChars).toBe("six times seven42".length);
    expect(whole.textChars).toBe(streamed.textChars);
    expect(streamed.complete).toBe(true);
  });
});
