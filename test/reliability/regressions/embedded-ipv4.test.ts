import { describe, expect, it } from "vitest";
import { isBlockedAddress } from "../../../src/net/address-policy.js";
import { assertWebhookTarget } from "../../../src/webhooks/target.js";

/**
 * Every IPv6 form that carries an IPv4 address is judged by the address inside it: a private one
 * is refused however it is wrapped, a public one passes.
 */
const FORMS: ReadonlyArray<{ form: string; private: string; public: string }> = [
  { form: "mapped", private: "::ffff:127.0.0.1", public: "::ffff:8.8.8.8" },
  { form: "mapped, hex words", private: "::ffff:7f00:1", public: "::ffff:808:808" },
  { form: "translated (SIIT)", private: "::ffff:0:127.0.0.1", public: "::ffff:0:8.8.8.8" },
  { form: "translated, hex words", private: "::ffff:0:a00:1", public: "::ffff:0:808:808" },
  { form: "compatible", private: "::10.0.0.1", public: "::8.8.8.8" },
  { form: "6to4", private: "2002:a9fe:a9fe::1", public: "2002:808:808::1" },
  { form: "Teredo client", private: "2001:0:808:808::3f57:fefe", public: "2001:0:808:808::f7f7:f7f7" },
  { form: "Teredo server", private: "2001:0:a00:1::f7f7:f7f7", public: "2001:0:808:808::f7f7:f7f7" },
  { form: "NAT64 well-known", private: "64:ff9b::192.168.1.1", public: "64:ff9b::8.8.8.8" },
  { form: "NAT64 local use", private: "64:ff9b:1::a9fe:a9fe", public: "64:ff9b:1::808:808" },
];

describe("IPv4 inside IPv6", () => {
  it.each(FORMS)("$form: refuses $private, allows $public", (row) => {
    expect(isBlockedAddress(row.private)).toBe(true);
    expect(isBlockedAddress(`[${row.private}]`)).toBe(true);
    expect(isBlockedAddress(row.public)).toBe(false);
  });

  it.each(FORMS)("$form: a callback URL with $private is refused", async (row) => {
    await expect(
      assertWebhookTarget(`http://[${row.private}]/hook`, { allowPrivate: false }, "body.callback_url"),
    ).rejects.toMatchObject({ status: 400, param: "callback_url" });
  });
});
