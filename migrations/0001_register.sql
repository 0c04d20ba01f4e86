-- emcf-gateway, the PostgreSQL store, schema version 1 (issue 28; docs/design.md §11).
--
-- Applied at start by src/store/postgres/migrate.rs, in one transaction. A released migration
-- is never edited (its checksum is recorded): a change is a new file.
--
-- The schema holds the register's rules itself, so that no client, however wrong, can break
-- them: one certification per (organization, environment, rn); register sequence numbers per
-- environment with no gap, assigned in the certifying transaction; a hash chain per
-- organization, checked by the database; one live intent per rn (open or certified); quota use that cannot pass
-- the quota; the register and the events append-only (triggers refuse UPDATE, DELETE and
-- TRUNCATE; the role of docs/postgresql.md has no such privilege either).
--
-- Times are UTC (timestamptz written by the gateway, never now()). JSON columns hold the
-- gateway's own records (src/model) exactly as the embedded store's journal does.

CREATE TYPE environment AS ENUM ('production', 'sandbox');

-- What an organization is now (its last `organization_saved`); its history is in `events`.
CREATE TABLE organizations (
    id        text PRIMARY KEY CHECK (id <> ''),
    record    jsonb NOT NULL,
    saved_at  timestamptz NOT NULL
);

CREATE TABLE api_keys (
    id           text PRIMARY KEY CHECK (id <> ''),
    org          text NOT NULL REFERENCES organizations (id),
    environment  environment NOT NULL,
    record       jsonb NOT NULL,          -- model::KeyRecord: the secret's SHA-256 only
    enabled      boolean NOT NULL
);
CREATE INDEX api_keys_by_org ON api_keys (org);

-- A key's or a token's record is as issued; its state (enabled, revoked) is the column.
CREATE TABLE dashboard_tokens (
    id       text PRIMARY KEY CHECK (id <> ''),
    org      text NOT NULL REFERENCES organizations (id),
    record   jsonb NOT NULL,              -- store::DashboardToken: the secret's SHA-256 only
    revoked  boolean NOT NULL
);
CREATE INDEX dashboard_tokens_by_org ON dashboard_tokens (org);

-- Every fact that is not a register entry, in order, as the journal's events: organizations
-- saved, keys issued, enabled and disabled, dashboard tokens issued and revoked, fiscal
-- anomalies and their acknowledgements. Append-only.
CREATE TABLE events (
    id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at    timestamptz NOT NULL,
    org   text REFERENCES organizations (id),
    kind  text NOT NULL CHECK (kind <> ''),
    body  jsonb NOT NULL
);

-- Each box's last counters from its production entries (model::BoxCounters), or the counter
-- an administrator acknowledged for a register behind its box.
CREATE TABLE box_counters (
    nim       text PRIMARY KEY CHECK (nim <> ''),
    counters  jsonb NOT NULL
);

-- Fiscal anomalies (model::AnomalyRecord) as they stand: acknowledged once. Their detection
-- and acknowledgement are also in `events`.
CREATE TABLE fiscal_anomalies (
    id            bigint PRIMARY KEY,
    detected_at   timestamptz NOT NULL,
    anomaly       jsonb NOT NULL,
    acknowledged  jsonb
);

-- What the alerts remember (which alert is raised, when it was last sent), by alert key.
CREATE TABLE alert_state (
    key    text PRIMARY KEY,
    state  jsonb NOT NULL
);

-- Work one replica does at a time (issue 29): a named lease held until `held_until`, by the
-- database's clock (one clock for every replica). Its epoch only grows: a holder's writes
-- are to carry the epoch they were granted under and be refused once another replica took
-- the lease (fencing), so that a replica presumed dead writes nothing after its successor.
CREATE TABLE leases (
    name        text PRIMARY KEY,
    holder      text,
    epoch       bigint NOT NULL CHECK (epoch > 0),
    held_until  timestamptz,
    CHECK ((holder IS NULL) = (held_until IS NULL))
);

