CREATE TABLE `agent_tool_overrides` (
	`agent_id` text NOT NULL,
	`tool_id` text NOT NULL,
	`mode` text NOT NULL,
	PRIMARY KEY(`agent_id`, `tool_id`),
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `agents` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`model_id` text NOT NULL,
	`system_prompt` text NOT NULL,
	`tool_ids` text NOT NULL,
	`require_tool_confirmation` integer NOT NULL,
	`pause_ttl_seconds` integer NOT NULL,
	`max_iterations` integer NOT NULL,
	`gating_set_by_api` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `elicitations` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`turn_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`tool_call_id` text NOT NULL,
	`status` text NOT NULL,
	`request` text NOT NULL,
	`tool_call` text NOT NULL,
	`response_action` text,
	`response_content` text,
	`resolved_by` text,
	`resolved_at` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `elicitations_id_unique` ON `elicitations` (`id`);--> statement-breakpoint
CREATE INDEX `elicitations_owner_status_seq` ON `elicitations` (`owner_id`,`status`,`seq`);--> statement-breakpoint
CREATE INDEX `elicitations_turn` ON `elicitations` (`turn_id`);--> statement-breakpoint
CREATE TABLE `messages` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`thread_id` text NOT NULL,
	`turn_id` text NOT NULL,
	`role` text NOT NULL,
	`text` text,
	`tool_calls` text,
	`tool_call_id` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_id_unique` ON `messages` (`id`);--> statement-breakpoint
CREATE INDEX `messages_thread_seq` ON `messages` (`thread_id`,`seq`);--> statement-breakpoint
CREATE INDEX `messages_turn_seq` ON `messages` (`turn_id`,`seq`);--> statement-breakpoint
CREATE TABLE `threads` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`agent_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `threads_id_unique` ON `threads` (`id`);--> statement-breakpoint
CREATE INDEX `threads_owner_seq` ON `threads` (`owner_id`,`seq`);--> statement-breakpoint
CREATE TABLE `tool_executions` (
	`turn_id` text NOT NULL,
	`tool_call_id` text NOT NULL,
	`started_at` text NOT NULL,
	`finished_at` text,
	PRIMARY KEY(`turn_id`, `tool_call_id`)
);
--> statement-breakpoint
CREATE TABLE `turns` (
	`id` text PRIMARY KEY NOT NULL,
	`thread_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`status` text NOT NULL,
	`text` text,
	`error` text,
	`iterations` integer DEFAULT 0 NOT NULL,
	`step` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`expires_at` text
);
--> statement-breakpoint
CREATE INDEX `turns_thread` ON `turns` (`thread_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `turns_status_expiry` ON `turns` (`status`,`expires_at`);