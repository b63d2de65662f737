/** One refused field of an error answer: `{field, reason}`. */
export interface ErrorDetail {
  field: string;
  reason: string;
}

/**
 * Codes the SDK gives errors of its own, which no answer of Herald carries
 * (Herald's codes all start with `ERR-AB-`).
 */
export const QueueFull = "HERALD-SDK-QUEUE-FULL";
/** The code of an error answer without Herald's error body (a proxy's page). */
export const BadAnswer = "HERALD-SDK-BAD-ANSWER";

/**
 * HeraldError is a call Herald refused for good: the spec's error body
 * (`code` such as `ERR-AB-SDK-31`, the HTTP `status`, `message`, `details`)
 * or one of the SDK's own codes (QueueFull, BadAnswer; `status` 0 when no
 * answer came). Calls that can succeed later (no network, 429, 5xx) are
 * retried, never refused.
 */
export class HeraldError extends Error {
  readonly code: string;
  readonly status: number;
  readonly details: ErrorDetail[];
  /** The request path of the refused call, such as `/api/sdk/v2/user`. */
  readonly path: string;

  constructor(code: string, status: number, message: string, details: ErrorDetail[] = [], path = "") {
    super(message);
    this.name = "HeraldError";
    this.code = code;
    this.status = status;
    this.details = details;
    this.path = path;
  }
}

/** errorFromAnswer reads an error answer's body into a HeraldError. */
export function errorFromAnswer(status: number, path: string, body: unknown): HeraldError {
  if (typeof body === "object" && body !== null) {
    const b = body as Record<string, unknown>;
    if (typeof b.code === "string" && typeof b.message === "string") {
      const details = Array.isArray(b.details) ? (b.details as ErrorDetail[]) : [];
      return new HeraldError(b.code, status, b.message, details, typeof b.path === "string" ? b.path : path);
    }
  }
  return new HeraldError(BadAnswer, status, `Herald answered ${status} without an error body.`, [], path);
}
