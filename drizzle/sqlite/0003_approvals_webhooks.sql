CREATE TABLE `approval_grants` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`owner_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`scope` text NOT NULL,
	`thread_id` text,
	`tool_id` text NOT NULL,
	`definition_hash` text NOT NULL,
	`elicitation_id` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `approval_grants_id_unique` ON `approval_grants` (`id`);--> statement-breakpoint
CREATE INDEX `approval_grants_lookup` ON `approval_grants` (`owner_id`,`agent_id`,`tool_id`);--> statement-breakpoint
CREATE INDEX `approval_grants_owner_seq` ON `approval_grants` (`owner_id`,`seq`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`endpoint` text NOT NULL,
	`event_type` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text NOT NULL,
	`locked_by` text,
	`locked_until` text,
	`last_error` text,
	`last_status_code` integer,
	`created_at` text NOT NULL,
	`finished_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_id_unique` ON `webhook_deliveries` (`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
ALTER TABLE `agent_tool_overrides` ADD `rules` text;--> statement-breakpoint
ALTER TABLE `agent_tool_overrides` ADD `allow_edit` integer;--> statement-breakpoint
ALTER TABLE `agents` ADD `allow_edit` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `elicitations` ADD `response_arguments` text;--> statement-breakpoint
ALTER TABLE `elicitations` ADD `response_remember` text;--> statement-breakpoint
ALTER TABLE `tool_executions` ADD `grant_id` text;--> statement-breakpoint
CREATE INDEX `tool_executions_grant` ON `tool_executions` (`grant_id`);