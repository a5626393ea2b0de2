export { Mnemo, Memories, Runs, Groups } from "./client.js";
export type { MnemoOptions, CallOptions, AddParams, MemoryScope, WaitOptions } from "./client.js";
export {
  MnemoError,
  MnemoProblemError,
  MnemoValidationError,
  MnemoAuthenticationError,
  MnemoPermissionError,
  MnemoNotFoundError,
  MnemoConflictError,
  MnemoPayloadTooLargeError,
  MnemoRateLimitError,
  MnemoServerError,
  MnemoConnectionError,
  MnemoTimeoutError,
  problemError,
  toProblem,
} from "./errors.js";
export type { ProblemDocument, ProblemFieldError } from "./errors.js";
export { parseRetryAfter } from "./transport.js";
export type { RetryOptions, RetryEvent } from "./transport.js";
export type * from "./types.js";
