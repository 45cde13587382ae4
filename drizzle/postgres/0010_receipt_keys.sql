CREATE TABLE "receipt_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"private_key" text NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL
);
