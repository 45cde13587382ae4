ALTER TABLE "elicitations" ADD COLUMN "escalation_due_at" timestamp(3) with time zone;--> statement-breakpoint
ALTER TABLE "elicitations" ADD COLUMN "escalated_at" timestamp(3) with time zone;--> statement-breakpoint
CREATE INDEX "elicitations_escalation_due" ON "elicitations" USING btree ("escalation_due_at") WHERE status = 'PENDING' AND escalated_at IS NULL AND escalation_due_at IS NOT NULL;--> statement-breakpoint
UPDATE "elicitations" SET "escalation_due_at" = ("approval"->'escalation'->>'at')::timestamptz WHERE "approval"->'escalation'->>'at' IS NOT NULL;
