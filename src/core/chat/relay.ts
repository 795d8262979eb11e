import { meterOnce } from "../metering/once.js";
import type { OpenedStream } from "../metering/ports.js";
import { meterStream } from "../metering/stream.js";
import { type TokenUsage, tokenUsage } from "../token-usage.js";
import { UpstreamError } from "../upstream-error.js";
import type { ChatAccount } from "./account.js";
import type { ChatAnswer, ChatEvent, ChatRequest } from "./canonical.js";
import { type ChatKind, chatKind } from "./chat-kind.js";
import type { ChatCall, ChatChannel, ChatClosingUsage, ChatRelayDeps, ChatSink } from "./ports.js";

// The chat surfaces' calls, run by the metered-call engine (core/metering/) with the chat kind
// (chat-kind.ts); each channel's call goes to the chat adapter of its protocol.

const kinds = new WeakMap<object, ChatKind<ChatChannel>>();

/** The chat kind of these deps, made once. */
function kindOf<C extends ChatChannel>(deps: ChatRelayDeps<C>): ChatKind<C> {
  let kind = kinds.get(deps) as ChatKind<C> | undefined;
  if (!kind) {
    kind = chatKind(deps);
    kinds.set(deps, kind as unknown as ChatKind<ChatChannel>);
  }
  return kind;
}

/** Usage as the client is told it: reported, else what was billed. */
function toldUsage(reported: ChatAnswer["usage"], billed: TokenUsage | null): ChatClosingUsage {
  return reported ?? billed ?? tokenUsage({});
}

/**
 * An upstream that answered fewer choices than the request's `n` did not answer what was asked
 * (a Gemini model may answer one candidate whatever `candidateCount` says): a failure of the
 * upstream (502), never a silently shorter answer.
 */
function fewerChoices(request: ChatRequest, answered: number): UpstreamError | null {
  // n = 1 is not checked: an answer without a choice is read as it always was.
  if (request.n === 1 || answered >= request.n) return null;
  return new UpstreamError("retryable", `the upstream answered ${answered} of the ${request.n} choices asked (n)`, {
    status: 502,
  });
}

/** A chat call answered at once: relayed with failover, billed from its reported usage. */
export async function completeChat<C extends ChatChannel>(deps: ChatRelayDeps<C>, call: ChatCall): Promise<ChatAnswer> {
  const { answer, usage } = await meterOnce(deps, kindOf(deps), call, async (channel, model, request, signal) => {
    const answer = await deps.upstreamFor(channel).complete(channel, model, request, signal);
    const short = fewerChoices(request, answer.choices.length);
    if (short) throw short;
    return answer;
  });
  // The answer with usage filled in from what was billed, when the upstream reported none.
  if (answer.usage || !usage) return answer;
  return { ...answer, usage: toldUsage(null, usage) };
}

/** The stream's events; a stream that ended with fewer finished choices than `n` ends in an error. */
async function* allChoices(request: ChatRequest, events: AsyncGenerator<ChatEvent>): AsyncGenerator<ChatEvent> {
  const finished = new Set<number>();
  for await (const event of events) {
    if (event.type === "finish") finished.add(event.choice);
    yield event;
  }
  const short = fewerChoices(request, finished.size);
  if (short) throw short;
}

/** Opens a channel's stream and waits for its first event. */
async function openChat<C extends ChatChannel>(
  deps: ChatRelayDeps<C>,
  channel: C,
  model: string,
  request: ChatRequest,
  signal: AbortSignal,
): Promise<OpenedStream<ChatEvent>> {
  const events = allChoices(request, await deps.upstreamFor(channel).openStream(channel, model, request, signal));
  const first = await events.next();
  if (first.done) throw new UpstreamError("retryable", "The upstream ended the stream before any event.");
  return { first: first.value, rest: events };
}

/**
 * A streamed chat call: the stream is opened with failover (until its first event arrived), then
 * every event goes to the sink as it comes; what was produced is billed, and the answer ends only
 * after the call is settled (see core/metering/stream.ts). Throws a GatewayError only when
 * nothing was written.
 */
export function streamChat<C extends ChatChannel>(
  deps: ChatRelayDeps<C>,
  call: ChatCall,
  sink: ChatSink,
): Promise<void> {
  return meterStream(
    deps,
    kindOf(deps),
    call,
    (channel, model, request, signal) => openChat(deps, channel, model, request, signal),
    sink,
    (account: ChatAccount, usage) => toldUsage(account.reported, usage),
  );
}
