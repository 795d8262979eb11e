import { describe, expect, it } from "vitest";
import { errorShapeOf, routeAreaOf } from "./route-table.js";

describe("the route table", () => {
  it("gives each path the most specific area that covers it", () => {
    expect(routeAreaOf("/v1/images/generations")).toMatchObject({ surface: "images", auth: "bearer" });
    expect(routeAreaOf("/v1/images/files/abc.png")).toMatchObject({ surface: "images", auth: "none" });
    expect(routeAreaOf("/v1/messages?beta=true")).toMatchObject({ surface: "chat", auth: "anthropic" });
    expect(routeAreaOf("/v1/models/x")).toMatchObject({ surface: "models", auth: "bearer" });
    expect(routeAreaOf("/v1beta/models/m:generateContent")).toMatchObject({ surface: "content", auth: "google" });
    expect(routeAreaOf("/audiob/callback/x")).toMatchObject({ surface: "tasks", auth: "none" });
    expect(routeAreaOf("/video/files/abc.mp4")).toMatchObject({ surface: "videos", auth: "none", errors: "envelope" });
    expect(routeAreaOf("/api/admin/users")).toMatchObject({ surface: "admin", auth: "admin-key" });
    expect(routeAreaOf("/console/api/me/tokens")).toMatchObject({ surface: "console", auth: "session" });
    expect(errorShapeOf("/console/api/login")).toBe("console");
  });

  it("answers errors outside every area, and on look-alike paths, in the envelope shape", () => {
    expect(errorShapeOf("/healthz")).toBe("envelope");
    expect(errorShapeOf("/v1betax/models")).toBe("envelope");
    expect(errorShapeOf("/v1/messagesx")).toBe("openai");
    expect(errorShapeOf("/v1beta")).toBe("google");
    expect(errorShapeOf("/v1")).toBe("openai");
  });
});
