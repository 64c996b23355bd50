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
CREATE UNIQUE INDEX "sweeps_open_uq" ON "sweeps" USING btree ("network","source","ticker") WHERE "sweeps"."status" = 'open';--> statement-breakpoint
CREATE INDEX "sweeps_source_idx" ON "sweeps" USING btree ("network","source","nonce");