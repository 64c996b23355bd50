/**
 * The spec's error table (SPEC 7): one union of codes, one table of identifier and HTTP status.
 * Chain and database failures become one of these only at the API boundary (api/errors.ts).
 */
export const ERROR_TABLE = {
  1001: { error: 'VALIDATION_FAILED', http: 422, message: 'One or more request values are invalid.' },
  1002: { error: 'ENDPOINT_NOT_FOUND', http: 404, message: 'The requested API route does not exist. Check method and path.' },
  1003: { error: 'RATE_LIMITED', http: 429, message: 'Too many requests from this client. Retry after the time in Retry-After.' },
  1101: { error: 'UNSUPPORTED_CURRENCY', http: 422, message: 'The ticker or network is unknown or unsupported.' },
  1102: { error: 'CURRENCY_DISABLED', http: 422, message: 'The asset is currently disabled.' },
  1103: { error: 'UNSUPPORTED_PRIORITY', http: 422, message: 'The network does not support the requested priority.' },
  1201: { error: 'PAYMENT_NOT_FOUND', http: 404, message: 'No payment matches the ticker and callback URL.' },
  1202: {
    error: 'CALLBACK_ADDRESS_FAMILY_CONFLICT',
    http: 409,
    message: 'The callback URL already belongs to another address family. Use a new callback URL.',
  },
  1501: { error: 'INTERNAL_GATEWAY_ERROR', http: 500, message: 'Internal error. Retry later.' },
} as const satisfies Record<number, { error: string; http: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

export type FieldErrors = Record<string, string[]>;

export interface ErrorBody {
  status: 'error';
  code: ErrorCode;
  error: (typeof ERROR_TABLE)[ErrorCode]['error'];
  message: string;
  errors?: FieldErrors;
}

/** A failure that is allowed to reach a merchant, with the spec's code. */
export class GatewayError extends Error {
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly errors?: FieldErrors,
  ) {
    super(message ?? ERROR_TABLE[code].message);
    this.name = 'GatewayError';
  }

  get httpStatus(): number {
    return ERROR_TABLE[this.code].http;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { status: 'error', code: this.code, error: ERROR_TABLE[this.code].error, message: this.message };
    if (this.errors) body.errors = this.errors;
    return body;
  }
}
