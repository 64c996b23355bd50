-- A configuration is found by where its callbacks go (callbackWireKey, src/callbacks/transport.ts), so that an alias
-- of a callback URL (fragment, host case, default port, dot segment, empty query pair) cannot get a payout of its
-- own (DESIGN 15). The key is computed by that code, not in SQL: rows stored before it are keyed at start
-- (backfillCallbackKeys, src/db/queries/callback-key.ts), oldest first; one that aliases an older row keeps none.
ALTER TABLE "payment_configs" ADD COLUMN "callback_key" text;--> statement-breakpoint
CREATE UNIQUE INDEX "payment_configs_callback_key_uq" ON "payment_configs" USING btree ("callback_key");