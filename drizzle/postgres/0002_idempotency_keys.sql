CREATE TABLE "idempotency_keys" (
	"owner_id" text NOT NULL,
	"key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"turn_id" text NOT NULL,
	"thread_id" text NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "idempotency_keys_owner_id_key_pk" PRIMARY KEY("owner_id","key")
);
--> statement-breakpoint
CREATE INDEX "idempotency_keys_created" ON "idempotency_keys" USING btree ("created_at");