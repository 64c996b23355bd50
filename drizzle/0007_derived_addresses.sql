CREATE TABLE "derived_addresses" (
	"source" text NOT NULL,
	"derivation_index" bigint NOT NULL,
	"address" text NOT NULL,
	CONSTRAINT "derived_addresses_source_derivation_index_pk" PRIMARY KEY("source","derivation_index")
);
