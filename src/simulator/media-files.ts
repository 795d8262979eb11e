import type { FastifyInstance } from "fastify";
import { colourOf, solidPng } from "./gemini-image.js";
import { MEDIA_TYPES, mp3File, mp4File, sineWav } from "./media.js";
import type { SimulatorState } from "./state.js";

/** The kinds of result file the simulated upstreams hand out, by extension. */
export type SimMediaExtension = "mp3" | "wav" | "mp4" | "png";

/** Where the simulator serves its result files. */
const MEDIA_PATH = "/media";

/** The URL at which the simulator serves the result file `name.ext` (`name`: a clip id, say). */
export function simMediaUrl(state: SimulatorState, name: string, ext: SimMediaExtension): string {
  return `${state.baseUrl()}${MEDIA_PATH}/${encodeURIComponent(name)}.${ext}`;
}

/**
 * The bytes and content type of a simulated result file, made from its name alone (so any
 * simulator run serves the same bytes for the same name, and tests can compare with them).
 */
export function simMediaFile(file: string): { bytes: Buffer; contentType: string } | null {
  const match = /^(.+)\.(mp3|wav|mp4|png)$/.exec(file);
  if (!match?.[1]) return null;
  const name = match[1];
  switch (match[2] as SimMediaExtension) {
    case "mp3":
      return { bytes: mp3File(`Simulated ${name}`), contentType: MEDIA_TYPES.mp3 };
    case "wav":
      return { bytes: sineWav(), contentType: MEDIA_TYPES.wav };
    case "mp4":
      return { bytes: mp4File(`simulated video ${name}`), contentType: MEDIA_TYPES.mp4 };
    case "png":
      return { bytes: solidPng(64, 64, colourOf(name)), contentType: "image/png" };
  }
}

/** Result files served so far (paths), for tests that count downloads. */
export class MediaLog {
  readonly served: string[] = [];
}

/**
 * `GET /media/<name>.<ext>`: the result files the simulated music upstreams report. With the
 * `media.gone` option every file answers 404, as an upstream does once its links expire.
 */
export async function mediaFilesSimulator(app: FastifyInstance, opts: { state: SimulatorState; log: MediaLog }) {
  const { state, log } = opts;
  app.get<{ Params: { file: string } }>(`${MEDIA_PATH}/:file`, async (request, reply) => {
    const file = state.options.media?.gone ? null : simMediaFile(request.params.file);
    if (!file) return reply.status(404).header("content-type", "text/plain").send("no such file");
    log.served.push(request.url);
    return reply.header("content-type", file.contentType).header("content-length", file.bytes.length).send(file.bytes);
  });
}