CREATE FUNCTION lease_epoch_grows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.name <> OLD.name OR NEW.epoch < OLD.epoch THEN
        RAISE EXCEPTION 'a lease keeps its name and its epoch never goes back'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'lease_epoch_grows';
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER lease_epoch_grows BEFORE UPDATE ON leases
    FOR EACH ROW EXECUTE FUNCTION lease_epoch_grows();

-- An intent: written and committed before the invoice is finalized on its device (38h, or
-- the web API's confirm). Settled once, by its register entry (certified) or as abandoned;
-- nothing else about it ever changes.
CREATE TABLE intents (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org             text NOT NULL REFERENCES organizations (id),
    environment     environment NOT NULL,
    rn              text NOT NULL CHECK (rn <> ''),
    request_digest  text NOT NULL CHECK (request_digest ~ '^[0-9a-f]{64}$'),
    body            jsonb NOT NULL,       -- model::Intent, with the invoice it keeps
    created_at      timestamptz NOT NULL,
    -- The quota year whose unit this intent holds, and the organization's quota that year as
    -- the gateway knows it (production only): the unit is claimed as the intent is recorded
    -- (`intent_opened`), given back if it is abandoned.
    quota_year      integer,
    quota_limit     bigint CHECK (quota_limit >= 0),
    state           text NOT NULL DEFAULT 'open'
                    CHECK (state IN ('open', 'certified', 'abandoned')),
    settled_at      timestamptz,
    reason          text,
    -- The replica that wrote it and alone may settle it while its `replica:<name>` lease is
    -- its own (issue 29); NULL when written without one (imports, tools). Another replica
    -- takes it over only after that lease is fenced off (`store/postgres/replicas.rs`).
    owner           text,
    -- Why only an administrator can settle it (an outcome the device cannot tell), for every
    -- replica to show; NULL otherwise.
    awaiting        text,
    CHECK ((state = 'open') = (settled_at IS NULL)),
    CHECK ((state = 'abandoned') = (reason IS NOT NULL)),
    CHECK ((environment = 'production') = (quota_year IS NOT NULL)),
    CHECK ((quota_year IS NULL) = (quota_limit IS NULL))
);
-- At most one intent per rn that is open or certified: a second intent for an rn being
-- certified, or already certified, is refused by this index alone, whatever the timing of
-- the transactions (a check by query could miss a certification committed meanwhile). An
-- abandoned intent leaves the rn free.
CREATE UNIQUE INDEX intents_one_live_per_rn ON intents (org, environment, rn)
    WHERE state <> 'abandoned';
CREATE INDEX intents_open ON intents (id) WHERE state = 'open';
-- A device's open intents (`src/store/postgres/device_view.rs`): what the register-behind check
-- reads with each intent and certification, by the device the intent's body names.
CREATE INDEX intents_open_by_device ON intents ((body ->> 'device')) WHERE state = 'open';

-- Units used of each organization's annual quota (production certifications), claimed by
-- the intent as it is recorded (`intent_opened`), released when it is abandoned. `quota` is
-- the limit at the last claim: a claim past it fails the CHECK (the gateway answers 429),
-- whatever other replicas do at once. The limit is the gateway's (the organization's plan
-- in its configuration): the schema holds that no claim passes it, not what it is.
CREATE TABLE quota_use (
    org    text NOT NULL REFERENCES organizations (id),
    year   integer NOT NULL,
    used   bigint NOT NULL CHECK (used >= 0),
    quota  bigint NOT NULL CHECK (quota >= 0),
    PRIMARY KEY (org, year),
    CHECK (used <= quota)
);

-- A client's Idempotency-Key, bound to the first request that came with it. Removed when that
-- request certified nothing (its intent abandoned).
CREATE TABLE idempotency_keys (
    org             text NOT NULL REFERENCES organizations (id),
    environment     environment NOT NULL,
    key             text NOT NULL,
    intent          bigint NOT NULL REFERENCES intents (id),
    rn              text NOT NULL,
    request_digest  text NOT NULL,
    PRIMARY KEY (org, environment, key)
);
-- An abandoned intent's key is found by its intent (the trigger that gives it back).
CREATE INDEX idempotency_keys_by_intent ON idempotency_keys (intent);

