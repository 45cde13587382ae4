ALTER TABLE `turns` ADD `lease_owner` text;--> statement-breakpoint
ALTER TABLE `turns` ADD `lease_expires_at` text;--> statement-breakpoint
ALTER TABLE `turns` ADD `recoveries` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `elicitations_status_expiry` ON `elicitations` (`status`,`expires_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `messages_tool_answer` ON `messages` (`turn_id`,`tool_call_id`) WHERE role = 'TOOL';