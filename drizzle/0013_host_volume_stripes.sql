-- One host's forwards no longer queue on one row. drizzle/0012's trigger added each payment's share to the
-- row of its host, hour and ticker, and that row stayed locked until the storing transaction committed:
-- every forward of one host stored in the same hour waited for the one before it (bench/pipeline.ts's full
-- burst, one host: 320 snapshot writes averaged 2.6 ms, 2 ms of it in that upsert, against 0.4 ms for the
-- other writes of a payment; pg_stat_statements). A share now goes to one of 8 stripes of that row, the
-- writing session's (backend pid modulo 8): sessions on different stripes never wait for each other. When a
-- session opens a new row, the host's stripes of earlier hours are folded into one row per hour and ticker
-- (stripe -1), skipping rows another transaction holds (they fold at a later opening), so the fee tier
-- still reads about one row per hour and ticker. The rows already kept become folded rows.
ALTER TABLE "host_volume_hours" ADD COLUMN "stripe" smallint DEFAULT -1 NOT NULL;--> statement-breakpoint
ALTER TABLE "host_volume_hours" DROP CONSTRAINT "host_volume_hours_host_hour_ticker_pk";--> statement-breakpoint
ALTER TABLE "host_volume_hours" ADD CONSTRAINT "host_volume_hours_host_hour_ticker_stripe_pk" PRIMARY KEY("host","hour","ticker","stripe");--> statement-breakpoint
CREATE OR REPLACE FUNCTION "host_volume_add"(p_config uuid, p_ticker text, p_created timestamptz, p_value numeric, p_price text, p_result text, p_sign integer)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  h text;
  at timestamptz := date_trunc('hour', p_created, 'UTC');
  opened boolean;
BEGIN
  IF p_result NOT IN ('sent', 'done') OR p_price IS NULL OR p_price !~ '^[0-9]+([.][0-9]+)?$' THEN
    RETURN;
  END IF;
  SELECT lower(substring(c.callback_url from '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/@?#]*@)?([^/:?#]+)')) INTO h FROM "payment_configs" c WHERE c.id = p_config;
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
$$;
