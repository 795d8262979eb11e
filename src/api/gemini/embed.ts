import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { assertModelAllowed } from "../../auth/authenticator.js";
import { callSignal } from "../../core/call-signal.js";
import type { Channel } from "../../core/channel.js";
import { createEmbeddings, embeddingsKind } from "../../core/embeddings/embeddings-kind.js";
import type { EmbeddingInput, EmbeddingsRelayDeps, EmbeddingsRequest } from "../../core/embeddings/ports.js";
import { checkEmbeddingsRequest, MAX_BATCH_REQUESTS } from "../../core/embeddings/request.js";
import { GatewayError } from "../../core/errors.js";
import { newRequestId } from "../../core/ids.js";
import { principalOf } from "../auth-hook.js";
import {
  BatchEmbedContentsAnswer,
  BatchEmbedContentsBody,
  EmbedContentAnswer,
  EmbedContentBody,
} from "./embed-schemas.js";
import { ModelParams } from "./schemas.js";

// Gemini's embedding methods share the path `/models/{model}:{method}` with the content
// methods: a route constraint on the method (after the last colon) picks their routes.

const EMBED_METHODS = ["embedContent", "batchEmbedContents"] as const;
type EmbedMethod = (typeof EMBED_METHODS)[number];

/** The method of a `/models/{model}:{method}` URL: what follows the path's last colon. */
function methodOf(url: string): string {
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const colon = path.lastIndexOf(":");
  return colon > path.lastIndexOf("/") ? path.slice(colon + 1) : "";
}

/** The route constraint `geminiMethod`; other paths derive "" and match no constrained route. */
const geminiMethod = {
  name: "geminiMethod",
  storage() {
    const handlers = new Map<string, unknown>();
    return {
      get: (method: string) => (handlers.get(method) ?? null) as never,
      set: (method: string, handler: unknown) => {
        handlers.set(method, handler);
      },
    };
  },
  deriveConstraint: (request: { url?: string }) => methodOf(request.url ?? ""),
  validate(value: unknown) {
    if (typeof value !== "string") throw new Error("geminiMethod is a method name");
  },
  mustMatchWhenDerived: false,
};

interface EmbedFields {
  content: { parts: Array<{ text?: string }> };
  taskType?: string;
  title?: string;
  outputDimensionality?: number;
}

/** The text of a content: its text parts joined by line breaks; another kind of part is refused. */
function textOf(content: EmbedFields["content"], field: string): string {
  return content.parts
    .map((part, i) => {
      if (typeof part.text !== "string") {
        throw new GatewayError("GW_ERR_VALIDATION", `${field}.parts[${i}] must be a text part.`, {
          param: `${field}.parts[${i}]`,
        });
      }
      return part.text;
    })
    .join("\n");
}

function inputOf(fields: EmbedFields, field: string): EmbeddingInput {
  const text = textOf(fields.content, `${field}content`);
  return fields.title === undefined ? { text } : { text, title: fields.title };
}

/** A setting every request of a batch must share (the gateway sends one per call). */
function shared<T>(requests: EmbedFields[], pick: (r: EmbedFields) => T | undefined, name: string): T | null {
  const first = pick(requests[0] as EmbedFields);
  requests.forEach((r, i) => {
    if (pick(r) !== first) {
      throw new GatewayError("GW_ERR_VALIDATION", `requests[${i}].${name} must be the same in every request.`, {
        param: `requests[${i}].${name}`,
      });
    }
  });
  return first ?? null;
}

/** `:embedContent`'s body as the gateway's request. */
function embedContentRequest(body: EmbedFields): EmbeddingsRequest {
  return checkEmbeddingsRequest(
    {
      inputs: [inputOf(body, "")],
      dimensions: body.outputDimensionality ?? null,
      user: null,
      taskType: body.taskType ?? null,
    },
    { inputs: "content", input: () => "content", dimensions: "outputDimensionality", maxInputs: 1 },
  );
}

/** `:batchEmbedContents`' body as the gateway's request: each request must name the path's model. */
function batchRequest(body: { requests: Array<EmbedFields & { model: string }> }, model: string): EmbeddingsRequest {
  body.requests.forEach((r, i) => {
    if (r.model !== `models/${model}` && r.model !== model) {
      throw new GatewayError(
        "GW_ERR_VALIDATION",
        `requests[${i}].model must be models/${model}, the model of the path.`,
        {
          param: `requests[${i}].model`,
        },
      );
    }
  });
  return checkEmbeddingsRequest(
    {
      inputs: body.requests.map((r, i) => inputOf(r, `requests[${i}].`)),
      dimensions: shared(body.requests, (r) => r.outputDimensionality, "outputDimensionality"),
      user: null,
      taskType: shared(body.requests, (r) => r.taskType, "taskType"),
    },
    {
      inputs: "requests",
      input: (i) => `requests[${i}].content`,
      dimensions: "requests[0].outputDimensionality",
      maxInputs: MAX_BATCH_REQUESTS,
    },
  );
}

/** `{model}:{method}` -> the model. */
function modelOf(target: string): string {
  return target.slice(0, target.lastIndexOf(":"));
}

/**
 * `POST /models/{model}:embedContent` and `:batchEmbedContents` on the Gemini surface (its auth,
 * bounds and error shape are the surface's), billed per input token: Gemini reports no usage
 * for embeddings, so a call is settled to the gateway's own count of its input.
 */
export function geminiEmbedRoutes(app: FastifyInstance, relay: EmbeddingsRelayDeps<Channel>): void {
  if (!app.hasConstraintStrategy(geminiMethod.name)) app.addConstraintStrategy(geminiMethod);
  const kind = embeddingsKind(
    relay,
    (model) => new GatewayError("GW_ERR_NOT_FOUND", `models/${model} is not found for API version v1beta.`),
  );
  const schemas = {
    embedContent: { body: EmbedContentBody, answer: EmbedContentAnswer, summary: "Embed one content" },
    batchEmbedContents: {
      body: BatchEmbedContentsBody,
      answer: BatchEmbedContentsAnswer,
      summary: "Embed several contents (at most 100)",
    },
  } as const;
  for (const method of EMBED_METHODS) {
    const schema = schemas[method];
    app.post(
      "/models/:target",
      {
        constraints: { geminiMethod: method },
        schema: { summary: schema.summary, params: ModelParams, body: schema.body, response: { 200: schema.answer } },
      },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const model = modelOf((request.params as { target: string }).target);
        const principal = principalOf(request);
        assertModelAllowed(principal, model);
        const embedRequest =
          (method as EmbedMethod) === "embedContent"
            ? embedContentRequest(request.body as EmbedFields)
            : batchRequest(request.body as { requests: Array<EmbedFields & { model: string }> }, model);
        const chosenByClient = request.headers["x-request-id"] === request.id;
        const result = await createEmbeddings(relay, kind, {
          requestId: request.id,
          reference: `embeddings:${chosenByClient ? newRequestId() : request.id}`,
          caller: { userId: principal.userId, tokenId: principal.tokenId, group: principal.group },
          model,
          request: embedRequest,
          inputField: method === "embedContent" ? "content" : "requests",
          signal: callSignal(reply.raw),
        });
        const answer =
          method === "embedContent"
            ? { embedding: { values: result.vectors[0] } }
            : { embeddings: result.vectors.map((values) => ({ values })) };
        return reply.type("application/json; charset=utf-8").send(JSON.stringify(answer));
      },
    );
  }
}
