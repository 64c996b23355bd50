// Bundle entry for the worker: every workflow the gateway runs is exported here.
export { systemCheck } from './system-check';
export { depositWorkflow } from './deposit';
export { minimumRefresh, minimumPin } from './minimums';
export { paymentLifecycle, paymentWorkflow } from './payment';
export { sweep } from './sweep';
