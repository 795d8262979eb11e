import type { FastifyInstance } from "fastify";
import type { BlobStore } from "../../blobs/blob-store.js";
import { type BodyBounds, installInputBounds } from "../../http/input-bounds.js";
import { installSurface } from "../../http/surfaces.js";
import { ByteBudget } from "../../net/byte-budget.js";
import { GuardedFetcher } from "../../net/guarded-fetch.js";
import { errorShapeOf } from "../route-table.js";
import { FILES_PATH, imageFileRoutes } from "./files.js";
import { type ImageGenerationRouteDeps, type ImageGenerationWiring, imageGenerationRoutes } from "./generations.js";

/** The parts of the images surface every generation shares, made by the surface. */
export interface ImageSurfaceParts {
  blobs: BlobStore;
  /** Where a stored image is served: the surface's path of its files. */
  filesPath: string;
  /** Fetches client-given URLs: private addresses refused unless the operator allows them. */
  guarded: GuardedFetcher;
  /** Fetches URLs on a channel's own host, which the operator configured and so trusts. */
  trusted: GuardedFetcher;
}

/** What the images surface uses. */
export type ImageSurfaceDeps = ImageGenerationRouteDeps & {
  config: {
    bodies: { images: BodyBounds };
    images: { allowPrivateUrls: boolean; fetchMaxBytesInFlight: number; fetchMaxBytesPerRequest: number };
  };
  metrics: { imageInputBytes: { set(bytes: number): void } };
  /** Where generated images are stored. */
  imageFiles: BlobStore;
};

/**
 * OpenAI-compatible images surface under /v1 (OpenAI error shape): generation behind a Bearer
 * token, and the stored images, served without credentials at unguessable paths.
 */
export async function imageRoutes(
  app: FastifyInstance,
  opts: {
    deps: ImageSurfaceDeps;
    /** A generation's wiring (by the app) over the surface's parts. */
    wiring(parts: ImageSurfaceParts): ImageGenerationWiring;
  },
) {
  installSurface(app, errorShapeOf(app.prefix));
  const { deps } = opts;
  installInputBounds(app, deps.config.bodies.images);
  const blobs = deps.imageFiles;
  const guarded = new GuardedFetcher({ allowPrivate: deps.config.images.allowPrivateUrls });
  const trusted = new GuardedFetcher({ allowPrivate: true });
  app.addHook("onClose", async () => {
    await Promise.all([guarded.close(), trusted.close()]);
  });
  // Input images of every request in flight share one memory budget.
  const inputBytes = new ByteBudget(deps.config.images.fetchMaxBytesInFlight, (used) =>
    deps.metrics.imageInputBytes.set(used),
  );
  await app.register(imageGenerationRoutes, {
    deps,
    wiring: opts.wiring({ blobs, filesPath: FILES_PATH, guarded, trusted }),
    inputBytes,
  });
  await app.register(imageFileRoutes, { blobs });
}
