import type { TaskUpstream } from "../core/tasks/ports.js";
import { generateRecordTasks } from "./generate-record/index.js";
import { openAiVideoTasks } from "./openai-videos/index.js";
import { taskRelayTasks } from "./task-relay/index.js";

/** The task adapter of each channel type that speaks a task protocol. */
const TASK_ADAPTERS: Readonly<Record<string, TaskUpstream>> = {
  "task-relay": taskRelayTasks,
  "generate-record": generateRecordTasks,
  "openai-videos": openAiVideoTasks,
};

/** The task adapter of a channel type; undefined when the type speaks no task protocol. */
export function taskUpstreamOf(channelType: string): TaskUpstream | undefined {
  return TASK_ADAPTERS[channelType];
}
