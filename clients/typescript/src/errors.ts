/**
 * Errors of the mnemo client. Every refusal of the server is an RFC 9457 problem document
 * (`application/problem+json`); it reaches the caller as a `MnemoProblemError` subclass chosen
 * by status, with the document itself in `.problem`.
 */

/** One offending field of a refused request, e.g. `body.input.conversation.messages`. */
export interface ProblemFieldError {
  location: string;
  message: string;
  value?: unknown;
}

/** The body of every error response of mnemo (RFC 9457), extension members included. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: ProblemFieldError[];
  [extension: string]: unknown;
}

/** The base of every error this client throws. */
export class MnemoError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The server answered with an error status; `problem` is its problem document. */
export class MnemoProblemError extends MnemoError {
  readonly status: number;
  readonly problem: ProblemDocument;
  /** Seconds the server asked to wait (Retry-After), when it said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(problem: ProblemDocument, retryAfterSeconds?: number) {
    const named = (problem.errors ?? []).map((e) => `${e.location}: ${e.message}`).join("; ");
    super(`${problem.status} ${problem.title}: ${problem.detail}${named ? ` (${named})` : ""}`);
    this.status = problem.status;
    this.problem = problem;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** The field errors of the document (empty when it names none). */
  get errors(): ProblemFieldError[] {
    return this.problem.errors ?? [];
  }
}

/** 400 or 422: the request is malformed; `errors` names each offending field. */
export class MnemoValidationError extends MnemoProblemError {}
/** 401: missing, unknown or revoked API key. */
export class MnemoAuthenticationError extends MnemoProblemError {}
/** 403: the key may not do this. */
export class MnemoPermissionError extends MnemoProblemError {}
/** 404: no such memory, run or group (or one of another user, group or project). */
export class MnemoNotFoundError extends MnemoProblemError {}
/** 409: conflicts with the current state (e.g. an Idempotency-Key reused with another body). */
export class MnemoConflictError extends MnemoProblemError {}
/** 413: the body is larger than the server accepts. */
export class MnemoPayloadTooLargeError extends MnemoProblemError {}
/** 429: the project is over its rate or open-run quota; retried unless retries are exhausted. */
export class MnemoRateLimitError extends MnemoProblemError {}
/** 5xx: the server could not answer now (503 is retried with its Retry-After). */
export class MnemoServerError extends MnemoProblemError {}

/** The server could not be reached, or the connection broke (after the retries). */
export class MnemoConnectionError extends MnemoError {}

/** A wait (for a run) or a request ran out of time. */
export class MnemoTimeoutError extends MnemoError {}

const BY_STATUS: Record<number, new (p: ProblemDocument, r?: number) => MnemoProblemError> = {
  400: MnemoValidationError,
  401: MnemoAuthenticationError,
  403: MnemoPermissionError,
  404: MnemoNotFoundError,
  409: MnemoConflictError,
  413: MnemoPayloadTooLargeError,
  422: MnemoValidationError,
  429: MnemoRateLimitError,
};

/** The typed error for a problem document (unknown 4xx: the base class). */
export function problemError(problem: ProblemDocument, retryAfterSeconds?: number): MnemoProblemError {
  const Known = BY_STATUS[problem.status];
  if (Known) return new Known(problem, retryAfterSeconds);
  if (problem.status >= 500) return new MnemoServerError(problem, retryAfterSeconds);
  return new MnemoProblemError(problem, retryAfterSeconds);
}

const STANDARD_TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/**
 * The problem document of an error response. A body that is not one (a proxy's HTML page,
 * say) is described by a document of type `about:blank` with the text as its detail.
 */
export function toProblem(status: number, statusText: string, body: string): ProblemDocument {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === "object" && typeof (parsed as ProblemDocument).detail === "string") {
      const doc = parsed as ProblemDocument;
      return { ...doc, type: doc.type ?? "about:blank", title: doc.title ?? statusText, status: doc.status ?? status };
    }
  } catch {
    // not JSON: described below
  }
  const title = STANDARD_TITLES[status] ?? (statusText || `HTTP ${status}`);
  return { type: "about:blank", title, status, detail: body.slice(0, 500) || title };
}
