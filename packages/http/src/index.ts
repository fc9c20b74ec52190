export { HttpError, RequestBodyError, shouldRetry, type HttpErrorCode, type HttpErrorOptions } from "./errors.js";
export {
  describeCause,
  errorDetail,
  isSuccess,
  parseReply,
  requestJson,
  send,
  snippet,
  statusError,
  type HttpReply,
  type HttpRequest,
  type HttpSettings,
} from "./request.js";
export { defaultRetryOptions, withRetry, type RetryEvent, type RetryOptions } from "./retry.js";
