import { Value } from "@sinclair/typebox/value";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../errors.js";
import { FAMILY_SPECS, TASK_FAMILIES } from "./families.js";
import { findKind, isKindOpen, kindName, kindsOf, TASK_KINDS } from "./kinds.js";

function kind(family: string, action: string) {
  const k = findKind(family, action);
  if (!k) throw new Error(`no kind ${family}:${action}`);
  return k;
}

describe("the task kinds registry", () => {
  it("names every kind once, and every family has kinds", () => {
    const names = TASK_KINDS.map(kindName);
    expect(new Set(names).size).toBe(names.length);
    for (const family of TASK_FAMILIES) expect(kindsOf(family).length).toBeGreaterThan(0);
    const further = ["LYRICS", "UPLOAD", "EXTEND", "COVER", "ADD_INSTRUMENTAL", "ADD_VOCALS", "VOCALS_SWAP"];
    const exports = ["STEMS", "WAV", "MUSIC_VIDEO"];
    expect(names).toEqual([
      "audioa:MUSIC",
      "audioa:REPLACE",
      "audioa:INSTRUMENTALS_SWAP",
      "audiob:MUSIC",
      ...[...further, ...exports].map((a) => `audioa:${a}`),
      ...[...further, ...exports].map((a) => `audiob:${a}`),
      "video:CREATE",
      "video:REMIX",
    ]);
  });

  it("finds a kind by family and action, and nothing for an action a family lacks", () => {
    expect(kind("audioa", "REPLACE").sourceClipFields).toEqual(["clip_id"]);
    expect(findKind("audiob", "REPLACE")).toBeUndefined();
    expect(findKind("audioc", "MUSIC")).toBeUndefined();
  });

  it("lets fields it does not know through its schema, and still checks the known ones", () => {
    for (const k of TASK_KINDS) {
      expect((k.schema as { additionalProperties?: unknown }).additionalProperties).toBe(true);
    }
    const music = kind("audioa", "MUSIC").schema;
    expect(Value.Check(music, { prompt: "x", persona_id: "p1" })).toBe(true);
    expect(Value.Check(music, { prompt: 5 })).toBe(false);
    expect(Value.Check(kind("audiob", "MUSIC").schema, { prompt: "x", audio_weight: 1.5 })).toBe(false);
  });

  it("keeps REPLACE and INSTRUMENTALS_SWAP closed until the operator opens them", () => {
    const replace = kind("audioa", "REPLACE");
    expect(isKindOpen(kind("audioa", "MUSIC"), [])).toBe(true);
    expect(isKindOpen(replace, [])).toBe(false);
    expect(isKindOpen(replace, ["REPLACE"])).toBe(true);
    expect(isKindOpen(replace, ["audioa:REPLACE"])).toBe(true);
    expect(isKindOpen(replace, ["audiob:REPLACE"])).toBe(false);
  });

  it("takes the model asked for, else the family default, else the source clip's", () => {
    expect(kind("audioa", "MUSIC").originModel({ prompt: "x" }, "")).toBe(FAMILY_SPECS.audioa.defaultModel);
    expect(kind("audioa", "MUSIC").originModel({ prompt: "x", mv: "chirp-v4" }, "")).toBe("chirp-v4");
    expect(kind("audiob", "MUSIC").originModel({ prompt: "x" }, "")).toBe(FAMILY_SPECS.audiob.defaultModel);
    expect(kind("audioa", "REPLACE").originModel({ clip_id: "c", starts: 0, sound_prompt: "s" }, "chirp-v3")).toBe(
      "chirp-v3",
    );
  });

  it("shows the prompt, the description or the sound prompt as the input", () => {
    expect(kind("audioa", "MUSIC").input({ gpt_description_prompt: "a song" })).toBe("a song");
    expect(kind("audiob", "MUSIC").input({ prompt: "lyrics" })).toBe("lyrics");
    expect(kind("audioa", "INSTRUMENTALS_SWAP").input({ clip_id: "c", sound_prompt: "jazz" })).toBe("jazz");
  });

  it("refuses with a 400 naming the field what the schema cannot say", () => {
    const cases: [string, string, unknown, string][] = [
      ["audioa", "MUSIC", { title: "t" }, "prompt"],
      ["audioa", "MUSIC", { prompt: "x", continue_at: 3 }, "continue_clip_id"],
      ["audiob", "MUSIC", { prompt: "x", custom_mode: true }, "style"],
      ["audiob", "MUSIC", { prompt: "x", style_weight: 0.123 }, "style_weight"],
      ["audioa", "REPLACE", { clip_id: "c", starts: 5, ends: 5, sound_prompt: "x" }, "ends"],
      ["audioa", "INSTRUMENTALS_SWAP", { clip_id: "c", sound_prompt: "  " }, "sound_prompt"],
    ];
    for (const [family, action, body, field] of cases) {
      let thrown: unknown;
      try {
        kind(family, action).check(body as never);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(GatewayError);
      expect((thrown as GatewayError).message).toContain(`body.${field}`);
    }
  });
});
