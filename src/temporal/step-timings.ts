import { Context } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { logger } from '../observability/logger';

/**
 * The worker's activity interceptor that writes each step's timing to the log at debug level
 * (`LOG_LEVEL=debug`): the step (activity type), its workflow, whether it ran as a local activity, its
 * attempt, how long it waited between being scheduled and starting (`waitMs`) and how long it ran
 * (`runMs`). A worker short of CPU shows in steps that do little and still run long, and in long waits
 * between one step's end and the next one's schedule; `bench/pipeline.ts --steps` tabulates these lines.
 * At any other level it only asks the logger's level.
 */
export class StepTimings implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    if (!logger.isLevelEnabled('debug')) return next(input);
    const info = Context.current().info;
    const started = Date.now();
    let failed = false;
    try {
      return await next(input);
    } catch (e) {
      failed = true;
      throw e;
    } finally {
      logger.debug(
        {
          step: info.activityType,
          workflowId: info.workflowExecution?.workflowId,
          local: info.isLocal,
          attempt: info.attempt,
          scheduledAt: info.currentAttemptScheduledTimestampMs,
          waitMs: started - info.currentAttemptScheduledTimestampMs,
          runMs: Date.now() - started,
          ...(failed ? { failed } : {}),
        },
        'step timing',
      );
    }
  }
}
