// The user's pages.
import type { RouteDef } from "../router.js";
import { MePage } from "./me.js";
import { MyImagesPage, MyTaskPage, MyTasksPage } from "./media.js";
import { PlaygroundPage } from "./playground.js";
import { TokensPage } from "./tokens.js";
import { MyVideosPage } from "./videos.js";
import { WebhookPage } from "./webhook.js";

export const userRoutes: RouteDef[] = [
  { path: "/me", title: "Balance", nav: true, view: () => <MePage /> },
  { path: "/me/tokens", title: "Tokens", nav: true, view: () => <TokensPage /> },
  { path: "/me/tasks", title: "Tasks", nav: true, view: () => <MyTasksPage /> },
  { path: "/me/tasks/:taskId", title: "Task", view: (p) => <MyTaskPage taskId={p.taskId ?? ""} /> },
  { path: "/me/images", title: "Images", nav: true, view: () => <MyImagesPage /> },
  { path: "/me/videos", title: "Videos", nav: true, view: () => <MyVideosPage /> },
  { path: "/me/webhook", title: "Webhook", nav: true, view: () => <WebhookPage /> },
  { path: "/me/playground", title: "Playground", nav: true, view: () => <PlaygroundPage /> },
];
