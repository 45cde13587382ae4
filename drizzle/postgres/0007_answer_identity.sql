ALTER TABLE "elicitation_answers" ADD COLUMN "approver_identity" jsonb;--> statement-breakpoint
ALTER TABLE "elicitations" ADD COLUMN "resolved_by_identity" jsonb;