-- The next register sequence number of each environment (updated by the register's trigger
-- only, in the certifying transaction).
CREATE TABLE register_heads (
    environment    environment PRIMARY KEY,
    next_sequence  bigint NOT NULL CHECK (next_sequence >= 1)
);
INSERT INTO register_heads VALUES ('production', 1), ('sandbox', 1);

-- The head of each organization's hash chain (updated by the register's trigger only).
CREATE TABLE chain_heads (
    org      text PRIMARY KEY REFERENCES organizations (id),
    entries  bigint NOT NULL CHECK (entries >= 1),
    head     bytea NOT NULL CHECK (length(head) = 32)
);

-- LogInvoices: one row per certified invoice. Append-only.
--
-- `entry` is the entry's JSON exactly as hashed (model::RegisterEntry without the invoice,
-- which its intent keeps). `hash` = SHA-256(prev_hash || entry as UTF-8), `prev_hash` the
-- hash of the organization's previous entry (32 zero bytes for its first), `chain_seq` its
-- place in that chain: organizations never wait on each other's chain.
CREATE TABLE register_entries (
    environment   environment NOT NULL,
    sequence      bigint NOT NULL CHECK (sequence >= 1),
    org           text NOT NULL REFERENCES organizations (id),
    rn            text NOT NULL CHECK (rn <> ''),
    intent        bigint NOT NULL UNIQUE REFERENCES intents (id),
    code_def      text NOT NULL CHECK (code_def <> ''),
    certified_at  timestamptz NOT NULL,
    quota_year    integer NOT NULL,
    chain_seq     bigint NOT NULL CHECK (chain_seq >= 1),
    prev_hash     bytea NOT NULL CHECK (length(prev_hash) = 32),
    hash          bytea NOT NULL CHECK (length(hash) = 32),
    entry         text NOT NULL,
    PRIMARY KEY (environment, sequence),
    UNIQUE (org, environment, rn),
    UNIQUE (org, chain_seq)
);
CREATE INDEX register_entries_by_org ON register_entries (org, environment, sequence);
-- With the sequence: a codeDEFDGI taken twice is found at its first entry in the index itself.
CREATE INDEX register_entries_by_code ON register_entries (org, environment, code_def, sequence);

-- The rules of an entry, checked as it is inserted: the next number of its environment, the
-- next link of its organization's chain (hash recomputed here), its intent open and the same
-- invoice; then the heads move on and the intent is settled as certified.
CREATE FUNCTION register_entry_rules() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    zero bytea := decode(repeat('00', 32), 'hex');
    open_intent intents%ROWTYPE;
BEGIN
    UPDATE register_heads SET next_sequence = next_sequence + 1
        WHERE environment = NEW.environment AND next_sequence = NEW.sequence;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'register %: sequence % is not the next one', NEW.environment, NEW.sequence
            USING ERRCODE = 'check_violation', CONSTRAINT = 'register_next_number';
    END IF;
    IF NEW.hash <> sha256(NEW.prev_hash || convert_to(NEW.entry, 'UTF8')) THEN
        RAISE EXCEPTION 'register: entry % of % does not hash to its hash', NEW.sequence, NEW.org
            USING ERRCODE = 'check_violation', CONSTRAINT = 'register_entry_hash';
    END IF;
    IF NEW.chain_seq = 1 AND NEW.prev_hash = zero THEN
        -- The organization's first entry, unless it has one already.
        INSERT INTO chain_heads (org, entries, head) VALUES (NEW.org, 1, NEW.hash)
            ON CONFLICT (org) DO NOTHING;
    ELSE
        UPDATE chain_heads SET entries = entries + 1, head = NEW.hash
            WHERE org = NEW.org AND entries = NEW.chain_seq - 1 AND head = NEW.prev_hash;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'register: entry % does not follow the head of %''s chain',
            NEW.sequence, NEW.org
            USING ERRCODE = 'check_violation', CONSTRAINT = 'register_chain_link';
    END IF;
    SELECT * INTO open_intent FROM intents WHERE id = NEW.intent FOR UPDATE;
    IF NOT FOUND OR open_intent.state <> 'open' OR open_intent.org <> NEW.org
            OR open_intent.environment <> NEW.environment OR open_intent.rn <> NEW.rn THEN
        RAISE EXCEPTION 'register: intent % is not the open intent of this entry', NEW.intent
            USING ERRCODE = 'check_violation', CONSTRAINT = 'register_intent_open';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER register_entry_rules BEFORE INSERT ON register_entries
    FOR EACH ROW EXECUTE FUNCTION register_entry_rules();

