CREATE TABLE `idempotency_keys` (
	`owner_id` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`turn_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`owner_id`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created` ON `idempotency_keys` (`created_at`);