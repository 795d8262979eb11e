import { type TSchema, Type } from "@sinclair/typebox";
import type { RouteOptions } from "fastify";

/** Each public surface answers errors in its own body shape. */
export type Surface = "envelope" | "openai" | "google" | "anthropic" | "console";

/**
 * Each surface's error body as a schema: it documents every route's error answers in the OpenAPI
 * document and serialises them. Added to a surface's routes once, by `installSurface`, so no route
 * repeats it.
 */
const ERROR_BODIES: Record<Surface, TSchema> = {
  envelope: Type.Object(
    {
      code: Type.String({ description: "stable error code", examples: ["invalid_request"] }),
      message: Type.String({ description: "what is wrong, naming the field where there is one" }),
      data: Type.Null(),
    },
    { additionalProperties: false },
  ),
  openai: Type.Object(
    {
      error: Type.Object(
        {
          message: Type.String(),
          type: Type.String({ examples: ["invalid_request_error"] }),
          param: Type.Union([Type.String(), Type.Null()], { description: "the request field at fault" }),
          code: Type.String({ examples: ["invalid_request"] }),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
  google: Type.Object(
    {
      error: Type.Object(
        {
          code: Type.Integer({ description: "the HTTP status", examples: [400] }),
          message: Type.String(),
          status: Type.String({ examples: ["INVALID_ARGUMENT"] }),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
  console: Type.Object(
    {
      error: Type.Object(
        {
          code: Type.String({ examples: ["invalid_credentials"] }),
          message: Type.String(),
          field: Type.Optional(Type.String({ description: "the request field at fault" })),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
  anthropic: Type.Object(
    {
      type: Type.Literal("error"),
      error: Type.Object(
        {
          type: Type.String({ examples: ["invalid_request_error"] }),
          message: Type.String(),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
};

const CLIENT_ERRORS =
  "The request cannot be served as sent: invalid input (400, naming the field), missing or wrong " +
  "credentials (401), not allowed or not enough quota (403), not found (404), a conflict (409), " +
  "a body too large (413), too many requests (429).";
const SERVER_ERRORS =
  "The gateway or the upstream failed: internal error (500), upstream error (502), no channel " +
  "available (503), upstream timeout (504).";

/** The error responses of a surface, as response-schema entries. */
export function errorResponses(surface: Surface): Record<"4xx" | "5xx", TSchema> {
  const body = ERROR_BODIES[surface];
  return {
    "4xx": { ...body, description: CLIENT_ERRORS } as TSchema,
    "5xx": { ...body, description: SERVER_ERRORS } as TSchema,
  };
}

/**
 * Gives a route its surface's error responses. An inner surface runs after the outer one and
 * overrides it; a status a route describes itself (ops' 401, 503) stays the route's own.
 */
export function withErrorResponses(route: RouteOptions, surface: Surface): void {
  const schema = (route.schema ?? {}) as { response?: Record<string, unknown>; hide?: boolean };
  if (schema.hide) return;
  route.schema = { ...schema, response: { ...(schema.response ?? {}), ...errorResponses(surface) } };
}
