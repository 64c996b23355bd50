/**
 * Run once in each workflow thread's sandbox, before the SDK freezes the sandbox's globals (the bundler's
 * preloadModules: src/temporal/worker.ts WORKFLOW_PRELOAD_MODULES). Nothing here may hold per-workflow state.
 *
 * Stack traces in workflow code keep 3 frames (V8's default is 10). The SDK records the stack of every promise
 * a workflow creates (a promise hook, for the Temporal UI's stack-trace view, with no option to turn it off:
 * temporalio/sdk-typescript#1587), and maps each frame through the bundle's source map, a large share of the
 * workflow thread's time under a burst. With 3, the hook's own two frames leave one, the line that made the
 * promise; an error thrown in workflow code keeps its 3 innermost frames
 * (docs/decisions/0012-workflow-stack-trace-limit.md).
 */
Error.stackTraceLimit = 3;

export {};