-- The entry inserted, its intent is settled as certified (`intent_rules` allows that only to
-- an intent that has its entry).
CREATE FUNCTION register_entry_settles() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE intents SET state = 'certified', settled_at = NEW.certified_at WHERE id = NEW.intent;
    RETURN NULL;
END
$$;
CREATE TRIGGER register_entry_settles AFTER INSERT ON register_entries
    FOR EACH ROW EXECUTE FUNCTION register_entry_settles();

-- An intent is recorded open, and a production one claims its quota unit there and then: a
-- claim past the quota fails `quota_use`'s CHECK and the intent is not recorded.
CREATE FUNCTION intent_opened() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state <> 'open' OR NEW.settled_at IS NOT NULL OR NEW.reason IS NOT NULL THEN
        RAISE EXCEPTION 'intent %: an intent is recorded open', NEW.id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'intent_recorded_open';
    END IF;
    IF NEW.quota_year IS NOT NULL THEN
        INSERT INTO quota_use (org, year, used, quota)
            VALUES (NEW.org, NEW.quota_year, 1, NEW.quota_limit)
            ON CONFLICT (org, year) DO UPDATE
            SET used = quota_use.used + 1, quota = EXCLUDED.quota;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER intent_opened AFTER INSERT ON intents
    FOR EACH ROW EXECUTE FUNCTION intent_opened();

-- An intent is settled once, and nothing else about it changes but, while it is open, its
-- owner (taken over from a replica fenced off, or by the replica an administrator settles it
-- on) and why it waits for an administrator. An abandoned one gives its quota unit back and
-- frees its Idempotency-Key.
CREATE FUNCTION intent_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'intents are never deleted' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF OLD.state = 'open' AND NEW.state = 'open'
            AND (NEW.owner IS NOT NULL OR OLD.owner IS NULL)
            AND (NEW.id, NEW.org, NEW.environment, NEW.rn, NEW.request_digest, NEW.body,
                 NEW.created_at, NEW.quota_year, NEW.quota_limit, NEW.settled_at, NEW.reason)
                IS NOT DISTINCT FROM
                (OLD.id, OLD.org, OLD.environment, OLD.rn, OLD.request_digest, OLD.body,
                 OLD.created_at, OLD.quota_year, OLD.quota_limit, OLD.settled_at, OLD.reason)
            THEN
        RETURN NEW;
    END IF;
    IF OLD.state <> 'open' OR NEW.state NOT IN ('certified', 'abandoned')
            OR (NEW.id, NEW.org, NEW.environment, NEW.rn, NEW.request_digest, NEW.body,
                NEW.created_at, NEW.quota_year, NEW.quota_limit, NEW.owner)
               IS DISTINCT FROM
               (OLD.id, OLD.org, OLD.environment, OLD.rn, OLD.request_digest, OLD.body,
                OLD.created_at, OLD.quota_year, OLD.quota_limit, OLD.owner) THEN
        RAISE EXCEPTION 'intent %: only an open intent is settled, once', OLD.id
            USING ERRCODE = 'insufficient_privilege', CONSTRAINT = 'intent_settled_once';
    END IF;
    IF NEW.state = 'certified'
            AND NOT EXISTS (SELECT 1 FROM register_entries WHERE intent = OLD.id) THEN
        RAISE EXCEPTION 'intent %: certified only by its register entry', OLD.id
            USING ERRCODE = 'insufficient_privilege', CONSTRAINT = 'intent_settled_once';
    END IF;
    IF NEW.state = 'abandoned' THEN
        IF OLD.quota_year IS NOT NULL THEN
            UPDATE quota_use SET used = used - 1 WHERE org = OLD.org AND year = OLD.quota_year;
        END IF;
        DELETE FROM idempotency_keys WHERE intent = OLD.id;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER intent_rules BEFORE UPDATE OR DELETE ON intents
    FOR EACH ROW EXECUTE FUNCTION intent_rules();

