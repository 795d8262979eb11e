import { describe, expect, it } from "vitest";
import { newWebhookSecret, signWebhook, verifyWebhook } from "../../src/webhooks/signature.js";

// The example of the Standard Webhooks specification: libraries implementing it accept this.
const SPEC = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

describe("webhook signatures", () => {
  it("signs like the Standard Webhooks specification's example", () => {
    expect(signWebhook(SPEC.secret, SPEC.id, SPEC.timestamp, SPEC.body)).toBe(SPEC.signature);
  });

  it("accepts the right signature among several and refuses changed ids, times, bodies and secrets", () => {
    const { secret, id, timestamp, body, signature } = SPEC;
    expect(verifyWebhook(secret, id, timestamp, body, signature)).toBe(true);
    expect(verifyWebhook(secret, id, timestamp, body, `v1,bm90IGl0 ${signature}`)).toBe(true);
    expect(verifyWebhook(secret, `${id}x`, timestamp, body, signature)).toBe(false);
    expect(verifyWebhook(secret, id, timestamp + 1, body, signature)).toBe(false);
    expect(verifyWebhook(secret, id, timestamp, `${body} `, signature)).toBe(false);
    expect(verifyWebhook(newWebhookSecret(), id, timestamp, body, signature)).toBe(false);
    expect(verifyWebhook(secret, id, timestamp, body, signature.replace("v1,", "v2,"))).toBe(false);
    expect(verifyWebhook(secret, id, timestamp, body, "")).toBe(false);
  });

  it("makes a new 32-byte secret every time", () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_/);
    expect(Buffer.from(a.slice(6), "base64")).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(a);
  });
});
