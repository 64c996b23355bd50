-- The whole schema of a fresh database. Tables, indexes and keys are generated from src/db/schema.ts
-- (npm run db:generate); what drizzle cannot declare follows them, written by hand: the notices that keep
-- the API's /logs cache true, the derivation sequences, the fee tier's per-hour volume trigger and the
-- API's database role.
CREATE TABLE "address_pool" (
	"network" text NOT NULL,
	"derivation_index" bigint NOT NULL,
	"address" text NOT NULL,
	"taken_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "asset_minimums" (
	"ticker" text PRIMARY KEY NOT NULL,
	"value_base" numeric(78, 0),
	"computed_at" timestamp with time zone,
	"unavailable_reason" text,
	"attempted_at" timestamp with time zone,
	"pinned_base" numeric(78, 0),
	"pinned_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "assets" (
	"ticker" text PRIMARY KEY NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
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
CREATE TABLE "config_tickers" (
	"config_id" uuid NOT NULL,
	"ticker" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
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
CREATE TABLE "derived_addresses" (
	"source" text NOT NULL,
	"derivation_index" bigint NOT NULL,
	"address" text NOT NULL,
	CONSTRAINT "derived_addresses_source_derivation_index_pk" PRIMARY KEY("source","derivation_index")
);
--> statement-breakpoint
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
CREATE TABLE "host_volume_hours" (
	"host" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"ticker" text NOT NULL,
	"value_times_price" numeric NOT NULL,
	"stripe" smallint DEFAULT -1 NOT NULL,
	CONSTRAINT "host_volume_hours_host_hour_ticker_stripe_pk" PRIMARY KEY("host","hour","ticker","stripe")
);
--> statement-breakpoint
CREATE TABLE "payment_configs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"callback_url" text NOT NULL,
	"callback_key" text NOT NULL,
	"callback_host" text NOT NULL,
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
	"due_height" bigint,
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
	"forward_watch_until" timestamp with time zone,
	"snapshot" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_update" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "public_material" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sweeps" (
	"txid" text PRIMARY KEY NOT NULL,
	"network" text NOT NULL,
	"ticker" text NOT NULL,
	"source" text NOT NULL,
	"destination" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"fee" numeric(78, 0) NOT NULL,
	"plan" text NOT NULL,
	"nonce" bigint,
	"status" text NOT NULL,
	"reason" text,
	"replaceable_at" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "config_tickers" ADD CONSTRAINT "config_tickers_config_id_payment_configs_id_fk" FOREIGN KEY ("config_id") REFERENCES "public"."payment_configs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_payment_uuid_payments_uuid_fk" FOREIGN KEY ("payment_uuid") REFERENCES "public"."payments"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "forward_txs" ADD CONSTRAINT "forward_txs_payment_uuid_payments_uuid_fk" FOREIGN KEY ("payment_uuid") REFERENCES "public"."payments"("uuid") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_config_id_payment_configs_id_fk" FOREIGN KEY ("config_id") REFERENCES "public"."payment_configs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "address_pool_network_index_uq" ON "address_pool" USING btree ("network","derivation_index");--> statement-breakpoint
CREATE INDEX "address_pool_free_idx" ON "address_pool" USING btree ("network","derivation_index") WHERE "address_pool"."taken_at" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "config_tickers_config_ticker_uq" ON "config_tickers" USING btree ("config_id","ticker");--> statement-breakpoint
CREATE UNIQUE INDEX "delivery_attempts_payment_stage_attempt_uq" ON "delivery_attempts" USING btree ("payment_uuid","stage","attempt");--> statement-breakpoint
CREATE INDEX "forward_txs_source_idx" ON "forward_txs" USING btree ("network","source","nonce");--> statement-breakpoint
CREATE UNIQUE INDEX "forward_txs_live_nonce_uq" ON "forward_txs" USING btree ("network","source","nonce") WHERE "forward_txs"."discarded_at" IS NULL AND "forward_txs"."nonce" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "payment_configs_callback_url_uq" ON "payment_configs" USING btree ("callback_url");--> statement-breakpoint
CREATE UNIQUE INDEX "payment_configs_callback_key_uq" ON "payment_configs" USING btree ("callback_key");--> statement-breakpoint
CREATE INDEX "payment_configs_family_address_in_idx" ON "payment_configs" USING btree ("family","address_in");--> statement-breakpoint
CREATE INDEX "payment_configs_family_created_at_idx" ON "payment_configs" USING btree ("family","created_at");--> statement-breakpoint
CREATE INDEX "payment_configs_callback_host_idx" ON "payment_configs" USING btree ("callback_host");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_deposit_key_uq" ON "payments" USING btree ("deposit_key");--> statement-breakpoint
CREATE INDEX "payments_config_ticker_idx" ON "payments" USING btree ("config_id","ticker");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_txid_out_uq" ON "payments" USING btree ("txid_out");--> statement-breakpoint
CREATE INDEX "payments_due_idx" ON "payments" USING btree ("network","due_height") WHERE "payments"."result" = 'pending';--> statement-breakpoint
CREATE INDEX "payments_created_at_idx" ON "payments" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "sweeps_open_uq" ON "sweeps" USING btree ("network","source","ticker") WHERE "sweeps"."status" = 'open';--> statement-breakpoint
CREATE INDEX "sweeps_source_idx" ON "sweeps" USING btree ("network","source","nonce");--> statement-breakpoint
-- GET /logs answers from a cache in the API process (api/logs-cache.ts), kept true by these notices: every
-- change to what a configuration's logs show names that configuration on channel gateway_logs, delivered
-- when the writing transaction commits; a network's tip moving names 'tip:' and the network (a waiting
-- deposit's confirmations count from it); a TRUNCATE names none ('*': forget everything).
CREATE FUNCTION "gateway_logs_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('gateway_logs', '*');
  ELSIF TG_TABLE_NAME = 'payments' THEN
    IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('gateway_logs', OLD."config_id"::text); END IF;
    IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('gateway_logs', NEW."config_id"::text); END IF;
  ELSIF TG_TABLE_NAME = 'delivery_attempts' THEN
    PERFORM pg_notify('gateway_logs', coalesce(
      (SELECT "config_id"::text FROM "payments" WHERE "uuid" = (CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END)."payment_uuid"), '*'));
  ELSIF TG_TABLE_NAME = 'chain_cursors' THEN
    PERFORM pg_notify('gateway_logs', 'tip:' || (CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END)."network");
  ELSE
    PERFORM pg_notify('gateway_logs', (CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END)."id"::text);
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "payments_logs_changed" AFTER INSERT OR UPDATE OR DELETE ON "payments" FOR EACH ROW EXECUTE FUNCTION "gateway_logs_changed"();--> statement-breakpoint
CREATE TRIGGER "delivery_attempts_logs_changed" AFTER INSERT OR UPDATE OR DELETE ON "delivery_attempts" FOR EACH ROW EXECUTE FUNCTION "gateway_logs_changed"();--> statement-breakpoint
CREATE TRIGGER "payment_configs_logs_changed" AFTER UPDATE OR DELETE ON "payment_configs" FOR EACH ROW EXECUTE FUNCTION "gateway_logs_changed"();--> statement-breakpoint
CREATE TRIGGER "chain_cursors_logs_inserted" AFTER INSERT OR DELETE ON "chain_cursors" FOR EACH ROW EXECUTE FUNCTION "gateway_logs_changed"();--> statement-breakpoint
CREATE TRIGGER "chain_cursors_logs_moved" AFTER UPDATE ON "chain_cursors" FOR EACH ROW WHEN (OLD."height" IS DISTINCT FROM NEW."height") EXECUTE FUNCTION "gateway_logs_changed"();--> statement-breakpoint
CREATE TRIGGER "chain_cursors_logs_truncated" AFTER TRUNCATE ON "chain_cursors" FOR EACH STATEMENT EXECUTE FUNCTION "gateway_logs_changed"();--> statement-breakpoint
CREATE TRIGGER "payments_logs_truncated" AFTER TRUNCATE ON "payments" FOR EACH STATEMENT EXECUTE FUNCTION "gateway_logs_changed"();--> statement-breakpoint
CREATE TRIGGER "delivery_attempts_logs_truncated" AFTER TRUNCATE ON "delivery_attempts" FOR EACH STATEMENT EXECUTE FUNCTION "gateway_logs_changed"();--> statement-breakpoint
CREATE TRIGGER "payment_configs_logs_truncated" AFTER TRUNCATE ON "payment_configs" FOR EACH STATEMENT EXECUTE FUNCTION "gateway_logs_changed"();--> statement-breakpoint
-- Each address family's next HD derivation index comes from a sequence of its own (src/db/queries/derivation.ts),
-- not from a counter row: a row's lock is held until its transaction commits, so concurrent creates of a family
-- would queue behind each other's commit. A sequence is never rolled back: an index taken by a create that then
-- rolled back (a race lost on its callback URL, no stored address yet) is skipped, never handed out twice.
CREATE SEQUENCE "derivation_index_btc" AS bigint MINVALUE 0 START WITH 0;--> statement-breakpoint
CREATE SEQUENCE "derivation_index_ltc" AS bigint MINVALUE 0 START WITH 0;--> statement-breakpoint
CREATE SEQUENCE "derivation_index_bch" AS bigint MINVALUE 0 START WITH 0;--> statement-breakpoint
CREATE SEQUENCE "derivation_index_doge" AS bigint MINVALUE 0 START WITH 0;--> statement-breakpoint
CREATE SEQUENCE "derivation_index_zec" AS bigint MINVALUE 0 START WITH 0;--> statement-breakpoint
CREATE SEQUENCE "derivation_index_evm" AS bigint MINVALUE 0 START WITH 0;--> statement-breakpoint
CREATE SEQUENCE "derivation_index_sol" AS bigint MINVALUE 0 START WITH 0;--> statement-breakpoint
-- A forward's fee tier sums its callback host's forwarded volume of the last 30 days. Summed from the payments
-- themselves, that read would grow with the host's volume; host_volume_hours keeps the sum per host, hour of
-- created_at (UTC) and ticker, kept by a trigger on payments whatever statement changes one: a payment counts
-- while it is sent or done with a plain decimal price, and a change of any of the columns that decide its share
-- moves that share. The fee tier then reads at most 720 hours per ticker, and the first, partial hour of its
-- window from the payments (payments_created_at_idx).
--
-- One host's forwards do not queue on one row: a share goes to one of 8 stripes of its row, the writing
-- session's (backend pid modulo 8), since a row stays locked until the storing transaction commits. When a
-- session opens a new row, the host's stripes of earlier hours are folded into one row per hour and ticker
-- (stripe -1), skipping rows another transaction holds (they fold at a later opening), and a host's hours older
-- than 31 days go; the fee tier still reads about one row per hour and ticker.
CREATE FUNCTION "host_volume_add"(p_config uuid, p_ticker text, p_created timestamptz, p_value numeric, p_price text, p_result text, p_sign integer)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  h text;
  at timestamptz := date_trunc('hour', p_created, 'UTC');
  opened boolean;
BEGIN
  IF p_result NOT IN ('sent', 'done') OR p_price IS NULL OR p_price !~ '^[0-9]+([.][0-9]+)?$' THEN
    RETURN;
  END IF;
  SELECT c.callback_host INTO h FROM "payment_configs" c WHERE c.id = p_config;
  IF h IS NULL THEN
    RETURN;
  END IF;
  INSERT INTO "host_volume_hours" ("host", "hour", "ticker", "stripe", "value_times_price")
  VALUES (h, at, p_ticker, pg_backend_pid() % 8, p_sign * p_value * p_price::numeric)
  ON CONFLICT ("host", "hour", "ticker", "stripe") DO UPDATE SET "value_times_price" = "host_volume_hours"."value_times_price" + excluded."value_times_price"
  RETURNING (xmax = 0) INTO opened;
  IF opened THEN
    -- Never waits on a row another transaction holds: those go at a later opening.
    DELETE FROM "host_volume_hours" WHERE ctid = ANY (ARRAY(
      SELECT ctid FROM "host_volume_hours" WHERE "host" = h AND "hour" < at - interval '31 days' FOR UPDATE SKIP LOCKED));
    -- The folded rows are locked in one order (hour, ticker) by every session, and only by this statement.
    WITH gone AS (
      DELETE FROM "host_volume_hours" WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM "host_volume_hours" WHERE "host" = h AND "hour" < at AND "stripe" >= 0 FOR UPDATE SKIP LOCKED))
      RETURNING "hour", "ticker", "value_times_price")
    INSERT INTO "host_volume_hours" ("host", "hour", "ticker", "stripe", "value_times_price")
    SELECT h, g."hour", g."ticker", -1, sum(g."value_times_price") FROM gone g GROUP BY g."hour", g."ticker" ORDER BY g."hour", g."ticker"
    ON CONFLICT ("host", "hour", "ticker", "stripe") DO UPDATE SET "value_times_price" = "host_volume_hours"."value_times_price" + excluded."value_times_price";
  END IF;
END
$$;--> statement-breakpoint
CREATE FUNCTION "payments_host_volume"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE'
    AND (OLD.result IN ('sent', 'done')) = (NEW.result IN ('sent', 'done'))
    AND OLD.price IS NOT DISTINCT FROM NEW.price AND OLD.value_base = NEW.value_base
    AND OLD.created_at = NEW.created_at AND OLD.config_id = NEW.config_id AND OLD.ticker = NEW.ticker THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM "host_volume_add"(OLD.config_id, OLD.ticker, OLD.created_at, OLD.value_base, OLD.price, OLD.result, -1);
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    PERFORM "host_volume_add"(NEW.config_id, NEW.ticker, NEW.created_at, NEW.value_base, NEW.price, NEW.result, 1);
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "payments_host_volume" AFTER INSERT OR DELETE OR UPDATE OF "result", "price", "value_base", "created_at", "config_id", "ticker"
  ON "payments" FOR EACH ROW EXECUTE FUNCTION "payments_host_volume"();--> statement-breakpoint
CREATE FUNCTION "payments_host_volume_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE "host_volume_hours";
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "payments_host_volume_truncate" AFTER TRUNCATE ON "payments" FOR EACH STATEMENT EXECUTE FUNCTION "payments_host_volume_truncate"();--> statement-breakpoint
-- The API's own role (DESIGN 14): the internet-facing process reads what it serves and inserts
-- configurations, and nothing else, so a compromised API cannot change a payout (UPDATE payment_configs),
-- a payment or a forward. What it runs: a create (api/create-batch.ts, src/db/queries/create-config.ts)
-- reads payment_configs, takes the next index of the family's sequence (nextval) or a free Solana address
-- (address_pool: SELECT … FOR UPDATE, UPDATE taken_at), and inserts payment_configs and config_tickers; the
-- stored derived addresses are read and, ahead of creates, inserted (src/addresses/derived-addresses.ts,
-- pg_sequences' last_value for the next index); info and the catalog read assets and asset_minimums;
-- /logs reads payment_configs, payments, delivery_attempts and chain_cursors (and LISTENs, which needs no
-- grant); /pubkey and the addresses read public_material. Not granted: forward_txs (signed transactions),
-- sweeps, host_volume_hours, any UPDATE or DELETE but the pool's taken_at.
--
-- The role is NOLOGIN here, and a migration holds no password: the operator gives it a login
-- (ALTER ROLE gateway_api LOGIN PASSWORD …; docker-compose.yml's gateway-api-role service does it from
-- API_DATABASE_PASSWORD) and points the API's DATABASE_URL at it. A role belongs to the whole cluster:
-- created once, granted in every database migrated. An owner that may not create roles (some managed
-- servers) gets a notice instead of a failed migration; its operator creates gateway_api and runs the
-- grants below by hand. PGlite (the embedded default) runs this too, harmlessly: there the API shares the
-- worker's one connection and process, so a role of its own would bound nothing.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'gateway_api') THEN
    BEGIN
      CREATE ROLE gateway_api NOLOGIN;
    EXCEPTION
      -- Another database of the cluster created it meanwhile.
      WHEN duplicate_object OR unique_violation THEN NULL;
      WHEN insufficient_privilege THEN
        RAISE NOTICE 'gateway_api not created: this role may not create roles; create it (NOLOGIN) and grant as drizzle/0000_init.sql does';
        RETURN;
    END;
  END IF;
  EXECUTE format('GRANT CONNECT ON DATABASE %I TO gateway_api', current_database());
  GRANT USAGE ON SCHEMA public TO gateway_api;
  GRANT SELECT ON assets, asset_minimums, payment_configs, config_tickers, payments, delivery_attempts,
    chain_cursors, public_material, address_pool, derived_addresses TO gateway_api;
  GRANT INSERT ON payment_configs, config_tickers, derived_addresses TO gateway_api;
  GRANT UPDATE (taken_at) ON address_pool TO gateway_api;
  -- nextval of the derivation sequences (and their last_value in pg_sequences); new families' sequences too.
  GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO gateway_api;
  ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE ON SEQUENCES TO gateway_api;
END
$$;
