import type { Migration } from "kysely";
import * as m001 from "./001_initial.js";
import * as m002 from "./002_tasks.js";
import * as m003 from "./003_images.js";
import * as m004 from "./004_content.js";
import * as m005 from "./005_routing.js";
import * as m006 from "./006_idempotency.js";
import * as m007 from "./007_task_limits.js";
import * as m008 from "./008_charge_lifecycle.js";
import * as m009 from "./009_edges.js";
import * as m010 from "./010_videos.js";
import * as m011 from "./011_console.js";
import * as m012 from "./012_console_indexes.js";
import * as m013 from "./013_retention.js";
import * as m014 from "./014_price_model.js";
import * as m015 from "./015_redemption_codes.js";
import * as m016 from "./016_channel_keys.js";
import * as m017 from "./017_model_limits.js";

/** Every migration, in order. One set serves SQLite and PostgreSQL. */
export const MIGRATIONS: Record<string, Migration> = {
  "001_initial": m001,
  "002_tasks": m002,
  "003_images": m003,
  "004_content": m004,
  "005_routing": m005,
  "006_idempotency": m006,
  "007_task_limits": m007,
  "008_charge_lifecycle": m008,
  "009_edges": m009,
  "010_videos": m010,
  "011_console": m011,
  "012_console_indexes": m012,
  "013_retention": m013,
  "014_price_model": m014,
  "015_redemption_codes": m015,
  "016_channel_keys": m016,
  "017_model_limits": m017,
};
