-- @a2a-js/sdk schema for mysql: base -> latest.
-- Rendered offline: nothing read the database, so this assumes it is at "base".
-- Each store's ledger is kept in step, so `a2a-db status` keeps matching the schema.
-- Not wrapped in a transaction. Check the ledger if it stops partway.

-- store: tasks

create table if not exists `a2a_acme_tasks_migrations` (`name` varchar(255) not null primary key, `timestamp` varchar(255) not null);

create table `acme_tasks` (`tenant` varchar(255) collate utf8mb4_0900_bin not null, `owner` varchar(255) collate utf8mb4_0900_bin not null, `id` varchar(36) collate utf8mb4_0900_bin not null, `context_id` varchar(36) collate utf8mb4_0900_bin not null, `status_last_updated` bigint not null, `status_state` varchar(255) collate utf8mb4_0900_bin, `status` longtext, `artifacts` longtext, `history` longtext, `metadata` longtext, `protocol_version` varchar(255), constraint `acme_tasks_pkey` primary key (`tenant`, `owner`, `id`));

create index `acme_tasks_scope_updated_idx` on `acme_tasks` (`tenant`, `owner`, `status_last_updated`, `id`);

create index `acme_tasks_scope_context_updated_idx` on `acme_tasks` (`tenant`, `owner`, `context_id`, `status_last_updated`, `id`);

insert into `a2a_acme_tasks_migrations` (`name`, `timestamp`) values ('0001_create_tasks', '2026-11-30T15:01:12.521Z');
