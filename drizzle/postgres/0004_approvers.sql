CREATE TABLE "elicitation_answers" (
	"elicitation_id" text NOT NULL,
	"approver_id" text NOT NULL,
	"position" integer NOT NULL,
	"action" text NOT NULL,
	"content" jsonb,
	"arguments" jsonb,
	"remember" jsonb,
	"created_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "elicitation_answers_elicitation_id_approver_id_pk" PRIMARY KEY("elicitation_id","approver_id")
);
--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "approvers" jsonb;--> statement-breakpoint
ALTER TABLE "approval_grants" ADD COLUMN "approvers" text;--> statement-breakpoint
ALTER TABLE "elicitations" ADD COLUMN "approval" jsonb;