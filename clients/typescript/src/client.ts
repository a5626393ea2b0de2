/**
 * The hand-written surface of the mnemo client: `memories`, `runs` and `groups`, over the
 * generated wire types. Field names are the wire's (snake_case), so the server's docs apply
 * as they are.
 */

import { MnemoTimeoutError } from "./errors.js";
import { Transport, type TransportOptions } from "./transport.js";
import type {
  AddBody,
  AddInput,
  AddResponse,
  GroupConfig,
  GroupDocument,
  GroupSummary,
  ListRequest,
  Memory,
  MemoryHistory,
  MemoryPage,
  Message,
  ProjectStatus,
  Run,
  SearchRequest,
} from "./types.js";

export interface MnemoOptions extends Omit<TransportOptions, "baseUrl" | "apiKey"> {
  /** Where mnemo listens, e.g. http://127.0.0.1:8080 (default: MNEMO_URL). */
  baseUrl?: string;
  /** An API key of the project (default: MNEMO_API_KEY). */
  apiKey?: string;
}

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
}

/**
 * What to remember: plain `text` (one or more strings), chat `messages`, or a raw Engram
 * `input`. The rest is the add body as the server takes it.
 */
export type AddParams = Omit<AddBody, "input"> &
  ({ text: string | string[] } | { messages: Message[] } | { input: AddInput }) & {
    /** Names this add so that a retry stores it once (default: a fresh UUID per call). */
    idempotencyKey?: string;
  };

/** Which memory: it is found only in its own user's and group's scope. */
export interface MemoryScope {
  user_id?: string;
  group?: string;
}

export interface WaitOptions extends CallOptions {
  /** Give up after this long (default 120 s); the run goes on in the server. */
  timeoutMs?: number;
}

const TERMINAL = new Set(["completed", "failed"]);
const MAX_LONG_POLL_SECONDS = 60; // the server's cap on ?wait=

function env(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return proc?.env?.[name];
}

function seg(value: string): string {
  return encodeURIComponent(value);
}

function toInput(params: AddParams): AddInput {
  if ("input" in params) return params.input;
  if ("messages" in params) return { conversation: { messages: params.messages } };
  const texts = Array.isArray(params.text) ? params.text : [params.text];
  return { string: { content: texts } };
}

export class Memories {
  constructor(private readonly http: Transport) {}

  /** Record an add and start its pipeline run (poll or `runs.wait` it for the result). */
  async add(params: AddParams, options: CallOptions = {}): Promise<AddResponse> {
    const { idempotencyKey, ...rest } = params as AddParams & Record<string, unknown>;
    delete rest.text;
    delete rest.messages;
    const body: AddBody = { ...(rest as Omit<AddBody, "input">), input: toInput(params) };
    const response = await this.http.request<AddResponse>({
      method: "POST",
      path: "/v1/memories",
      body,
      headers: { "Idempotency-Key": idempotencyKey ?? crypto.randomUUID() },
      signal: options.signal,
    });
    return response.data;
  }

  /** Vector, BM25 or hybrid retrieval (hybrid by default), best first, with scores. */
  async search(params: SearchRequest, options: CallOptions = {}): Promise<MemoryPage> {
    const response = await this.http.request<MemoryPage>({
      method: "POST",
      path: "/v1/memories/search",
      body: params,
      signal: options.signal,
    });
    return response.data;
  }

  /** One page of memories without a query, newest first (`next_cursor` leads on). */
  async list(params: ListRequest = {}, options: CallOptions = {}): Promise<MemoryPage> {
    const response = await this.http.request<MemoryPage>({
      method: "POST",
      path: "/v1/memories/list",
      body: params,
      signal: options.signal,
    });
    return response.data;
  }

  /** Every matching memory, page after page (stable under concurrent writes). */
  async *listAll(params: Omit<ListRequest, "cursor" | "offset"> = {}, options: CallOptions = {}): AsyncGenerator<Memory> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ ...params, cursor }, options);
      yield* page.memories;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  /** One memory; another user's, group's or project's is a 404 (`MnemoNotFoundError`). */
  async get(memoryId: string, scope: MemoryScope = {}, options: CallOptions = {}): Promise<Memory> {
    const response = await this.http.request<Memory>({
      method: "GET",
      path: `/v1/memories/${seg(memoryId)}`,
      query: { ...scope },
      signal: options.signal,
    });
    return response.data;
  }

  /** Delete a memory (kept in its history); `erase: true` removes every trace of it. */
  async delete(
    memoryId: string,
    scope: MemoryScope & { erase?: boolean } = {},
    options: CallOptions = {},
  ): Promise<void> {
    await this.http.request<undefined>({
      method: "DELETE",
      path: `/v1/memories/${seg(memoryId)}`,
      query: { ...scope },
      signal: options.signal,
    });
  }

  /** The prior versions of a memory with the runs that changed them. */
  async history(memoryId: string, scope: MemoryScope = {}, options: CallOptions = {}): Promise<MemoryHistory> {
    const response = await this.http.request<MemoryHistory>({
      method: "GET",
      path: `/v1/memories/${seg(memoryId)}/history`,
      query: { ...scope },
      signal: options.signal,
    });
    return response.data;
  }
}

