-- Stated minimums a higher figure replaced, honoured for one refresh interval (src/db/schema.ts
-- supersededMinimums). Only the worker reads and writes them: no grant to gateway_api.
CREATE TABLE "superseded_minimums" (
	"ticker" text NOT NULL,
	"value_base" numeric(78, 0) NOT NULL,
	"honoured_until" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "superseded_minimums_ticker_until_idx" ON "superseded_minimums" USING btree ("ticker","honoured_until");