CREATE TABLE "asset_minimums" (
	"ticker" text PRIMARY KEY NOT NULL,
	"value_base" numeric(78, 0),
	"computed_at" timestamp with time zone,
	"unavailable_reason" text,
	"attempted_at" timestamp with time zone,
	"pinned_base" numeric(78, 0),
	"pinned_at" timestamp with time zone
);
