#!/usr/bin/env node
// Runs the TypeScript entry point through tsx's loader, so `npx media-gateway ...` works from a checkout.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
