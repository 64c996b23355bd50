import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes that make every payment findable in the Temporal Web UI
 * (e.g. `GatewayPaymentUuid = "…"` or `GatewayTicker = "eth" AND GatewayStage = "sent"`).
 * Registered by the embedded dev server at start and by the compose file's setup service.
 */
export const SA_TICKER = defineSearchAttributeKey('GatewayTicker', SearchAttributeType.KEYWORD);
export const SA_CALLBACK_HOST = defineSearchAttributeKey('GatewayCallbackHost', SearchAttributeType.KEYWORD);
export const SA_PAYMENT_UUID = defineSearchAttributeKey('GatewayPaymentUuid', SearchAttributeType.KEYWORD);
export const SA_TXID_IN = defineSearchAttributeKey('GatewayTxidIn', SearchAttributeType.KEYWORD);
export const SA_STAGE = defineSearchAttributeKey('GatewayStage', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [SA_TICKER, SA_CALLBACK_HOST, SA_PAYMENT_UUID, SA_TXID_IN, SA_STAGE];

/** name → CLI type, for `temporal server start-dev --search-attribute` and `temporal operator search-attribute create`. */
export const SEARCH_ATTRIBUTE_CLI_TYPES: Record<string, 'Keyword'> = Object.fromEntries(
  SEARCH_ATTRIBUTES.map((k) => [k.name, 'Keyword' as const]),
);
