import type { TokenRow } from "../../store/tokens.js";
import type { UserRow } from "../../store/users.js";

/** A user as the admin API shows it (the webhook secret never leaves the store). */
export function userView(u: UserRow) {
  return {
    id: Number(u.id),
    name: u.name,
    group: u.group,
    quota: Number(u.quota),
    used_quota: Number(u.used_quota),
    credit_line: Number(u.credit_line),
    status: u.status,
    webhook_url: u.webhook_url,
    created_at: Number(u.created_at),
    updated_at: Number(u.updated_at),
  };
}

/** A token as the admin API lists it: no key, no hash. */
export function tokenView(t: TokenRow) {
  return {
    id: Number(t.id),
    user_id: Number(t.user_id),
    name: t.name,
    key_prefix: t.key_prefix,
    status: t.status,
    expires_at: t.expires_at === null ? null : Number(t.expires_at),
    quota_limit: t.quota_limit === null ? null : Number(t.quota_limit),
    used_quota: Number(t.used_quota),
    models: t.models ? (JSON.parse(t.models) as string[]) : null,
    ip_allow: t.ip_allow ? (JSON.parse(t.ip_allow) as string[]) : null,
    created_at: Number(t.created_at),
    updated_at: Number(t.updated_at),
  };
}

export function ok<T>(data: T) {
  return { code: "success", message: "", data };
}
