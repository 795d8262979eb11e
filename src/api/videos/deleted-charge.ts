import type { DeletedVideoCharge } from "../../core/videos/delete-video.js";

/** The `charge` of a delete's answer: what became of the video's charge, in words too. */
export interface DeletedChargeView {
  state: DeletedVideoCharge;
  quota: number;
  message: string;
}

const MESSAGES: Record<DeletedVideoCharge, string> = {
  open:
    "The video was still being generated, and the upstream cannot cancel a video in progress: its charge stays " +
    "held until the upstream job ends, then is settled if the video completes or refunded if it fails.",
  settled: "The video had completed: its charge stands.",
  refunded: "The video had failed: its charge was refunded.",
};

/** Tells the caller what deleting the video did to its charge of `quota`. */
export function deletedCharge(state: DeletedVideoCharge, quota: number): DeletedChargeView {
  return { state, quota: Number(quota), message: MESSAGES[state] };
}
