-- The privileges of the gateway's service role on a register in PostgreSQL (docs/postgresql.md,
-- "The roles"). Run as a superuser (or a role with CREATEROLE), in the gateway's database,
-- after `emcf-gateway store migrate`, and again after each upgrade that adds tables:
--
--   sudo -u postgres psql -d emcf -f docs/postgresql-service-role.sql
--   GRANT emcf_service TO emcf;        -- the role the gateway logs in as
--
-- `emcf_service` may read everything and write only what certification and administration
-- write: never UPDATE, DELETE or TRUNCATE the register (register_entries, credit_notes) or
-- the events, never change the schema, never disable a trigger (only the owner can).

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'emcf_service') THEN
        CREATE ROLE emcf_service NOLOGIN;
    END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO emcf_service;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO emcf_service;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO emcf_service;

-- Appended, never changed.
GRANT INSERT ON register_entries, credit_notes, events TO emcf_service;
-- Written and changed by their rules' triggers only as those allow.
GRANT INSERT, UPDATE ON organizations, api_keys, dashboard_tokens, intents, quota_use,
    register_heads, chain_heads, register_counts, box_counters, fiscal_anomalies, alert_state,
    leases TO emcf_service;
-- An abandoned intent gives its Idempotency-Key back.
GRANT INSERT, DELETE ON idempotency_keys TO emcf_service;
-- The dashboard's sessions, sign-in form values and failed sign-in counts (issue 29): not
-- fiscal records; each is deleted when it ends or expires.
GRANT INSERT, UPDATE, DELETE ON dashboard_sessions, dashboard_sign_in_values,
    dashboard_sign_in_failures TO emcf_service;
-- Devices as data (issue 29): added, changed, removed (a removed row stays, `removed_at` set).
GRANT INSERT, UPDATE ON devices TO emcf_service;
-- The DGI's pending window per e-MCF shared by the replicas (issue 29): places taken,
-- noted and given back; never deleted.
GRANT INSERT, UPDATE ON window_slots TO emcf_service;
-- A change notice's e-mail recorded as sent before it leaves, forgotten again when the relay
-- did not take it (issue 29, docs/design.md §12.1).
GRANT DELETE ON alert_state TO emcf_service;
