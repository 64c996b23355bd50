-- Each address family's next HD derivation index comes from a sequence of its own, not from a counter row:
-- a row's lock is held until its transaction commits, so concurrent creates of a family queued behind each
-- other's WAL flush (creates reached a third of the rate of a bare insert). A sequence is never rolled back:
-- an index taken by a create that then rolled back (a race lost on its callback URL, no stored address yet)
-- is skipped, never handed out twice. Every known family gets its sequence; each starts where its counter
-- row stood (next_index), and the counters go.
DO $$
DECLARE
  f text;
  n bigint;
BEGIN
  FOR f IN SELECT unnest(ARRAY['btc', 'ltc', 'bch', 'doge', 'zec', 'evm', 'sol']) UNION SELECT "family" FROM "derivation_counters" LOOP
    EXECUTE format('CREATE SEQUENCE %I AS bigint MINVALUE 0 START WITH 0', 'derivation_index_' || f);
    SELECT "next_index" INTO n FROM "derivation_counters" WHERE "family" = f;
    IF n > 0 THEN
      PERFORM setval(format('%I', 'derivation_index_' || f)::regclass, n - 1);
    END IF;
  END LOOP;
END
$$;--> statement-breakpoint
DROP TABLE "derivation_counters";
