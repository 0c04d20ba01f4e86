//! Several `emcf-gateway serve` replicas behind HAProxy (issue 29), through the real binaries:
//! one PostgreSQL server (`tests/support/pg.rs`) whose database every replica names in its
//! `[store] url`, the DGI web API simulator on a socket, three replicas each with its own
//! `state_dir` and port and the same `[[devices]]` entry `kind = "web_api"`, and HAProxy
//! (Debian's `haproxy`) running `docs/haproxy.cfg` itself, only its `bind` port and `server`
//! lines replaced (`replicas/proxy.rs`). What an operator checks: a key disabled on one
//! replica is refused by all within a second, the quota is used exactly once across replicas
//! (`replicas/shared.rs`), a PostgreSQL restart and a replica stopped with SIGTERM under load
//! cost the clients nothing but clean 503s with `Retry-After` and lose or duplicate no invoice
//! (`replicas/outages.rs`); a connection the stopping replica was given just before is
//! answered, not reset (`replicas/shutdown.rs`); an alert is e-mailed once, whichever replica
//! leads, also after the leader is killed (`replicas/alerts.rs`). The harness
//! (`replicas/harness.rs`) starts,
//! stops (SIGTERM) and kills (`kill -9`) one replica at a time and reads its log, for the
//! tests to come.
//!
//! Without HAProxy or PostgreSQL the tests skip outside CI and fail under `CI=true`
//! (`tests/common/needs.rs`; `.ci/run` installs both).

mod alerts;
mod harness;
mod kills;
mod load;
mod outages;
mod partition;
mod proxy;
mod shared;
mod shutdown;
mod window;
