// Bundle entry for the worker: every workflow the gateway runs is exported here.
export { systemCheck } from './system-check';
export { minimumRefresh, minimumPin } from './minimums';
export { paymentLifecycle } from './payment';
export { sweep } from './sweep';
