-- The statements wfs sends for one idempotent POST /job-roles on PostgreSQL, as pgbench
-- runs them (scripts/bench-wrk.sh, `-M prepared`, on the benchmark's wfs database):
-- BEGIN; the role, its event, the key's record (claimed under its advisory lock and
-- completed with the stored answer) and the audit entry as one statement of
-- data-modifying common table expressions; COMMIT. The sizes are a real write's. Not
-- included: the batched `pg_notify` a separate task sends after the commit.
-- `:company` is the benchmark company's id.
\set k random(1, 4000000000000000)
BEGIN;
WITH w0 AS (INSERT INTO job_roles (id, company_id, title, weekly_hours, description, hexcode, symbol, daily_required, deleted_at, created_at, updated_at)
    VALUES (gen_random_uuid(), :company::uuid, 'Bench role', 38, NULL, NULL, NULL, NULL, NULL, now(), now()) RETURNING 1),
  w1 AS (INSERT INTO webhook_events (id, company_id, event_type, created_at, payload)
    VALUES (gen_random_uuid(), :company::uuid, 'job_role.created', now(), repeat('x', 150)) RETURNING 1),
  w2 AS (INSERT INTO idempotency_records (scope, "key", fingerprint, state, lock_token, locked_at, created_at, response_status, response_headers, response_body)
    SELECT 'key-pgbench', 'k-' || :k::text, repeat('f', 64), 'completed', md5('k-' || :k::text)::uuid, now(), now(), 201,
      '[["etag","\"dqwm1uWwP-SJE0wjyttsRQ\""]]', convert_to(repeat('x', 70), 'UTF8')
    FROM (SELECT pg_try_advisory_xact_lock(hashtextextended('key-pgbench' || chr(10) || 'k-' || :k::text, 0)) AS locked) AS wl
    WHERE wl.locked
    ON CONFLICT (scope, "key") DO NOTHING RETURNING 1),
  w3 AS (INSERT INTO audit_log (id, company_id, occurred_at, action, actor_type, actor_id, target_type, target_id, method, route, status, request_id, client_request_id, idempotency_key, ip, count)
    VALUES (gen_random_uuid(), :company::uuid, now(), 'api.write', 'api_key', '01a22618-3e54-72b3-a043-06ce3667bd4f', 'job_role', '01a22618-4106-76dd-8332-80d7e02d07ee', 'POST', '/external/v1/job-roles', 201, '3bc8417b-ede1-45a9-8347-ef549d7947b7', NULL, 'k-' || :k::text, '127.0.0.1', 1) RETURNING 1)
SELECT (SELECT count(*) FROM w0) + (SELECT count(*) FROM w1) + (SELECT count(*) FROM w2) + (SELECT count(*) FROM w3) AS changed;
COMMIT;
