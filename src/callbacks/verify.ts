/**
 * The receiver's side of SPEC 5, for the project's own receivers (examples/merchant-receiver.ts, tests):
 * the merchant kit's standalone TypeScript verifier is the one implementation (clients/typescript, which a
 * merchant copies as it is); test/clients checks it, and the other languages, against real callbacks.
 */
export {
  MAX_SKEW_SECONDS, callbackFields, checkPayment, verifyCallback, type CallbackRequest, type ExpectedPayment, type VerifyResult,
} from '../../clients/typescript/verify';
