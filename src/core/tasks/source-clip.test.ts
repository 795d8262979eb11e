import { describe, expect, it } from "vitest";
import type { GatewayError } from "../errors.js";
import { findKind, type TaskKind } from "./kinds.js";
import { type OwnedClip, ownedSourceClip } from "./source-clip.js";

const MINE = "11111111-1111-4111-8111-111111111111";
const UPLOAD = "22222222-2222-4222-8222-222222222222";
const SHEET = "33333333-3333-4333-8333-333333333333";

const clips: Record<string, OwnedClip> = {
  [MINE]: { model: "chirp-v3-5", action: "MUSIC", upstreamTaskId: "up-1", audioUrl: "https://gw.example/a.mp3" },
  [UPLOAD]: { model: "chirp-v3-5", action: "UPLOAD", upstreamTaskId: "up-2", audioUrl: "https://gw.example/u.mp3" },
  [SHEET]: { model: "chirp-v3-5", action: "LYRICS", upstreamTaskId: "up-3", audioUrl: "" },
};
const looked: string[] = [];
const find = async (_family: string, userId: number, clipId: string) => {
  looked.push(clipId);
  return userId === 7 ? clips[clipId] : undefined;
};

function kind(action: string): TaskKind {
  return findKind("audioa", action) as TaskKind;
}

async function refusal(action: string, body: object, userId = 7): Promise<GatewayError> {
  try {
    await ownedSourceClip(find, kind(action), userId, body);
  } catch (err) {
    return err as GatewayError;
  }
  throw new Error("not refused");
}

describe("the source clip of a task", () => {
  it("is the caller's clip with what the upstream needs: its upstream task and its audio", async () => {
    expect(await ownedSourceClip(find, kind("EXTEND"), 7, { clip_id: MINE, continue_at: 3 })).toEqual({
      ...clips[MINE],
      field: "clip_id",
      clipId: MINE,
    });
    expect((await ownedSourceClip(find, kind("COVER"), 7, { upload_id: UPLOAD }))?.field).toBe("upload_id");
    // An upload's clip is a clip too.
    expect((await ownedSourceClip(find, kind("WAV"), 7, { clip_id: UPLOAD }))?.clipId).toBe(UPLOAD);
  });

  it("is nothing for kinds that work on no clip, without a look-up", async () => {
    looked.length = 0;
    expect(await ownedSourceClip(find, kind("LYRICS"), 7, { prompt: "x", clip_id: MINE })).toBeNull();
    expect(looked).toEqual([]);
  });

  it("is a 404 naming the field for another user's clip, a song given as an upload, or a lyric sheet", async () => {
    const foreign = await refusal("EXTEND", { clip_id: MINE }, 8);
    expect(foreign.errorName).toBe("GW_ERR_NOT_FOUND");
    expect(foreign.message).toBe(`body.clip_id ${MINE} is not a clip of a succeeded task of yours in audioa.`);
    const notUpload = await refusal("ADD_VOCALS", { upload_id: MINE });
    expect(notUpload.errorName).toBe("GW_ERR_NOT_FOUND");
    expect(notUpload.message).toContain("body.upload_id");
    expect((await refusal("STEMS", { clip_id: SHEET, kind: "all" })).message).toContain("is not an audio clip");
  });
});
