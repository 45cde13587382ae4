CREATE TABLE "notifier_cards" (
	"notifier" text NOT NULL,
	"elicitation_id" text NOT NULL,
	"target" text NOT NULL,
	"state" text NOT NULL,
	"message_ref" text,
	"shown" text,
	"lease_owner" text,
	"lease_until" timestamp(3) with time zone,
	"posting_since" timestamp(3) with time zone,
	"created_at" timestamp(3) with time zone NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "notifier_cards_notifier_elicitation_id_target_pk" PRIMARY KEY("notifier","elicitation_id","target")
);
--> statement-breakpoint
CREATE TABLE "notifier_replays" (
	"notifier" text NOT NULL,
	"key" text NOT NULL,
	"seen_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "notifier_replays_notifier_key_pk" PRIMARY KEY("notifier","key")
);
--> statement-breakpoint
CREATE INDEX "notifier_replays_seen" ON "notifier_replays" USING btree ("seen_at");