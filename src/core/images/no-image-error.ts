import { UpstreamError } from "../upstream-error.js";

/**
 * The upstream answered successfully but without an image: a safety block (`blocked`) or an
 * answer that simply ended without an image part. Never retried on another channel: the same
 * prompt would most likely end the same way.
 */
export class ImageNotReturnedError extends UpstreamError {
  readonly blocked: boolean;
  /** The upstream's reason word (`SAFETY`, `IMAGE_SAFETY`, `STOP`...), for the message. */
  readonly reason: string;

  constructor(blocked: boolean, reason: string, message: string) {
    super("refused", message, { status: 200 });
    this.blocked = blocked;
    this.reason = reason;
  }
}

export function isImageNotReturned(err: unknown): err is ImageNotReturnedError {
  return err instanceof ImageNotReturnedError;
}
