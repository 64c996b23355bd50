import pino from 'pino';

/**
 * Structured JSON logs. Secrets never reach a log line: the redact list names every field that could
 * carry one, and callback bodies are only logged at debug level by the code that has them.
 */
export const logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: 'gateway' },
  redact: {
    paths: ['mnemonic', 'seed', 'privateKey', 'signingKey', 'password', 'req.headers.authorization', '*.mnemonic', '*.privateKey', '*.password'],
    censor: '[redacted]',
  },
});
