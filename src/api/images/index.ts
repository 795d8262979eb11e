import path from "node:path";
import type { FastifyInstance } from "fastify";
import { LocalBlobStore } from "../../blobs/local-blob-store.js";
import type { GatewayContext } from "../../context.js";
import { ByteBudget } from "../../net/byte-budget.js";
import { GuardedFetcher } from "../../net/guarded-fetch.js";
import { installInputBounds } from "../input-bounds.js";
import { installSurface } from "../surfaces.js";
import { imageFileRoutes } from "./files.js";
import { imageGenerationRoutes } from "./generations.js";

/**
 * OpenAI-compatible images surface under /v1 (OpenAI error shape): generation behind a Bearer
 * token, and the stored images, served without credentials at unguessable paths.
 */
export async function imageRoutes(app: FastifyInstance, opts: { ctx: GatewayContext }) {
  installSurface(app, "openai");
  const { ctx } = opts;
  installInputBounds(app, ctx.config.bodies.images);
  const blobs = new LocalBlobStore(path.join(ctx.config.dataDir, "blobs", "images"));
  const guarded = new GuardedFetcher({ allowPrivate: ctx.config.images.allowPrivateUrls });
  const trusted = new GuardedFetcher({ allowPrivate: true });
  app.addHook("onClose", async () => {
    await Promise.all([guarded.close(), trusted.close()]);
  });
  // Input images of every request in flight share one memory budget.
  const inputBytes = new ByteBudget(ctx.config.images.fetchMaxBytesInFlight, (used) =>
    ctx.metrics.imageInputBytes.set(used),
  );
  await app.register(imageGenerationRoutes, { ports: { ctx, blobs, guarded, trusted, inputBytes } });
  await app.register(imageFileRoutes, { blobs });
}
