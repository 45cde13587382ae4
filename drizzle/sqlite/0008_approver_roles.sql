CREATE TABLE `elicitation_approver_roles` (
	`elicitation_id` text NOT NULL,
	`role` text NOT NULL,
	`from_time` text NOT NULL,
	PRIMARY KEY(`elicitation_id`, `role`)
);
--> statement-breakpoint
CREATE INDEX `elicitation_approver_roles_role` ON `elicitation_approver_roles` (`role`,`from_time`);