export class Runs {
  constructor(private readonly http: Transport) {}

  /** A run's status and, once completed, the memory operations it committed. */
  async get(runId: string, options: CallOptions = {}): Promise<Run> {
    const response = await this.http.request<Run>({
      method: "GET",
      path: `/v1/runs/${seg(runId)}`,
      signal: options.signal,
    });
    return response.data;
  }

  /**
   * The run once it has completed or failed (a failed run is returned, not thrown: its
   * `error` says why). Long-polls the server, so it answers as soon as the run ends.
   * Throws `MnemoTimeoutError` when `timeoutMs` passes first.
   */
  async wait(runId: string, options: WaitOptions = {}): Promise<Run> {
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    for (;;) {
      const left = deadline - Date.now();
      const waitSeconds = Math.max(0, Math.min(MAX_LONG_POLL_SECONDS, Math.floor(left / 1000)));
      const response = await this.http.request<Run>({
        method: "GET",
        path: `/v1/runs/${seg(runId)}`,
        query: { wait: waitSeconds || undefined },
        signal: options.signal,
        extraTimeoutMs: waitSeconds * 1000,
      });
      const run = response.data;
      if (TERMINAL.has(run.status)) return run;
      if (Date.now() >= deadline) {
        throw new MnemoTimeoutError(`run ${runId} is still ${run.status} after ${options.timeoutMs ?? 120_000} ms`);
      }
      if (!waitSeconds) await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

export class Groups {
  constructor(private readonly http: Transport) {}

  /** The project's groups and their topics (`default` always exists). */
  async list(options: CallOptions = {}): Promise<GroupSummary[]> {
    const response = await this.http.request<{ groups: GroupSummary[] }>({
      method: "GET",
      path: "/v1/groups",
      signal: options.signal,
    });
    return response.data.groups;
  }

  /** A group's full configuration, pipeline included. */
  async get(name: string, options: CallOptions = {}): Promise<GroupConfig> {
    const response = await this.http.request<GroupConfig>({
      method: "GET",
      path: `/v1/groups/${seg(name)}`,
      signal: options.signal,
    });
    return response.data;
  }

  /** Create or replace a group from a template name or topics plus a pipeline. */
  async put(name: string, document: GroupDocument, options: CallOptions = {}): Promise<GroupConfig> {
    const response = await this.http.request<GroupConfig>({
      method: "PUT",
      path: `/v1/groups/${seg(name)}`,
      body: document,
      signal: options.signal,
    });
    return response.data;
  }
}

/**
 * A client of one mnemo project (the API key's).
 *
 * ```ts
 * const mnemo = new Mnemo({ baseUrl: "http://127.0.0.1:8080", apiKey: process.env.MNEMO_API_KEY });
 * const { run_id } = await mnemo.memories.add({ user_id: "ada", text: "I moved to Lisbon" });
 * await mnemo.runs.wait(run_id);
 * const { memories } = await mnemo.memories.search({ user_id: "ada", query: "where does Ada live?" });
 * ```
 */
export class Mnemo {
  readonly memories: Memories;
  readonly runs: Runs;
  readonly groups: Groups;
  private readonly http: Transport;

  constructor(options: MnemoOptions = {}) {
    this.http = new Transport({
      ...options,
      baseUrl: options.baseUrl ?? env("MNEMO_URL") ?? "",
      apiKey: options.apiKey ?? env("MNEMO_API_KEY"),
    });
    this.memories = new Memories(this.http);
    this.runs = new Runs(this.http);
    this.groups = new Groups(this.http);
  }

  get baseUrl(): string {
    return this.http.baseUrl;
  }

  /** The project's counts and its pipeline's state. */
  async status(options: CallOptions = {}): Promise<ProjectStatus> {
    const response = await this.http.request<ProjectStatus>({
      method: "GET",
      path: "/v1/status",
      signal: options.signal,
    });
    return response.data;
  }
}
