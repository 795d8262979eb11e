/**
 * The header of a token count's answer (`count_tokens`, `:countTokens`): `upstream` when the
 * upstream's own count endpoint counted it, `estimated` when it is the gateway's estimate.
 */
export const TOKEN_COUNT_HEADER = "x-gateway-token-count";
