/** Friendly names for the generated OpenAPI types (src/generated/openapi.ts, `npm run generate`). */

import type { components, operations, paths } from "./generated/openapi.js";

export type { components, operations, paths };

type Schemas = components["schemas"];

export type Memory = Schemas["MemoryOut"];
export type MemoryPage = Schemas["MemoryPage"];
export type MemoryHistory = Schemas["MemoryHistory"];
export type Message = Schemas["Message"];
export type AddBody = Schemas["AddBody"];
export type AddInput = Schemas["AddInput"];
export type AddResponse = Schemas["AddResponse"];
export type SearchRequest = Schemas["SearchRequest"];
export type ListRequest = Schemas["ListBody"];
export type RetrievalConfig = Schemas["RetrievalConfig"];
export type TopicSelector = Schemas["TopicSelector"];
export type Run = Schemas["RunOut"];
export type RunState = Schemas["RunState"];
export type GroupSummary = Schemas["GroupSummary"];
export type GroupConfig = Schemas["GroupConfig"];
export type GroupDocument = Schemas["GroupDocument"];
export type ProjectStatus = Schemas["ProjectStatus"];
