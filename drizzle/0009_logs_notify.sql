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
CREATE TRIGGER "payment_configs_logs_truncated" AFTER TRUNCATE ON "payment_configs" FOR EACH STATEMENT EXECUTE FUNCTION "gateway_logs_changed"();
