CREATE TABLE "config_tickers" (
	"config_id" uuid NOT NULL,
	"ticker" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "config_tickers" ADD CONSTRAINT "config_tickers_config_id_payment_configs_id_fk" FOREIGN KEY ("config_id") REFERENCES "public"."payment_configs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "config_tickers_config_ticker_uq" ON "config_tickers" USING btree ("config_id","ticker");--> statement-breakpoint
-- Every existing configuration takes deposits of the asset it was created for.
INSERT INTO "config_tickers" ("config_id", "ticker") SELECT "id", "ticker" FROM "payment_configs" ON CONFLICT DO NOTHING;
