import path from 'node:path';
import { loadConfig } from '../../src/config';

describe('config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: path.resolve('./data'),
      databaseUrl: undefined,
      temporalAddress: undefined,
      temporalNamespace: 'default',
      callbackAllowPrivate: false,
    });
  });

  it('reads valid values', () => {
    const c = loadConfig({
      PORT: '9000',
      DATABASE_URL: 'postgres://u:p@db:5432/gw',
      TEMPORAL_ADDRESS: 'temporal:7233',
      CALLBACK_ALLOW_PRIVATE: 'true',
    });
    expect(c).toMatchObject({ port: 9000, databaseUrl: 'postgres://u:p@db:5432/gw', temporalAddress: 'temporal:7233', callbackAllowPrivate: true });
  });

  it('watches a forward just broadcast for 4 s by default; FORWARD_WATCH_MS=0 never', () => {
    expect(loadConfig({}).forwardWatchMs).toBe(4000);
    expect(loadConfig({ FORWARD_WATCH_MS: '0' }).forwardWatchMs).toBe(0);
    expect(loadConfig({ FORWARD_WATCH_MS: '6000' }).forwardWatchMs).toBe(6000);
  });

  it('polls every 500 ms, and every 5 s while a head feed is live', () => {
    expect(loadConfig({})).toMatchObject({ watchIntervalMs: 500, watchFeedIntervalMs: 5000 });
    expect(loadConfig({ WATCH_FEED_INTERVAL_MS: '1000' }).watchFeedIntervalMs).toBe(1000);
  });

  it('lowers a worker process to nice 10 by default; WORKER_NICE=0 leaves it', () => {
    expect(loadConfig({}).workerNice).toBe(10);
    expect(loadConfig({ WORKER_NICE: '0' }).workerNice).toBe(0);
    expect(loadConfig({ WORKER_NICE: '19' }).workerNice).toBe(19);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ TEMPORAL_ADDRESS: 'no-port' }, 'TEMPORAL_ADDRESS'],
    [{ CALLBACK_ALLOW_PRIVATE: 'yes' }, 'CALLBACK_ALLOW_PRIVATE'],
    [{ TEMPORAL_LOG_LEVEL: 'verbose' }, 'TEMPORAL_LOG_LEVEL'],
    [{ TEMPORAL_CORE_LOG_LEVEL: 'loud' }, 'TEMPORAL_CORE_LOG_LEVEL'],
    [{ TEMPORAL_SERVER_LOG_LEVEL: 'chatty' }, 'TEMPORAL_SERVER_LOG_LEVEL'],
    [{ FORWARD_WATCH_MS: '9000' }, 'FORWARD_WATCH_MS'],
    [{ FORWARD_WATCH_MS: '-1' }, 'FORWARD_WATCH_MS'],
    [{ WATCH_FEED_INTERVAL_MS: '50' }, 'WATCH_FEED_INTERVAL_MS'],
    [{ WORKER_NICE: '20' }, 'WORKER_NICE'],
    [{ WORKER_NICE: '-5' }, 'WORKER_NICE'],
    [{ WORKER_NICE: 'low' }, 'WORKER_NICE'],
  ])('rejects %j with one line naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(`^invalid configuration: ${variable}`));
    try {
      loadConfig(env);
    } catch (e) {
      expect((e as Error).message).not.toContain('\n');
    }
  });

  it('reads the Temporal log levels: the SDK and its core in any case, WARN by default; the dev server warn', () => {
    expect(loadConfig({})).toMatchObject({ temporalLogLevel: 'WARN', temporalCoreLogLevel: 'WARN', temporalServerLogLevel: 'warn' });
    expect(loadConfig({ TEMPORAL_LOG_LEVEL: 'info', TEMPORAL_CORE_LOG_LEVEL: 'Debug', TEMPORAL_SERVER_LOG_LEVEL: 'info' })).toMatchObject({
      temporalLogLevel: 'INFO',
      temporalCoreLogLevel: 'DEBUG',
      temporalServerLogLevel: 'info',
    });
    expect(() => loadConfig({ TEMPORAL_CORE_LOG_LEVEL: 'loud' })).toThrow('invalid configuration: TEMPORAL_CORE_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR');
    expect(() => loadConfig({ TEMPORAL_LOG_LEVEL: 'verbose' })).toThrow('invalid configuration: TEMPORAL_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR');
    expect(() => loadConfig({ TEMPORAL_SERVER_LOG_LEVEL: 'chatty' })).toThrow('invalid configuration: TEMPORAL_SERVER_LOG_LEVEL must be one of debug, info, warn, error');
  });
});
