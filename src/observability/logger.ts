import pino from 'pino';

/** Where log lines go: stdout, unless a process (the test runner) sends them elsewhere. */
export interface LogSink {
  write(line: string): void;
}

/**
 * stdout without blocking the event loop: a line is appended to a buffer that is written while the process
 * goes on (coalesced under load), and flushed synchronously at exit (pino registers that). A write per line
 * to a file or pipe was a blocking system call inside every request.
 */
let sink: LogSink = pino.destination({ dest: 1, sync: false });

/**
 * Sends every later log line of this process to `next` (tests: one file per test file, shown when a test
 * fails). Returns the previous sink.
 */
export function setLogSink(next: LogSink): LogSink {
  const previous = sink;
  sink = next;
  return previous;
}

/**
 * Structured JSON logs. Secrets never reach a log line: the redact list names every field that could
 * carry one, and callback bodies are only logged at debug level by the code that has them. No URL or
 * query string is logged either (errors pass through src/observability/redact.ts).
 */
/** What both loggers below share: level, base fields and the current sink. */
const LINE_OPTIONS = { level: process.env.LOG_LEVEL || 'info', base: { service: 'gateway' } };
const toSink = { write: (line: string) => sink.write(line) };

export const logger = pino(
  {
    ...LINE_OPTIONS,
    redact: {
      paths: ['mnemonic', 'seed', 'privateKey', 'signingKey', 'password', 'req.headers.authorization', '*.mnemonic', '*.privateKey', '*.password'],
      censor: '[redacted]',
    },
  },
  toSink,
);

/**
 * The same lines to the same place, without the redact pass: only for the request log
 * (src/observability/request-log.ts), whose lines hold the fields it names and nothing a caller passes
 * through (a request ID it accepts only as a plain token, the method, the path without its query string,
 * the status and the time). The redact pass is a cost on every read (docs/decisions/0014-api-router-and-request-log.md).
 */
export const requestLogger = pino(LINE_OPTIONS, toSink);
