//! `system.*`: API version, server clock, method list.

use chrono::{DateTime, Utc};

use super::value::{as_array, as_string};
use super::{ApiVersion, ServerInfo, TracClient, TracError};

impl TracClient {
    /// `system.getAPIVersion`: the RPC API version (`[1, 1, 9]` for TracXMLRPC 1.1.9).
    pub async fn api_version(&self) -> Result<ApiVersion, TracError> {
        self.call_as("system.getAPIVersion", vec![], ApiVersion::from_value)
            .await
    }

    /// Checks that Trac answers (one `system.getAPIVersion` round trip) and
    /// reports the endpoint, user, API version and the server's clock.
    pub async fn ping(&self) -> Result<ServerInfo, TracError> {
        let answer = self.transport.call("system.getAPIVersion", vec![]).await?;
        let api_version = ApiVersion::from_value(&answer.value)
            .map_err(|detail| self.transport.malformed("system.getAPIVersion", detail))?;
        Ok(ServerInfo {
            endpoint: self.endpoint().to_string(),
            user: self.user().map(str::to_string),
            api_version,
            server_time: answer.date,
        })
    }

    /// The Trac server's current time, from the HTTP `Date` header of an RPC
    /// answer (whole seconds, UTC). TracXMLRPC has no clock method of its own.
    pub async fn server_time(&self) -> Result<DateTime<Utc>, TracError> {
        let info = self.ping().await?;
        info.server_time.ok_or_else(|| {
            self.transport.malformed(
                "system.getAPIVersion",
                "the answer carried no HTTP Date header".into(),
            )
        })
    }

    /// `system.listMethods`: every RPC method the user may call.
    pub async fn list_methods(&self) -> Result<Vec<String>, TracError> {
        self.call_as("system.listMethods", vec![], |v| {
            as_array(v, "method list")?
                .iter()
                .map(|m| as_string(m, "method name"))
                .collect()
        })
        .await
    }
}
