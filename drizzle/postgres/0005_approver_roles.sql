CREATE TABLE "elicitation_approver_roles" (
	"elicitation_id" text NOT NULL,
	"role" text NOT NULL,
	"from_time" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "elicitation_approver_roles_elicitation_id_role_pk" PRIMARY KEY("elicitation_id","role")
);
--> statement-breakpoint
CREATE INDEX "elicitation_approver_roles_role" ON "elicitation_approver_roles" USING btree ("role","from_time");