import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { hashPassword, passwordProblem } from "../auth/passwords.js";
import type { CommandStore } from "../wiring/command-line.js";
import { UsageError } from "./flags.js";

/** Where an operator command reads a password typed or piped in. */
export interface PasswordInput {
  isTTY?: boolean;
  setRawMode?(raw: boolean): unknown;
  on(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  removeAllListeners(event?: string): unknown;
  pause(): unknown;
  resume(): unknown;
}

export const OPERATOR_USAGE = {
  create: "operator create --name NAME [--password-file FILE] [--json]   (the password is read from stdin)",
  list: "operator list [--json]",
  disable: "operator disable --name NAME [--json]   (ends the operator's sessions)",
  enable: "operator enable --name NAME [--json]",
} as const;

export type OperatorVerb = keyof typeof OPERATOR_USAGE;

/**
 * The first line of the input: piped text up to its first line break, or what is typed at a
 * terminal (not echoed).
 */
export function readPasswordLine(input: PasswordInput, prompt: (text: string) => void): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    const tty = input.isTTY === true && typeof input.setRawMode === "function";
    if (tty) {
      prompt("Password (not shown): ");
      input.setRawMode?.(true);
    }
    const finish = () => {
      if (tty) {
        input.setRawMode?.(false);
        prompt("\n");
      }
      input.removeAllListeners("data");
      input.removeAllListeners("end");
      input.pause();
      resolve(text);
    };
    input.on("data", (chunk) => {
      for (const ch of chunk.toString()) {
        if (ch === "\n" || ch === "\r") return finish();
        if (tty && ch === "\u0003") {
          text = "";
          return finish();
        }
        if (tty && (ch === "\u007f" || ch === "\b")) text = text.slice(0, -1);
        else text += ch;
      }
    });
    input.on("end", finish);
    input.resume();
  });
}

export interface OperatorInvocation {
  verb: OperatorVerb;
  name: string | null;
  passwordFile: string | null;
  password: string | null;
  json: boolean;
}

/** Checks an operator command's options before anything is read or written. */
export function parseOperatorArgs(verb: string | undefined, rest: string[]): OperatorInvocation {
  if (!verb || !(verb in OPERATOR_USAGE)) throw new UsageError(`unknown admin command "operator ${verb ?? ""}"`.trim());
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: {
      name: { type: "string" },
      "password-file": { type: "string" },
      password: { type: "string" },
      json: { type: "boolean" },
    },
  });
  const v = verb as OperatorVerb;
  if (v !== "list" && !values.name) throw new UsageError("--name is required");
  if (values.name !== undefined && (values.name.length > 100 || values.name.trim() === "")) {
    throw new UsageError("--name must be 1 to 100 characters");
  }
  if (v !== "create" && (values.password !== undefined || values["password-file"] !== undefined)) {
    throw new UsageError(`operator ${v} takes no password`);
  }
  return {
    verb: v,
    name: values.name ?? null,
    passwordFile: values["password-file"] ?? null,
    password: values.password ?? null,
    json: values.json === true,
  };
}

/** The new operator's password: --password, else --password-file's first line, else stdin's. */
export async function operatorPassword(
  inv: OperatorInvocation,
  input: PasswordInput | undefined,
  prompt: (text: string) => void,
): Promise<string> {
  let password: string;
  if (inv.password !== null) password = inv.password;
  else if (inv.passwordFile !== null) {
    try {
      password = readFileSync(inv.passwordFile, "utf8").split(/\r?\n/)[0] ?? "";
    } catch (err) {
      throw new UsageError(`--password-file cannot be read: ${(err as Error).message}`);
    }
  } else if (input) password = await readPasswordLine(input, prompt);
  else throw new UsageError("no password given: pipe it on stdin or use --password-file");
  const problem = passwordProblem(password);
  if (problem) throw new UsageError(`the password ${problem}`);
  return password;
}

const shown = (row: { id: number; name: string; status: string; created_at: number }) => ({
  id: Number(row.id),
  name: row.name,
  status: row.status,
  created_at: Number(row.created_at),
});

/** Runs an operator command on the store; a GatewayError-free result or a thrown UsageError. */
export async function runOperatorCommand(
  operators: CommandStore["operators"],
  inv: OperatorInvocation,
  password: string | null,
  cost: number,
): Promise<{ result: unknown; exit: "ok" | "notFound" | "conflict"; message?: string }> {
  const { accounts } = operators;
  if (inv.verb === "list") return { result: (await accounts.listOperators()).map(shown), exit: "ok" };
  const name = inv.name as string;
  if (inv.verb === "create") {
    const row = await accounts.createOperator(name, await hashPassword(password as string, cost));
    if (!row) return { result: null, exit: "conflict", message: `an operator named "${name}" exists already` };
    return { result: shown(row), exit: "ok" };
  }
  const row = await accounts.setOperatorStatus(name, inv.verb === "disable" ? "disabled" : "enabled");
  if (!row) return { result: null, exit: "notFound", message: `no operator named "${name}"` };
  if (inv.verb === "disable") await operators.sessions.deleteAllOf("operator", Number(row.id));
  return { result: shown(row), exit: "ok" };
}
