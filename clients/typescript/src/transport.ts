/**
 * HTTP for the client: the bearer key, JSON in and out, problem documents as typed errors,
 * and retries. What is retried: 429 and 503 (the server refused before doing anything, and
 * says how long to wait in Retry-After, which is honoured), 502 and 504, and a connection
 * that failed. Adds are safe to retry because the client names each with an Idempotency-Key.
 */

import {
  MnemoConnectionError,
  MnemoError,
  MnemoProblemError,
  MnemoTimeoutError,
  problemError,
  toProblem,
} from "./errors.js";

/** How a failed attempt is retried. */
export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retries off). */
  maxRetries?: number;
  /** First backoff when the server names no Retry-After, doubled per retry (default 500 ms). */
  baseDelayMs?: number;
  /** Longest wait between attempts, Retry-After included (default 30 s). */
  maxDelayMs?: number;
}

/** Told before each retry: which attempt failed, why, and how long the client waits. */
export interface RetryEvent {
  attempt: number;
  delayMs: number;
  error: MnemoError;
}

export interface TransportOptions {
  baseUrl: string;
  apiKey?: string;
  retry?: RetryOptions;
  /** Each attempt's time limit (default 90 s; a run wait adds its own long-poll time). */
  timeoutMs?: number;
  /** A fetch to use instead of the global one (Node 20+, browsers, Deno, Bun have one). */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  onRetry?: (event: RetryEvent) => void;
}

export interface Request {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  query?: Record<string, string | number | boolean | undefined | null>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Added to the attempt's time limit (a long poll). */
  extraTimeoutMs?: number;
}

export interface Response<T> {
  data: T;
  status: number;
  headers: Headers;
}

const RETRIED_STATUSES = new Set([429, 502, 503, 504]);

/** Seconds from a Retry-After header: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

export class Transport {
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly retry: Required<RetryOptions>;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly headers: Record<string, string>;
  private readonly onRetry: ((event: RetryEvent) => void) | undefined;

  constructor(options: TransportOptions) {
    if (!options.baseUrl) throw new MnemoError("baseUrl is required (e.g. http://127.0.0.1:8080)");
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.apiKey = options.apiKey;
    this.retry = {
      maxRetries: options.retry?.maxRetries ?? 3,
      baseDelayMs: options.retry?.baseDelayMs ?? 500,
      maxDelayMs: options.retry?.maxDelayMs ?? 30_000,
    };
    this.timeoutMs = options.timeoutMs ?? 90_000;
    const found = options.fetch ?? globalThis.fetch;
    if (typeof found !== "function") {
      throw new MnemoError("no fetch: use Node 20 or later, or pass `fetch` in the options");
    }
    this.fetchImpl = found;
    this.headers = options.headers ?? {};
    this.onRetry = options.onRetry;
  }

  async request<T>(req: Request): Promise<Response<T>> {
    for (let attempt = 1; ; attempt++) {
      let failure: MnemoError;
      try {
        return await this.attempt<T>(req);
      } catch (error) {
        if (!(error instanceof MnemoError)) throw error;
        failure = error;
      }
      const delayMs = this.retryDelay(failure, attempt);
      if (delayMs === undefined || req.signal?.aborted) throw failure;
      this.onRetry?.({ attempt, delayMs, error: failure });
      await sleep(delayMs, req.signal);
    }
  }

  /** The wait before the next attempt, or undefined when `error` is not retried. */
  private retryDelay(error: MnemoError, attempt: number): number | undefined {
    if (attempt > this.retry.maxRetries) return undefined;
    const backoff = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
    if (error instanceof MnemoConnectionError) return jitter(backoff);
    if (!(error instanceof MnemoProblemError) || !RETRIED_STATUSES.has(error.status)) return undefined;
    if (error.retryAfterSeconds !== undefined) {
      return Math.min(this.retry.maxDelayMs, error.retryAfterSeconds * 1000);
    }
    return jitter(backoff);
  }

  private async attempt<T>(req: Request): Promise<Response<T>> {
    const url = new URL(this.baseUrl + req.path);
    for (const [name, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { accept: "application/json", ...this.headers, ...req.headers };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (req.body !== undefined) headers["content-type"] = "application/json";
    const limit = AbortSignal.timeout(this.timeoutMs + (req.extraTimeoutMs ?? 0));
    const signal = req.signal ? AbortSignal.any([req.signal, limit]) : limit;
    let response: globalThis.Response;
    try {
      response = await this.fetchImpl(url, {
        method: req.method,
        headers,
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        signal,
      });
    } catch (error) {
      if (req.signal?.aborted) throw error; // the caller's own abort is not ours to wrap
      if (limit.aborted) throw new MnemoTimeoutError(`${req.method} ${req.path} timed out`, { cause: error });
      throw new MnemoConnectionError(`${req.method} ${url.origin}${req.path} failed: ${describe(error)}`, {
        cause: error,
      });
    }
    const text = await response.text();
    if (!response.ok) {
      const problem = toProblem(response.status, response.statusText, text);
      throw problemError(problem, parseRetryAfter(response.headers.get("retry-after")));
    }
    const data = (text === "" ? undefined : JSON.parse(text)) as T;
    return { data, status: response.status, headers: response.headers };
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}

function jitter(ms: number): number {
  return Math.round(ms * (0.5 + Math.random() / 2));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
