import { FormatRegistry } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../errors.js";
import { FAMILY_SPECS, TASK_FAMILIES } from "../families.js";
import { findKind, isKindOpen } from "../kinds.js";

const FURTHER = [
  "LYRICS",
  "UPLOAD",
  "EXTEND",
  "COVER",
  "ADD_INSTRUMENTAL",
  "ADD_VOCALS",
  "VOCALS_SWAP",
  "STEMS",
  "WAV",
  "MUSIC_VIDEO",
];
const CLIP = "e9893d04-5b1a-4c3e-9f55-0d4e3f8b2a11";
// The HTTP layer checks formats; TypeBox's own checker needs to be told what a UUID is.
if (!FormatRegistry.Has("uuid"))
  FormatRegistry.Set("uuid", (v) => /^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i.test(v));

function kind(family: string, action: string) {
  const k = findKind(family, action);
  if (!k) throw new Error(`no kind ${family}:${action}`);
  return k;
}

function refusal(run: () => void): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return (err as GatewayError).message;
  }
  return "";
}

describe("the further actions", () => {
  it("exist in both families, open by default, forwarded under their own name", () => {
    for (const family of TASK_FAMILIES) {
      for (const action of FURTHER) {
        const k = kind(family, action);
        expect(isKindOpen(k, [])).toBe(true);
        expect(k.upstreamOperation).toBe(action);
      }
    }
  });

  it("say which body fields name a source clip, and which kinds bring a file in", () => {
    expect(kind("audioa", "LYRICS").sourceClipFields).toBeUndefined();
    expect(kind("audioa", "UPLOAD").sourceClipFields).toBeUndefined();
    expect(kind("audioa", "UPLOAD").intakeField).toBe("url");
    for (const action of ["EXTEND", "STEMS", "WAV", "MUSIC_VIDEO"]) {
      expect(kind("audiob", action).sourceClipFields).toEqual(["clip_id"]);
    }
    for (const action of ["COVER", "ADD_INSTRUMENTAL", "ADD_VOCALS", "VOCALS_SWAP"]) {
      expect(kind("audiob", action).sourceClipFields).toEqual(["clip_id", "upload_id"]);
    }
  });

  it("have lyric sheets as LYRICS results and audio for every other", () => {
    for (const action of FURTHER) expect(kind("audioa", action).results).toBe(action === "LYRICS" ? "lyrics" : "audio");
  });

  it("take the model asked for, else the source clip's; LYRICS and UPLOAD the family default", () => {
    expect(kind("audioa", "EXTEND").originModel({ clip_id: CLIP, continue_at: 3, mv: "chirp-v4" }, "chirp-v3")).toBe(
      "chirp-v4",
    );
    expect(kind("audioa", "COVER").originModel({ clip_id: CLIP }, "chirp-v3")).toBe("chirp-v3");
    expect(kind("audiob", "WAV").originModel({ clip_id: CLIP }, "V4")).toBe("V4");
    expect(kind("audiob", "LYRICS").originModel({ prompt: "x" }, "")).toBe(FAMILY_SPECS.audiob.defaultModel);
    expect(kind("audioa", "UPLOAD").originModel({ url: "https://a.example/x.mp3" }, "")).toBe(
      FAMILY_SPECS.audioa.defaultModel,
    );
  });

  it("hold the documented bounds in their schemas", () => {
    const extend = kind("audioa", "EXTEND").schema;
    expect(Value.Check(extend, { clip_id: CLIP, continue_at: 480 })).toBe(true);
    expect(Value.Check(extend, { clip_id: CLIP, continue_at: 0 })).toBe(false);
    expect(Value.Check(extend, { clip_id: CLIP, continue_at: 480.5 })).toBe(false);
    expect(Value.Check(extend, { clip_id: CLIP, continue_at: 1, title: "x".repeat(121) })).toBe(false);
    expect(Value.Check(extend, { clip_id: CLIP, continue_at: 1, tags: "x".repeat(201) })).toBe(false);
    expect(Value.Check(kind("audiob", "EXTEND").schema, { clip_id: CLIP, continue_at: 1, mv: "x".repeat(33) })).toBe(
      false,
    );
    expect(Value.Check(kind("audioa", "EXTEND").schema, { clip_id: CLIP, continue_at: 1, mv: "x".repeat(33) })).toBe(
      true,
    );
    expect(Value.Check(kind("audioa", "COVER").schema, { clip_id: CLIP, cover_strength: 1.01 })).toBe(false);
    expect(Value.Check(kind("audioa", "LYRICS").schema, { prompt: "x".repeat(3001) })).toBe(false);
    expect(Value.Check(kind("audioa", "STEMS").schema, { clip_id: CLIP, kind: "all" })).toBe(true);
    expect(Value.Check(kind("audioa", "STEMS").schema, { clip_id: CLIP, kind: "drums" })).toBe(false);
    expect(Value.Check(kind("audioa", "VOCALS_SWAP").schema, { clip_id: CLIP, persona: "p" })).toBe(true);
  });

  it("refuse with a 400 naming the field what the schema cannot say", () => {
    const source = kind("audioa", "COVER");
    expect(refusal(() => source.check({}))).toContain("body.clip_id or body.upload_id is required");
    expect(refusal(() => source.check({ clip_id: CLIP, upload_id: CLIP }))).toContain(
      "body.clip_id and body.upload_id",
    );
    expect(refusal(() => source.check({ upload_id: CLIP }))).toBe("");
    expect(refusal(() => kind("audiob", "LYRICS").check({ prompt: "  " }))).toContain("body.prompt");
    expect(refusal(() => kind("audioa", "UPLOAD").check({ url: "ftp://a.example/x.mp3" }))).toContain("body.url");
    expect(refusal(() => kind("audioa", "UPLOAD").check({ url: "/x.mp3" }))).toContain("body.url");
    expect(refusal(() => kind("audioa", "UPLOAD").check({ url: "https://a.example/x.mp3" }))).toBe("");
  });
});
