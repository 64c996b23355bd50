import type { WorkflowHandle } from '@temporalio/client';

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/**
 * Temporal Cloud's billable Actions of one run, read from its history (https://docs.temporal.io/cloud/actions):
 * a workflow started (by a client, continue-as-new or a parent), every activity attempt started (the
 * history keeps the last attempt's number), the local activities of one workflow task as one Action,
 * a timer started, a signal received or sent, a search-attribute or memo upsert, a child workflow
 * started, an update accepted. Queries do not appear in a history; the deposit path sends none.
 * Workflow tasks are not billed: they are counted apart, with the history's events, for a self-hosted
 * cluster's load.
 */
export const ACTION_KINDS = ['workflow started', 'activity attempts', 'local-activity tasks', 'timers', 'signals', 'upserts', 'child workflows', 'updates'] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

export interface RunActions {
  actions: Record<ActionKind, number>;
  workflowTasks: number;
}

export function actionsOf(events: HistoryEvent[]): RunActions {
  const actions = Object.fromEntries(ACTION_KINDS.map((k) => [k, 0])) as Record<ActionKind, number>;
  const localTasks = new Set<string>();
  let workflowTasks = 0;
  for (const e of events) {
    if (e.workflowExecutionStartedEventAttributes) actions['workflow started']++;
    else if (e.activityTaskStartedEventAttributes) actions['activity attempts'] += Math.max(1, Number(e.activityTaskStartedEventAttributes.attempt ?? 1));
    else if (e.markerRecordedEventAttributes?.markerName === 'core_local_activity') localTasks.add(String(e.markerRecordedEventAttributes.workflowTaskCompletedEventId));
    else if (e.timerStartedEventAttributes) actions.timers++;
    else if (e.workflowExecutionSignaledEventAttributes || e.signalExternalWorkflowExecutionInitiatedEventAttributes) actions.signals++;
    else if (e.upsertWorkflowSearchAttributesEventAttributes || e.workflowPropertiesModifiedEventAttributes) actions.upserts++;
    else if (e.startChildWorkflowExecutionInitiatedEventAttributes) actions['child workflows']++;
    else if (e.workflowExecutionUpdateAcceptedEventAttributes) actions.updates++;
    else if (e.workflowTaskCompletedEventAttributes) workflowTasks++;
  }
  actions['local-activity tasks'] = localTasks.size;
  return { actions, workflowTasks };
}

export function addActions(a: RunActions | undefined, b: RunActions): RunActions {
  if (!a) return { actions: { ...b.actions }, workflowTasks: b.workflowTasks };
  for (const k of ACTION_KINDS) a.actions[k] += b.actions[k];
  a.workflowTasks += b.workflowTasks;
  return a;
}

export const totalActions = (r: RunActions) => ACTION_KINDS.reduce((s, k) => s + r.actions[k], 0);
