import querystring from 'node:querystring';
import { GatewayError } from '../src/domain/errors';

/** Parameters one create may carry; more is refused, by every transport alike. */
export const PARAMS_MAX = 50;

/**
 * The pairs of a GET query or a form body, by one rule for both (SPEC 4.6: the same contract): a name given
 * twice becomes an array, an empty name stays a parameter named '' (refused as unknown), empty pairs are
 * skipped, and more than PARAMS_MAX pairs are refused rather than cut.
 */
export function parseParams(text: string, field: 'query' | 'body'): Record<string, string | string[]> {
  // The text is bounded (the body limit, Node's header limit for a query): counting its pairs is cheap.
  if (text.split('&').filter((p) => p !== '').length > PARAMS_MAX) {
    throw new GatewayError(1001, `The request has more than ${PARAMS_MAX} parameters.`, { [field]: ['Too many parameters.'] });
  }
  // A plain object, as JSON.parse gives the JSON transport (querystring's own result has no prototype).
  return { ...querystring.parse(text, '&', '=', { maxKeys: 0 }) } as Record<string, string | string[]>;
}
