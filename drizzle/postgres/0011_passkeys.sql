CREATE TABLE "passkey_challenges" (
	"user_id" text PRIMARY KEY NOT NULL,
	"challenge" text NOT NULL,
	"rp_id" text NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "passkeys" (
	"credential_id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"public_key" text NOT NULL,
	"algorithm" integer NOT NULL,
	"rp_id" text NOT NULL,
	"counter" bigint NOT NULL,
	"transports" jsonb NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"last_used_at" timestamp(3) with time zone
);
--> statement-breakpoint
CREATE INDEX "passkeys_user" ON "passkeys" USING btree ("user_id");