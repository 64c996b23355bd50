-- A forward's fee tier sums its callback host's forwarded volume of the last 30 days. Summed from the
-- payments themselves, that read grew with the host's volume (100,000 payments in 30 days: 71 ms, twice per
-- deposit). host_volume_hours keeps the sum per host, hour of created_at (UTC) and ticker, kept by a trigger
-- on payments whatever statement changes one: a payment counts while it is sent or done with a plain decimal
-- price (as the read counted it), and a change of any of the columns that decide its share moves that share.
-- A host's hours older than 31 days go when it opens a new hour. The fee tier then reads at most 720 hours
-- per ticker, and the first, partial hour of its window from the payments (payments_created_at_idx).
CREATE TABLE "host_volume_hours" (
	"host" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"ticker" text NOT NULL,
	"value_times_price" numeric NOT NULL,
	CONSTRAINT "host_volume_hours_host_hour_ticker_pk" PRIMARY KEY("host","hour","ticker")
);
--> statement-breakpoint
CREATE INDEX "payments_created_at_idx" ON "payments" USING btree ("created_at");--> statement-breakpoint
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
  SELECT lower(substring(c.callback_url from '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/@?#]*@)?([^/:?#]+)')) INTO h FROM "payment_configs" c WHERE c.id = p_config;
  IF h IS NULL THEN
    RETURN;
  END IF;
  INSERT INTO "host_volume_hours" ("host", "hour", "ticker", "value_times_price")
  VALUES (h, at, p_ticker, p_sign * p_value * p_price::numeric)
  ON CONFLICT ("host", "hour", "ticker") DO UPDATE SET "value_times_price" = "host_volume_hours"."value_times_price" + excluded."value_times_price"
  RETURNING (xmax = 0) INTO opened;
  IF opened THEN
    DELETE FROM "host_volume_hours" WHERE "host" = h AND "hour" < at - interval '31 days';
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
-- The payments already forwarded.
INSERT INTO "host_volume_hours" ("host", "hour", "ticker", "value_times_price")
SELECT lower(substring(c.callback_url from '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/@?#]*@)?([^/:?#]+)')), date_trunc('hour', p.created_at, 'UTC'), p.ticker, sum(p.value_base * p.price::numeric)
FROM "payments" p JOIN "payment_configs" c ON c.id = p.config_id
WHERE p.result IN ('sent', 'done') AND p.price ~ '^[0-9]+([.][0-9]+)?$' AND lower(substring(c.callback_url from '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/@?#]*@)?([^/:?#]+)')) IS NOT NULL
GROUP BY 1, 2, 3;
