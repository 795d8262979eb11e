import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import {
  type IdempotencyKeys,
  type IdempotentRun,
  idempotencyKeyOf,
  requestFingerprint,
  type StoredAnswer,
} from "../idempotency/idempotency-keys.js";
import { principalOf } from "./auth-hook.js";

/**
 * The headers schema of a creating route: documents `Idempotency-Key` in the OpenAPI document.
 * Other headers stay allowed (no `additionalProperties: false`): credentials, content type and the
 * rest must pass.
 */
export const IdempotencyHeaders = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        "1 to 255 printable ASCII characters. The same key from the same token with the same body within " +
        "24 hours answers what the first request answered, without running or charging it again.",
    }),
  ),
});

/** Header set on an answer that repeats a remembered one. */
export const REPLAYED_HEADER = "idempotent-replayed";

/**
 * Answers a creating request: without an `Idempotency-Key` header `produce` simply runs (with no
 * run); with one, the answer is run once per token and key and replayed to repeats (see
 * `IdempotencyKeys.run`), and `produce` gets the key's run, from which it derives what it charges.
 * The fingerprint is the method, the path without query and the body as parsed.
 */
export async function answerIdempotently(
  keys: IdempotencyKeys,
  request: FastifyRequest,
  reply: FastifyReply,
  produce: (run: IdempotentRun | null) => Promise<StoredAnswer>,
): Promise<FastifyReply> {
  const key = idempotencyKeyOf(request.headers);
  if (key === null) {
    const answer = await produce(null);
    return reply.code(answer.status).send(answer.body);
  }
  const path = request.url.split("?")[0] ?? request.url;
  const answer = await keys.run(
    {
      tokenId: principalOf(request).tokenId,
      key,
      fingerprint: requestFingerprint(request.method, path, request.body),
    },
    produce,
  );
  if (answer.replayed) reply.header(REPLAYED_HEADER, "true");
  return reply.code(answer.status).send(answer.body);
}
