CREATE TABLE "agent_tool_overrides" (
	"agent_id" text NOT NULL,
	"tool_id" text NOT NULL,
	"mode" text NOT NULL,
	CONSTRAINT "agent_tool_overrides_agent_id_tool_id_pk" PRIMARY KEY("agent_id","tool_id")
);
--> statement-breakpoint
CREATE TABLE "agents" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"model_id" text NOT NULL,
	"system_prompt" text NOT NULL,
	"tool_ids" jsonb NOT NULL,
	"require_tool_confirmation" boolean NOT NULL,
	"pause_ttl_seconds" integer NOT NULL,
	"max_iterations" integer NOT NULL,
	"gating_set_by_api" boolean DEFAULT false NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "elicitations" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "elicitations_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text NOT NULL,
	"turn_id" text NOT NULL,
	"thread_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"owner_id" text NOT NULL,
	"tool_call_id" text NOT NULL,
	"status" text NOT NULL,
	"request" jsonb NOT NULL,
	"tool_call" jsonb NOT NULL,
	"response_action" text,
	"response_content" jsonb,
	"resolved_by" text,
	"resolved_at" timestamp(3) with time zone,
	"created_at" timestamp(3) with time zone NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "elicitations_id_unique" UNIQUE("id")
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "messages_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text NOT NULL,
	"thread_id" text NOT NULL,
	"turn_id" text NOT NULL,
	"role" text NOT NULL,
	"text" text,
	"tool_calls" jsonb,
	"tool_call_id" text,
	"created_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "messages_id_unique" UNIQUE("id")
);
--> statement-breakpoint
CREATE TABLE "threads" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "threads_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text NOT NULL,
	"agent_id" text NOT NULL,
	"owner_id" text NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "threads_id_unique" UNIQUE("id")
);
--> statement-breakpoint
CREATE TABLE "tool_executions" (
	"turn_id" text NOT NULL,
	"tool_call_id" text NOT NULL,
	"started_at" timestamp(3) with time zone NOT NULL,
	"finished_at" timestamp(3) with time zone,
	CONSTRAINT "tool_executions_turn_id_tool_call_id_pk" PRIMARY KEY("turn_id","tool_call_id")
);
--> statement-breakpoint
CREATE TABLE "turns" (
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "turns_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text PRIMARY KEY NOT NULL,
	"thread_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"owner_id" text NOT NULL,
	"status" text NOT NULL,
	"text" text,
	"error" text,
	"iterations" integer DEFAULT 0 NOT NULL,
	"step" jsonb,
	"created_at" timestamp(3) with time zone NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL,
	"expires_at" timestamp(3) with time zone,
	"lease_owner" text,
	"lease_expires_at" timestamp(3) with time zone,
	"recoveries" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "turns_seq_unique" UNIQUE("seq")
);
--> statement-breakpoint
ALTER TABLE "agent_tool_overrides" ADD CONSTRAINT "agent_tool_overrides_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "elicitations_owner_status_seq" ON "elicitations" USING btree ("owner_id","status","seq");--> statement-breakpoint
CREATE INDEX "elicitations_owner_seq" ON "elicitations" USING btree ("owner_id","seq");--> statement-breakpoint
CREATE INDEX "elicitations_turn" ON "elicitations" USING btree ("turn_id");--> statement-breakpoint
CREATE INDEX "elicitations_status_expiry" ON "elicitations" USING btree ("status","expires_at");--> statement-breakpoint
CREATE INDEX "messages_thread_seq" ON "messages" USING btree ("thread_id","seq");--> statement-breakpoint
CREATE INDEX "messages_turn_seq" ON "messages" USING btree ("turn_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_tool_answer" ON "messages" USING btree ("turn_id","tool_call_id") WHERE role = 'TOOL';--> statement-breakpoint
CREATE INDEX "threads_owner_seq" ON "threads" USING btree ("owner_id","seq");--> statement-breakpoint
CREATE INDEX "turns_thread" ON "turns" USING btree ("thread_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "turns_one_active_per_thread" ON "turns" USING btree ("thread_id") WHERE status IN ('RUNNING', 'PAUSED');--> statement-breakpoint
CREATE INDEX "turns_paused_expiry" ON "turns" USING btree ("expires_at") WHERE status = 'PAUSED';--> statement-breakpoint
CREATE INDEX "turns_running" ON "turns" USING btree ("lease_owner") WHERE status = 'RUNNING';