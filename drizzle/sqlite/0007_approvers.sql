CREATE TABLE `elicitation_answers` (
	`elicitation_id` text NOT NULL,
	`approver_id` text NOT NULL,
	`position` integer NOT NULL,
	`action` text NOT NULL,
	`content` text,
	`arguments` text,
	`remember` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`elicitation_id`, `approver_id`)
);
--> statement-breakpoint
ALTER TABLE `agents` ADD `approvers` text;--> statement-breakpoint
ALTER TABLE `approval_grants` ADD `approvers` text;--> statement-breakpoint
ALTER TABLE `elicitations` ADD `approval` text;