-- Append-only tables: no UPDATE, DELETE or TRUNCATE, whoever asks.
CREATE FUNCTION append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER register_entries_append_only BEFORE UPDATE OR DELETE ON register_entries
    FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER register_entries_no_truncate BEFORE TRUNCATE ON register_entries
    FOR EACH STATEMENT EXECUTE FUNCTION append_only();
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION append_only();
CREATE TRIGGER intents_no_truncate BEFORE TRUNCATE ON intents
    FOR EACH STATEMENT EXECUTE FUNCTION append_only();

-- pgaccess: organizations, API keys and dashboard tokens (src/store/postgres/access.rs).
-- None is ever deleted (an entry, an intent or an event may name it). A key or a token is
-- issued once; afterwards only its state changes: a key enabled or disabled, a token revoked,
-- once (it never signs in again). Each write also appends its event to `events`.
CREATE FUNCTION never_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '%: rows are never deleted (% refused)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER organizations_kept BEFORE DELETE ON organizations
    FOR EACH ROW EXECUTE FUNCTION never_deleted();
CREATE TRIGGER organizations_no_truncate BEFORE TRUNCATE ON organizations
    FOR EACH STATEMENT EXECUTE FUNCTION never_deleted();
CREATE TRIGGER api_keys_kept BEFORE DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION never_deleted();
CREATE TRIGGER api_keys_no_truncate BEFORE TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION never_deleted();
CREATE TRIGGER dashboard_tokens_kept BEFORE DELETE ON dashboard_tokens
    FOR EACH ROW EXECUTE FUNCTION never_deleted();
CREATE TRIGGER dashboard_tokens_no_truncate BEFORE TRUNCATE ON dashboard_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION never_deleted();

CREATE FUNCTION api_key_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (NEW.id, NEW.org, NEW.environment, NEW.record)
            IS DISTINCT FROM (OLD.id, OLD.org, OLD.environment, OLD.record) THEN
        RAISE EXCEPTION 'API key %: only its state changes once issued', OLD.id
            USING ERRCODE = 'insufficient_privilege', CONSTRAINT = 'api_key_as_issued';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER api_key_rules BEFORE UPDATE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION api_key_rules();

CREATE FUNCTION dashboard_token_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (NEW.id, NEW.org, NEW.record) IS DISTINCT FROM (OLD.id, OLD.org, OLD.record)
            OR (OLD.revoked AND NOT NEW.revoked) THEN
        RAISE EXCEPTION 'dashboard token %: only revoked, once, after it is issued', OLD.id
            USING ERRCODE = 'insufficient_privilege', CONSTRAINT = 'dashboard_token_as_issued';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER dashboard_token_rules BEFORE UPDATE ON dashboard_tokens
    FOR EACH ROW EXECUTE FUNCTION dashboard_token_rules();

-- pgboxes: box counters and fiscal anomalies (src/store/postgres/boxes.rs).
--
-- A box's counters move in the certifying transaction of each production entry, and with the
-- acknowledgement of an anomaly that sets them, both under the production `register_heads`
-- row's lock: they follow the register's order, as the embedded store applies them with its
-- records. An anomaly's id is the id of its `fiscal_anomaly` event (the embedded store's is
-- the journal seq of its record).
--
-- An anomaly not acknowledged is recorded once per box, kind and register entry it is
-- against: the same break seen again (at a C1h, then at the certification; on two replicas
-- at once) is the anomaly already recorded.
CREATE UNIQUE INDEX fiscal_anomalies_open_once ON fiscal_anomalies
    ((anomaly->>'nim'), (anomaly->>'kind'), (anomaly->'known'->>'sequence'))
    WHERE acknowledged IS NULL;

