-- The API's own role (DESIGN 14): the internet-facing process reads what it serves and inserts
-- configurations, and nothing else, so a compromised API cannot change a payout (UPDATE payment_configs),
-- a payment or a forward. What it runs: a create (api/create-batch.ts, src/db/queries/create-config.ts)
-- reads payment_configs, takes the next index of the family's sequence (nextval) or a free Solana address
-- (address_pool: SELECT … FOR UPDATE, UPDATE taken_at), and inserts payment_configs and config_tickers; the
-- stored derived addresses are read and, ahead of creates, inserted (src/runtime/derived-addresses.ts,
-- pg_sequences' last_value for the next index); info and the catalog read assets and asset_minimums;
-- /logs reads payment_configs, payments, delivery_attempts and chain_cursors (and LISTENs, which needs no
-- grant); /pubkey and the addresses read public_material. Not granted: forward_txs (signed transactions),
-- host_volume_hours, any UPDATE or DELETE but the pool's taken_at.
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
        RAISE NOTICE 'gateway_api not created: this role may not create roles; create it (NOLOGIN) and grant as drizzle/0014_api_role.sql does';
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
