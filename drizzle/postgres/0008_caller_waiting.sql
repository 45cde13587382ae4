ALTER TABLE "elicitations" ADD COLUMN "withdrawn" text;--> statement-breakpoint
ALTER TABLE "elicitations" ADD COLUMN "caller_waiting_until" timestamp(3) with time zone;