// The chain hints a payment run waits on (the watcher's `chain` signal), and the one fallback timer that
// covers a lost hint: the state behind the workflow's waitHint (workflows/payment.ts). A hint that arrives
// while a reading is under way is kept for the next wait.
import { CancellationScope, sleep } from '@temporalio/workflow';

export class Hints {
  /** Hints received, and how many of them had come when the last reading began. */
  private received = 0;
  private readFrom = 0;
  /**
   * The fallback reading's timer, one for consecutive waits for a hint: a wait of fallbackMs joins the one
   * under way instead of starting its own, and a hint leaves it running rather than cancelling it. A lost
   * hint still costs at most fallbackMs; a happy path pays one timer event in all instead of a start and a
   * cancel per wait. Undefined when none runs.
   */
  private fallback: { fired: Promise<boolean>; scope: CancellationScope } | undefined;

  constructor(private readonly fallbackMs: number) {}

  /** The `chain` signal's handler. */
  readonly hinted = (): void => {
    this.received++;
  };

  /** A reading begins: hints from now on are news to it. */
  beginReading(): void {
    this.readFrom = this.received;
  }

  /** Whether a hint came since the last reading began. */
  news(): boolean {
    return this.received > this.readFrom;
  }

  /**
   * Before a wait that no hint ends (the confirmed callback's next attempt, a resend): the fallback timer
   * would only fire into it, a task for nothing.
   */
  dropFallback(): void {
    this.fallback?.scope.cancel();
    this.fallback = undefined;
  }

  /**
   * The fallback timer's firing (true; false when it was dropped): the one under way, or a new one of
   * fallbackMs.
   */
  fallbackTimer(): Promise<boolean> {
    if (!this.fallback) {
      const scope = new CancellationScope();
      const fired = scope.run(() => sleep(this.fallbackMs)).then(
        () => true,
        () => false,
      );
      const mine = { fired, scope };
      void fired.then(() => {
        if (this.fallback === mine) this.fallback = undefined;
      });
      this.fallback = mine;
    }
    return this.fallback.fired;
  }
}