-- An anomaly is acknowledged once, and nothing else about it ever changes; none is deleted.
CREATE FUNCTION fiscal_anomaly_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'fiscal anomalies are never deleted' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF OLD.acknowledged IS NOT NULL OR NEW.acknowledged IS NULL
            OR (NEW.id, NEW.detected_at, NEW.anomaly) IS DISTINCT FROM
               (OLD.id, OLD.detected_at, OLD.anomaly) THEN
        RAISE EXCEPTION 'fiscal anomaly %: only acknowledged, once', OLD.id
            USING ERRCODE = 'insufficient_privilege', CONSTRAINT = 'fiscal_anomaly_acknowledged_once';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER fiscal_anomaly_rules BEFORE UPDATE OR DELETE ON fiscal_anomalies
    FOR EACH ROW EXECUTE FUNCTION fiscal_anomaly_rules();
CREATE TRIGGER fiscal_anomalies_no_truncate BEFORE TRUNCATE ON fiscal_anomalies
    FOR EACH STATEMENT EXECUTE FUNCTION append_only();

-- pgreads: the register's reads (src/store/postgres/reads.rs). A credit note (FA, EA) names
-- its original by codeDEFDGI in the invoice it keeps (`reference`); the embedded store finds
-- them both ways through its index (src/store/embedded/links.rs), PostgreSQL through `credit_notes`,
-- filled by the register's trigger as each entry is inserted (so an import fills it too).
-- Keyed by the original's codeDEFDGI, not its entry: a credit note may name an invoice
-- certified before the gateway kept invoices, or never through it. Append-only.
CREATE TABLE credit_notes (
    org          text NOT NULL REFERENCES organizations (id),
    environment  environment NOT NULL,
    reference    text NOT NULL,
    sequence     bigint NOT NULL,
    PRIMARY KEY (org, environment, reference, sequence),
    FOREIGN KEY (environment, sequence) REFERENCES register_entries (environment, sequence)
);

