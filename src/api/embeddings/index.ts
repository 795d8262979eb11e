import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import { callSignal } from "../../core/call-signal.js";
import type { Channel } from "../../core/channel.js";
import { createEmbeddings, type EmbeddingsKind, embeddingsKind } from "../../core/embeddings/embeddings-kind.js";
import type { EmbeddingsRelayDeps, EmbeddingsRequest } from "../../core/embeddings/ports.js";
import { checkEmbeddingsRequest, MAX_INPUTS } from "../../core/embeddings/request.js";
import { GatewayError } from "../../core/errors.js";
import { newRequestId } from "../../core/ids.js";
import { type BodyBounds, installInputBounds } from "../../http/input-bounds.js";
import { installSurface } from "../../http/surfaces.js";
import { principalOf, requireToken, type TokenAuthDeps } from "../auth-hook.js";
import { errorShapeOf } from "../route-table.js";
import { embeddingsAnswerText } from "./answer.js";
import { EmbeddingsAnswer, EmbeddingsBody } from "./schemas.js";

/** What the embeddings surface uses. */
export type EmbeddingsSurfaceDeps = TokenAuthDeps & { config: { bodies: { chat: BodyBounds } } };

/** The ledger reference of an embeddings call: the request id, unless the client chose that id itself. */
export function embeddingsReference(request: FastifyRequest): string {
  const chosenByClient = request.headers["x-request-id"] === request.id;
  return `embeddings:${chosenByClient ? newRequestId() : request.id}`;
}

/** OpenAI's `input` in the gateway's form: one input, or a list of texts or token lists. */
function inputsOf(input: EmbeddingsBody["input"]): EmbeddingsRequest["inputs"] {
  if (typeof input === "string") return [{ text: input }];
  if (input.length > 0 && input.every((item) => typeof item === "number")) return [{ tokens: input as number[] }];
  return (input as Array<string | number[]>).map((item) =>
    typeof item === "string" ? { text: item } : { tokens: item },
  );
}

/** The body as the gateway's request; a 400 naming the field it cannot take. */
export function embeddingsRequestFromOpenAi(body: EmbeddingsBody): EmbeddingsRequest {
  return checkEmbeddingsRequest(
    {
      inputs: inputsOf(body.input),
      dimensions: body.dimensions ?? null,
      user: body.user ?? null,
      taskType: null,
    },
    {
      inputs: "input",
      input: (i) => (typeof body.input === "string" ? "input" : `input[${i}]`),
      dimensions: "dimensions",
      maxInputs: MAX_INPUTS,
    },
  );
}

/** The OpenAI surface's kind: an unknown model is told as OpenAI tells it. */
export function openAiEmbeddingsKind(relay: EmbeddingsRelayDeps<Channel>): EmbeddingsKind<Channel> {
  return embeddingsKind(
    relay,
    (model) => new GatewayError("GW_ERR_NOT_FOUND", `The model "${model}" does not exist.`, { param: "model" }),
  );
}

/** `POST /v1/embeddings` (Bearer token, OpenAI error shape). */
export async function openAiEmbeddingsRoutes(
  base: FastifyInstance,
  opts: { deps: EmbeddingsSurfaceDeps; relay: EmbeddingsRelayDeps<Channel> },
) {
  const { deps, relay } = opts;
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  // The /v1 not-found answers belong to the images surface (same shape); errors here are ours.
  installSurface(app, errorShapeOf(app.prefix), { notFound: false });
  app.addHook("onRequest", requireToken(deps));
  installInputBounds(app, deps.config.bodies.chat);
  const kind = openAiEmbeddingsKind(relay);

  app.post(
    "/embeddings",
    {
      schema: {
        summary: "Create embeddings (OpenAI shape): one vector per input, billed per input token",
        body: EmbeddingsBody,
        response: { 200: EmbeddingsAnswer },
      },
    },
    // The answer is written as JSON text: the response schema documents it, it does not reshape it.
    async (request: FastifyRequest<{ Body: EmbeddingsBody }>, reply: FastifyReply) => {
      const body = request.body;
      const principal = principalOf(request);
      assertModelAllowed(principal, body.model);
      const result = await createEmbeddings(relay, kind, {
        requestId: request.id,
        reference: embeddingsReference(request),
        caller: { userId: principal.userId, tokenId: principal.tokenId, group: principal.group },
        model: body.model,
        request: embeddingsRequestFromOpenAi(body),
        inputField: "input",
        signal: callSignal(reply.raw),
      });
      const text = embeddingsAnswerText(result, body.model, body.encoding_format ?? "float");
      return reply.type("application/json; charset=utf-8").send(text);
    },
  );
}
