ALTER TABLE `elicitation_answers` ADD `approver_identity` text;--> statement-breakpoint
ALTER TABLE `elicitations` ADD `resolved_by_identity` text;