-- The codeDEFDGI a kept invoice names as its original, as `reference_of` reads it
-- (src/model/invoice_content.rs): a string `reference` of a JSON object, else NULL, also
-- for a text that is not JSON (a link is never a reason to refuse an entry).
CREATE FUNCTION invoice_reference(invoice text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    form jsonb;
BEGIN
    IF invoice IS NULL OR position('"reference"' IN invoice) = 0 THEN
        RETURN NULL;
    END IF;
    BEGIN
        form := invoice::jsonb;
    EXCEPTION WHEN data_exception THEN
        RETURN NULL;
    END;
    IF jsonb_typeof(form) = 'object' AND jsonb_typeof(form -> 'reference') = 'string' THEN
        RETURN form ->> 'reference';
    END IF;
    RETURN NULL;
END
$$;

-- How many entries each organization has in each register (`org_entry_count`), counted as
-- they are inserted: read at once, however long the register (the certifying transaction
-- holds its organization's chain head already, so the count's row adds no wait).
CREATE TABLE register_counts (
    org          text NOT NULL REFERENCES organizations (id),
    environment  environment NOT NULL,
    entries      bigint NOT NULL CHECK (entries >= 1),
    PRIMARY KEY (org, environment)
);

-- An entry inserted is counted, and if it keeps a credit note (in its own JSON, as 1.5.0 to
-- 1.7.0 wrote them, or in its intent) it is listed under the original it names.
CREATE FUNCTION register_entry_lookups() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    kept text;
    original text;
BEGIN
    INSERT INTO register_counts (org, environment, entries) VALUES (NEW.org, NEW.environment, 1)
        ON CONFLICT (org, environment) DO UPDATE SET entries = register_counts.entries + 1;
    IF position('"invoice"' IN NEW.entry) > 0 THEN
        kept := NEW.entry::jsonb ->> 'invoice';
    END IF;
    IF kept IS NULL THEN
        SELECT body ->> 'invoice' INTO kept FROM intents WHERE id = NEW.intent;
    END IF;
    original := invoice_reference(kept);
    IF original IS NOT NULL THEN
        INSERT INTO credit_notes (org, environment, reference, sequence)
            VALUES (NEW.org, NEW.environment, original, NEW.sequence);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER register_entry_lookups AFTER INSERT ON register_entries
    FOR EACH ROW EXECUTE FUNCTION register_entry_lookups();
CREATE TRIGGER credit_notes_append_only BEFORE UPDATE OR DELETE ON credit_notes
    FOR EACH ROW EXECUTE FUNCTION append_only();
CREATE TRIGGER credit_notes_no_truncate BEFORE TRUNCATE ON credit_notes
    FOR EACH STATEMENT EXECUTE FUNCTION append_only();

-- `register_counts` and `credit_notes` are the register's own: written only by its trigger
-- above, never by a client (a forged link, a count moved), and never deleted.
CREATE FUNCTION kept_by_the_register() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR pg_trigger_depth() < 2 THEN
        RAISE EXCEPTION '% is kept by the register''s trigger: % refused', TG_TABLE_NAME, TG_OP
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER register_counts_kept BEFORE INSERT OR UPDATE OR DELETE ON register_counts
    FOR EACH ROW EXECUTE FUNCTION kept_by_the_register();
CREATE TRIGGER register_counts_no_truncate BEFORE TRUNCATE ON register_counts
    FOR EACH STATEMENT EXECUTE FUNCTION append_only();
CREATE TRIGGER credit_notes_kept BEFORE INSERT ON credit_notes
    FOR EACH ROW EXECUTE FUNCTION kept_by_the_register();

-- The register's heads and the quota's use are moved by the register's and the intents'
-- triggers only (a client that moved `register_heads` could skip numbers, one that wrote
-- `chain_heads` could start an organization's chain from a forged hash, one that wrote
-- `quota_use` could pass the quota): a write that does not come from a trigger is refused,
-- whoever sends it. `SELECT ... FOR UPDATE` (which needs the UPDATE privilege) still locks.
CREATE FUNCTION kept_by_the_schema() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF pg_trigger_depth() < 2 THEN
        RAISE EXCEPTION '% is kept by the schema''s triggers: % refused', TG_TABLE_NAME, TG_OP
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;
CREATE TRIGGER register_heads_kept BEFORE INSERT OR UPDATE OR DELETE ON register_heads
    FOR EACH ROW EXECUTE FUNCTION kept_by_the_schema();
CREATE TRIGGER chain_heads_kept BEFORE INSERT OR UPDATE OR DELETE ON chain_heads
    FOR EACH ROW EXECUTE FUNCTION kept_by_the_schema();
CREATE TRIGGER quota_use_kept BEFORE INSERT OR UPDATE OR DELETE ON quota_use
    FOR EACH ROW EXECUTE FUNCTION kept_by_the_schema();

-- Issue 29, point 5 (the dashboard on any replica): its sessions, the sign-in form's values
-- and the failed sign-ins' counts, shared by every replica so that a user may land on any of
-- them (src/store/postgres/sessions.rs). None is a fiscal record, none holds a secret: a
-- session is found by the SHA-256 of its cookie's id, a form's value by its SHA-256. Times
-- are the database's clock; a row past its lifetime is deleted by the next statement that
-- adds one of its kind.
CREATE TABLE dashboard_sessions (
    id_sha256   bytea PRIMARY KEY CHECK (length(id_sha256) = 32),
    org         text NOT NULL REFERENCES organizations (id),
    token_id    text NOT NULL REFERENCES dashboard_tokens (id),
    created_at  timestamptz NOT NULL,
    last_seen   timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_by_org ON dashboard_sessions (org, last_seen);
CREATE INDEX dashboard_sessions_by_last_seen ON dashboard_sessions (last_seen);
CREATE INDEX dashboard_sessions_by_token ON dashboard_sessions (token_id);

CREATE TABLE dashboard_sign_in_values (
    value_sha256  bytea PRIMARY KEY CHECK (length(value_sha256) = 32),
    peer          text NOT NULL,   -- the client's address the form was given to
    issued_at     timestamptz NOT NULL
);
CREATE INDEX dashboard_sign_in_values_by_peer ON dashboard_sign_in_values (peer, issued_at);
CREATE INDEX dashboard_sign_in_values_by_age ON dashboard_sign_in_values (issued_at);

CREATE TABLE dashboard_sign_in_failures (
    kind          text NOT NULL CHECK (kind IN ('peer', 'org')),
    key           text NOT NULL,   -- the client's address, or the organization's id
    failures      integer NOT NULL CHECK (failures > 0),
    last_failure  timestamptz NOT NULL,
    PRIMARY KEY (kind, key)
);
CREATE INDEX dashboard_sign_in_failures_by_age ON dashboard_sign_in_failures (last_failure);
-- Devices as data (issue 29, "devices"): web API e-MCFs kept in the store, so that a shop is
-- added to every replica without a file to edit or a restart (`emcf-gateway device add`). The
-- token is kept only sealed (`src/store/sealed.rs`: AES-256-GCM under a key of
-- `[store] secret_key_file`, which the database never holds, bound to the device's name), with
-- the id of the key that sealed it. `version` rises on each change, removal included (a
-- removed device keeps its row, `removed_at` set, so that each replica sees it go); replicas
-- poll `sum(version)`, which rises whenever a device is added, changed or removed (a token
-- sealed again under a new key, `store rotate-key`, keeps its version: nothing to reload).
CREATE SEQUENCE device_versions;
CREATE TABLE devices (
    name          text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
    kind          text NOT NULL CHECK (kind IN ('web_api')),
    url           text NOT NULL CHECK (url ~ '^https?://[^[:space:][:cntrl:]]+$'),
    token_sealed  text NOT NULL CHECK (token_sealed LIKE 'v1:%'),
    key_id        text NOT NULL CHECK (key_id <> ''),
    version       bigint NOT NULL DEFAULT nextval('device_versions') CHECK (version > 0),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    removed_at    timestamptz
);

CREATE FUNCTION device_version_grows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.name <> OLD.name OR NEW.version < OLD.version THEN
        RAISE EXCEPTION 'a device keeps its name and its version never goes back'
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER device_version_grows BEFORE UPDATE ON devices
    FOR EACH ROW EXECUTE FUNCTION device_version_grows();

-- The DGI's window of pending requests per web API e-MCF, shared by the replicas (issue 29):
-- one row per place. A lane takes a free place (`holder` its replica, `epoch` + 1: the
-- fencing token of what it writes of the place) in one short statement that holds its own
-- lease, before its request; notes the request's uid; gives the place back once its confirm
-- is sent. Never held across a call to the DGI by the database: a row, not a lock. A place
-- whose holder's lease is gone is marked in doubt (`doubted_at`) and given back by the leader
-- only once the DGI's pending list, read more than the longest call after, proves its
-- request gone (docs/design.md §12).
CREATE TABLE window_slots (
    device      text NOT NULL,
    slot        integer NOT NULL CHECK (slot >= 0),
    epoch       bigint NOT NULL DEFAULT 0 CHECK (epoch >= 0),
    holder      text,
    taken_at    timestamptz,
    uid         text,
    doubted_at  timestamptz,
    PRIMARY KEY (device, slot),
    CHECK ((holder IS NULL) = (taken_at IS NULL)),
    CHECK (holder IS NOT NULL OR (uid IS NULL AND doubted_at IS NULL))
);

CREATE FUNCTION window_slot_epoch_grows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.device <> OLD.device OR NEW.slot <> OLD.slot OR NEW.epoch < OLD.epoch THEN
        RAISE EXCEPTION 'a window slot keeps its place and its epoch never goes back'
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER window_slot_epoch_grows BEFORE UPDATE ON window_slots
    FOR EACH ROW EXECUTE FUNCTION window_slot_epoch_grows();
