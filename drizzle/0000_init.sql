CREATE TABLE "assets" (
	"ticker" text PRIMARY KEY NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"minimum_base" numeric(78, 0),
	"fee_percent" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chain_cursors" (
	"network" text PRIMARY KEY NOT NULL,
	"height" bigint NOT NULL,
	"block_hash" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "delivery_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"payment_uuid" uuid NOT NULL,
	"stage" text NOT NULL,
	"attempt" integer NOT NULL,
	"request_url" text NOT NULL,
	"response_body" text,
	"response_status" integer,
	"error" text,
	"next_try" timestamp with time zone,
	"pending" smallint NOT NULL,
	"confirmed" smallint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "derivation_counters" (
	"family" text PRIMARY KEY NOT NULL,
	"next_index" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payment_configs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"callback_url" text NOT NULL,
	"ticker" text NOT NULL,
	"family" text NOT NULL,
	"address_in" text NOT NULL,
	"address_out" text NOT NULL,
	"derivation_index" bigint NOT NULL,
	"notify_pending" boolean NOT NULL,
	"notify_confirmations" integer NOT NULL,
	"post" smallint NOT NULL,
	"json" smallint NOT NULL,
	"convert" smallint NOT NULL,
	"priority" text NOT NULL,
	"minimum_transaction_base" numeric(78, 0),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payments" (
	"uuid" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"config_id" uuid NOT NULL,
	"ticker" text NOT NULL,
	"network" text NOT NULL,
	"deposit_key" text NOT NULL,
	"txid_in" text,
	"vout" integer,
	"block_number" bigint,
	"block_hash" text,
	"value_base" numeric(78, 0) NOT NULL,
	"forwarded_base" numeric(78, 0) DEFAULT '0' NOT NULL,
	"fee_base" numeric(78, 0) DEFAULT '0' NOT NULL,
	"fee_percent" text DEFAULT '0.00' NOT NULL,
	"price" text,
	"confirmations" integer DEFAULT 0 NOT NULL,
	"result" text NOT NULL,
	"reason" text,
	"txid_out" text,
	"forward_raw" text,
	"snapshot" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_update" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_payment_uuid_payments_uuid_fk" FOREIGN KEY ("payment_uuid") REFERENCES "public"."payments"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_config_id_payment_configs_id_fk" FOREIGN KEY ("config_id") REFERENCES "public"."payment_configs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "delivery_attempts_payment_stage_attempt_uq" ON "delivery_attempts" USING btree ("payment_uuid","stage","attempt");--> statement-breakpoint
CREATE UNIQUE INDEX "payment_configs_callback_url_uq" ON "payment_configs" USING btree ("callback_url");--> statement-breakpoint
CREATE INDEX "payment_configs_family_address_in_idx" ON "payment_configs" USING btree ("family","address_in");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_deposit_key_uq" ON "payments" USING btree ("deposit_key");--> statement-breakpoint
CREATE INDEX "payments_config_ticker_idx" ON "payments" USING btree ("config_id","ticker");