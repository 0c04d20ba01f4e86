//! Statements prepared once per connection. tokio-postgres prepares SQL passed as text in a
//! round trip of its own (Parse, Describe, Sync), which the server counts as a transaction,
//! before running it: twice the transactions and round trips of each statement. The store's
//! statements on the certification path go through [`Cached`] instead: the connection's
//! statement cache (deadpool-postgres's `prepare_cached`) prepares each text once, then only
//! runs it (docs/performance.md, "PostgreSQL transactions per certified invoice").

use std::future::Future;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Error, Row};

/// Params of a statement, as tokio-postgres takes them.
type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// The statements of a pooled connection or of a transaction on one, prepared once per
/// connection.
pub(crate) trait Cached {
    /// Like `query`, with the statement prepared once per connection.
    fn cached_query(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> impl Future<Output = Result<Vec<Row>, Error>> + Send;
    /// Like `query_one`, with the statement prepared once per connection.
    fn cached_query_one(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> impl Future<Output = Result<Row, Error>> + Send;
    /// Like `query_opt`, with the statement prepared once per connection.
    fn cached_query_opt(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> impl Future<Output = Result<Option<Row>, Error>> + Send;
    /// Like `execute`, with the statement prepared once per connection.
    fn cached_execute(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> impl Future<Output = Result<u64, Error>> + Send;
}

macro_rules! cached_for {
    ($($client:ty),*) => {$(
        impl Cached for $client {
            async fn cached_query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>, Error> {
                let statement = self.prepare_cached(sql).await?;
                self.query(&statement, params).await
            }
            async fn cached_query_one(&self, sql: &str, params: Params<'_>) -> Result<Row, Error> {
                let statement = self.prepare_cached(sql).await?;
                self.query_one(&statement, params).await
            }
            async fn cached_query_opt(
                &self,
                sql: &str,
                params: Params<'_>,
            ) -> Result<Option<Row>, Error> {
                let statement = self.prepare_cached(sql).await?;
                self.query_opt(&statement, params).await
            }
            async fn cached_execute(&self, sql: &str, params: Params<'_>) -> Result<u64, Error> {
                let statement = self.prepare_cached(sql).await?;
                self.execute(&statement, params).await
            }
        }
    )*};
}

cached_for!(
    deadpool_postgres::Client,
    deadpool_postgres::Transaction<'_>
);
