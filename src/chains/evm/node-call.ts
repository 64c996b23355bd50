import { isError } from 'ethers';
import { NodeUnavailableError } from '../adapter';
import { rpcErrorMessage } from '../rpc-errors';

/** A node call whose transport failure becomes NodeUnavailableError (retried), anything else as thrown. */
export async function nodeCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isError(e, 'NETWORK_ERROR') || isError(e, 'TIMEOUT') || isError(e, 'SERVER_ERROR') || isError(e, 'UNKNOWN_ERROR')) {
      throw new NodeUnavailableError(rpcErrorMessage(e), { cause: e });
    }
    throw e;
  }
}
