CREATE TABLE "approval_grants" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "approval_grants_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text NOT NULL,
	"owner_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"scope" text NOT NULL,
	"thread_id" text,
	"tool_id" text NOT NULL,
	"definition_hash" text NOT NULL,
	"elicitation_id" text NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	"revoked_at" timestamp(3) with time zone,
	CONSTRAINT "approval_grants_id_unique" UNIQUE("id")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "webhook_deliveries_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text NOT NULL,
	"endpoint" text NOT NULL,
	"event_type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp(3) with time zone NOT NULL,
	"locked_by" text,
	"locked_until" timestamp(3) with time zone,
	"last_error" text,
	"last_status_code" integer,
	"created_at" timestamp(3) with time zone NOT NULL,
	"finished_at" timestamp(3) with time zone,
	CONSTRAINT "webhook_deliveries_id_unique" UNIQUE("id")
);
--> statement-breakpoint
ALTER TABLE "agent_tool_overrides" ADD COLUMN "rules" jsonb;--> statement-breakpoint
ALTER TABLE "agent_tool_overrides" ADD COLUMN "allow_edit" boolean;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "allow_edit" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "elicitations" ADD COLUMN "response_arguments" jsonb;--> statement-breakpoint
ALTER TABLE "elicitations" ADD COLUMN "response_remember" jsonb;--> statement-breakpoint
ALTER TABLE "tool_executions" ADD COLUMN "grant_id" text;--> statement-breakpoint
CREATE INDEX "approval_grants_lookup" ON "approval_grants" USING btree ("owner_id","agent_id","tool_id");--> statement-breakpoint
CREATE INDEX "approval_grants_owner_seq" ON "approval_grants" USING btree ("owner_id","seq");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due" ON "webhook_deliveries" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "tool_executions_grant" ON "tool_executions" USING btree ("grant_id");