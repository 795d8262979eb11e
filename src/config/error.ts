/** The environment a configuration is read from. */
export type Env = Record<string, string | undefined>;

/** A setting the gateway cannot start with; the message names it, shows the value and what is allowed. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}
