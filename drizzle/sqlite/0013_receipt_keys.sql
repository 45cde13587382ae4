CREATE TABLE `receipt_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`private_key` text NOT NULL,
	`created_at` text NOT NULL
);
