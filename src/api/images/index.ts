import type { FastifyInstance } from "fastify";
import type { BlobStore } from "../../blobs/blob-store.js";
import { ByteBudget } from "../../net/byte-budget.js";
import { GuardedFetcher } from "../../net/guarded-fetch.js";
import type { ImageGenerationServices } from "../../wiring/image-generation.js";
import type { TokenAuthDeps } from "../auth-hook.js";
import { installInputBounds } from "../input-bounds.js";
import { errorShapeOf } from "../route-table.js";
import { installSurface } from "../surfaces.js";
import { FILES_PATH, imageFileRoutes } from "./files.js";
import { imageGenerationRoutes } from "./generations.js";

/**
 * OpenAI-compatible images surface under /v1 (OpenAI error shape): generation behind a Bearer
 * token, and the stored images, served without credentials at unguessable paths.
 */
export async function imageRoutes(
  app: FastifyInstance,
  opts: {
    deps: ImageGenerationServices & TokenAuthDeps & { /** Where generated images are stored. */ imageFiles: BlobStore };
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
    ports: { deps, blobs, filesPath: FILES_PATH, guarded, trusted, inputBytes },
  });
  await app.register(imageFileRoutes, { blobs });
}
