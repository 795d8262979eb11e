/** One instruction of a Dockerfile: its keyword, its `--flag=value` options and the rest. */
export interface Instruction {
  keyword: string;
  flags: Record<string, string>;
  args: string;
}

/** One build stage: the image it starts from, its name (`AS name`) and its instructions. */
export interface Stage {
  image: string;
  name: string | null;
  instructions: Instruction[];
}

/**
 * Reads a Dockerfile as the builder does: comment lines dropped, lines ending in `\` joined to
 * the next, one instruction a line, grouped into stages at each FROM.
 */
export function parseDockerfile(text: string): Stage[] {
  const lines: string[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    if (/^\s*#/.test(raw)) continue;
    const line = raw.trimEnd();
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    const joined = (pending + line.trim()).trim();
    pending = "";
    if (joined !== "") lines.push(joined);
  }
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, word = "", rest = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const flags: Record<string, string> = {};
    let args = rest;
    for (let m = /^--([a-z-]+)=(\S+)\s*/.exec(args); m; m = /^--([a-z-]+)=(\S+)\s*/.exec(args)) {
      flags[m[1] as string] = m[2] as string;
      args = args.slice(m[0].length);
    }
    const instruction = { keyword: word.toUpperCase(), flags, args };
    if (instruction.keyword === "FROM") {
      const [image = "", as, name] = args.split(/\s+/);
      stages.push({ image, name: as?.toUpperCase() === "AS" ? (name ?? null) : null, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`${instruction.keyword} before the first FROM`);
      stage.instructions.push(instruction);
    }
  }
  return stages;
}

/** The instructions of a stage with the given keyword. */
export function instructionsOf(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}

/** The argument list of an exec-form instruction (`CMD ["node", "x"]`); throws on the shell form. */
export function execForm(args: string): string[] {
  const list = JSON.parse(args) as unknown;
  if (!Array.isArray(list) || !list.every((v) => typeof v === "string")) throw new Error(`not exec form: ${args}`);
  return list;
}

/** `ENV A=1 B=2` of a stage, in order, as the variables a container of it starts with. */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of instructionsOf(stage, "ENV")) {
    for (const pair of args.split(/\s+/)) {
      const at = pair.indexOf("=");
      if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1).replace(/^"(.*)"$/, "$1");
    }
  }
  return env;
}

/** The shell commands of a stage's RUN instructions, split at `&&`. */
export function commandsOf(stage: Stage): string[][] {
  return instructionsOf(stage, "RUN").flatMap(({ args }) =>
    args.split("&&").map((command) => command.trim().split(/\s+/)),
  );
}
