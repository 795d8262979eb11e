// The operator's pages.
import type { RouteDef } from "../router.js";
import { ChannelsPage } from "./channels.js";
import { CodesPage } from "./codes.js";
import { LogsPage } from "./logs.js";
import { OverviewPage } from "./overview.js";
import { PricesPage } from "./prices.js";
import { SettingsPage } from "./settings.js";
import { TaskPage, TasksPage } from "./tasks.js";
import { UserPage, UsersPage } from "./users.js";
import { WebhooksPage } from "./webhooks.js";

export const operatorRoutes: RouteDef[] = [
  { path: "/overview", title: "Overview", nav: true, view: () => <OverviewPage /> },
  { path: "/users", title: "Users", nav: true, view: () => <UsersPage /> },
  { path: "/users/:id", title: "User", view: (p) => <UserPage id={p.id ?? ""} /> },
  { path: "/channels", title: "Channels", nav: true, view: () => <ChannelsPage /> },
  { path: "/prices", title: "Prices", nav: true, view: () => <PricesPage /> },
  { path: "/codes", title: "Codes", nav: true, view: () => <CodesPage /> },
  { path: "/tasks", title: "Tasks", nav: true, view: () => <TasksPage /> },
  { path: "/tasks/:taskId", title: "Task", view: (p) => <TaskPage taskId={p.taskId ?? ""} /> },
  { path: "/logs", title: "Request log", nav: true, view: () => <LogsPage /> },
  { path: "/webhooks", title: "Webhooks", nav: true, view: () => <WebhooksPage /> },
  { path: "/settings", title: "Settings", nav: true, view: () => <SettingsPage /> },
];
