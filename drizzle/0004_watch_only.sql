CREATE TABLE "address_pool" (
	"network" text NOT NULL,
	"derivation_index" bigint NOT NULL,
	"address" text NOT NULL,
	"taken_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "public_material" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "address_pool_network_index_uq" ON "address_pool" USING btree ("network","derivation_index");--> statement-breakpoint
CREATE INDEX "address_pool_free_idx" ON "address_pool" USING btree ("network","derivation_index") WHERE "address_pool"."taken_at" IS NULL;