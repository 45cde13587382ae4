CREATE TABLE `decision_records` (
	`seq` integer PRIMARY KEY NOT NULL,
	`hash` text NOT NULL,
	`kind` text NOT NULL,
	`turn_id` text NOT NULL,
	`tool_call_id` text NOT NULL,
	`at` text NOT NULL,
	`record` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `decision_records_call` ON `decision_records` (`turn_id`,`tool_call_id`);--> statement-breakpoint
CREATE INDEX `decision_records_at` ON `decision_records` (`at`);