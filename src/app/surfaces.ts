import type { FastifyInstance } from "fastify";
import { adminRoutes } from "../api/admin/index.js";
import { anthropicRoutes } from "../api/anthropic/index.js";
import { requireToken } from "../api/auth-hook.js";
import { registerApiDocs } from "../api/docs/index.js";
import { openAiEmbeddingsRoutes } from "../api/embeddings/index.js";
import { geminiRoutes } from "../api/gemini/index.js";
import { imageRoutes } from "../api/images/index.js";
import { openAiModelRoutes } from "../api/models/index.js";
import { openAiChatRoutes } from "../api/openai-chat/index.js";
import { opsRoutes } from "../api/ops/index.js";
import { redemptionRoutes } from "../api/redemptions/index.js";
import { taskRoutes } from "../api/tasks/index.js";
import { videoFileRoutes } from "../api/videos/files.js";
import { videoRoutes } from "../api/videos/index.js";
import { consoleAdminRoutes } from "../console/server/admin-console-routes.js";
import { consoleApiRoutes } from "../console/server/index.js";
import { consoleWebRoutes } from "../console/web-server.js";
import { installSurface } from "../http/surfaces.js";
import type { GuardedFetcher } from "../net/guarded-fetch.js";
import type { TaskStore } from "../store/tasks.js";
import { imageGenerationWiring } from "../wiring/image-generation.js";
import { chatRelayDeps, contentRelayDeps, embeddingsRelayDeps } from "../wiring/metering.js";
import { taskSurfacePorts } from "../wiring/task-ports.js";
import { videoSurfacePorts } from "../wiring/video-ports.js";
import { registerCors } from "./cors.js";
import type { GatewayServices } from "./services.js";

/**
 * Registers the API docs and every public surface, each given the part of the services its
 * deps interface names.
 */
export async function registerSurfaces(
  app: FastifyInstance,
  services: GatewayServices,
  taskStore: TaskStore,
): Promise<void> {
  // Before any surface: the OpenAPI generator sees only routes added after it.
  await registerApiDocs(app, services.config.publicBaseUrl);
  // Anything outside a surface (unknown paths at the root) answers in the envelope shape.
  installSurface(app, "envelope");
  await registerCors(app, services.config.cors.origins);
  await app.register(opsRoutes, { deps: services });
  await app.register(
    async (admin) => {
      await adminRoutes(admin, { deps: services });
      // The console's operator routes (invites, console settings) share the admin API's scope and check.
      await admin.register(consoleAdminRoutes, { deps: services });
    },
    { prefix: "/api/admin" },
  );
  await app.register(taskRoutes, { deps: taskSurfacePorts(services, taskStore, requireToken(services)) });
  await app.register(videoRoutes, {
    deps: videoSurfacePorts(services, taskStore, requireToken(services)),
    prefix: "/v1/videos",
  });
  // The stored files a video's task record names (its content route is under /v1/videos).
  await app.register(videoFileRoutes, { files: services.videoFiles, prefix: "/video" });
  await app.register(imageRoutes, {
    deps: services,
    wiring: (parts) => imageGenerationWiring(services, parts),
    prefix: "/v1",
  });
  const chatRelay = (fetcher: GuardedFetcher) => chatRelayDeps(services, services.logger, fetcher);
  await app.register(openAiChatRoutes, { deps: services, relay: chatRelay, prefix: "/v1" });
  await app.register(anthropicRoutes, { deps: services, relay: chatRelay, prefix: "/v1/messages" });
  await app.register(openAiModelRoutes, { deps: services, prefix: "/v1" });
  await app.register(redemptionRoutes, { deps: services, prefix: "/v1" });
  const embeddingsRelay = embeddingsRelayDeps(services, services.logger);
  await app.register(openAiEmbeddingsRoutes, { deps: services, relay: embeddingsRelay, prefix: "/v1" });
  await app.register(geminiRoutes, {
    deps: services,
    relay: contentRelayDeps(services, services.logger),
    embeddings: embeddingsRelay,
    prefix: "/v1beta",
  });
  await app.register(consoleApiRoutes, { deps: services, prefix: "/console/api" });
  await app.register(consoleWebRoutes);
}
