import type { ReportedUsage } from "../token-usage.js";
import type { ChatAnswer, ChatEvent, ChatUsage } from "./canonical.js";

/**
 * What one chat answer has produced so far: the last usage the upstream reported, the output
 * text (reasoning and tool arguments included) seen, and whether every choice ended. Fits the content relay's
 * settlement rule (`settlementFor`).
 */
export class ChatAccount {
  reported: ChatUsage | null = null;
  chunks = 0;
  textChars = 0;
  private readonly open = new Set<number>();
  private finished = 0;

  get usage(): ReportedUsage | null {
    return this.reported;
  }

  /** Every choice that started has finished, and at least one did. */
  get complete(): boolean {
    return this.finished > 0 && this.open.size === 0;
  }

  observe(event: ChatEvent): void {
    this.chunks += 1;
    switch (event.type) {
      case "reasoning":
      case "text":
        this.open.add(event.choice);
        this.textChars += event.text.length;
        break;
      case "tool_call_start":
        this.open.add(event.choice);
        this.textChars += event.name.length;
        break;
      case "tool_call_delta":
        this.textChars += event.arguments.length;
        break;
      case "finish":
        this.open.delete(event.choice);
        this.finished += 1;
        break;
      case "usage":
        this.reported = event.usage;
        break;
      default:
        break;
    }
  }

  observeAnswer(answer: ChatAnswer): void {
    this.chunks += 1;
    this.finished += answer.choices.length;
    for (const choice of answer.choices) {
      this.textChars += choice.text.length + (choice.reasoning?.length ?? 0);
      for (const call of choice.toolCalls) this.textChars += call.name.length + call.arguments.length;
    }
    if (answer.usage) this.reported = answer.usage;
  }
}
