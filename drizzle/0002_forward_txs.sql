CREATE TABLE "forward_txs" (
	"txid" text PRIMARY KEY NOT NULL,
	"payment_uuid" uuid NOT NULL,
	"network" text NOT NULL,
	"source" text NOT NULL,
	"nonce" bigint,
	"discarded_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "forward_txs" ADD CONSTRAINT "forward_txs_payment_uuid_payments_uuid_fk" FOREIGN KEY ("payment_uuid") REFERENCES "public"."payments"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "forward_txs_source_idx" ON "forward_txs" USING btree ("network","source","nonce");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_txid_out_uq" ON "payments" USING btree ("txid_out");--> statement-breakpoint
-- Forwards stored before this table existed; their nonce is not known here (the node's pending count covers them).
INSERT INTO "forward_txs" ("txid", "payment_uuid", "network", "source")
SELECT p."txid_out", p."uuid", p."network", c."address_in" FROM "payments" p JOIN "payment_configs" c ON c."id" = p."config_id"
WHERE p."txid_out" IS NOT NULL ON CONFLICT DO NOTHING;
