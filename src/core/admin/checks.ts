import { GatewayError } from "../errors.js";

/** The 404 of a resource that does not exist. */
export function notFound(what: string, id: string | number): GatewayError {
  return new GatewayError("GW_ERR_NOT_FOUND", `No ${what} ${id}.`);
}

/** The record, or the 404 naming it when there is none. */
export function found<T>(row: T | undefined, what: string, id: string | number): T {
  if (!row) throw notFound(what, id);
  return row;
}

/**
 * A body sent back from a GET may carry the resource's identity; it must be the one in the path,
 * so that a body meant for one resource never changes another.
 */
export function assertSameIdentity(body: object, identity: Record<string, string | number>): void {
  for (const [field, expected] of Object.entries(identity)) {
    const sent = (body as Record<string, unknown>)[field];
    if (sent !== undefined && String(sent) !== String(expected)) {
      throw new GatewayError(
        "GW_ERR_VALIDATION",
        `body.${field} is ${JSON.stringify(sent)} but the path names ${JSON.stringify(String(expected))}`,
        { param: field },
      );
    }
  }
}

/** A 400 naming a field of the body. */
export function refused(field: string, message: string): GatewayError {
  return new GatewayError("GW_ERR_VALIDATION", `body.${field} ${message}`, { param: field });
}
